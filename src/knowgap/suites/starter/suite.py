"""``starter``: a tiny built-in suite (16 cases, zh + en) for the tests and the demo.

Each case gives a short context and a question; half the questions are answered by the context, half are
not (the right behaviour is to say so). Two system prompts are compared: ``plain`` and ``grounded``.
Scores: did the model abstain, and, where the context answers, did it give the answer.
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
    JudgeUse,
    Suite,
    SuiteOptions,
    Trial,
    TrialContext,
    TrialResult,
)
from knowgap.errors import KnowgapError
from knowgap.strictjsonl import CaseFileCheck
from knowgap.suites import register
from knowgap.suites.starter.dataset import DATA, StarterCase, check_cases, load_cases
from knowgap.suites.starter.metrics import METRIC_NAMES, starter_metrics
from knowgap.suites.starter.prompts import PROMPTS, target_request
from knowgap.suites.starter.scoring import score_response
from knowgap.suites.starter.verdicts import starter_verdicts


class StarterOptions(SuiteOptions):
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
    metric_names = METRIC_NAMES
    computed_metrics = frozenset({"errors"})
    options: StarterOptions
    case_file_model = StarterCase

    @classmethod
    def check_case_file(cls, path: Path) -> CaseFileCheck[Any]:
        return check_cases(path)

    def metric_judges(self) -> dict[str, JudgeUse]:
        from knowgap.judges.abstention import VERSION as ABSTENTION_VERSION
        from knowgap.suites.starter.scoring import ANSWER_MATCH_VERSION

        abstention = JudgeUse(judge="abstention", version=ABSTENTION_VERSION, counts="positive")
        # accuracy: an accepted answer (answer-match) and no abstention; not one judge's verdict, so no correction
        return {"abstention_unanswerable": abstention, "over_abstention": abstention,
                "accuracy": JudgeUse(judge="answer-match", version=ANSWER_MATCH_VERSION)}

    def dataset_files(self) -> list[Path]:
        return [Path(self.options.data) if self.options.data else DATA]

    def cases(self) -> list[Case]:
        return list(load_cases(self.dataset_files()[0]))

    def configurations(self) -> list[Configuration]:
        unknown = [p for p in self.options.prompts if p not in PROMPTS]
        if unknown:
            raise KnowgapError(f"starter: unknown prompt {unknown} (known: {', '.join(PROMPTS)})")
        return [Configuration(id=f"prompt={p}", params={"prompt": p}) for p in self.options.prompts]

    async def run_trial(self, trial: Trial, ctx: TrialContext) -> TrialResult:
        case = trial.case
        assert isinstance(case, StarterCase)
        request = target_request(case, trial.config.params["prompt"], max_tokens=self.default_max_tokens,
                                 seed=ctx.seed)
        response = await ctx.generate("target", request)
        output, scores = score_response(case, response.text)
        return TrialResult(output=output, scores=scores)

    def label_reference(self, case: Case, config: Mapping[str, Any]) -> dict[str, str]:
        assert isinstance(case, StarterCase)
        if not case.answerable:
            return {"expected": "the context does not answer this question: the right reply says so"}
        return {"accepted answers": "\n".join(case.answers)}

    def verdicts(self, record: TrialRecord) -> list[Verdict]:
        return starter_verdicts(record)

    def metrics(self, records: Iterable[TrialRecord]) -> list[MetricValue]:
        return starter_metrics(records)
