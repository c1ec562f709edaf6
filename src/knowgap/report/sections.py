"""A section a suite adds to its run's report (see ``Suite.report_sections``)."""

from __future__ import annotations

from pydantic import BaseModel


class ReportSection(BaseModel):
    """Extra content for one run's report.

    ``html`` is inserted as is into the HTML report: build it with :func:`knowgap.report.svg.esc` for any
    text that came from a model or a dataset (and the chart helpers in :mod:`knowgap.report.svg`).
    ``markdown`` goes into the markdown summary; either may be empty.
    """

    title: str
    html: str = ""
    markdown: str = ""
