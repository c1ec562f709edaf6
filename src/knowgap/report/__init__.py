"""Reports of runs: markdown and self-contained HTML, CSV/Parquet export, run comparison and CI gating."""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowgap.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    "knowgap.engine.suite": ("ReportSection",),
    "knowgap.report.compare": ("Comparison", "compare_runs"),
    "knowgap.report.data": ("RunData", "load_run_data"),
    "knowgap.report.export": ("render_csv", "trial_rows", "write_csv", "write_parquet"),
    "knowgap.report.gate": ("GateResult", "Threshold", "evaluate_gate", "junit_xml", "load_thresholds", "write_junit"),
    "knowgap.report.html": ("render_html", "write_html", "write_html_report"),
    "knowgap.report.markdown": ("format_metric", "metrics_table_rows", "render_markdown", "write_report"),
    "knowgap.report.summary": ("compare_markdown", "gate_markdown", "summary_markdown"),
})
__all__ = ["Comparison", "GateResult", "ReportSection", "RunData", "Threshold", "compare_markdown", "compare_runs",
           "evaluate_gate", "format_metric", "gate_markdown", "junit_xml", "load_run_data", "load_thresholds",
           "metrics_table_rows", "render_csv", "render_html", "render_markdown", "summary_markdown", "trial_rows",
           "write_csv", "write_html", "write_html_report", "write_junit", "write_parquet", "write_report"]

if TYPE_CHECKING:  # what type checkers see; at run time each name is imported on first use
    from knowgap.engine.suite import ReportSection
    from knowgap.report.compare import Comparison, compare_runs
    from knowgap.report.data import RunData, load_run_data
    from knowgap.report.export import render_csv, trial_rows, write_csv, write_parquet
    from knowgap.report.gate import GateResult, Threshold, evaluate_gate, junit_xml, load_thresholds, write_junit
    from knowgap.report.html import render_html, write_html, write_html_report
    from knowgap.report.markdown import format_metric, metrics_table_rows, render_markdown, write_report
    from knowgap.report.summary import compare_markdown, gate_markdown, summary_markdown
