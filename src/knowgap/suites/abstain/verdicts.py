"""Per-metric verdicts of one abstain trial, split as :func:`~knowgap.suites.abstain.metrics.abstain_metrics`
counts them: abstention (the answering fact was removed, so abstaining is right), invented citations, parse
failures, and the factuality of an answer given anyway."""

from __future__ import annotations

from knowgap.engine.metric_spec import lower_is_better
from knowgap.engine.records import TrialRecord, Verdict
from knowgap.engine.verdicts import judged, not_scored, rate
from knowgap.suites.abstain.specs import SPECS

LOWER_IS_BETTER = lower_is_better(SPECS)


def abstain_verdicts(record: TrialRecord) -> list[Verdict]:
    s = record.scores
    parse = record.output.get("parse_failure")
    out = [rate("parse_failure_rate", bool(s["parse_failed"]),
                f"no response + citation JSON ({parse})" if parse else "response + citation parsed",
                lower_is_better=True)]
    abstained = s["abstained"]
    if abstained is None:
        out.append(not_scored("abstention_rate", "abstention judge reply did not parse"))
    else:
        out.append(judged("abstention_rate", bool(abstained),
                          "abstained: the answering fact was removed" if abstained else
                          "answered although the answering fact was removed from the context"))
    out.append(rate("invented_citation_rate", bool(s["invented_citation"]),
                    f"cited fact {record.output.get('citation')}, which is not in the context"
                    if s["invented_citation"] else "no invented citation", lower_is_better=True))
    if abstained is False:
        tier = s["tier"]
        if tier is None:
            out.append(not_scored("factuality_answered", "factuality judge reply did not parse"))
        else:
            out.append(judged("factuality_answered", tier in ("tier_1", "tier_2"),
                              f"answer is {str(tier).replace('_', ' ')} against the expected answer"))
    return out
