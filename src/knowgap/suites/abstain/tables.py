"""The paper's table: rows are system prompts, columns retrieval types, one table per metric, each cell the
value with its 95% CI and n."""

from __future__ import annotations

from knowgap.engine.records import MetricValue

COLUMNS = ("direct", "long_context", "rag", "hyde")
ROWS = ("basic", "conservative", "opinion")
TITLES = {
    "abstention_rate": "Abstention rate (higher is better)",
    "factuality_answered": "Factuality among answered (tier 1 + 2)",
    "invented_citation_rate": "Citations of the removed fact (invented)",
    "parse_failure_rate": "Parse failures",
}


def cell(m: MetricValue | None) -> str:
    if m is None:
        return ""
    if m.value is None or m.ci_low is None or m.ci_high is None:
        return f"n/a (n={m.n})"
    return f"{m.value:.1%} [{m.ci_low:.1%}, {m.ci_high:.1%}] n={m.n}"


def paper_tables(metrics: list[MetricValue]) -> str:
    """Markdown tables, one per metric, laid out as in KnowOrNot (rows prompt, columns retrieval)."""
    by = {(m.name, m.group): m for m in metrics}
    groups = {m.group for m in metrics}
    cols = [c for c in COLUMNS if any(g.startswith(c + "/") for g in groups)]
    rows = [r for r in ROWS if any(g.endswith("/" + r) for g in groups)]
    if not cols or not rows:
        return ""
    out = []
    for name, title in TITLES.items():
        out += [f"### {title}", "", "| prompt \\ retrieval | " + " | ".join(cols) + " |",
                "|---|" + "---|" * len(cols)]
        for r in rows:
            out.append(f"| {r} | " + " | ".join(cell(by.get((name, f"{c}/{r}"))) for c in cols) + " |")
        out.append("")
    return "\n".join(out)
