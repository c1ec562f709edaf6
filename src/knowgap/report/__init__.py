"""Reports of a run (markdown now; HTML and run comparison come with the reports issue)."""

from knowgap.report.markdown import format_metric, metrics_table_rows, render_markdown, write_report

__all__ = ["format_metric", "metrics_table_rows", "render_markdown", "write_report"]
