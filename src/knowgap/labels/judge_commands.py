"""CLI commands of the judge catalogue: ``knowgap judges`` and ``knowgap judge validate``.

Thin: each parses options, finds the judges by discovery (:mod:`knowgap.suites.judge_registry`), measures one with
:func:`knowgap.judges.catalog.validate` or, with ``--labels``, on people's labels (:mod:`knowgap.labels.validity`),
and prints (:mod:`knowgap.judges.card_lines`). They live here, above the labels, suites and judges they use.
Heavy imports stay inside.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from knowgap.command_groups import CommandGroups
from knowgap.judges.card_lines import assessment_lines


def register(app: typer.Typer, groups: CommandGroups) -> None:
    @app.command("judges")
    def judges_cmd(
        as_json: Annotated[bool, typer.Option("--json", help="One JSON object per judge (for machines).")] = False,
    ) -> None:
        """Every judge knowgap runs: kind, version, what it decides, its validity card(s), reportable or screen.

        Reportable: the card shows balanced accuracy >= 0.80 on real replies of at least two models. Screen: below
        that, measured on constructed items or one model's replies, or no card (not for reporting). Each card names
        its languages: in a report, a metric on a language its card does not cover shows 'no card for zh'.

        Cards measured here with 'knowgap judge validate NAME' come before those shipped with knowgap.

        Example: knowgap judges --json   (details: docs/judges.md)
        """
        from rich.console import Console

        from knowgap.suites.judge_registry import judge_rows

        say = Console(highlight=False, soft_wrap=True)
        rows = judge_rows()
        if as_json:
            for row in rows:
                say.print(json.dumps(row.model_dump(mode="json"), ensure_ascii=False), markup=False)
            return
        for row in rows:
            version = row.version or f"? ({row.version_error})"
            say.print(f"[bold]{row.name}[/bold] ({row.kind}, {version}): {row.decides}")
            for a in row.assessments:
                for line in assessment_lines(a):
                    say.print(line, markup=False)
        reportable = sum(any(a.status == "reportable" for a in r.assessments) for r in rows)
        say.print(f"{len(rows)} judges, {reportable} with a reportable card. Measure one: knowgap judge validate "
                  "NAME [--judge-model SPEC] [--limit N]")

    @groups.judge.command("validate")
    def validate_cmd(
        name: Annotated[str, typer.Argument(help="The judge's catalogue name (knowgap judges).")],
        judge_model: Annotated[str | None, typer.Option(
            help="Judge model spec of a model-backed judge (default local:qwen2.5-1.5b).")] = None,
        limit: Annotated[int | None, typer.Option(
            min=1, help="Measure on a seeded sample of N rows, equal per label class (default: all rows for an "
                        "offline judge; for a model-backed one the sample its shipped card was measured on: "
                        "clarify-rubric up to 48, clarify-silent-failure 40, abstention-llm 40, factuality-llm 30, "
                        "extract-claims 40, clarify-correctness and partial-rubric all their real replies; 60 "
                        "of constructed items or of --data rows).")] = None,
        data: Annotated[Path | None, typer.Option(
            help="The labelled data folder (default: $KNOWGAP_DATA, else the nearest shared/data above the "
                 "current directory). abstention, factuality, abstention-llm and factuality-llm are measured on real "
                 "replies shipped with knowgap; given --data, on PolicyBench's GPT-4o rows there instead "
                 "(extract-claims: on SummEdits and the handwritten summaries instead of its real "
                 "summaries; faithfulness: on SummEdits + AggreFact instead of the real extract "
                 "summaries).")] = None,
        labels: Annotated[Path | None, typer.Option(
            help="Measure on your own labels instead: RUN/labels/labels.jsonl written by 'knowgap label' (or the "
                 "web app) on a trial score holding this judge's verdict (abstention: abstained). Truth: the "
                 "people's majority; verdicts: the run's own, which must come from this judge's current "
                 "version. The card goes to KNOWGAP_HOME/judge_cards like any card measured here: it replaces "
                 "one measured here before for this version and comes before the shipped card in 'knowgap "
                 "judges' and reports.")] = None,
        field: Annotated[str | None, typer.Option(help="The labelled field in --labels (default: the one that "
                                                       "holds this judge's verdict).")] = None,
        out: Annotated[Path | None, typer.Option(help="Also write the card (JSON) here.")] = None,
        ship: Annotated[bool, typer.Option(
            "--ship", help="Developers: write the card to knowgap's shipped cards folder instead of "
                           "KNOWGAP_HOME/judge_cards.")] = False,
    ) -> None:
        """Measure a judge against labels and store its validity card for 'knowgap judges' and reports.

        Example: knowgap judge validate abstention

        Example: knowgap judge validate abstention-llm --judge-model local:qwen2.5-1.5b --limit 20

        Example: knowgap judge validate abstention --labels runs/RUN/labels/labels.jsonl
        """
        from rich.console import Console
        from rich.progress import Progress

        from knowgap.errors import KnowgapError
        from knowgap.judges.cards import assess, save_card, ship_card
        from knowgap.judges.catalog import validate
        from knowgap.suites.judge_registry import get_judge

        judge = get_judge(name)
        if labels is not None:
            if limit is not None or data is not None or judge_model is not None or ship:
                raise KnowgapError("--labels measures on your own labels: --limit, --data, --judge-model and "
                                   "--ship do not apply (a shipped card is measured on a labelled set knowgap "
                                   "names)")
            from knowgap.labels.validity import judge_card_from_labels

            card = judge_card_from_labels(name, labels, field=field)
        elif field is not None:
            raise KnowgapError("--field names the labelled field of --labels FILE")
        else:
            console = Console(stderr=True)
            with Progress(console=console, transient=True, disable=not console.is_terminal) as bar:
                task = bar.add_task(f"validating {name}", total=None)
                card = validate(judge, data_dir=data, limit=limit, judge_model=judge_model,
                                progress=lambda done, total: bar.update(task, completed=done, total=total))
        say = Console(highlight=False, soft_wrap=True)
        say.print(f"{card.judge} ({card.version}): {card.method}", markup=False)
        for line in assessment_lines(assess(card)):
            say.print(line, markup=False)
        if ship:
            path, moved = ship_card(card)
            for old in moved:
                say.print(f"superseded card moved: {old}", markup=False)
        else:
            path = save_card(card)
        say.print(f"card saved: {path}", markup=False)
        if out is not None:
            out.write_text(card.model_dump_json(indent=2) + "\n", encoding="utf-8")
            say.print(f"card written: {out}", markup=False)
