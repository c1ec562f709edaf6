"""``knowgap clarify ...``: the review queue of a run, the coverage-threshold calibration, a dataset check.

Heavy imports stay inside the commands so ``knowgap --help`` stays fast.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from knowgap.command_groups import CommandGroups


def register(app: typer.Typer, groups: CommandGroups) -> None:
    clarify_app = typer.Typer(no_args_is_help=True, help="Tools of the clarify suite: review queue, calibration, "
                                                         "dataset check.")
    app.add_typer(clarify_app, name="clarify")

    @clarify_app.command("review")
    def review(run: Annotated[str, typer.Argument(help="Run id or folder of a clarify run.")],
               runs_dir: Annotated[str | None, typer.Option(help="Where runs are stored.")] = None,
               include_pass: Annotated[bool, typer.Option("--all", help="Also list responses that passed.")] = False,
               limit: Annotated[int, typer.Option(help="Rows to print (the file holds all).")] = 30) -> None:
        """Write RUN/review_queue.jsonl (responses the automatic screen marks failing or uncertain) and list it."""
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        from knowgap.errors import KnowgapError
        from knowgap.suites.clarify.review import write_queue

        out = Console()
        try:
            path, items = write_queue(run, runs_dir, include_pass=include_pass)
        except KnowgapError as exc:
            Console(stderr=True).print(f"error: {exc}", markup=False)
            raise typer.Exit(1) from None
        table = Table(title=f"review queue: {len(items)} responses", title_justify="left")
        for col in ("screen", "config", "case", "reasons", "response"):
            table.add_column(col, overflow="fold")
        for item in items[:limit]:
            cells = (item.screen, item.config_id, item.case_id, "; ".join(item.reasons),
                     item.response[:120].replace("\n", " "))
            table.add_row(*(escape(cell) for cell in cells))  # model text is not rich markup
        out.print(table)
        out.print(f"written to {path}", markup=False)

    @clarify_app.command("calibrate")
    def calibrate_cmd(pairs: Annotated[str | None, typer.Option(help="JSONL of {element, text, match} pairs "
                                                                      "(default: the shipped calibration set).")] = None
                      ) -> None:
        """Recompute the element-coverage thresholds on hand-labelled pairs and compare with the shipped ones."""
        from pathlib import Path

        from rich.console import Console
        from rich.table import Table

        from knowgap.suites.clarify.coverage import CALIBRATION_FILE, THRESHOLDS, calibrate, load_pairs

        rows = calibrate(load_pairs(Path(pairs) if pairs else CALIBRATION_FILE))
        table = Table(title="element-coverage threshold (e5 cosine, 'query' prefix)", title_justify="left")
        for col in ("lang", "pairs", "matches", "threshold", "shipped", "accuracy", "precision", "recall", "AUC"):
            table.add_column(col)
        for r in rows:
            table.add_row(r.lang, str(r.n), str(r.positives), f"{r.threshold:.3f}", f"{THRESHOLDS[r.lang]:.3f}",
                          f"{r.accuracy:.3f}", f"{r.precision:.3f}", f"{r.recall:.3f}", f"{r.auc:.3f}")
        Console().print(table)

    @clarify_app.command("check")
    def check(path: Annotated[str | None, typer.Argument(help="A clarify JSONL file (default: the shipped set).")]
              = None) -> None:
        """Validate a clarify dataset and print its composition."""
        from collections import Counter
        from pathlib import Path

        from rich.console import Console

        from knowgap.errors import KnowgapError
        from knowgap.suites.clarify.dataset import CASES_FILE, load_cases

        try:
            cases = load_cases(Path(path) if path else CASES_FILE)
        except KnowgapError as exc:
            Console(stderr=True).print(f"error: {exc}", markup=False)
            raise typer.Exit(1) from None
        counts: Counter[Any] = Counter((c.lang, c.kind) for c in cases)
        domains: Counter[str] = Counter(c.domain for c in cases)
        lawbench = sum(1 for c in cases if c.source.dataset != "authored")
        out = Console()
        parts = ", ".join(f"{lang}/{kind} {n}" for (lang, kind), n in sorted(counts.items()))
        out.print(f"{len(cases)} cases: {parts}", markup=False)
        out.print("domains: " + ", ".join(f"{d} {n}" for d, n in sorted(domains.items())), markup=False)
        out.print(f"from LawBench rows: {lawbench}; elements: "
                  f"{sum(len(c.missing_information) for c in cases)}", markup=False)
