"""Inline SVG charts (no JavaScript, no network): bars with 95% error bars, and confusion matrices.

Every piece of text goes through :func:`esc`, so labels from datasets or models are inert.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

BAR = "#4c78a8"
BAR_COUNT = "#9c755f"
ERR = "#222"


def esc(value: object) -> str:
    """Text escaped for HTML content and attribute values."""
    return html.escape(str(value), quote=True)


def _num(x: float) -> str:
    return f"{x:.1f}"


@dataclass
class Bar:
    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    note: str = ""
    color: str | None = None
    """The bar's fill (None: the chart's default); a run against its baseline draws the baseline apart."""
    target: float | None = None
    """A gate's threshold on this number, drawn as a red tick across the bar (None: no gate)."""
    target_note: str = ""


def _fmt(value: float, kind: str) -> str:
    """kind: proportion, mean, count, or (for changes between runs) delta_pp (a proportion's change, shown in
    percentage points) and delta."""
    if kind == "delta_pp":
        return f"{value * 100:+.1f} pp"
    if kind == "delta":
        return f"{value:+.3g}"
    if kind == "proportion":
        return f"{value:.1%}"
    if kind == "count":
        return f"{value:.0f}"
    return f"{value:.3g}"


def _scale(bars: Sequence[Bar], kind: str) -> tuple[float, float]:
    if kind == "proportion":
        return (0.0, 1.0)
    if kind == "delta_pp":
        return (-1.0, 1.0)
    values = [v for b in bars for v in (b.value, b.low, b.high) if v is not None and math.isfinite(v)]
    lo = min([0.0, *values])
    hi = max([0.0, *values])
    if kind == "delta":  # symmetric around 0
        m = max([abs(v) for v in values] + [1e-9]) * 1.05
        return (-m, m)
    if kind == "count":  # whole-number ticks: the top is a multiple of the 4 tick steps
        return (math.floor(lo), max(4.0, 4 * math.ceil(hi / 4)))
    if hi == lo:
        hi = lo + 1.0
    return (lo, hi + (hi - lo) * 0.05)


def bar_chart(title: str, bars: Sequence[Bar], kind: str = "proportion", *, label_width: int = 230,
              plot_width: int = 360) -> str:
    """Horizontal bars, one per group, with the 95% CI drawn as an error bar."""
    row, top = 26, 28
    height = top + row * len(bars) + 24
    width = label_width + plot_width + 90
    lo, hi = _scale(bars, kind)

    def x(v: float) -> float:
        return label_width + (min(max(v, lo), hi) - lo) / (hi - lo) * plot_width

    parts = [f'<svg class="chart bar-chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{esc(title)}" '
             'font-family="system-ui, sans-serif">',
             f'<title>{esc(title)}</title>',
             f'<text x="4" y="16" class="chart-title" font-weight="bold" font-size="13">{esc(title)}</text>']
    # axis with ticks
    axis_y = top + row * len(bars) + 2
    parts.append(f'<line x1="{label_width}" y1="{top - 4}" x2="{label_width}" y2="{axis_y}" stroke="#888"/>')
    if lo < 0 < hi:  # the zero line of a chart of changes
        parts.append(f'<line x1="{_num(x(0))}" y1="{top - 4}" x2="{_num(x(0))}" y2="{axis_y}" stroke="#444" '
                     'stroke-dasharray="3,2"/>')
    for i in range(5):
        v = lo + (hi - lo) * i / 4
        xv = x(v)
        parts.append(f'<line x1="{_num(xv)}" y1="{axis_y}" x2="{_num(xv)}" y2="{axis_y + 4}" stroke="#888"/>')
        parts.append(f'<text x="{_num(xv)}" y="{axis_y + 15}" font-size="10" text-anchor="middle" fill="#555">'
                     f'{esc(_fmt(v, kind))}</text>')
    for i, b in enumerate(bars):
        y = top + i * row
        fits = 34 * label_width // 230  # characters of 11px text that fit
        label = b.label if len(b.label) <= fits else b.label[:fits - 1] + "…"
        parts.append(f'<text x="{label_width - 6}" y="{y + 15}" font-size="11" text-anchor="end">'
                     f'<title>{esc(b.label)}</title>{esc(label)}</text>')
        if b.value is None or not math.isfinite(b.value):
            parts.append(f'<text x="{label_width + 4}" y="{y + 15}" font-size="11" fill="#888">n/a</text>')
            continue
        x0, x1 = x(max(lo, 0.0) if lo < 0 else lo), x(b.value)
        left, w = min(x0, x1), abs(x1 - x0)
        color = b.color or (BAR_COUNT if kind == "count" else BAR)
        tip = f"{b.label}: {_fmt(b.value, kind)}"
        if b.low is not None and b.high is not None:
            tip += f" (95% CI {_fmt(b.low, kind)} to {_fmt(b.high, kind)})"
        parts.append(f'<rect class="bar" x="{_num(left)}" y="{y + 4}" width="{_num(max(w, 0.5))}" height="{row - 8}" '
                     f'fill="{color}"><title>{esc(tip + b.note)}</title></rect>')
        if b.low is not None and b.high is not None and math.isfinite(b.low) and math.isfinite(b.high):
            xl, xh, ym = x(b.low), x(b.high), y + row / 2
            parts.append(f'<g class="err" stroke="{ERR}" stroke-width="1.5">'
                         f'<line x1="{_num(xl)}" y1="{ym}" x2="{_num(xh)}" y2="{ym}"/>'
                         f'<line x1="{_num(xl)}" y1="{ym - 5}" x2="{_num(xl)}" y2="{ym + 5}"/>'
                         f'<line x1="{_num(xh)}" y1="{ym - 5}" x2="{_num(xh)}" y2="{ym + 5}"/></g>')
        if b.target is not None and math.isfinite(b.target):
            xt = _num(x(b.target))
            parts.append(f'<line class="target" x1="{xt}" y1="{y + 1}" x2="{xt}" y2="{y + row - 1}" stroke="#c0392b" '
                         f'stroke-width="2.5"><title>{esc(b.target_note or f"threshold {_fmt(b.target, kind)}")}'
                         "</title></line>")
        parts.append(f'<text class="value" x="{label_width + plot_width + 8}" y="{y + 15}" font-size="11">'
                     f'{esc(_fmt(b.value, kind))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def confusion_matrix(title: str, row_name: str, col_name: str, rows: Sequence[str], cols: Sequence[str],
                     counts: dict[tuple[str, str], int]) -> str:
    """A table of counts (rows: one score's values, columns: another's), shaded by share of the row."""
    cell, left, top = 64, 150, 62
    width = max(left + cell * len(cols) + 20, int(len(title) * 8.2) + 12)
    height = top + cell * len(rows) + 10
    parts = [f'<svg class="chart confusion" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{esc(title)}">',
             f'<title>{esc(title)}</title>',
             f'<text x="4" y="16" font-weight="bold" font-size="13">{esc(title)}</text>',
             f'<text x="{left + cell * len(cols) / 2}" y="36" font-size="11" text-anchor="middle" '
             f'fill="#555">{esc(col_name)}</text>',
             f'<text x="4" y="{top - 6}" font-size="11" fill="#555">{esc(row_name)} \u2193</text>']
    for j, c in enumerate(cols):
        parts.append(f'<text x="{left + cell * j + cell / 2}" y="{top - 6}" font-size="11" '
                     f'text-anchor="middle">{esc(c)}</text>')
    for i, r in enumerate(rows):
        total = sum(counts.get((r, c), 0) for c in cols) or 1
        y = top + cell * i
        parts.append(f'<text x="{left - 6}" y="{y + cell / 2 + 4}" font-size="11" text-anchor="end">{esc(r)}</text>')
        for j, c in enumerate(cols):
            n = counts.get((r, c), 0)
            share = n / total
            shade = int(255 - share * 170)
            text_color = "#fff" if share > 0.6 else "#111"
            parts.append(f'<rect class="cell" x="{left + cell * j}" y="{y}" width="{cell - 2}" height="{cell - 2}" '
                         f'fill="rgb({shade},{shade + (255 - shade) // 3},255)"><title>{esc(row_name)}={esc(r)}, '
                         f'{esc(col_name)}={esc(c)}: {n}</title></rect>')
            parts.append(f'<text x="{left + cell * j + cell / 2 - 1}" y="{y + cell / 2 + 4}" font-size="13" '
                         f'text-anchor="middle" fill="{text_color}">{n}</text>')
    parts.append("</svg>")
    return "".join(parts)
