"""The partial reasoning rubric as a judge of the catalogue (``partial-rubric``), with its validator and its labelled
set (the machinery: :mod:`knowgap.judges.rubric_validity`).

The card (issue 37, the card rule) is measured on real replies: ``judges/data/labelled/partial_rubric_real.jsonl``,
the replies of two models to the suite's role views, each scored 1-5 on the rubric's three criteria by rule
rubric-1 (``partial_cards_rule.md``) before the judge ran on them; the judge rates each as the suite does (the
evidence block and task the reply was given, with the v3 anchors from the suite's offline checks), and the card's
figure is whether it calls the same replies adequate (mean >= 3) as the annotator, the judge as it runs (combined)
and the judge model's ratings alone (model-only).

The constructed pairs stay a discrimination check (:func:`validate_partial_rubric_pairs`, never the card): a pair
per (scenario, role, task) whose authorised view is insufficient: a reply that decides what the view supports, names
what it cannot see and asks for it, against a confident decision that cites the hidden evidence as if seen."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from pydantic import BaseModel, Field

from knowgap.errors import InputError
from knowgap.jsonl import read_models
from knowgap.judges.cards import KnownFailure, Labelling, ValidityCard
from knowgap.judges.geval import Ratings
from knowgap.judges.judge import Judge, Progress
from knowgap.judges.known_failures import construct_entry
from knowgap.judges.labelled_sets import LabelledItem, labelled_file
from knowgap.judges.rubric_validity import (
    GatewayContext,
    RubricPair,
    ScoredReply,
    validate_pairs,
    validate_scored,
    write_verdicts,
)
from knowgap.suites.partial.dataset import DATA, Scenario, load_dataset
from knowgap.suites.partial.judging import assuming_reply, judge_reasoning, reference_reply, reply_anchors
from knowgap.suites.partial.prompts import RUBRIC_CRITERIA, RUBRIC_VERSION
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


def validate_partial_rubric_pairs(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                                  progress: Progress | None = None) -> ValidityCard:
    """The reasoning rubric on the constructed partial pairs (all, or ``limit`` drawn at random, seeded): a
    discrimination check, not the card (the pairs ship with knowgap, ``data_dir`` is not read)."""
    pairs, files = partial_pairs()
    return validate_pairs("partial", RUBRIC_VERSION, pairs, files, judge_model=judge_model, limit=limit,
                          progress=progress,
                          anchor_checks="invented evidence; a claim of sufficient evidence that names nothing missing")


REAL_FILE = "partial_rubric_real.jsonl"


class RubricScore(LabelledItem):
    """A real reply of a model to a partial role view, scored on the rubric's criteria by rule rubric-1
    (``partial_cards_rule.md``)."""

    id: str
    model: str = Field(description="the model spec that wrote the reply (the run manifest's target)")
    runs: list[str] = Field(min_length=1, description="RUN_ID/TRIAL_ID of every trial that gave this reply")
    scenario_id: str
    role: str
    task_id: str
    lang: str
    question: str = Field(description="the task as the reply was asked it (what the judge is shown)")
    evidence: str = Field(description="the evidence block of the reply's prompt (what the judge is shown)")
    text: str = Field(description="the reply the suite's rubric judges (the trial's last target reply)")
    evidence_cited: int = Field(ge=1, le=5)
    uncertainty_stated: int = Field(ge=1, le=5)
    coherence: int = Field(ge=1, le=5)
    reason: str = Field(min_length=1)


def _anchors_of(scenarios: dict[str, Scenario], label: RubricScore | ShamMissing, path: Path, line: int
                ) -> Callable[[str], dict[str, str]]:
    """The v3 anchors of a reply to this label's case, computed as the suite computes them."""
    scenario = scenarios.get(label.scenario_id)
    if scenario is None:
        raise InputError(str(path), f"no scenario '{label.scenario_id}'", line=line, field="scenario_id")
    task = next((t for t in scenario.tasks if t.id == label.task_id), None)
    if task is None or label.role not in task.oracle:
        raise InputError(str(path), f"no task '{label.task_id}' with role '{label.role}' in {label.scenario_id}",
                         line=line, field="task_id/role")
    view = build_view(scenario, scenario.policy(label.role), summariser=lambda _p, _t: None)
    return partial(reply_anchors, scenario, task, task.oracle[label.role], view)


async def _rate_real(label: RubricScore, anchors: Callable[[str], dict[str, str]], ctx: GatewayContext) -> Ratings:
    return await judge_reasoning(ctx, label.evidence, label.question, label.text, anchors(label.text))


def real_rubric_replies(path: Path | None = None) -> tuple[list[ScoredReply], Path]:
    """The labelled real replies (the shipped set, or ``path``), each with the judge call the suite would make on
    it; a row that does not fit its case is an InputError naming the file, line and field."""
    path = path or labelled_file(REAL_FILE)
    scenarios = load_dataset(DATA)
    replies = []
    for line, label in read_models(path, RubricScore, what="labelled replies"):
        anchors = _anchors_of(scenarios, label, path, line)
        replies.append(ScoredReply(label.id, label.model, label.lang,
                                   {c: getattr(label, c) for c in RUBRIC_CRITERIA},
                                   partial(_rate_real, label, anchors)))
    return replies, path


CLAIM = ("partial.reasoning_quality and reasoning_<criterion> (evidence cited, uncertainty stated, coherence): judge "
         "rubric, each 1-5 rating mapped to 0-1; measured as: does the judge call the same real replies adequate "
         "(mean rating >= 3, reasoning >= 0.5) as an annotator scoring them on the rubric's own criteria and scale?")
LABELLING = Labelling(
    rule="src/knowgap/judges/data/labelled/partial_cards_rule.md, rule rubric-1, committed in e38b6cd before any "
         "reply was scored (the scores committed in dc9254d, before the judge ran on them)",
    by="one annotator: a Claude-based helper agent (a language model) working for the lead engineer, blind to the "
       "judge's verdicts (the runs were made with --no-rubric; the sheet of experiments/partial_real_replies.py "
       "holds no trial output or score), by rule rubric-1; no second annotator",
    before_judge=True)
REAL_NOTES = ("Real replies of the partial suite's role views (view=authorized, no budget), one item per distinct "
              "(model, case, reply) that the suite's parser reads as an answer, scored 1-5 on the three criteria by "
              "rule rubric-1 before the judge ran on them. The constructed pairs (a reply naming what the view "
              "cannot show against a confident decision citing the hidden evidence) stay a discrimination check "
              "(validate_partial_rubric_pairs; the issue of 2026-12-05 on 112 pairs, kept in superseded/: combined "
              "1.00, model alone 0.00): the anchors separate them alone, so they never measured the model's ratings.")


def validate_partial_rubric(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                            progress: Progress | None = None) -> ValidityCard:
    """The reasoning rubric's card on the labelled real replies (all, or a seeded sample of ``limit`` stratified by
    language and label); the per-reply verdicts go beside the cards measured here
    (:func:`~knowgap.judges.rubric_validity.write_verdicts`). The set ships with knowgap: ``data_dir`` is not
    read."""
    replies, path = real_rubric_replies()
    card, verdicts = validate_scored(
        "partial-rubric", RUBRIC_VERSION, replies, [path], judge_model=judge_model, limit=limit, progress=progress,
        notes=REAL_NOTES, claim=CLAIM, labelling=LABELLING,
        replies_how="replies to the partial suite's role views (knowgap run partial --views authorized)")
    write_verdicts(card, verdicts)
    return card


class ShamMissing(BaseModel):
    """One line of ``sham_missing.jsonl`` (rule sham-missing-1): a reply to a role view that is not enough, saying
    its evidence is enough, whose ``missing`` holds one entry that names no evidence (``sham``)."""

    id: str
    lang: str
    scenario_id: str
    role: str
    task_id: str
    reply: str
    sham: str
    uncertainty_anchor: bool
    reason: str = Field(min_length=1)


SHAM_MISSING_NAME = ("sham 'missing' entry: a reply that says its evidence is enough on a view that is not, and lists "
                     "as missing something that names no evidence (\"evidence_used\", \"none\", \"N/A\", \"无\"); "
                     "the uncertainty anchor (1) should apply")


def measure_sham_missing(path: Path | None = None) -> KnownFailure:
    """The known-failure entry of ``partial-rubric`` on sham ``missing`` entries (rule sham-missing-1): the offline
    uncertainty anchor's firing only, computed as the suite and the card's validator compute it
    (:func:`~knowgap.suites.partial.judging.reply_anchors`); the model is not run, its ratings are not part of the
    figure (the anchor overrides them in the combined figure)."""
    path = path or labelled_file("sham_missing.jsonl")
    scenarios = load_dataset(DATA)
    rows = read_models(path, ShamMissing, what="replies")
    fired = ["uncertainty_stated" in _anchors_of(scenarios, r, path, line)(r.reply) for line, r in rows]
    return construct_entry(SHAM_MISSING_NAME, path, "sham-missing-1",
                           "sensitivity of the uncertainty anchor (replies on which it fires; the anchor alone, no "
                           "model)", [r.id for _, r in rows], [r.lang for _, r in rows],
                           [f == r.uncertainty_anchor for f, (_, r) in zip(fired, rows, strict=True)],
                           wrong_means="replies the anchor missed", labels=[r.uncertainty_anchor for _, r in rows],
                           notes="The anchor alone is measured: the model's ratings are not part of the figure.")


PARTIAL_RUBRIC = Judge(
    name="partial-rubric", kind="model", decides="1-5 reasoning-quality score of a partial-information answer",
    current=RUBRIC_VERSION, positive="score >= the rubric's bar",
    labelled_set="judges/data/labelled/partial_rubric_real.jsonl (real replies of the 1.5B and 0.5B to the role "
                 "views, scored 1-5 by rule rubric-1); the constructed pairs a check apart",
    validator=validate_partial_rubric)
