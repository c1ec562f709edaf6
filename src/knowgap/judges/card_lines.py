"""How a judge's validity card reads on the command line: its numbers, its other measures and its assessment, a line
each (``knowgap judges`` and ``knowgap judge validate``, whose commands are :mod:`knowgap.labels.judge_commands`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knowgap.judges.cards import Assessment, ValidityCard


def card_line(card: ValidityCard) -> str:
    """One line with a card's numbers."""
    from knowgap.judges.cards import fmt

    sec = "n/a" if card.seconds_per_item is None else f"{card.seconds_per_item:.3g}"
    model = f"{card.judge_model}: " if card.judge_model else ""
    return (f"{model}{card.dataset}, n={card.n}: balanced accuracy {fmt(card.balanced_accuracy)}, agreement "
            f"{fmt(card.agreement)}, kappa {fmt(card.kappa)}, sensitivity {fmt(card.sensitivity)}, specificity "
            f"{fmt(card.specificity)}, parse failures {card.parse_failures}, {sec} s/item, {card.measured}")


def extra_line(card: ValidityCard) -> str | None:
    """The card's other measures (``extra``: e.g. element-coverage's precision), one line; None when none."""
    from knowgap.judges.cards import Estimate, fmt

    def show(value: object) -> str:
        if isinstance(value, Estimate):
            return fmt(value)
        return f"{value:g}" if isinstance(value, float) else str(value)

    return "also: " + ", ".join(f"{k} {show(v)}" for k, v in card.extra.items()) if card.extra else None


def assessment_lines(a: Assessment) -> list[str]:
    """The status and reason, the card's numbers, its other measures, and what the card rule asks it to say (claim,
    replies, languages with their figures, who labelled, model-only and combined figures, known failures), a line
    each."""
    from knowgap.judges.cards import rule_summary

    lines = [f"  {a.status}: {a.reason}"]
    if a.card is not None:
        lines.append(f"    {card_line(a.card)}")
        if (extra := extra_line(a.card)) is not None:
            lines.append(f"    {extra}")
        lines += [f"    {part}" for part in rule_summary(a.card)]
    return lines
