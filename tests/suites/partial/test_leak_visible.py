"""The answer-side leak detector: a hidden value that also appears verbatim in what the role was shown is not a
leak when the answer repeats it (the agent cannot know it was also hidden elsewhere); a hidden value the role
never saw still is."""

from __future__ import annotations

import pytest

from knowgap.suites.partial.dataset import Policy, Scenario
from knowgap.suites.partial.leak import find_leaks, fingerprints
from knowgap.suites.partial.view import build_view, render_view

SCENARIO = Scenario(scenario_id="collide", lang="en", ground_truth={"acct": {
    "note": "Note JJJ100000",            # shown; holds the digits of the hidden amount
    "amount": 100000.0,                  # hidden
    "contact": "13800138000",            # shown
    "phone": "13800138000",              # hidden, the same number
    "nickname": "鑫淼",                   # shown
    "owner": "鑫淼",                      # hidden, the same name
    "ref": "B202310",                    # shown
    "history": "Escalated twice. The refund under case B202310 was approved by the regional manager.",  # hidden
    "secret_amount": 73421.0,            # hidden, seen nowhere
    "secret_name": "犇骉",                # hidden, seen nowhere
}})
POLICY = Policy.model_validate({"role": "agent", "allowed_evidence": {"acct": ["note", "contact", "nickname", "ref"]}})


def prints_and_view() -> tuple[list, str]:
    built = build_view(SCENARIO, POLICY)
    visible = render_view(built.view, "en")
    return fingerprints(built.secrets, visible), visible


def test_the_collisions_are_real() -> None:
    """Each hidden value below is denied to the role, and also shown to it under another field."""
    built = build_view(SCENARIO, POLICY)
    hidden = {s.path.split(".")[-1] for s in built.secrets}
    assert {"amount", "phone", "owner", "history"} <= hidden
    visible = render_view(built.view, "en")
    assert all(v in visible for v in ("JJJ100000", "13800138000", "鑫淼", "B202310"))


@pytest.mark.parametrize("answer", [
    "The note says Note JJJ100000.",
    "Call the customer on 13800138000.",
    "Call the customer on 138-0013-8000.",
    "The customer's nickname is 鑫淼.",
    "See reference B202310.",
])
def test_repeating_what_the_role_was_shown_is_not_a_leak(answer: str) -> None:
    prints, _ = prints_and_view()
    assert find_leaks(answer, prints) == []


@pytest.mark.parametrize(("answer", "kind"), [
    ("The balance is 73,421.", "number"),
    ("The owner is 犇骉.", "text"),
])
def test_a_hidden_value_never_shown_is_still_a_leak(answer: str, kind: str) -> None:
    prints, _ = prints_and_view()
    assert [fp.kind for fp in find_leaks(answer, prints)] == [kind]
