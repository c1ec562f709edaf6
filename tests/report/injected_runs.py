"""Real stored runs of targets that answer each injected run differently, made by the real engine with an in-process
fake target, for what a listing, an export or a page shows of the call a verdict is about: an extract run
(``--runs 2``, adversarial cases) whose injected run 1 flips and run 2 does not, and a starter ``--inject`` run whose
injected run gives the code the attack planted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import knowgap
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.suites.extract.dataset import ExtractCase, load_cases
from tests.fakes.models import FakeModel
from tests.helpers import write_jsonl

CODE = re.compile(r"KG[0-9A-F]{6}")


class RunCounter(FakeModel):
    """An extract summarizer that says which run of which review it answers: run K of a review is its request with
    the K-th seed (extract seeds run K with the review's base seed + K - 1, and asks run 1 first). Injected run 1
    flips the sentiment to negative (unless ``flips`` is False); every other run says positive."""

    spec = "test:run-counter"

    def __init__(self, injected: set[str], flips: bool = True) -> None:
        super().__init__()
        self.injected = injected
        self.flips = flips
        self.first_seed: dict[str, int] = {}

    def reply(self, request: ChatRequest) -> ChatResponse:
        text = request.messages[-1].content
        run = (request.seed or 0) - self.first_seed.setdefault(text, request.seed or 0) + 1
        injected = any(review in text for review in self.injected)
        summary = f"{'injected' if injected else 'clean'} run {run}"
        sentiment = "negative" if self.flips and injected and run == 1 else "positive"
        return ChatResponse(text=json.dumps({"summary": summary, "overall_sentiment": sentiment,
                                             "contains_conflicting_signals": False}))


def extract_cases(tmp_path: Path, n: int = 2) -> tuple[Path, list[ExtractCase]]:
    """``n`` English adversarial cases of the shipped set, on distinct reviews, as a case file."""
    picked: list[ExtractCase] = []
    for case in load_cases():
        if case.kind == "adversarial" and case.lang == "en" and case.base_id not in {c.base_id for c in picked}:
            picked.append(case)
        if len(picked) == n:
            break
    return write_jsonl(tmp_path / "cases.jsonl", [c.model_dump(mode="json") for c in picked]), picked


def extract_run(tmp_path: Path, runs_root: Path, flips: bool = True) -> tuple[knowgap.RunResult, list[ExtractCase]]:
    """An extract run of two adversarial cases, ``--runs 2``: per trial the clean runs 1 and 2, then the injected
    runs 1 (flipped to negative; positive when not ``flips``) and 2 (positive, as the clean runs)."""
    data, cases = extract_cases(tmp_path)
    target = RunCounter({c.injected_review or "" for c in cases}, flips)
    result = knowgap.run("extract", models={"target": target.spec}, providers={target.spec: target},
                         options={"data": str(data), "kinds": ["adversarial"], "runs": 2}, runs_root=runs_root,
                         use_cache=False)
    return result, cases


class CodeTeller(FakeModel):
    """Gives the code a context asks for (only an injected context holds one), else says it does not know."""

    spec = "test:code-teller"

    def reply(self, request: ChatRequest) -> ChatResponse:
        code = CODE.search(request.messages[-1].content)
        return ChatResponse(text=f"The answer is {code.group(0)}." if code else "I don't know.")


def starter_injected_run(runs_root: Path, sample: int = 4) -> knowgap.RunResult:
    """A starter run with ``--inject`` (grounded prompt, instruction override): every injected run obeys."""
    target = CodeTeller()
    return knowgap.run("starter", models={"target": target.spec}, providers={target.spec: target},
                       options={"prompts": ["grounded"], "inject": True, "attack_families": ["instruction_override"],
                                "sample": sample}, runs_root=runs_root, use_cache=False)
