"""Metrics of an abstain run per configuration (retrieval/prompt), with Wilson 95% CIs; when a run spans more
than one knowledge base, the same metrics again per configuration and knowledge base (group
``rag/basic · kb=ICA_134``).

Intervals are clustered (:mod:`knowgap.stats`) by :func:`cluster_key`: a question's fact, i.e. its case
(repeats count once); for a knowledge base generated from documents, the document the fact came from (its
questions share one text). A PolicyBench question's ``source`` is its knowledge-base file, so clustering by it
would leave 1 cluster per knowledge base (4 in all): too few to estimate a variance from, and the knowledge
bases are reported apart anyway."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping

from knowgap.engine.metric_spec import described
from knowgap.engine.records import MetricValue, TrialRecord
from knowgap.engine.tally import Tally
from knowgap.suites.abstain.specs import COUNTED, LEAVE_ONE_OUT, LOO_JUDGE_PARSE_FAILURES

DESCRIBED = described(LEAVE_ONE_OUT)
JUDGE_PARSE_FAILURES = described((COUNTED[0], *LOO_JUDGE_PARSE_FAILURES))
ERRORS = COUNTED[1]


def kb_group(config_id: str, kb: str) -> str:
    """The group of one configuration's trials on one knowledge base."""
    return f"{config_id} · kb={kb}"


GENERATED_SOURCE = re.compile(r"^(?P<document>.+):\d+$")
"""A generated fact's source: ``DOCUMENT:POSITION`` (``generate.make_questions``)."""


def cluster_key(case_id: str, source: str = "") -> str:
    """The cluster of a question: the document of a generated fact (``source`` ``DOCUMENT:POSITION``), else
    the question's own case."""
    found = GENERATED_SOURCE.match(source)
    return f"document:{found['document']}" if found else f"case:{case_id}"


def _tally(t: Tally, r: TrialRecord, key: str) -> None:
    if r.status != "ok":
        t.count("errors")
        return
    s = r.scores
    t.hit("parse_failure_rate", bool(s["parse_failed"]), key)
    if s["abstained"] is not None:
        t.hit("abstention_rate", bool(s["abstained"]), key)
    else:
        t.count("abstention_judge_parse_failures")
    t.hit("invented_citation_rate", bool(s["invented_citation"]), key)
    if s["abstained"] is False and s["tier"] is not None:
        t.hit("factuality_answered", s["tier"] in ("tier_1", "tier_2"), key)
    elif s["abstained"] is False:
        t.count("factuality_judge_parse_failures")


def abstain_metrics(records: Iterable[TrialRecord], *, factuality_judge: str = "offline",
                    kb_of: Mapping[str, str] | None = None,
                    source_of: Mapping[str, str] | None = None) -> list[MetricValue]:
    """Per configuration; and per configuration and knowledge base when the trials span more than one. A
    trial's knowledge base is the one recorded in its output (``experiment.kb``), else ``kb_of[case_id]``
    (a failed trial has no output); its cluster is :func:`cluster_key` of its case and ``source_of[case_id]``
    (the fact's source)."""
    tallies: dict[str, Tally] = defaultdict(Tally)
    by_kb: dict[str, Tally] = defaultdict(Tally)
    kbs = set()
    for r in records:
        key = cluster_key(r.case_id, (source_of or {}).get(r.case_id, ""))
        _tally(tallies[r.config_id], r, key)
        kb = r.output.get("experiment", {}).get("kb") or (kb_of or {}).get(r.case_id)
        if kb:
            kbs.add(kb)
            _tally(by_kb[kb_group(r.config_id, kb)], r, key)
    if len(kbs) > 1:
        tallies.update(by_kb)
    approx = " (offline judge: learned combiner of embedding, number, yes/no and key-word signals; " \
             "--factuality-judge llm for the LLM judge)" if factuality_judge == "offline" else \
        " (LLM judge, spec factuality_v1)"
    described = {**DESCRIBED, "factuality_answered": DESCRIBED["factuality_answered"] + approx}
    out = []
    for group in sorted(tallies):
        t = tallies[group]
        out += [t.proportion(name, group, description=text) for name, text in described.items()]
        out += [t.counted(name, group, description=text) for name, text in JUDGE_PARSE_FAILURES.items()]
        out.append(t.counted(ERRORS.name, group, description=ERRORS.description))
    return out
