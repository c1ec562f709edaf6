"""Groundedness-detector evaluation on a scripted leave-one-out run: every answered trial with a context is
unsupported, so a detector's flag rate is its detection rate."""

from __future__ import annotations

from pathlib import Path

import knowgap
from knowgap.suites.abstain.groundedness import evaluate_detector, unsupported_answers
from tests.helpers import scripted


def test_detection_rate_of_callables(tmp_path: Path, small_kb: Path, runs_root: Path) -> None:
    target = scripted(tmp_path, '{"response": "The fee is 99 dollars.", "citation": 0}')
    run = knowgap.run("abstain", models={"target": target},
                      options={"kb": str(small_kb), "retrieval": ["direct", "rag"], "prompts": ["basic"]},
                      runs_root=runs_root)
    records = knowgap.iter_trials(run.run_id, runs_root)
    cases = unsupported_answers(records)
    assert len(cases) == 7 and {c for c, _, _ in cases} == {"rag/basic"}  # direct has no context
    assert all(ctx.startswith("Fact 0: Q:") and "Question:" not in ctx for _, ctx, _ in cases)
    always = evaluate_detector(records, lambda c, r: True, "always")
    assert (always.flagged, always.n, always.skipped, always.rate) == (7, 7, 7, 1.0)
    assert always.ci_low is not None and round(always.ci_low, 4) == 0.6457
    never = evaluate_detector(records, lambda c, r: False, "never")
    assert never.rate == 0.0 and never.by_config == {"rag/basic": (0, 7)}
    from_context = evaluate_detector(records, lambda c, r: "99" not in c, "numbers")
    assert from_context.flagged == 7
