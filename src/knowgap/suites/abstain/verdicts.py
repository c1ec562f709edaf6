"""Per-metric verdicts of one abstain trial, the source its metrics count (:mod:`.metrics`). A leave-one-out trial:
abstention (the answering fact was removed, so abstaining is right), invented citations, parse failures, and the
factuality of an answer given anyway; a scenario trial: recall (a question to decline), precision (a reply that
declined), accuracy (an answerable question). A judge reply that did not parse is ``not_scored``."""

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


def scenario_verdicts(record: TrialRecord) -> list[Verdict]:
    """One scenario trial's verdicts: recall (a question to decline), precision (a reply that declined), accuracy
    (an answerable question)."""
    s = record.scores
    should, did = bool(s["should_abstain"]), s["abstained"]
    if did is None:
        return [not_scored("abstention_recall" if should else "answer_accuracy",
                           "abstention judge reply did not parse")]
    out = []
    if did:
        out.append(judged("abstention_precision", should, "declined a question that should be declined" if should
                          else "declined an answerable question"))
    if should:
        out.append(judged("abstention_recall", bool(did), "declined" if did else
                          "answered a question that should be declined"))
    else:
        check = record.output.get("answer_check", {})
        out.append(judged("answer_accuracy", bool(s["correct"]),
                          "declined an answerable question" if did else str(check.get("why", ""))))
    return out
