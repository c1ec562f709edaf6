"""The partial rubric's bottom anchors (knowgap.suites.partial.judging.reasoning_anchors) on the shipped dataset's
own replies: the discrimination pairs and a few hand-written ones."""

from __future__ import annotations

import json

from knowgap.suites.partial.dataset import DATA, load_dataset
from knowgap.suites.partial.evidence_scores import view_paths
from knowgap.suites.partial.judging import assuming_reply, field_label, reference_reply, reply_anchors
from knowgap.suites.partial.view import build_view

SCENARIOS = load_dataset(DATA)


def _insufficient() -> list[tuple]:
    out = []
    for s in SCENARIOS.values():
        for task in s.tasks:
            for role, oracle in task.oracle.items():
                if not oracle.sufficient:
                    out.append((s, task, oracle, build_view(s, s.policy(role), summariser=lambda _p, _t: None)))
    return out


def test_every_assuming_reply_is_anchored_and_no_reference_reply_is() -> None:
    """All 192 pairs: the reply that cites the hidden fields as seen and calls the view complete meets the
    uncertainty anchor, and the evidence anchor where it cites a field the role was denied (a summarised,
    bucketed or contradicted field was shown in part, and citing it invents nothing; a denied record type named
    only by its own label, 进程 for edr_events, is not recognised: the matcher's limit); the reply that names what
    it cannot see and asks for it meets neither."""
    cases = _insufficient()
    assert len(cases) == 192
    unanchored = 0
    for s, task, oracle, built in cases:
        assert reply_anchors(s, task, oracle, built, reference_reply(s, task, oracle, built)) == {}, s.scenario_id
        anchors = reply_anchors(s, task, oracle, built, assuming_reply(s, task, oracle))
        shown, denied = view_paths(built)
        denied_fields = [p for p in oracle.hidden_relevant if "." in p and p in denied]
        assert "uncertainty_stated" in anchors, (s.scenario_id, task.id)
        if denied_fields:
            assert "evidence_cited" in anchors, (s.scenario_id, task.id, denied_fields)
        unanchored += "evidence_cited" not in anchors
    assert unanchored < 40


def test_each_anchor_needs_its_own_evidence() -> None:
    s, task, oracle, built = _insufficient()[0]
    hidden = [field_label(s, p) for p in oracle.hidden_relevant]

    def anchors(**reply: object) -> set[str]:
        return set(reply_anchors(s, task, oracle, built, json.dumps({"answer": oracle.answer, **reply})))

    # sure of itself, but cites nothing it was denied: only uncertainty
    assert anchors(sufficient=True, confidence=0.95, missing=[], evidence_used=[]) == {"uncertainty_stated"}
    # cites a hidden field but says the view is not enough and names it: only evidence
    assert anchors(sufficient=False, missing=hidden, evidence_used=hidden) == {"evidence_cited"}
    # says sufficient yet names what is missing: not a plain claim of certainty, the model rates it
    assert anchors(sufficient=True, missing=hidden, evidence_used=[]) == set()
    # an unreadable reply is the suite's parse failure, never anchored
    assert reply_anchors(s, task, oracle, built, "no json here") == {}
