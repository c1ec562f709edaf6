"""The partial reasoning rubric as a judge of the catalogue (``partial-rubric``), with its validator: how well the
judge model's 1-5 ratings tell a good reply from a bad one, on pairs built from the partial scenarios (the
machinery: :mod:`knowgap.judges.rubric_validity`).

A pair per (scenario, role, task) whose authorised view is insufficient: a reply that decides what the view
supports, names what it cannot see and asks for it, against a confident decision that cites the hidden evidence as
if seen."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from knowgap.judges.cards import ValidityCard
from knowgap.judges.geval import Ratings
from knowgap.judges.judge import Judge, Progress
from knowgap.judges.rubric_validity import GatewayContext, RubricPair, validate_pairs
from knowgap.suites.partial.dataset import DATA, load_dataset
from knowgap.suites.partial.judging import assuming_reply, judge_reasoning, reference_reply, reply_anchors
from knowgap.suites.partial.prompts import RUBRIC_VERSION
from knowgap.suites.partial.view import build_view, render_view


async def _rate(evidence: str, question: str, anchors: Callable[[str], dict[str, str]], ctx: GatewayContext,
                reply: str) -> Ratings:
    return await judge_reasoning(ctx, evidence, question, reply, anchors(reply))


def partial_pairs() -> tuple[list[RubricPair], list[Path]]:
    """A pair per insufficient (scenario, role, task) of the shipped scenarios, and the file they come from."""
    pairs = []
    for scenario in load_dataset(DATA).values():
        lang = scenario.effective_lang()
        for task in scenario.tasks:
            for role, oracle in task.oracle.items():
                if oracle.sufficient:
                    continue
                view = build_view(scenario, scenario.policy(role), summariser=lambda _p, _t: None)
                anchors = partial(reply_anchors, scenario, task, oracle, view)
                rate = partial(_rate, render_view(view.view, lang), task.question, anchors)
                pairs.append(RubricPair(f"{scenario.scenario_id}/{role}/{task.id}", lang,
                                        reference_reply(scenario, task, oracle, view),
                                        assuming_reply(scenario, task, oracle), rate))
    return pairs, [DATA]


def validate_partial_rubric(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                            progress: Progress | None = None) -> ValidityCard:
    """The reasoning rubric's card on the partial pairs (all, or ``limit`` drawn at random, seeded); the pairs
    ship with knowgap, ``data_dir`` is not read."""
    pairs, files = partial_pairs()
    return validate_pairs("partial", RUBRIC_VERSION, pairs, files, judge_model=judge_model, limit=limit,
                          progress=progress,
                          anchor_checks="invented evidence; a claim of sufficient evidence that names nothing missing")


PARTIAL_RUBRIC = Judge(
    name="partial-rubric", kind="model", decides="1-5 reasoning-quality score of a partial-information answer",
    current=RUBRIC_VERSION, positive="score >= the rubric's bar",
    labelled_set="partial cases' reference answers vs fluent assuming answers (i15-geval)",
    validator=validate_partial_rubric)
