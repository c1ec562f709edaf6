"""What the report draws from a run, generic over suites: one bar chart per metric (bars = groups, with
95% CIs) and confusion matrices between categorical scores (bool or few-valued strings)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import combinations

from knowgap.engine.records import MetricValue, TrialRecord
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


def _label(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def categorical_scores(records: Sequence[TrialRecord]) -> list[tuple[str, list[str]]]:
    """Scores present in every finished trial with bool values, or string values of 2..8 kinds."""
    ok = [r for r in records if r.status == "ok"]
    if not ok:
        return []
    keys = [k for k in ok[0].scores if all(k in r.scores for r in ok)]
    found = []
    for key in keys:
        values = [r.scores[key] for r in ok]
        if all(isinstance(v, bool) for v in values):
            found.append((key, ["true", "false"]))
        elif all(isinstance(v, str) for v in values):
            kinds = sorted({str(v) for v in values})
            if 2 <= len(kinds) <= MAX_CATEGORIES:
                found.append((key, kinds))
    return found


def confusion_charts(records: Sequence[TrialRecord], pairs: Sequence[tuple[str, str]] | None = None) -> list[str]:
    """Score tables for ``pairs`` of score names (None: found automatically); pairs whose scores are not
    categorical in these records are left out."""
    cats = categorical_scores(records)
    ok = [r for r in records if r.status == "ok"]
    groups = sorted({r.config_id for r in ok})
    per_group = len(groups) <= MAX_GROUP_MATRICES
    if pairs is None:
        chosen = list(combinations(cats, 2))[:MAX_PAIRS]
    else:
        known = dict(cats)
        chosen = [((a, known[a]), (b, known[b])) for a, b in pairs if a in known and b in known]
    charts = []
    for (a, rows), (b, cols) in chosen:
        for group in groups if per_group else ["all groups"]:
            counts: Counter[tuple[str, str]] = Counter(
                (_label(r.scores[a]), _label(r.scores[b])) for r in ok if not per_group or r.config_id == group)
            charts.append(confusion_matrix(f"{a} × {b} · {group}", a, b, rows, cols, counts))
    return charts


def rate_by(records: Sequence[TrialRecord], score: str, by: Sequence[str]) -> list[tuple[str, int, int]]:
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


def rate_chart(records: Sequence[TrialRecord], score: str, by: Sequence[str], title: str | None = None) -> str:
    """Bars of the share of trials whose bool ``score`` is true, per combination of configuration parameters,
    with Wilson 95% CIs: a ready-made chart for ``Suite.report_sections``."""
    from knowgap.engine.stats import wilson

    bars = []
    for label, k, n in rate_by(records, score, by):
        lo, hi = wilson(k, n)
        bars.append(Bar(label=label, value=k / n, low=lo, high=hi, note=f" ({k} of {n})"))
    return bar_chart(title or f"{score} by {', '.join(by) or 'all'} (95% CI)", bars, "proportion")
