"""Dataset cards: what a suite's shipped reference data is, where it came from, who labelled it and how, and how
often an independent re-read of a random sample found its reference wrong (issue 37).

Two files in a suite's ``data/`` folder (next to the module that defines the suite class, so a plugin suite can
ship them too):

- ``reread.jsonl``: one :class:`RereadRow` per sampled unit: ``{"unit", "verdict": "correct" | "wrong",
  "reason", "reader", "read_on": "YYYY-MM-DD", "fixed"}``. The verdict is the reader's judgement of the data as
  shipped before any fix; ``fixed`` says whether a wrong one was fixed after the read (always false for a
  correct one). The sample: :func:`draw_sample` over the shipped default dataset's units, as the suite's data part
  reads them (``SuiteData(..., units=...)``: :func:`shipped_units`) (``random.Random(37).sample(sorted(units),
  40)``; every unit when there are fewer than 40).
- ``dataset_card.yaml``: a :class:`DatasetCard`: provenance, licence, labelling procedure, each label set's
  provenance (who labelled: people or models, which; by what rule; how independently; what the history shows),
  and the re-read's counts (``n``, ``wrong``, ``fixed``), which must equal what :func:`measure` counts in
  ``reread.jsonl``. The error rate and its 95% Wilson interval are never typed in: :func:`measure` computes them
  (through :mod:`knowgap.stats`) every time a card is shown.

``knowgap suites`` shows each suite's measured rate (a plugin suite without a card: "no dataset card"), each
suite's ``docs/SUITE.md`` holds :func:`card_markdown` between :data:`DOCS_START` and :data:`DOCS_END` (written by
``python -m knowgap.suites.dataset_cards --write-docs``; ``tests/suites/test_dataset_cards.py`` fails when the docs
drift from the yaml), and every run's report gives the suite's rate under its heading (:func:`report_line`).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from knowgap.errors import InputError, KnowgapError
from knowgap.stats import wilson
from knowgap.strictjsonl import read_strict
from knowgap.yamlfile import load_yaml_model

CARD_FILE = "dataset_card.yaml"
REREAD_FILE = "reread.jsonl"
SAMPLE_SEED = 37
SAMPLE_SIZE = 40
DOCS_START = "<!-- dataset-card:start (generated from the suite's data/dataset_card.yaml: python -m " \
             "knowgap.suites.dataset_cards --write-docs) -->"
DOCS_END = "<!-- dataset-card:end -->"
MODEL_READER = "model: LLM agent (knowgap session helper), reading the seed and the case; not the author of the case"
"""How a model helper that re-reads a suite's data names itself in ``reader``."""


class RereadRow(BaseModel):
    """One sampled unit as an independent reader judged it (a line of ``reread.jsonl``)."""

    model_config = ConfigDict(extra="forbid")

    unit: str = Field(min_length=1, description="The unit's id (the suite's card says what a unit is).")
    verdict: Literal["correct", "wrong"] = Field(description="The reader's judgement of the data as shipped, "
                                                             "before any fix.")
    reason: str = Field(min_length=1, pattern=r"\S", description="One or two sentences; for a wrong one: what is "
                                                                 "wrong and what the reference should be.")
    reader: str = Field(min_length=1, pattern=r"\S", description="Who read it (a person, or a model and its role).")
    read_on: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="The day of the read (YYYY-MM-DD).")
    fixed: bool = Field(description="Whether a wrong unit was fixed after the read (false for a correct one).")

    @model_validator(mode="after")
    def _only_wrong_ones_are_fixed(self) -> RereadRow:
        if self.fixed and self.verdict == "correct":
            raise ValueError("a unit read as correct cannot be 'fixed' (fixed says whether a wrong one was fixed)")
        return self


class LabelSet(BaseModel):
    """Who made one shipped set of labels (references), by what rule, how independently."""

    model_config = ConfigDict(extra="forbid")

    name: str
    files: list[str] = Field(min_length=1, description="The files holding these labels: paths relative to the "
                                                       "repository root or to the card's data folder (globs allowed).")
    labelled_by: str = Field(description="People or models, which; 'unknown' when nothing says.")
    rule: str = Field(description="The written rule the labels follow (where it is), or 'unknown'.")
    independence: str = Field(description="How independently the labels were made (of each other, of the judge "
                                          "they validate, of the case's author), or 'unknown'.")
    evidence: str = Field(description="What the git history and docs show (commits, dates); only what they show.")
    unknown_means: str = Field("", description="Where something is unknown: what that means for the card.")


class Reread(BaseModel):
    """The re-read's design and counts (the counts must equal :func:`measure` of ``file``)."""

    model_config = ConfigDict(extra="forbid")

    file: str = REREAD_FILE
    unit: str = Field(description="What one unit is (a case id, a case/role/task id...).")
    population: int = Field(ge=1, description="The units of the shipped default dataset the sample was drawn from.")
    population_sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="sha256 of the sorted unit ids, one a "
                                                                          "line (:func:`population_sha256`).")
    population_changed: str = Field("", description="Why the shipped units differ from the population drawn "
                                                     "from (a fix that added or renamed units), if they do.")
    sample: str = (f"random.Random({SAMPLE_SEED}).sample(sorted(unit_ids), {SAMPLE_SIZE}) over the units of the "
                   "shipped default dataset (every unit when there are fewer)")
    n: int = Field(ge=1)
    wrong: int = Field(ge=0)
    fixed: int = Field(ge=0)
    what_was_fixed: str = ""


class Exclusions(BaseModel):
    """Shipped units a run leaves out by default (a fix that keeps the data as published: abstain's questions still
    answerable without their fact). ``file`` is JSONL inside ``data/`` with ``id`` and ``excluded`` on every row."""

    model_config = ConfigDict(extra="forbid")

    file: str
    why: str
    keep_option: str = Field(description="The suite option that keeps them (true: none left out).")


class DatasetCard(BaseModel):
    """A suite's dataset card (``data/dataset_card.yaml``)."""

    model_config = ConfigDict(extra="forbid")

    suite: str
    dataset: list[str] = Field(min_length=1, description="The shipped default dataset's files (inside data/).")
    provenance: str
    licence: str
    labelling: str = Field(description="How the references were made, in a few sentences.")
    label_sets: list[LabelSet] = Field(min_length=1)
    reread: Reread
    not_reread: str = Field("", description="Shipped data the re-read does not cover, and why.")
    excluded_by_default: Exclusions | None = None


@dataclass(frozen=True)
class Measured:
    """The re-read counted from ``reread.jsonl``: the share of units read as wrong with its 95% Wilson interval."""

    n: int
    wrong: int
    fixed: int

    @property
    def rate(self) -> float:
        return self.wrong / self.n

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.wrong, self.n)

    def text(self) -> str:
        """``2/40 = 5% [1.4%, 16.5%]``."""
        low, high = self.interval
        return f"{self.wrong}/{self.n} = {percent(self.rate)} [{percent(low)}, {percent(high)}]"


def percent(x: float) -> str:
    """A share as a percentage with at most one decimal, no trailing ``.0`` (0.05 -> ``5%``, 0.138 -> ``13.8%``)."""
    text = f"{x * 100:.1f}"
    return (text[:-2] if text.endswith(".0") else text) + "%"


@dataclass(frozen=True)
class LoadedCard:
    """A suite's card, its re-read rows and what they measure."""

    path: Path
    card: DatasetCard
    rows: list[RereadRow]
    measured: Measured

    @property
    def folder(self) -> Path:
        return self.path.parent

    def problems(self) -> list[str]:
        """Where the card's typed counts differ from what the re-read file counts (empty when they agree)."""
        out = []
        for name in ("n", "wrong", "fixed"):
            typed, counted = getattr(self.card.reread, name), getattr(self.measured, name)
            if typed != counted:
                out.append(f"{self.path}: reread.{name} is {typed}, but {self.card.reread.file} counts {counted}")
        return out

    def summary(self) -> str:
        """``2/40 = 5% [1.4%, 16.5%] read wrong, 2 fixed``."""
        m = self.measured
        return f"{m.text()} read wrong, {m.fixed} fixed"

    def excluded(self) -> list[str]:
        """The ids the card's exclusion file leaves out by default (none without one)."""
        ex = self.card.excluded_by_default
        if ex is None:
            return []
        return [str(row["id"]) for row in _jsonl(self.folder / ex.file) if row.get("excluded") is True]

    def exclusion_text(self, *, listed: bool = False) -> str:
        """``19 shipped units left out by default (...; --keep-option keeps them)``, or "" without exclusions."""
        ex, ids = self.card.excluded_by_default, self.excluded()
        if ex is None or not ids:
            return ""
        flag = "--" + ex.keep_option.replace("_", "-")
        return (f"{len(ids)} shipped units left out by default ({ex.why}; {ex.file}; {flag} keeps them)"
                + (f": {', '.join(ids)}" if listed else ""))


def read_reread(path: Path) -> list[RereadRow]:
    """The rows of a re-read file; every problem (file, line, field) in one InputError."""
    check = read_strict(path, RereadRow, what="re-read units", id_field="unit", strict=False)
    check.raise_problems()
    return [row for _, row in check.records]


def measure(rows: Sequence[RereadRow]) -> Measured:
    """The re-read's counts: units read, read wrong, and wrong ones fixed."""
    if not rows:
        raise ValueError("a re-read of no units measures nothing")
    return Measured(n=len(rows), wrong=sum(r.verdict == "wrong" for r in rows),
                    fixed=sum(r.verdict == "wrong" and r.fixed for r in rows))


def load_card(folder: Path) -> LoadedCard | None:
    """The dataset card in ``folder`` (a suite's ``data/``) with its re-read measured; None when there is none.
    A card or re-read file that cannot be read raises InputError naming the file, line and field."""
    path = folder / CARD_FILE
    if not path.is_file():
        return None
    card = load_yaml_model(path, DatasetCard, what="dataset card", expected="a mapping (suite, dataset, ...)")
    rows = read_reread(folder / card.reread.file)
    return LoadedCard(path=path, card=card, rows=rows, measured=measure(rows))


def data_folder(suite_cls: type) -> Path | None:
    """The ``data/`` folder beside the module that defines ``suite_cls`` (None when it has no file)."""
    module = sys.modules.get(suite_cls.__module__)
    try:
        source = inspect.getfile(module) if module is not None else None
    except TypeError:
        source = None
    return Path(source).parent / "data" if source else None


def card_of(suite_cls: type) -> LoadedCard | None:
    """The dataset card of a suite class (None: it ships none)."""
    folder = data_folder(suite_cls)
    return load_card(folder) if folder is not None else None


def card_status(suite_cls: type) -> str:
    """One phrase for listings: the measured reference error rate, "no dataset card", or why the card is unusable."""
    try:
        loaded = card_of(suite_cls)
    except InputError as exc:
        return f"dataset card unreadable ({exc})"
    if loaded is None:
        return "no dataset card"
    wrong = loaded.problems()
    left = loaded.exclusion_text()
    return (f"reference error rate {loaded.summary()}" + (f"; {left}" if left else "")
            + (f" (card disagrees: {'; '.join(wrong)})" if wrong else ""))


# ---------------------------------------------------------------------------------------- units and the sample
def _jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def shipped_units(suite: str | type, folder: Path) -> list[str]:
    """The unit ids of the shipped default dataset in ``folder`` of ``suite`` (a name or a suite class), as its data
    part reads them (:attr:`knowgap.SuiteData.units`: a case id, a question identifier, a role's task)."""
    from knowgap.engine.suite_data import data_of
    from knowgap.suites.registry import get_suite

    cls = get_suite(suite) if isinstance(suite, str) else suite
    data = data_of(cls)
    if data is None or data.units is None:
        raise KnowgapError(f"suite {getattr(cls, 'name', cls)!r}: its data part names no units of its shipped "
                           "dataset (SuiteData(..., units=...)), so a dataset card's re-read has none to sample")
    return data.units(folder)


def population_sha256(units: Sequence[str]) -> str:
    """sha256 of the sorted unit ids, one a line: names the population a sample was drawn from."""
    return hashlib.sha256("\n".join(sorted(units)).encode("utf-8")).hexdigest()


def draw_sample(units: Sequence[str], size: int = SAMPLE_SIZE, seed: int = SAMPLE_SEED) -> list[str]:
    """The re-read's sample: ``random.Random(seed).sample(sorted(units), size)``, every unit when fewer."""
    ordered = sorted(set(units))
    return ordered if len(ordered) <= size else random.Random(seed).sample(ordered, size)


# ---------------------------------------------------------------------------------------- docs and reports
def card_markdown(loaded: LoadedCard) -> str:
    """The "Dataset card" section of a suite's docs, generated from the yaml and the re-read file."""
    card, m = loaded.card, loaded.measured
    r = card.reread
    low, high = m.interval
    lines = [DOCS_START, "## Dataset card", "",
             f"From `src/knowgap/suites/{card.suite}/data/{CARD_FILE}` (the re-read: `{r.file}` beside it).", "",
             f"- **Dataset** (the shipped default): {', '.join(f'`{d}`' for d in card.dataset)}",
             f"- **Provenance**: {card.provenance}",
             f"- **Licence**: {card.licence}",
             f"- **Labelling**: {card.labelling}",
             f"- **Reference error rate**: {m.wrong} of {m.n} sampled units read wrong = {percent(m.rate)} "
             f"(95% Wilson interval {percent(low)} to {percent(high)}); {m.fixed} of them fixed since. "
             f"Unit: {r.unit}. Sample: {r.sample}, from {r.population} units.",
             ]
    if r.what_was_fixed:
        lines.append(f"- **What was fixed**: {r.what_was_fixed}")
    if r.population_changed:
        lines.append(f"- **Units since the draw**: {r.population_changed}")
    if card.excluded_by_default is not None:
        lines.append(f"- **Exclusions**: {loaded.exclusion_text(listed=True)}.")
    if card.not_reread:
        lines.append(f"- **Not re-read**: {card.not_reread}")
    readers = sorted({row.reader for row in loaded.rows})
    lines.append(f"- **Read by**: {'; '.join(readers)}")
    lines += ["", "| label set | files | labelled by | rule | independence | what the history shows |",
              "|---|---|---|---|---|---|"]
    for s in card.label_sets:
        cells = [s.name, ", ".join(f"`{f}`" for f in s.files), s.labelled_by, s.rule, s.independence,
                 s.evidence + (f" {s.unknown_means}" if s.unknown_means else "")]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join([*lines, "", DOCS_END])


def docs_section(text: str) -> str | None:
    """The generated card section of a docs page (between the markers), None when it has none."""
    start, end = text.find(DOCS_START), text.find(DOCS_END)
    if start < 0 or end < start:
        return None
    return text[start:end + len(DOCS_END)]


def write_docs(docs: Path, loaded: LoadedCard) -> bool:
    """Put the card's section into the docs page ``docs`` (replacing the one there, else appended); True when the
    page changed."""
    text = docs.read_text(encoding="utf-8")
    new = card_markdown(loaded)
    old = docs_section(text)
    updated = text.replace(old, new) if old is not None else text.rstrip("\n") + "\n\n" + new + "\n"
    if updated == text:
        return False
    docs.write_text(updated, encoding="utf-8")
    return True


def report_line(suite_cls: type | None, dataset_hashes: dict[str, str] | None = None,
                options: dict[str, object] | None = None) -> str:
    """The line a run's report gives under its suite's heading: the shipped data's measured reference error rate,
    whether the run used that data (its dataset files, from the manifest, against the card's), and the shipped units
    it left out by default (listed: the run's dataset files hold the exclusion file, and its options did not keep
    them)."""
    if suite_cls is None:
        return "Reference data: the suite is not installed here, so its dataset card cannot be read."
    try:
        loaded = card_of(suite_cls)
    except InputError as exc:
        return f"Reference data: the dataset card cannot be read ({exc})."
    if loaded is None:
        return "Reference data: no dataset card (the suite ships no measured reference error rate)."
    line = (f"Reference data: {loaded.summary()} in an independent re-read of the shipped data "
            f"(dataset card: {loaded.card.suite}/data/{CARD_FILE}).")
    used = {Path(p).resolve() for p in dataset_hashes or {}}
    if used and not used & {(loaded.folder / d).resolve() for d in loaded.card.dataset}:
        line += " This run used other data than the card measures."
    ex = loaded.card.excluded_by_default
    if ex is not None and (loaded.folder / ex.file).resolve() in used and not (options or {}).get(ex.keep_option):
        left = loaded.exclusion_text(listed=True)  # the run left them out: its dataset files hold the exclusion list
        if left:
            line += f" {left[0].upper()}{left[1:]}."
    return line


def reference_data_line(suite: str, dataset_hashes: dict[str, str] | None = None,
                        options: dict[str, object] | None = None) -> str:
    """:func:`report_line` for the suite named ``suite`` (a run's manifest names it; a suite no longer installed
    says so)."""
    from knowgap.errors import KnowgapError
    from knowgap.suites.registry import get_suite

    try:
        cls: type | None = get_suite(suite)
    except KnowgapError:
        cls = None
    return report_line(cls, dataset_hashes, options)


def _main(argv: Sequence[str]) -> int:
    """``python -m knowgap.suites.dataset_cards [--write-docs [SUITE ...]] [--draw SUITE]``: print every built-in
    card's measure; write the docs sections (of the suites named, else of all); or print a suite's sample (one unit id
    a line)."""
    from knowgap.suites.registry import BUILTIN, get_suite

    root = Path(__file__).resolve().parents[3]
    if len(argv) == 2 and argv[0] == "--draw":
        folder = data_folder(get_suite(argv[1]))
        assert folder is not None
        units = shipped_units(argv[1], folder)
        print(f"# {len(units)} units, population_sha256 {population_sha256(units)}", file=sys.stderr)
        print("\n".join(draw_sample(units)))
        return 0
    only = [a for a in argv if a != "--write-docs"]
    for name in BUILTIN:
        loaded = card_of(get_suite(name))
        print(f"{name}: {loaded.summary() if loaded else 'no dataset card'}")
        write = "--write-docs" in argv and (not only or name in only)
        if loaded is not None and write and write_docs(root / "docs" / f"{name}.md", loaded):
            print(f"  wrote docs/{name}.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
