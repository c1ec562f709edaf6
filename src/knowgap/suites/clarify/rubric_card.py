"""The clarify rubric judge as a judge of the catalogue (``clarify-rubric``), with its validator: how well the
judge model's 1-5 ratings tell a good reply from a bad one, on pairs built from the clarify cases (the machinery:
:mod:`knowgap.judges.rubric_validity`).

A pair per deficient case: the case's reference reply (its expected clarifying questions plus its conditional
answer) against a fluent reply that states the missing facts as known (the hidden facts) and the conclusion, with
no question."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from knowgap.judges.cards import ValidityCard
from knowgap.judges.geval import Ratings
from knowgap.judges.judge import Judge, Progress
from knowgap.judges.rubric_validity import GatewayContext, RubricPair, validate_pairs
from knowgap.suites.clarify.dataset import CASES_FILE, GUIDELINE_FILES, ClarifyCase, load_cases, load_guideline
from knowgap.suites.clarify.judging import assuming_reply, judge_rubric, reference_reply
from knowgap.suites.clarify.prompts import RUBRIC_VERSION


async def _rate(guideline: str, case: ClarifyCase, ctx: GatewayContext, reply: str) -> Ratings:
    return await judge_rubric(ctx, guideline, case, reply)


def clarify_pairs() -> tuple[list[RubricPair], list[Path]]:
    """A pair per deficient case of the shipped cases, and the files they come from."""
    guidelines = {lang: load_guideline(lang) for lang in GUIDELINE_FILES}
    pairs = []
    for case in load_cases(CASES_FILE):
        if case.deficient:
            rate = partial(_rate, guidelines[case.lang], case)
            pairs.append(RubricPair(case.id, case.lang, reference_reply(case), assuming_reply(case), rate))
    return pairs, [CASES_FILE, *GUIDELINE_FILES.values()]


def validate_clarify_rubric(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                            progress: Progress | None = None) -> ValidityCard:
    """The rubric judge's card on the clarify pairs (all, or ``limit`` drawn at random, seeded); the pairs ship
    with knowgap, ``data_dir`` is not read."""
    pairs, files = clarify_pairs()
    return validate_pairs("clarify", RUBRIC_VERSION, pairs, files, judge_model=judge_model, limit=limit,
                          progress=progress, anchor_checks="the clarification detector")


CLARIFY_RUBRIC = Judge(
    name="clarify-rubric", kind="model", decides="1-5 rubric scores of a clarify reply", current=RUBRIC_VERSION,
    positive="score >= the rubric's bar",
    labelled_set="clarify cases' reference replies vs fluent assuming answers (i15-geval)",
    validator=validate_clarify_rubric)
