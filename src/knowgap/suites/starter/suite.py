"""``starter``: a tiny built-in suite (16 cases, zh + en) for the tests and the demo.

Each case gives a short context and a question; half the questions are answered by the context, half are
not (the right behaviour is to say so). Two system prompts are compared: ``plain`` and ``grounded``.
Scores: did the model abstain, and, where the context answers, did it give the answer.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from collections.abc import Iterable
from importlib.resources import files
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from knowgap.engine.records import MetricValue, TrialRecord
from knowgap.errors import InputError, KnowgapError
from knowgap.jsonl import read_models
from knowgap.judges.abstention import abstention_phrase
from knowgap.models.types import ChatRequest
from knowgap.suites import register
from knowgap.suites.base import Case, Configuration, Suite, SuiteOptions, Trial, TrialContext, TrialResult

DATA = Path(str(files("knowgap.suites.starter") / "data" / "cases.jsonl"))

PROMPTS = {
    "plain": "You are a helpful assistant. Answer the user's question briefly.",
    "grounded": ("Answer the question using only the context. If the context does not contain the answer, "
                 "say that you don't know instead of guessing. Reply in the language of the question."),
}


DESCRIBED = {
    "abstention_unanswerable": "share of unanswerable questions where the model said it didn't know",
    "accuracy": "share of answerable questions answered correctly",
    "over_abstention": "share of answerable questions where the model declined anyway",
}


class StarterCase(Case):
    lang: Literal["en", "zh"]
    context: str
    question: str
    answerable: bool
    answers: list[str] = Field(default_factory=list)


class StarterOptions(SuiteOptions):
    data: str | None = Field(None, description="A JSONL file of cases in the starter format (default: the shipped 16).")
    prompts: list[str] = Field(default_factory=lambda: list(PROMPTS),
                               description="System prompts to compare (plain, grounded).")


def load_cases(path: Path) -> list[StarterCase]:
    cases = read_models(path, StarterCase, what="cases")
    for number, case in cases:
        if case.answerable and not case.answers:
            raise InputError(str(path), "an answerable case needs at least one accepted answer", line=number,
                             field="answers")
    return [case for _, case in cases]


def _norm(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).lower().split())


def contains_answer(response: str, answers: list[str]) -> bool:
    body = _norm(response)
    return any(_norm(a) in body for a in answers)


@register
class StarterSuite(Suite):
    name = "starter"
    description = "16 short context questions (zh + en), half unanswerable: does the model say it doesn't know?"
    Options = StarterOptions
    demo_options: ClassVar[dict[str, Any]] = {}
    default_max_tokens = 96
    metric_names = frozenset({*DESCRIBED, "errors"})
    options: StarterOptions

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
        request = ChatRequest.simple(f"Context: {case.context}\n\nQuestion: {case.question}",
                                     system=PROMPTS[trial.config.params["prompt"]],
                                     max_tokens=self.default_max_tokens, seed=ctx.seed)
        response = await ctx.generate("target", request)
        phrase = abstention_phrase(response.text)
        abstained = phrase is not None or not response.text.strip()
        correct = contains_answer(response.text, case.answers) and not abstained if case.answerable else None
        return TrialResult(output={"response": response.text, "abstention_phrase": phrase},
                           scores={"answerable": case.answerable, "abstained": abstained, "correct": correct})

    def trial_failed(self, record: TrialRecord) -> bool | None:
        if record.status != "ok":
            return True
        if record.scores.get("answerable"):
            return not record.scores.get("correct")
        return not record.scores.get("abstained")

    def metrics(self, records: Iterable[TrialRecord]) -> list[MetricValue]:
        tallies: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
        for r in records:
            if r.status != "ok":
                tallies[r.config_id]["errors"][0] += 1
                continue
            t = tallies[r.config_id]
            if r.scores["answerable"]:
                t["accuracy"][0] += bool(r.scores["correct"])
                t["accuracy"][1] += 1
                t["over_abstention"][0] += bool(r.scores["abstained"])
                t["over_abstention"][1] += 1
            else:
                t["abstention_unanswerable"][0] += bool(r.scores["abstained"])
                t["abstention_unanswerable"][1] += 1
        out = []
        for group in sorted(tallies):
            for name, text in DESCRIBED.items():
                k, n = tallies[group][name]
                out.append(MetricValue.proportion(name, group, k, n, description=text))
            out.append(MetricValue.count("errors", group, tallies[group]["errors"][0],
                                         description="trials whose model call failed for good"))
        return out
