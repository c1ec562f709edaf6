"""``starter``: a tiny built-in suite (16 cases, zh + en) for the tests and the demo.

Each case gives a short context and a question; half the questions are answered by the context, half are
not (the right behaviour is to say so). Two system prompts are compared: ``plain`` and ``grounded``.
Scores: did the model abstain, and, where the context answers, did it give the answer.
``--inject`` also runs each case with an instruction hidden in its context, ``--defences`` compares defences
(:mod:`.injection`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from knowgap.engine.records import MetricValue, TrialRecord, Verdict
from knowgap.engine.suite import (
    Case,
    Configuration,
    Suite,
    Trial,
    TrialContext,
    TrialResult,
)
from knowgap.engine.verdict_calls import VerdictCall
from knowgap.engine.verdict_tally import Split, count_metrics
from knowgap.errors import KnowgapError
from knowgap.injection.options import InjectionOptions, chosen_defences
from knowgap.injection.plan import Injection
from knowgap.injection.verdict_calls import injected_call
from knowgap.suites import register
from knowgap.suites.starter import injection
from knowgap.suites.starter.casefile import CASE_FILE
from knowgap.suites.starter.dataset import DATA, StarterCase, load_cases
from knowgap.suites.starter.prompts import PROMPTS, system_prompt, target_request
from knowgap.suites.starter.scoring import score_response
from knowgap.suites.starter.specs import SPECS
from knowgap.suites.starter.verdicts import starter_verdicts


class StarterOptions(InjectionOptions):
    data: str | None = Field(None, description="A JSONL file of cases in the starter format (default: the shipped 16; "
                                               "knowgap data check starter FILE checks one).")
    prompts: list[str] = Field(default_factory=lambda: list(PROMPTS),
                               description="System prompts to compare (plain, grounded).")


@register
class StarterSuite(Suite):
    name = "starter"
    description = "16 short context questions (zh + en), half unanswerable: does the model say it doesn't know?"
    Options = StarterOptions
    demo_options: ClassVar[dict[str, Any]] = {}
    default_max_tokens = 96
    metric_specs = SPECS
    options: StarterOptions
    data = CASE_FILE

    def __init__(self, options: StarterOptions) -> None:
        super().__init__(options)
        self._cases: list[StarterCase] | None = None
        self._injections: dict[str, list[Injection]] | None = None

    def splits(self) -> list[Split]:
        return []  # one group per configuration, no breakdown

    def dataset_files(self) -> list[Path]:
        return [Path(self.options.data) if self.options.data else DATA]

    def _starter_cases(self) -> list[StarterCase]:
        if self._cases is None:
            self._cases = load_cases(self.dataset_files()[0])
        return self._cases

    def cases(self) -> list[Case]:
        return list(self._starter_cases())

    def injections(self) -> dict[str, list[Injection]]:
        """The injections of each case that carries some (:func:`.injection.planned_injections`)."""
        if self._injections is None:
            self._injections = injection.planned_injections(self.options, self._starter_cases())
        return self._injections

    def configurations(self) -> list[Configuration]:
        unknown = [p for p in self.options.prompts if p not in PROMPTS]
        if unknown:
            raise KnowgapError(f"starter: unknown prompt {unknown} (known: {', '.join(PROMPTS)})")
        defences = chosen_defences(self.options)
        if self.options.inject:
            self.injections()  # a bad --positions, --disguises, --attacks... is refused before any trial
        return [Configuration(id=f"prompt={p}" + ("" if d == "none" else f"+{d}"),
                              params={"prompt": p} | ({} if d == "none" else {"defence": d}))
                for d in defences for p in self.options.prompts]

    async def run_trial(self, trial: Trial, ctx: TrialContext) -> TrialResult:
        case = trial.case
        assert isinstance(case, StarterCase)
        prompt, defence = trial.config.params["prompt"], trial.config.params.get("defence", "none")

        async def ask(context: str | None) -> tuple[str, str]:
            """The target's (system prompt, reply) on the case, with ``context`` in place of its own."""
            request = target_request(case, prompt, max_tokens=self.default_max_tokens, seed=ctx.seed,
                                     defence=defence, context=context)
            return system_prompt(prompt, defence), (await ctx.generate("target", request)).text

        _, text = await ask(None)
        output, scores = score_response(case, text)
        planted = self.injections().get(case.id)
        if planted:
            output["injection"] = await injection.run_injections(case, planted, text, scores, ask)
        return TrialResult(output=output, scores=scores)

    def label_reference(self, case: Case, config: Mapping[str, Any]) -> dict[str, str]:
        assert isinstance(case, StarterCase)
        if not case.answerable:
            return {"expected": "the context does not answer this question: the right reply says so"}
        return {"accepted answers": "\n".join(case.answers)}

    def verdicts(self, record: TrialRecord) -> list[Verdict]:
        return starter_verdicts(record) + injection.injection_verdicts(record)

    def verdict_call(self, record: TrialRecord, verdict: Verdict) -> VerdictCall | None:
        """An injected run's verdict is about its own call, read against the clean run's."""
        return injected_call(record, verdict) or super().verdict_call(record, verdict)

    def metrics(self, records: Iterable[TrialRecord]) -> list[MetricValue]:
        """Every metric, the injection driver's too, counted from the trials' verdicts in one pass, clustered by
        case."""
        return count_metrics(records, SPECS, verdicts=self.trial_verdicts, cluster=lambda r: r.case_id)
