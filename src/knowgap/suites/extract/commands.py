"""CLI commands of the extract suite: ``knowgap judge faithfulness``, ``knowgap judge faithfulness-calibrate``
and ``knowgap extract-matrix``. Heavy imports stay inside the commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from knowgap.command_groups import CommandGroups

out = Console()


def register(app: typer.Typer, groups: CommandGroups) -> None:
    @groups.judge.command("faithfulness")
    def faithfulness(
        file: Annotated[Path, typer.Argument(help="A JSONL file: one object per line.")],
        out_file: Annotated[Path, typer.Option("--out", help="Where to write the rows with score and verdict.")],
        source_field: Annotated[str, typer.Option(help="Field holding the source text.")] = "doc",
        text_field: Annotated[str, typer.Option(help="Field holding the text to check (summary).")] = "summary",
        threshold: Annotated[float | None, typer.Option(help="Faithful at or above (default: 0.5).")] = None,
        details: Annotated[bool, typer.Option("--details", help="Also write each claim's check.")] = False,
    ) -> None:
        """Offline faithfulness (no LLM): add score (0..1, the estimated chance it is faithful) and verdict to each row.

        Verdicts: faithful, unfaithful; empty, refusal, other_language (not in the source's language): no score.

        Example: knowgap judge faithfulness pairs.jsonl --source-field doc --text-field summary --out scored.jsonl
        """
        from knowgap.judges.files import judge_faithfulness_file

        counts = judge_faithfulness_file(file, out_file, source_field=source_field, text_field=text_field,
                                         threshold=threshold, details=details)
        summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        out.print(f"{sum(counts.values())} rows -> {out_file}: {summary}")

    @groups.judge.command("faithfulness-calibrate")
    def faithfulness_calibrate(
        data: Annotated[Path | None, typer.Option(help="Folder with summedits/ and aggrefact_errortypes/.")] = None,
        limit: Annotated[int, typer.Option(help="Pairs per benchmark, half faithful (0 = all).")] = 100,
        seed: Annotated[int, typer.Option(help="Seed for sampling and the tune/held-out split.")] = 0,
        scores_out: Annotated[Path | None, typer.Option(help="Also write every pair's score here (JSONL).")] = None,
        from_scores: Annotated[Path | None, typer.Option(help="Report from a scores file instead of scoring.")] = None,
        report_out: Annotated[Path | None, typer.Option("--out", help="Write the report as JSON.")] = None,
    ) -> None:
        """Balanced accuracy (95% CI) of the offline checker on SummEdits and AggreFact, and the threshold.

        Example: knowgap judge faithfulness-calibrate --limit 100 --out calibration.json
        """
        from knowgap.suites.extract.calibration import DEFAULT_DATA, calibrate, report_from_scores

        if from_scores is not None:
            report = report_from_scores(from_scores, seed=seed)
        else:
            report = calibrate(data or DEFAULT_DATA, limit=limit or None, seed=seed, pairs_out=scores_out)
        table = Table(title=f"offline faithfulness checker · threshold chosen on the tuning half: {report.threshold}",
                      title_justify="left")
        for col in ("set", "benchmark", "n (faithful/unfaithful)", "balanced accuracy", "95% CI"):
            table.add_column(col)
        for label, rows in (("held-out, chosen threshold", report.held_out),
                            (f"all, threshold {report.threshold_in_use}", report.at_default)):
            for r in rows:
                ba = "-" if r.balanced_accuracy is None else f"{r.balanced_accuracy:.3f}"
                ci = "-" if r.ci_low is None else f"[{r.ci_low:.3f}, {r.ci_high:.3f}]"
                table.add_row(label, r.benchmark, f"{r.n} ({r.n_faithful}/{r.n_unfaithful})", ba, ci)
        out.print(table)
        for d in report.distributions:
            out.print(f"{d.label} scores (n={d.n}): " + ", ".join(f"{k} {v:.3f}" for k, v in d.quantiles.items()))
        out.print(f"gap (faithful p25 - unfaithful p75): {report.gap:+.3f}; unscored (empty, refusal, other language): "
                  f"{report.empty_or_refusal}; {report.seconds:.0f}s")
        if report_out:
            report_out.write_text(report.model_dump_json(indent=2), encoding="utf-8")
            out.print(f"report: {report_out}")

    @app.command("extract-matrix")
    def extract_matrix(
        summarizer: Annotated[list[str], typer.Option(help="Summarizer model spec (repeat for several).")],
        judge_model: Annotated[list[str], typer.Option("--judge", help="Judge model spec (repeat for several).")],
        sample: Annotated[int | None, typer.Option(help="Run only N cases.")] = None,
        runs: Annotated[int, typer.Option(help="Summarizer runs per case.")] = 3,
        price: Annotated[list[str] | None, typer.Option(help="SPEC=IN/OUT USD per 1M tokens, repeatable.")] = None,
        runs_dir: Annotated[str | None, typer.Option(help="Where runs are stored.")] = None,
        seed: Annotated[int, typer.Option(help="Seed.")] = 0,
    ) -> None:
        """Run the extract suite for every summarizer x judge pair; print key metrics, cost and time per pair.

        Example: knowgap extract-matrix --summarizer local:qwen2.5-0.5b --summarizer local:qwen2.5-1.5b
        --judge local:qwen2.5-1.5b --sample 10
        """
        from knowgap.errors import KnowgapError
        from knowgap.suites.extract.matrix import run_matrix

        prices: dict[str, tuple[float, float]] = {}
        for item in price or []:
            try:
                spec, pair = item.rsplit("=", 1)
                pin, pout = pair.split("/")
                prices[spec] = (float(pin), float(pout))
            except ValueError:
                raise KnowgapError(f"--price {item!r}: expected SPEC=IN/OUT, e.g. openai:gpt-4o=2.5/10") from None
        rows = run_matrix(summarizer, judge_model, run=groups.run, options={"sample": sample, "runs": runs},
                          prices=prices, runs_root=runs_dir, seed=seed)
        table = Table(title="extract · summarizer x judge", title_justify="left")
        columns = list(rows[0]) if rows else []
        for col in columns:
            table.add_column(col)
        for row in rows:
            table.add_row(*(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row.values()))
        out.print(table)
