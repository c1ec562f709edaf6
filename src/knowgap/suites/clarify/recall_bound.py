"""Element recall is an upper bound: the note every clarify report shows beside ``element_recall``.

Recall credits an element whenever one of the response's gap sentences reaches the e5 threshold, and e5 gives
same-topic sentences high cosines, so a generic condition can be credited with elements it does not name. The
element-coverage judge's measured precision (of the pairs it calls covered, the share that truly match, on the
hand-labelled calibration pairs, held out: :mod:`knowgap.suites.clarify.coverage_card`) says how often a credit is
right there; the note prints it from the judge's card (measured here first, else shipped), with n and its 95% CI.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from knowgap.engine.records import MetricValue
from knowgap.judges.cards import Estimate, ValidityCard, find_card, fmt

JUDGE = "element-coverage"
PRECISION = "precision_held_out"
TITLE = "Element recall is an upper bound"


def coverage_precision(card: ValidityCard | None) -> tuple[Estimate, int] | None:
    """(held-out precision, pairs judged covered) from the element-coverage card; None when it has none."""
    if card is None:
        return None
    value, n = card.extra.get(PRECISION), card.extra.get(f"{PRECISION}_n")
    if not isinstance(value, Estimate) or value.value is None or not isinstance(n, int | float):
        return None
    return value, int(n)


def _note_and_rows(metrics: Sequence[MetricValue]) -> tuple[str, list[tuple[str, str, str, str]]] | None:
    recalls = [m for m in metrics if m.name == "element_recall" and m.value is not None and " · " not in m.group]
    if not recalls:
        return None
    from knowgap.suites.clarify.coverage import VERSION

    card = find_card(JUDGE, VERSION)
    found = coverage_precision(card)
    if card is None or found is None:
        precision, shown = f"not measured for {VERSION} (knowgap judge validate {JUDGE})", "-"
    else:
        estimate, n = found
        shown = fmt(estimate)
        precision = (f"{shown}: {round((estimate.value or 0.0) * n)} of the {n} pairs it called covered truly "
                     f"match ({card.dataset}, n={card.n}, held out)")
    note = ("A missing element counts as covered when a gap sentence of the answer reaches the e5 threshold; "
            "same-topic generic conditions can be credited with elements they do not name, so element_recall is "
            f"an upper bound. The coverage judge's precision: {precision}.")
    rows = [(m.group, fmt(Estimate(value=m.value, ci_low=m.ci_low, ci_high=m.ci_high), 3), str(m.n), shown)
            for m in recalls]
    return note, rows


HEADER = ("group", "element_recall [95% CI]", "n", "coverage judge precision [95% CI]")


def recall_bound_markdown(metrics: Sequence[MetricValue], *, heading: bool = True) -> str | None:
    """Each configuration's element recall beside the coverage judge's precision (markdown); None when the
    metrics hold no element recall."""
    found = _note_and_rows(metrics)
    if found is None:
        return None
    note, rows = found
    lines = [f"### {TITLE}", ""] if heading else []
    lines += [note, "", "| " + " | ".join(HEADER) + " |", "|---|---|---:|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def recall_bound_html(metrics: Sequence[MetricValue]) -> str:
    """The same as a paragraph and a table (HTML, escaped); empty when there is no element recall."""
    found = _note_and_rows(metrics)
    if found is None:
        return ""
    note, rows = found
    head = "".join(f"<th>{escape(h)}</th>" for h in HEADER)
    body = "".join("<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<p>{escape(note)}</p><table><tr>{head}</tr>{body}</table>"
