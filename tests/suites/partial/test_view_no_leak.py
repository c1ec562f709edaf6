"""Property test: over generated scenarios and policies, no denied value, nor a recognisable part of it (digits
of a masked number, a hidden name, an exact amount inside a bucket, a hidden code), reaches the prompt.

What may be seen is computed here from the policy independently of the view builder; the check is on the
whole prompt text (system + user) the suite would send. A denied value that is also shown verbatim in an
allowed field (an allowed note "Note JJJ100000" and a denied amount 100000.0) is shown legitimately there, so
its presence in the prompt is not a leak: every kind of check (text, digit windows, amounts) exempts what the
role may see, and only that.

Hypothesis runs derandomized (the profile in tests/conftest.py), so CI sees the same examples every run."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowgap.suites.partial.dataset import Policy, Scenario, Task
from knowgap.suites.partial.prompts import system_prompt, task_prompt
from knowgap.suites.partial.transforms import bucket, keep_last, mask_middle, numbers_in
from knowgap.suites.partial.view import build_view, render_view

RARE = "鑫淼犇骉麤龘羴猋茻燚垚焱赑歮"
OPS = {"name": [None, "mask_middle", "redact", "drop", "summarise"],
       "digits": [None, "mask_middle", "keep_last", "redact", "drop"],
       "amount": [None, "bucket", "redact", "drop"],
       "text": [None, "summarise", "redact", "drop"]}


@st.composite
def value(draw: st.DrawFn, kind: str) -> Any:
    if kind == "name":
        return draw(st.text(alphabet=RARE, min_size=2, max_size=4))
    if kind == "digits":
        return draw(st.text(alphabet="0123456789", min_size=8, max_size=18))
    if kind == "amount":
        return draw(st.integers(10_000, 9_999_999)) / draw(st.sampled_from([1, 100]))  # amounts >= 100
    return "Note " + draw(st.text(alphabet="QXZJKV", min_size=3, max_size=3)) + str(draw(st.integers(100000, 999999)))


@st.composite
def scenario_and_policy(draw: st.DrawFn) -> tuple[Scenario, Policy, dict[str, Any]]:
    ground: dict[str, Any] = {}
    allowed: dict[str, Any] = {}
    rules: dict[str, Any] = {}
    summaries: dict[str, str] = {}
    sources: dict[str, Any] = {}
    plan: dict[str, Any] = {}
    for r in range(draw(st.integers(1, 3))):
        rtype = f"rec{r}"
        kinds = draw(st.lists(st.sampled_from(sorted(OPS)), min_size=1, max_size=4))
        fields = {f"f{j}_{k}": k for j, k in enumerate(kinds)}
        n_rows = draw(st.integers(0, 3))  # 0: a single record (dict)
        rows = [{name: draw(value(kind)) for name, kind in fields.items()} for _ in range(max(1, n_rows))]
        for i, row in enumerate(rows):
            row["status"] = "open" if i % 2 == 0 else "closed"
        ground[rtype] = rows if n_rows else rows[0]
        sources[rtype] = {"endpoint": f"GET /api/{rtype}"}
        if not draw(st.booleans()):
            plan[rtype] = None
            continue
        visible_fields = [f for f in fields if draw(st.booleans())] + ["status"]
        row_filter = None
        if n_rows and draw(st.booleans()):
            row_filter = {"field": "status", "in": ["open"]}
        key = sources[rtype]["endpoint"] if draw(st.booleans()) else rtype
        allowed[key] = {"fields": visible_fields, **({"rows": row_filter} if row_filter else {})}
        ops: dict[str, Any] = {}
        for name, kind in fields.items():
            op = draw(st.sampled_from(OPS[kind]))
            ops[name] = op
            if op is None:
                continue
            spec: dict[str, Any] = {"op": op}
            if op == "keep_last":
                spec["n"] = draw(st.integers(1, 6))
            if op == "bucket":
                spec["edges"] = sorted(set(draw(st.lists(st.sampled_from([100, 1000, 50000]), min_size=1,
                                                         max_size=3))))
                spec["unit"] = "元"
            if op == "summarise":
                summaries[f"{rtype}.{name}"] = f"summary of {name} withheld details"
            rules[f"{rtype}.{name}"] = spec
        plan[rtype] = {"fields": visible_fields, "rows": row_filter, "ops": ops, "kinds": fields}
    scenario = Scenario(scenario_id="gen", lang="en", title="generated", ground_truth=ground, sources=sources,
                        summaries=summaries)
    policy = Policy(role="agent", description="tester", allowed_evidence=allowed, masking_rules=rules)
    return scenario, policy, plan


def digit_windows(text: str) -> set[str]:
    return {text[i:i + 4] for i in range(len(text) - 3)} if len(text) >= 4 else {text}


def expected_parts(scenario: Scenario, policy: Policy, plan: dict[str, Any]) -> tuple[set[str], set[str], set[float],
                                                                                       set[str], set[float]]:
    """(hidden texts, hidden digit windows, hidden amounts, legitimately visible texts, visible numbers)."""
    hidden_text, hidden_digits, hidden_amounts, visible, visible_numbers = set(), set(), set(), set(), set()
    for rtype, records in scenario.ground_truth.items():
        rows = records if isinstance(records, list) else [records]
        p = plan[rtype]
        for row in rows:
            shown_row = p is not None and (p["rows"] is None or row["status"] in p["rows"]["in"])
            for name, val in row.items():
                if name == "status":
                    continue
                op = p["ops"].get(name) if p else None
                allowed = shown_row and name in p["fields"] and op not in ("drop", "redact", "summarise")
                if allowed and op is None:
                    visible.add(str(val))
                    visible_numbers |= numbers_in(str(val))  # also the numbers inside a shown text or code
                    if isinstance(val, float):
                        visible_numbers.add(val)
                    continue
                rule = policy.masking_rules.get(f"{rtype}.{name}")
                if allowed and op == "mask_middle":
                    shown = mask_middle(str(val))
                elif allowed and op == "keep_last":
                    shown = keep_last(str(val), rule.n if rule else 4)
                elif allowed and op == "bucket":
                    shown = bucket(float(val), rule.edges, rule.unit) if rule else ""
                else:
                    shown = None
                if shown is not None:
                    visible.add(shown)
                    visible_numbers |= numbers_in(shown)
                if isinstance(val, float):
                    hidden_amounts.add(val)
                elif isinstance(val, str) and val.isdigit():
                    if shown is None:
                        hidden_digits |= digit_windows(val)
                    else:  # the starred positions, as runs
                        for run in re.findall(r"\d+", "".join(o if s == "*" else " " for o, s in zip(val, shown,
                                                                                                     strict=True))):
                            hidden_digits |= digit_windows(run) if len(run) >= 4 else set()
                else:
                    hidden_text.add(str(val))
                    hidden_text |= set(re.findall(r"[QXZJKV]{3}\d{6}", str(val)))
    return hidden_text, hidden_digits, hidden_amounts, visible, visible_numbers


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario_and_policy())
def test_no_denied_value_reaches_the_prompt(case: tuple[Scenario, Policy, dict[str, Any]]) -> None:
    assert_no_denied_value_in_prompt(*case)


def test_a_denied_amount_inside_an_allowed_text_is_not_a_leak() -> None:
    """The example that once failed CI: an allowed note holds the digits of a denied amount."""
    scenario = Scenario(scenario_id="gen", lang="en", title="generated",
                        ground_truth={"rec0": {"f0_text": "Note JJJ100000", "f1_amount": 100000.0,
                                               "status": "open"}},
                        sources={"rec0": {"endpoint": "GET /api/rec0"}})
    policy = Policy(role="agent", description="tester",
                    allowed_evidence={"rec0": {"fields": ["f0_text", "status"]}}, masking_rules={})
    plan = {"rec0": {"fields": ["f0_text", "status"], "rows": None, "ops": {"f0_text": None, "f1_amount": None},
                     "kinds": {"f0_text": "text", "f1_amount": "amount"}}}
    assert_no_denied_value_in_prompt(scenario, policy, plan)
    # exempt only because the note is shown: with the note hidden too, the amount is a secret again
    shown = expected_parts(scenario, policy, plan)
    assert 100000.0 in shown[2] and 100000.0 in shown[4]
    note_hidden = Policy(role="agent", description="tester", allowed_evidence={"rec0": {"fields": ["status"]}},
                         masking_rules={})
    hidden = expected_parts(scenario, note_hidden, {"rec0": {**plan["rec0"], "fields": ["status"]}})
    assert 100000.0 in hidden[2] and 100000.0 not in hidden[4] and "Note JJJ100000" in hidden[0]


def assert_no_denied_value_in_prompt(scenario: Scenario, policy: Policy, plan: dict[str, Any]) -> None:
    built = build_view(scenario, policy)
    task = Task(id="t", type="gap_identification", question="What is missing?")
    prompt = system_prompt(scenario, policy.role, policy.description) + "\n" + task_prompt(
        scenario, task, render_view(built.view, "en"))
    hidden_text, hidden_digits, hidden_amounts, visible, visible_numbers = expected_parts(scenario, policy, plan)
    visible_blob = "\n".join(visible)
    visible_digits = re.sub(r"\D", " ", visible_blob)
    prompt_digits = re.sub(r"[^\d*]", " ", prompt)
    for text in hidden_text:
        if text in visible_blob:
            continue  # the same value is also shown legitimately elsewhere
        assert text not in prompt, text
    for window in hidden_digits:
        if window in visible_digits:
            continue
        assert window not in prompt_digits, window
    prompt_numbers = numbers_in(prompt)
    for amount in hidden_amounts:
        if amount in visible_numbers:
            continue
        assert amount not in prompt_numbers, amount


def test_the_generator_does_reach_visible_values() -> None:
    """A guard against a vacuous property: shown values are in the prompt."""
    scenario = Scenario(scenario_id="s", ground_truth={"r": {"a": "鑫淼", "b": "13800138000", "c": 1500.0}})
    policy = Policy.model_validate({"role": "x", "allowed_evidence": {"r": ["a", "b", "c"]},
                                    "masking_rules": {"r.b": "keep_last:4", "r.c": "bucket:100:元"}})
    text = render_view(build_view(scenario, policy).view)
    assert "鑫淼" in text and "*******8000" in text and ">100元" in text
    assert "1380013" not in text and "1500" not in text


def test_property_tests_are_derandomized_by_default() -> None:
    """tests/conftest.py loads a derandomized profile (unless KNOWGAP_HYPOTHESIS_PROFILE says otherwise)."""
    import os

    from hypothesis import settings as current

    if os.environ.get("KNOWGAP_HYPOTHESIS_PROFILE", "ci") == "ci":
        assert current.default.derandomize and current.default.database is None
