"""What the report draws from a run, generic over suites: one bar chart per metric (bars = groups, with
95% CIs) and confusion matrices between categorical scores (bool or few-valued strings)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from itertools import combinations

from knowgap.engine.records import MetricValue, TrialRecord
from knowgap.report.scorecard import RunCard
from knowgap.report.svg import Bar, bar_chart, confusion_matrix

MAX_CATEGORIES = 8
MAX_PAIRS = 3
MAX_GROUP_MATRICES = 6


def metric_charts(metrics: Sequence[MetricValue]) -> list[str]:
    by_name: dict[str, list[MetricValue]] = defaultdict(list)
    for m in metrics:
        by_name[m.name].append(m)
    charts = []
    for name, values in by_name.items():
        kind = values[0].kind
        bars = [Bar(label=m.group, value=m.value, low=m.ci_low, high=m.ci_high, note=f" (n={m.n_text()})")
                for m in values]
        title = f"{name} (95% CI)" if kind != "count" else name
        charts.append(bar_chart(title, bars, kind))
    return charts


BASELINE = "#b8bfcc"
"""A baseline run's bars, beside the run's own (svg.BAR)."""


def _level(threshold: str) -> float | None:
    """The value a threshold's text compares with (``accuracy >= 0.6``: 0.6)."""
    try:
        return float(threshold.rsplit(" ", 1)[-1])
    except ValueError:
        return None


def headline_charts(card: RunCard) -> list[str]:
    """A run's headline metrics across its configurations, with their 95% intervals: one chart per kind (a
    proportion's 0-100% axis is not a mean's); a gate's threshold on a number is a red tick across its bar. Against
    a baseline, each number's baseline bar (grey) under it."""
    by_kind: dict[str, list[Bar]] = defaultdict(list)
    for row in card.rows:
        for cell in row.cells:
            if cell is None:
                continue
            label = row.metric if len(card.groups) == 1 else f"{row.metric} · {cell.group}"
            target = next((t for g in cell.gate if (t := _level(g.threshold)) is not None), None)
            by_kind[cell.kind].append(Bar(label=label, value=cell.value, low=cell.ci_low, high=cell.ci_high,
                                          note=f" (n={cell.n})", target=target,
                                          target_note="; ".join(f"{g.threshold}: {g.message}" for g in cell.gate)))
            if cell.change is not None:
                c = cell.change
                by_kind[cell.kind].append(Bar(label="└ baseline", value=c.a, low=c.a_ci_low,
                                              high=c.a_ci_high, note=f" (n={c.a_n})", color=BASELINE))
    against = f"; grey: baseline {card.baseline}" if card.baseline else ""
    return [bar_chart(f"{card.suite}: headline {kind}s (95% CI{against})", bars, kind, label_width=320)
            for kind, bars in by_kind.items() if kind != "count"]


def _label(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


class _ScoreKind:
    """What one pass has seen of a score's values: all bool, all strings (and which, up to one too many)."""

    def __init__(self) -> None:
        self.present = self.all_bool = self.all_str = True
        self.kinds: set[str] = set()

    def see(self, value: object) -> None:
        self.all_bool = self.all_bool and isinstance(value, bool)
        self.all_str = self.all_str and isinstance(value, str)
        if self.all_str and len(self.kinds) <= MAX_CATEGORIES:  # one past the limit is enough to rule it out
            self.kinds.add(str(value))

    def categories(self) -> list[str] | None:
        if not self.present:
            return None
        if self.all_bool:
            return ["true", "false"]
        if self.all_str and 2 <= len(self.kinds) <= MAX_CATEGORIES:
            return sorted(self.kinds)
        return None


def _categorical(records: Iterable[TrialRecord]) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """(the categorical scores, the sorted groups of the finished trials), in one pass over ``records``."""
    seen: dict[str, _ScoreKind] | None = None
    groups: set[str] = set()
    for r in records:
        if r.status != "ok":
            continue
        groups.add(r.config_id)
        if seen is None:  # the first finished trial names the candidates, in its order
            seen = {k: _ScoreKind() for k in r.scores}
        for key, kind in seen.items():
            if not kind.present:
                continue
            if key in r.scores:
                kind.see(r.scores[key])
            else:
                kind.present = False
    found = [(key, cats) for key, kind in (seen or {}).items() if (cats := kind.categories()) is not None]
    return found, sorted(groups)


def categorical_scores(records: Iterable[TrialRecord]) -> list[tuple[str, list[str]]]:
    """Scores present in every finished trial with bool values, or string values of 2..8 kinds (one pass over
    ``records``, holding none of them)."""
    return _categorical(records)[0]


def confusion_charts(records: Iterable[TrialRecord], pairs: Sequence[tuple[str, str]] | None = None) -> list[str]:
    """Score tables for ``pairs`` of score names (None: found automatically); pairs whose scores are not
    categorical in these records are left out. Two passes over ``records`` (which scores are categorical, then
    the counts), holding only the counts: ``records`` must be re-iterable (a list, a run's stored records)."""
    cats, groups = _categorical(records)
    per_group = len(groups) <= MAX_GROUP_MATRICES
    if pairs is None:
        chosen = list(combinations(cats, 2))[:MAX_PAIRS]
    else:
        known = dict(cats)
        chosen = [((a, known[a]), (b, known[b])) for a, b in pairs if a in known and b in known]
    if not chosen:
        return []
    counts: dict[tuple[int, str], Counter[tuple[str, str]]] = defaultdict(Counter)
    for r in records:
        if r.status != "ok":
            continue
        group = r.config_id if per_group else "all groups"
        for i, ((a, _), (b, _)) in enumerate(chosen):
            counts[(i, group)][(_label(r.scores[a]), _label(r.scores[b]))] += 1
    charts = []
    for i, ((a, rows), (b, cols)) in enumerate(chosen):
        for group in groups if per_group else ["all groups"]:
            charts.append(confusion_matrix(f"{a} × {b} · {group}", a, b, rows, cols, counts[(i, group)]))
    return charts


def rate_by(records: Iterable[TrialRecord], score: str, by: Sequence[str]) -> list[tuple[str, int, int]]:
    """(label, trials where ``score`` is true, trials with a bool ``score``) per combination of the
    configuration parameters ``by`` (e.g. flip rate by attack and position), in sorted order."""
    tallies: dict[str, list[int]] = {}
    for r in records:
        value = r.scores.get(score)
        if r.status != "ok" or not isinstance(value, bool):
            continue
        label = ", ".join(f"{k}={r.config.get(k)}" for k in by) if by else "all"
        t = tallies.setdefault(label, [0, 0])
        t[0] += int(value)
        t[1] += 1
    return [(label, k, n) for label, (k, n) in sorted(tallies.items())]


def rate_chart(records: Iterable[TrialRecord], score: str, by: Sequence[str], title: str | None = None) -> str:
    """Bars of the share of trials whose bool ``score`` is true, per combination of configuration parameters,
    with Wilson 95% CIs: a ready-made chart for ``Suite.report_sections``."""
    from knowgap.stats import wilson

    bars = []
    for label, k, n in rate_by(records, score, by):
        lo, hi = wilson(k, n)
        bars.append(Bar(label=label, value=k / n, low=lo, high=hi, note=f" ({k} of {n})"))
    return bar_chart(title or f"{score} by {', '.join(by) or 'all'} (95% CI)", bars, "proportion")
