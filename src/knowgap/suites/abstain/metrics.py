"""Metrics of an abstain run per configuration (retrieval/prompt), with Wilson 95% CIs."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from knowgap.engine.records import MetricValue, TrialRecord
from knowgap.engine.tally import Tally

DESCRIBED = {
    "abstention_rate": "share of leave-one-out questions where the target abstained (the right behaviour)",
    "factuality_answered": "share of answered questions whose answer is tier 1 or 2 against the expected answer",
    "invented_citation_rate": "share of trials citing a fact number that is not in the context (the answering "
                              "fact was removed, so the citation is invented)",
    "parse_failure_rate": "share of responses without a parseable response + citation (judged as raw text)",
}
JUDGE_PARSE_FAILURES = {
    "abstention_judge_parse_failures": "answers the LLM abstention judge's reply did not parse for (left out of "
                                       "abstention_rate)",
    "factuality_judge_parse_failures": "answered questions the LLM factuality judge's reply did not parse for "
                                       "(left out of factuality_answered)",
}
COMPUTED = frozenset({"invented_citation_rate", "parse_failure_rate", "errors", *JUDGE_PARSE_FAILURES})
"""The metrics no judge decides (the others: see ``AbstainSuite.metric_judges``)."""
METRIC_NAMES = frozenset({*DESCRIBED, *COMPUTED})
"""Every metric name :func:`abstain_metrics` can produce."""


def abstain_metrics(records: Iterable[TrialRecord], *, factuality_judge: str = "offline") -> list[MetricValue]:
    tallies: dict[str, Tally] = defaultdict(Tally)
    for r in records:
        t = tallies[r.config_id]
        if r.status != "ok":
            t.count("errors")
            continue
        s = r.scores
        t.hit("parse_failure_rate", bool(s["parse_failed"]))
        if s["abstained"] is not None:
            t.hit("abstention_rate", bool(s["abstained"]))
        else:
            t.count("abstention_judge_parse_failures")
        t.hit("invented_citation_rate", bool(s["invented_citation"]))
        if s["abstained"] is False and s["tier"] is not None:
            t.hit("factuality_answered", s["tier"] in ("tier_1", "tier_2"))
        elif s["abstained"] is False:
            t.count("factuality_judge_parse_failures")
    approx = " (offline approximation: embeddings + numbers; use --factuality-judge llm for the LLM judge)" \
        if factuality_judge == "offline" else " (LLM judge, spec factuality_v1)"
    described = {**DESCRIBED, "factuality_answered": DESCRIBED["factuality_answered"] + approx}
    out = []
    for group in sorted(tallies):
        t = tallies[group]
        out += [t.proportion(name, group, description=text) for name, text in described.items()]
        out += [t.counted(name, group, description=text) for name, text in JUDGE_PARSE_FAILURES.items()]
        out.append(t.counted("errors", group, description="trials whose model call failed for good"))
    return out
