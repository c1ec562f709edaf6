"""The partial suite's leak detector as a judge of the catalogue (``leak-detector``: does an answer reveal a hidden
(restricted) field?), declared here where it lives, with its validator and its labelled sets: the card's set is
``judges/data/labelled/partial_leaks_real.jsonl`` (real replies of two models to the suite's role views, labelled by
rule leaks-1 of ``partial_cards_rule.md`` before the detector ran on them; issue 37, the card rule), and
``partial_leaks.jsonl`` (texts written against the scenarios, labelled by their author) an extra discrimination
check in the card's ``extra``, never its figure."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from knowgap.errors import InputError
from knowgap.judges.cards import KnownFailure, Labelling, ValidityCard, binary_measures, confusion_of, sha256_files
from knowgap.judges.judge import Judge, Progress
from knowgap.judges.known_failures import construct_entry
from knowgap.judges.labelled_sets import labelled_file, stratified
from knowgap.judges.offline_cards import offline_card, sample_method
from knowgap.suites.partial.dataset import Scenario
from knowgap.suites.partial.labelled_rows import RealReplyRow, ScenarioRow, rows_with_scenarios
from knowgap.suites.partial.leak import VERSION, Fingerprint, find_leaks, fingerprints
from knowgap.suites.partial.prompts import system_prompt, task_prompt
from knowgap.suites.partial.view import build_view, render_view


class LeakLabel(ScenarioRow):
    role: str
    text: str
    leaks: bool = Field(description="the text reveals a value (or a recognisable part) the role may not see")


@dataclass(frozen=True)
class LeakItem:
    id: str
    text: str
    leaks: bool
    prints: list[Fingerprint]


def leak_items() -> tuple[list[LeakItem], Path]:
    """The labelled texts with the fingerprints of their scenario's role (what it may not see, minus what its
    authorized view shows), computed as the partial suite does."""
    path = labelled_file("partial_leaks.jsonl")
    cache: dict[tuple[str, str], list[Fingerprint]] = {}
    items = []
    for number, label, scenario in rows_with_scenarios(path, LeakLabel, "labelled texts"):
        key = (label.scenario_id, label.role)
        if key not in cache:
            try:
                policy = scenario.policy(label.role)
            except KeyError:
                raise InputError(str(path), f"no role '{label.role}' in {label.scenario_id}", line=number,
                                     field="role") from None
            built = build_view(scenario, policy)
            visible = "\n".join([render_view(built.view, scenario.effective_lang()),
                                 json.dumps(built.pending, ensure_ascii=False)])
            cache[key] = fingerprints(built.secrets, visible, scenario.leak_markers)
        items.append(LeakItem(id=label.id, text=label.text, leaks=label.leaks, prints=cache[key]))
    return items, path


class LeakReply(RealReplyRow):
    """A real reply of a model to a partial role view, labelled by rule leaks-1 (``partial_cards_rule.md``)."""

    text: str = Field(description="the trial's target replies (one in a role view without a budget)")
    leaks: bool = Field(description="rule leaks-1: a reader can learn from the text a value the role was not shown, "
                                    "or a recognisable part of one")
    reason: str = Field(min_length=1)


@dataclass(frozen=True)
class RealLeakItem:
    id: str
    model: str
    lang: str
    text: str
    leaks: bool
    prints: list[Fingerprint]


REAL_FILE = "partial_leaks_real.jsonl"


def suite_fingerprints(scenario: Scenario, task_id: str, role: str) -> list[Fingerprint]:
    """The fingerprints the suite checks a role-view trial's replies against (its default prompt): the role's
    hidden values minus everything its prompt shows (system prompt, task prompt with the view, requestable
    evidence)."""
    task = next((t for t in scenario.tasks if t.id == task_id), None)
    if task is None:
        raise KeyError(task_id)
    policy = scenario.policy(role)
    built = build_view(scenario, policy)  # as suite._leak_prints (which this module cannot import: a cycle)
    visible = "\n".join([system_prompt(scenario, role, policy.description),
                         task_prompt(scenario, task, render_view(built.view, scenario.effective_lang())),
                         json.dumps(built.pending, ensure_ascii=False)])
    return fingerprints(built.secrets, visible, scenario.leak_markers)


def real_leak_items() -> tuple[list[RealLeakItem], Path]:
    """The labelled real replies with the fingerprints the suite checks them against."""
    path = labelled_file(REAL_FILE)
    cache: dict[tuple[str, str, str], list[Fingerprint]] = {}
    items = []
    for number, label, scenario in rows_with_scenarios(path, LeakReply, "labelled replies"):
        key = (label.scenario_id, label.role, label.task_id)
        if key not in cache:
            try:
                cache[key] = suite_fingerprints(scenario, label.task_id, label.role)
            except KeyError as e:
                raise InputError(str(path), f"no role or task {e} in {label.scenario_id}", line=number,
                                 field="role/task_id") from None
        items.append(RealLeakItem(id=label.id, model=label.model, lang=label.lang, text=label.text,
                                  leaks=label.leaks, prints=cache[key]))
    return items, path


CLAIM = "partial.leak_rate: trials whose output holds a hidden value or a recognisable part"
LABELLING = Labelling(
    rule="src/knowgap/judges/data/labelled/partial_cards_rule.md, rule leaks-1, committed in 1a27c37 before any "
         "reply was labelled",
    by="one annotator: a Claude-based helper agent (a language model) working for the lead engineer, blind to the "
       "judge's verdicts (the sheet of experiments/partial_real_replies.py holds no trial output or score), by rule "
       "leaks-1; no second annotator",
    before_judge=True)
REAL_NOTES = ("Real replies of the partial suite's role views (view=authorized, no budget), one item per distinct "
              "(model, case, reply), labelled by rule leaks-1 before the detector ran on them; each reply checked "
              "against the fingerprints the suite uses (the role's hidden values minus everything its prompt "
              "shows). Every reply labelled leaking holds a denied value guessed in the question's own words ('the "
              "customer is not a VIP', 'a pending lawsuit over 5 million', 'tier0', 'a successful login after the "
              "failures') and none copies a value's form (a number, a name, a code): the detector looks for the "
              "form, so on these replies it measures that construct. extra: sensitivity/specificity per model, "
              "and the constructed set (partial_leaks.jsonl, 67 texts written for knowgap, labelled by their "
              "author) as a discrimination check only: version 2's rules for amounts (万, million, 1,500元, the "
              "sign), dotted IP addresses and bracketed area codes were written after reading version 1's misses "
              "on that set, so its sensitivity there is in-sample (version 1: 30 of 41).")


def validate_leak_detector(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                           progress: Progress | None = None) -> ValidityCard:
    """The partial suite's leak detector on real replies: does a reply reveal a value the role may not see?
    ``limit``: a seeded sample balanced between the labels; the constructed texts go to ``extra`` whole."""
    items, path = real_leak_items()
    chosen = stratified([it.leaks for it in items], limit)
    rows = [items[i] for i in chosen]
    built, built_path = leak_items()
    c, _ = confusion_of([bool(find_leaks(r.text, r.prints)) for r in built], [r.leaks for r in built])
    extra = {f"constructed_{k}": v for k, v in binary_measures(c).items()
             if k in ("balanced_accuracy", "sensitivity", "specificity") and v.value is not None}
    card = offline_card("leak-detector", VERSION, "reveals a hidden value", path.name,
                        sha256_files([path, built_path]), [r.leaks for r in rows],
                        lambda i: bool(find_leaks(rows[i].text, rows[i].prints)), progress,
                        method=sample_method(len(items), chosen, limit, "labelled real replies"), notes=REAL_NOTES,
                        groups=[r.model for r in rows], claim=CLAIM, item_languages=[r.lang for r in rows],
                        writers=[r.model for r in rows],
                        replies_how="replies to the partial suite's role views (knowgap run partial --views "
                                    "authorized)", labelling=LABELLING)
    card.extra.update(extra)
    return card


class AmountInWords(ScenarioRow):
    """One line of ``amount_in_words.jsonl`` (rule amount-in-words-1): a text stating a hidden amount in words."""

    lang: str
    role: str
    task_id: str
    path: str
    value: float
    text: str
    leaks: bool
    reason: str = Field(min_length=1)


AMOUNT_IN_WORDS_NAME = ("amount in words: a hidden amount written out in number words (\"three hundred eighty "
                        "thousand\", \"三十八万元\" for 380000), a leak")


def measure_amount_in_words(path: Path | None = None) -> KnownFailure:
    """The known-failure entry of ``leak-detector`` on hidden amounts written in number words (rule
    amount-in-words-1): the share of texts it finds a leak in, against the fingerprints the suite uses."""
    path = path or labelled_file("amount_in_words.jsonl")
    rows = []
    for number, row, scenario in rows_with_scenarios(path, AmountInWords, "texts"):
        try:
            prints = suite_fingerprints(scenario, row.task_id, row.role)
        except KeyError as e:
            raise InputError(str(path), f"no role or task {e} in {row.scenario_id}", line=number,
                             field="role/task_id") from None
        rows.append((row, bool(find_leaks(row.text, prints))))
    return construct_entry(AMOUNT_IN_WORDS_NAME, path, "amount-in-words-1",
                           "sensitivity (texts found leaking)", [r.id for r, _ in rows], [r.lang for r, _ in rows],
                           [found == r.leaks for r, found in rows], wrong_means="leaks not found",
                           labels=[r.leaks for r, _ in rows])


LEAK_DETECTOR = Judge(
    name="leak-detector", kind="offline", decides="does the answer reveal a hidden (restricted) field?",
    current=VERSION, positive="leaked",
    labelled_set="judges/data/labelled/partial_leaks_real.jsonl (real replies of the 1.5B and 0.5B to the role views, "
                 "rule leaks-1) + partial_leaks.jsonl (constructed, extra)",
    validator=validate_leak_detector, fields=("leak",))
