"""The offline factuality tiers, batch and single give the same verdicts, agreement with reference tiers, and
``knowgap judge factuality`` on a file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from knowgap.suites.abstain.factuality import TierVerdict, approximate_tier, approximate_tiers, tier_agreement
from knowgap.text.embed import default_embedder

ROWS = [  # (question, expected, response)
    ("What is the late fee for books?", "The late fee is 20 cents per day per book.",
     "Late books cost 20 cents per day per book."),
    ("What is the late fee for books?", "The late fee is 20 cents per day per book.",
     "The late fee is 5 dollars per week."),
    ("医保每年的起付线是多少？", "医保每年的起付线为1500元。", "起付线是每年1500元。"),
    ("医保每年的起付线是多少？", "医保每年的起付线为1500元。", "我觉得应该去医院问问，大概300元吧。"),
]


def test_batch_equals_single_and_numbers_decide() -> None:
    emb = default_embedder()
    batch = approximate_tiers([r for _, _, r in ROWS], [e for _, e, _ in ROWS], [q for q, _, _ in ROWS], emb,
                              batch=3)
    single = [approximate_tier(r, e, emb, question=q) for q, e, r in ROWS]
    assert [v.tier for v in batch] == [v.tier for v in single]
    assert [v.similarity for v in batch] == pytest.approx([v.similarity for v in single], abs=1e-3)
    # the same amount: acceptable; a contradicting amount: unacceptable, in English and in Chinese
    assert batch[0].tier in ("tier_1", "tier_2") and batch[1].tier == "tier_3"
    assert batch[2].tier in ("tier_1", "tier_2") and batch[3].tier == "tier_3"
    assert batch[1].numbers_missing == ["20"] and "numbers conflict" in batch[1].note


def verdict(tier: str) -> TierVerdict:
    return TierVerdict(tier=tier, method="approximate", similarity=0.9, numbers_missing=[])


def test_tier_agreement_counts_hand_checked() -> None:
    labels = ["tier_1", "tier_2", "tier_3", "tier_3", "NA", "tier_3"]
    verdicts = [verdict(t) for t in ("tier_2", "tier_2", "tier_3", "tier_1", "tier_3", "tier_3")]
    a = tier_agreement(labels, verdicts)
    assert (a.n, a.skipped, a.exact) == (5, 1, 3)
    assert a.acceptable_agree == 4  # both acceptable twice, both tier_3 twice, one tier_3 called tier_1
    assert a.balanced_accuracy == pytest.approx((2 / 2 + 2 / 3) / 2)
    # po = 0.8, pe = (3*2 + 2*3) / 25 = 0.48 -> kappa = 0.32 / 0.52
    assert a.acceptable_kappa == pytest.approx(0.32 / 0.52)
    assert a.confusion["tier_3"] == {"tier_1": 1, "tier_2": 0, "tier_3": 2}
    with pytest.raises(ValueError, match="no row has a reference tier"):
        tier_agreement(["NA"], [verdict("tier_1")])


def test_cli_writes_tiers_in_order_and_reports_agreement(tmp_path: Path) -> None:
    src = tmp_path / "answers.jsonl"
    labels = ["tier_1", "tier_3", "tier_1", "tier_3"]
    src.write_text("".join(json.dumps({"q": q, "expected_answer": e, "response": r, "label": lab},
                                      ensure_ascii=False) + "\n" for (q, e, r), lab in zip(ROWS, labels, strict=True)),
                   encoding="utf-8")
    out = tmp_path / "out.jsonl"
    cmd = [sys.executable, "-m", "knowgap", "judge", "factuality", str(src), "--question-field", "q",
           "--out", str(out), "--label-field", "label"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [w["response"] for w in written] == [r for _, _, r in ROWS]
    assert all(w["tier_method"] == "approximate" for w in written)
    assert "against 'label' on 4 rows" in done.stdout and "exact tier" in done.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"response": "x"}\n', encoding="utf-8")
    done = subprocess.run(cmd[:5] + [str(bad), "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "line 1, field 'expected_answer': missing (the row has: response)" in done.stderr
