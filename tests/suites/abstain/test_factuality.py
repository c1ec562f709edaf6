"""The approximate factuality tiers (batch and single give the same verdicts), agreement with reference tiers, and
``knowgap judge factuality`` on a file with each of its judges."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from knowgap.judges.factuality_file import judge_factuality_file
from knowgap.suites.abstain.factuality import TierVerdict, approximate_tier, approximate_tiers, tier_agreement
from knowgap.text.embed import default_embedder
from tests.helpers import scripted

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
    assert a.confusion["tier_3"] == {"tier_1": 1, "tier_2": 0, "tier_3": 2, "unparsed": 0}
    # a verdict that could not be parsed stays in the denominator as a wrong one
    b = tier_agreement(["tier_1", "tier_3", "tier_3"], ["tier_1", None, "tier_3"])
    assert (b.n, b.unparsed, b.exact, b.acceptable_agree) == (3, 1, 2, 2)
    assert b.confusion["tier_3"]["unparsed"] == 1
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
    assert all(w["tier_method"] == "offline" and w["tier_version"].startswith("offline-lr-") for w in written)
    assert all(w["tier"] in ("tier_1", "tier_2", "tier_3") and w["acceptable"] == (w["tier"] != "tier_3")
               and 0 <= w["score"] <= 1 for w in written)
    assert [w["acceptable"] for w in written] == [True, False, True, False]
    assert "against 'label' on 4 rows" in done.stdout and "exact tier" in done.stdout
    approx = subprocess.run(cmd + ["--judge", "approximate"], capture_output=True, text=True, timeout=300)
    assert approx.returncode == 0, approx.stderr
    assert {json.loads(line)["tier_method"] for line in out.read_text(encoding="utf-8").splitlines()} == \
        {"approximate"}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"response": "x"}\n', encoding="utf-8")
    done = subprocess.run(cmd[:5] + [str(bad), "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "line 1, field 'expected_answer': missing (the row has: response)" in done.stderr


def test_llm_judge_over_a_file_counts_unparsed_replies(tmp_path: Path) -> None:
    src = tmp_path / "answers.jsonl"
    src.write_text("".join(json.dumps({"q": q, "expected_answer": e, "response": r, "label": "tier_1"},
                                      ensure_ascii=False) + "\n" for q, e, r in ROWS[:2]), encoding="utf-8")
    judge = scripted(tmp_path, '{"outcome": "tier_1"}', "no idea")
    out = tmp_path / "out.jsonl"
    rows, results = judge_factuality_file(src, question_field="q", judge=judge, out=out)
    assert [r.tier for r in results] == ["tier_1", None] and results[1].parse_failure
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert written[0]["tier_version"] == "factuality_v1" and written[0]["acceptable"] is True
    assert written[1]["tier"] is None and written[1]["tier_parse_failure"]
    a = tier_agreement([r["label"] for r in rows], [r.tier for r in results])
    assert (a.n, a.exact, a.unparsed) == (2, 1, 1)
