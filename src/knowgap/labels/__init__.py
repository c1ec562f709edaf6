"""Human labels and judge calibration: stratified samples, an append-only label store, agreement
statistics (Cohen, Fleiss, Krippendorff, with bootstrap CIs), judge calibration and judge spec versions.
See docs/labels.md."""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowgap.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    "knowgap.labels.agreement": ("AgreementReport", "agreement_for_run", "agreement_report"),
    "knowgap.labels.sampling": ("draw_sample", "sample_run"),
    "knowgap.labels.store": ("LabelStore",),
})
__all__ = ["AgreementReport", "LabelStore", "agreement_for_run", "agreement_report", "draw_sample", "sample_run"]

if TYPE_CHECKING:  # what type checkers see; at run time each name is imported on first use
    from knowgap.labels.agreement import AgreementReport, agreement_for_run, agreement_report
    from knowgap.labels.sampling import draw_sample, sample_run
    from knowgap.labels.store import LabelStore
