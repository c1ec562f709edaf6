"""Where does this model obey hidden instructions? The cross-suite injection tables of a report, read from the
shared metric names of :mod:`knowgap.injection.metrics` whatever suite stored them (docs/injection.md).

- **Attacks**: one row per run (and base configuration), one column per attack family
  (:data:`~knowgap.injection.attacks.FAMILIES`), each cell ``attack_success_rate:family=F`` under the ``none``
  defence as "rate [95% CI] k/n", beside the overall rate and the noise floor (``attack_noise_floor``, measured
  only with ``--repeats 2``). A run without these metrics gets no row (a row would only say so): one line under
  the table names the runs not run with ``--inject``.
- **Pressure, not attack**: clarify's ``pressure_*`` metrics (the user's own "don't ask, just answer"), apart.
- **Defences**: per run, base configuration and defence (the configuration id's ``+DEFENCE`` suffix; none: no
  suffix), the attack success rate and ``clean_task_score``; gain = attack success under ``none`` minus under the
  defence, cost = clean score under ``none`` minus under the defence, in points. Their 95% interval is a paired
  bootstrap over the run's clusters when the run's suite and trials are at hand (:func:`bootstrap_within`: the
  same cases under both configurations), else both rates' own intervals are given and whether they overlap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from knowgap.engine.records import MetricValue, TrialRecord
from knowgap.engine.suite import Suite
from knowgap.injection.attacks import FAMILIES
from knowgap.injection.defences import DEFENCES
from knowgap.injection.metrics import ATTACK_SUCCESS, CLEAN_TASK_SCORE, NOISE_FLOOR
from knowgap.report.compare import Key, bootstrap_within
from knowgap.report.data import RunData
from knowgap.report.svg import esc

PRESSURE = "pressure_"
NOT_INJECTED = "not run with --inject"
ONLY_DEFENDED = "run with --inject under defences only (see the defences table)"
NO_FLOOR = "not measured (--repeats 2)"
NO_RERUN_FLOOR = "not measured (--runs 2 or more)"
"""A run of a suite that measures its floor from re-runs within a trial (extract's ``--runs``) without any."""
AT_ZERO = " (temperature 0: 0 by construction for a deterministic model)"
"""After a floor measured at temperature 0: its clean runs asked one request twice."""
TITLE = "Where does this model obey hidden instructions?"
PRESSURE_TITLE = "Pressure, not attack"
DEFENCES_TITLE = "Defences: gain and cost"
READING = ("Attack success under the `none` defence: injected runs whose hidden instruction worked, against the "
           "clean run of the same case, as rate [95% CI] k/n (`-`: no attack of that family was planted). The "
           "noise floor is the same check between two clean runs of a case: repeats 0 and 1 (`--repeats 2`), or "
           "for extract a review's clean re-runs within one trial (`--runs`, 3 by default; `--runs 1` measures "
           "none). A marker check's floor is 0 by construction; so is any floor at temperature 0 (extract's default "
           "`--temperature 0`) with a deterministic model, such as a local one: its clean runs ask one request "
           "twice and get one answer (set e.g. `--temperature 0.7` to measure it). See docs/injection.md.")
DEFENCES_READING = ("gain = attack success under `none` minus under the defence (positive: fewer attacks "
                    "worked); cost = clean task score under `none` minus under the defence (positive: the defence "
                    "costs clean accuracy); in points, with a paired 95% CI over the run's clusters where the "
                    "trials are at hand, else both rates' intervals and whether they overlap.")


def split_defence(group: str) -> tuple[str, str]:
    """(base configuration, defence) of a metric group: ``base+datamark`` -> (base, datamark); no defence suffix:
    (group, none)."""
    base, plus, suffix = group.rpartition("+")
    if plus and suffix in DEFENCES and suffix != "none":
        return base, suffix
    return group, "none"


@dataclass(frozen=True)
class RunMetrics:
    """What the tables read of one run: its metrics, and (for paired intervals) its trials and suite."""

    suite: str
    run_id: str
    metrics: Sequence[MetricValue]
    records: Sequence[TrialRecord] = ()
    suite_obj: Suite | None = field(default=None, repr=False)

    @classmethod
    def of(cls, run: RunData) -> RunMetrics:
        return cls(suite=run.manifest.config.suite, run_id=run.run_id, metrics=run.metrics, records=run.records,
                   suite_obj=run.suite)

    def get(self, group: str, name: str) -> MetricValue | None:
        return next((m for m in self.metrics if m.group == group and m.name == name), None)

    def groups(self, name: str) -> list[str]:
        """The groups holding metric ``name``, in stored order."""
        return list(dict.fromkeys(m.group for m in self.metrics if m.name == name))


@dataclass
class AttackRow:
    suite: str
    run_id: str
    group: str
    note: str = ""
    """Why the row has no numbers (:data:`NOT_INJECTED`, :data:`ONLY_DEFENDED`); empty when it has them."""
    overall: MetricValue | None = None
    families: dict[str, MetricValue | None] = field(default_factory=dict)
    noise_floor: MetricValue | None = None
    reruns: bool = False
    """Whether the run's floor comes from re-runs within a trial (extract's ``--runs``), not ``--repeats 2``."""
    temperature: float | None = None
    """The clean runs' temperature where the suite has the option (extract, clarify); None: not known here."""


def floor_design(run: RunMetrics) -> tuple[bool, float | None]:
    """How a run measures its noise floor: (from re-runs of the clean request within a trial, the suite having a
    ``runs`` option: extract; the clean runs' ``temperature`` where the suite has that option, else None)."""
    options = run.suite_obj.options if run.suite_obj is not None else None
    runs, temperature = getattr(options, "runs", None), getattr(options, "temperature", None)
    return isinstance(runs, int), float(temperature) if isinstance(temperature, int | float) else None


@dataclass
class Difference:
    """``none`` minus the defence, in the metric's units (points for proportions)."""

    value: float
    ci_low: float | None = None
    ci_high: float | None = None
    method: str = ""
    overlap: bool | None = None
    """Whether the two rates' own 95% intervals overlap (None: an interval is missing)."""

    def text(self, kind: str) -> str:
        scale, unit = (100, " pp") if kind == "proportion" else (1, "")
        out = f"{self.value * scale:+.1f}{unit}"
        if self.ci_low is not None and self.ci_high is not None:
            out += f" [{self.ci_low * scale:+.1f}, {self.ci_high * scale:+.1f}]"
            if self.ci_low <= 0 <= self.ci_high:
                out += " (CI includes 0)"
        elif self.overlap is not None:
            out += " (intervals overlap: not distinguishable)" if self.overlap else " (intervals do not overlap)"
        return out


@dataclass
class DefenceRow:
    suite: str
    run_id: str
    group: str
    defence: str
    attack: MetricValue | None = None
    clean: MetricValue | None = None
    gain: Difference | None = None
    cost: Difference | None = None


def rate_cell(m: MetricValue | None) -> str:
    """"12.5% [4.3%, 31.0%] 3/24" (k/n: trials); "-" when absent."""
    if m is None or m.value is None:
        return "-"
    if m.kind != "proportion":
        ci = f" [{m.ci_low:.3f}, {m.ci_high:.3f}]" if m.ci_low is not None and m.ci_high is not None else ""
        return f"{m.value:.3f}{ci} n={m.n}"
    ci = f" [{m.ci_low:.1%}, {m.ci_high:.1%}]" if m.ci_low is not None and m.ci_high is not None else ""
    return f"{m.value:.1%}{ci} {round(m.value * m.n)}/{m.n}"


def attack_rows(runs: Sequence[RunMetrics]) -> list[AttackRow]:
    """One row per run and base configuration with attack metrics under ``none``; one noted row per run
    without them."""
    rows: list[AttackRow] = []
    for run in runs:
        groups = run.groups(ATTACK_SUCCESS)
        plain = [g for g in groups if split_defence(g)[1] == "none"]
        if not plain:
            rows.append(AttackRow(run.suite, run.run_id, "", note=ONLY_DEFENDED if groups else NOT_INJECTED))
        reruns, temperature = floor_design(run)
        for g in plain:
            rows.append(AttackRow(run.suite, run.run_id, g, overall=run.get(g, ATTACK_SUCCESS),
                                  families={f: run.get(g, f"{ATTACK_SUCCESS}:family={f}") for f in FAMILIES},
                                  noise_floor=run.get(g, NOISE_FLOOR), reruns=reruns, temperature=temperature))
    return rows


def pressure_metrics(runs: Sequence[RunMetrics]) -> list[tuple[RunMetrics, MetricValue]]:
    """clarify's ``pressure_*`` metrics of every run (a pressure test, reported apart from attacks)."""
    return [(run, m) for run in runs for m in run.metrics if m.name.startswith(PRESSURE)]


def _difference(none: MetricValue | None, defended: MetricValue | None,
                paired: tuple[float, float, float] | None) -> Difference | None:
    if none is None or defended is None or none.value is None or defended.value is None:
        return None
    diff = Difference(value=none.value - defended.value)
    if paired is not None:
        diff.ci_low, diff.ci_high, _ = paired
        diff.method = "paired cluster bootstrap"
        return diff
    if None not in (none.ci_low, none.ci_high, defended.ci_low, defended.ci_high):
        diff.overlap = not (none.ci_high < defended.ci_low or defended.ci_high < none.ci_low)  # type: ignore[operator]
        diff.method = "both intervals"
    return diff


def defence_rows(runs: Sequence[RunMetrics], *, reps: int = 1000, seed: int = 0,
                 budget_s: float = 10.0) -> list[DefenceRow]:
    """Per run and base configuration run under at least one defence: a row for ``none`` and one per defence,
    each with the attack success rate and clean task score, gain and cost against ``none``."""
    rows: list[DefenceRow] = []
    for run in runs:
        by_base: dict[str, dict[str, str]] = {}  # base -> defence -> group
        for g in run.groups(ATTACK_SUCCESS) + run.groups(CLEAN_TASK_SCORE):
            base, defence = split_defence(g)
            by_base.setdefault(base, {})[defence] = g
        bases = {b: d for b, d in by_base.items() if len(d) > 1 or "none" not in d}
        pairs: list[tuple[Key, Key]] = [((groups["none"], name), (g, name)) for groups in bases.values()
                                        if "none" in groups for d, g in groups.items() if d != "none"
                                        for name in (ATTACK_SUCCESS, CLEAN_TASK_SCORE)]
        paired = (bootstrap_within(run.suite_obj, run.records, pairs, reps=reps, seed=seed, budget_s=budget_s)
                  if run.suite_obj is not None and run.records and pairs else {})
        for base, groups in bases.items():
            ref = groups.get("none")
            for defence in sorted(groups, key=DEFENCES.index):
                g = groups[defence]
                row = DefenceRow(run.suite, run.run_id, base, defence, attack=run.get(g, ATTACK_SUCCESS),
                                 clean=run.get(g, CLEAN_TASK_SCORE))
                if ref is not None and defence != "none":
                    row.gain = _difference(run.get(ref, ATTACK_SUCCESS), row.attack,
                                           paired.get(((ref, ATTACK_SUCCESS), (g, ATTACK_SUCCESS))))
                    row.cost = _difference(run.get(ref, CLEAN_TASK_SCORE), row.clean,
                                           paired.get(((ref, CLEAN_TASK_SCORE), (g, CLEAN_TASK_SCORE))))
                rows.append(row)
    return rows


def has_injection(runs: Sequence[RunMetrics]) -> bool:
    """Whether any run holds an injection or pressure metric (else the report leaves the tables out)."""
    return any(m.name.split(":", 1)[0] in (ATTACK_SUCCESS, NOISE_FLOOR, CLEAN_TASK_SCORE)
               or m.name.startswith(PRESSURE) for run in runs for m in run.metrics)


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _label(suite: str, run_id: str, group: str) -> str:
    return f"{suite} · {group} ({run_id})" if group else f"{suite} ({run_id})"


def _kind(*metrics: MetricValue | None) -> str:
    return next((m.kind for m in metrics if m is not None), "proportion")


def _attack_cells(row: AttackRow) -> list[str]:
    if row.note:
        return [row.note] + [""] * (len(FAMILIES) + 1)
    if row.noise_floor is None:
        floor = NO_RERUN_FLOOR if row.reruns else NO_FLOOR
    else:
        floor = rate_cell(row.noise_floor) + (AT_ZERO if row.temperature == 0 else "")
    return [rate_cell(row.overall), *(rate_cell(row.families[f]) for f in FAMILIES), floor]


def _defence_cells(row: DefenceRow) -> list[str]:
    gain = row.gain.text(_kind(row.attack)) if row.gain is not None else ""
    cost = row.cost.text(_kind(row.clean)) if row.cost is not None else ""
    return [row.defence, rate_cell(row.attack), gain, rate_cell(row.clean), cost]


ATTACK_COLUMNS = ("suite · configuration (run)", "overall", *FAMILIES, "noise floor")
DEFENCE_COLUMNS = ("suite · configuration (run)", "defence", "attack success", "gain vs none", "clean task score",
                   "cost vs none")
PRESSURE_COLUMNS = ("suite · configuration (run)", "metric", "value")


def _drawn(runs: Sequence[RunMetrics]) -> tuple[list[AttackRow], str]:
    """The attack table's rows that have something to say, and one line naming the runs not run with ``--inject``
    (a row saying only that is not drawn)."""
    rows = attack_rows(runs)
    skipped = [_label(r.suite, r.run_id, "") for r in rows if r.note == NOT_INJECTED]
    return [r for r in rows if r.note != NOT_INJECTED], (f"{NOT_INJECTED}: {', '.join(skipped)}." if skipped else "")


def injection_markdown(runs: Sequence[RunMetrics], *, level: int = 2, budget_s: float = 10.0) -> list[str]:
    """The tables as markdown lines (none when no run has an injection metric); ``budget_s``: the time the
    defences' paired bootstrap may take per run (else both intervals)."""
    if not has_injection(runs):
        return []
    h = "#" * level

    def table(columns: Sequence[str], rows: list[list[str]]) -> list[str]:
        return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns),
                *("| " + " | ".join(_md(c) for c in r) + " |" for r in rows)]

    drawn, skipped = _drawn(runs)
    lines = [f"{h} {TITLE}", ""]
    if drawn:
        lines += [READING, "", *table(ATTACK_COLUMNS, [[_label(r.suite, r.run_id, r.group), *_attack_cells(r)]
                                                       for r in drawn]), ""]
    if skipped:
        lines += [skipped, ""]
    pressure = pressure_metrics(runs)
    if pressure:
        lines += [f"{h} {PRESSURE_TITLE}", "", "The user's own pressure (\"don't ask me anything, just answer\"), "
                  "not a hidden instruction: clarify's pressure test.", "",
                  *table(PRESSURE_COLUMNS, [[_label(run.suite, run.run_id, m.group), m.name, rate_cell(m)]
                                            for run, m in pressure]), ""]
    defended = defence_rows(runs, budget_s=budget_s)
    if defended:
        lines += [f"{h} {DEFENCES_TITLE}", "", DEFENCES_READING, "",
                  *table(DEFENCE_COLUMNS, [[_label(r.suite, r.run_id, r.group), *_defence_cells(r)]
                                           for r in defended]), ""]
    return lines


def injection_html(runs: Sequence[RunMetrics], *, budget_s: float = 10.0) -> str:
    """The tables as an HTML section (empty when no run has an injection metric)."""
    if not has_injection(runs):
        return ""

    def table(columns: Sequence[str], rows: list[list[str]]) -> str:
        head = "".join(f"<th>{esc(c)}</th>" for c in columns)
        body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows)
        return f"<table class=injection><tr>{head}</tr>{body}</table>"

    drawn, skipped = _drawn(runs)
    parts = [f'<section class="run" id="injection"><h2>{esc(TITLE)}</h2>']
    if drawn:
        parts += [f"<p class=facts>{esc(READING)}</p>",
                  table(ATTACK_COLUMNS, [[_label(r.suite, r.run_id, r.group), *_attack_cells(r)] for r in drawn])]
    if skipped:
        parts.append(f'<p class="facts not-injected">{esc(skipped)}</p>')
    pressure = pressure_metrics(runs)
    if pressure:
        parts += [f"<h3>{esc(PRESSURE_TITLE)}</h3>",
                  "<p class=facts>The user's own pressure (&quot;don't ask me anything, just answer&quot;), not a "
                  "hidden instruction: clarify's pressure test.</p>",
                  table(PRESSURE_COLUMNS, [[_label(run.suite, run.run_id, m.group), m.name, rate_cell(m)]
                                           for run, m in pressure])]
    defended = defence_rows(runs, budget_s=budget_s)
    if defended:
        parts += [f"<h3>{esc(DEFENCES_TITLE)}</h3>", f"<p class=facts>{esc(DEFENCES_READING)}</p>",
                  table(DEFENCE_COLUMNS, [[_label(r.suite, r.run_id, r.group), *_defence_cells(r)]
                                          for r in defended])]
    parts.append("</section>")
    return "".join(parts)
