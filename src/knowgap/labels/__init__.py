"""Human labels and judge calibration: stratified samples, an append-only label store, agreement
statistics (Cohen, Fleiss, Krippendorff, with bootstrap CIs), judge calibration and judge spec versions.
See docs/labels.md."""

from knowgap.labels.agreement import AgreementReport, agreement_for_run, agreement_report
from knowgap.labels.sampling import draw_sample, sample_run
from knowgap.labels.store import LabelStore

__all__ = ["AgreementReport", "LabelStore", "agreement_for_run", "agreement_report", "draw_sample", "sample_run"]
