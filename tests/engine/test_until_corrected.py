"""``knowgap run --until decided`` on a judge-corrected rate (issue 38: a threshold ``use: corrected``), end to end
through the real CLI. The system is a real ``python:`` function that abstains on every question; the cases, 60
English starter cases written here (30 answerable), make over_abstention, a rate of the abstention judge's positive
verdicts, 1.0 in each prompt's group. Its judge's card is the one knowgap ships (abstention-detector-2, measured on
the embedded models' English answers), found by the run as the reports find it. The run stops when the corrected
sequence (the observed rate's at alpha/2, the card's box at alpha/2) decides, records the card in the manifest and
the reports, and ``knowgap gate`` reads it; a card built by knowgap's card API for a judge near chance, which no
run could decide with, is refused before any call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knowgap.judges import abstention
from knowgap.judges.cards import binary_card, save_card, shipped_cards
from tests.helpers import knowgap_cli

SYSTEM = '''from knowgap.models.types import ChatRequest


def reply(request: ChatRequest) -> str:
    return "I don't know: the context does not say."
'''
SHIPPED = f"abstention@{abstention.VERSION}"
SHIPPED_CARD = next((c for c in shipped_cards() if c.key == SHIPPED), None)


@pytest.fixture
def system(tmp_path: Path) -> str:
    path = tmp_path / "abstainer.py"
    path.write_text(SYSTEM, encoding="utf-8")
    return f"python:{path}:reply"


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    rows = []
    for i in range(30):
        context = f"Depot {i} opens at {i % 12 + 1}:00 and closes at 20:00."
        rows.append({"id": f"en-open-{i}", "lang": "en", "context": context, "question": f"When does depot {i} open?",
                     "answerable": True, "answers": [f"{i % 12 + 1}:00"]})
        rows.append({"id": f"en-who-{i}", "lang": "en", "context": context, "question": f"Who manages depot {i}?",
                     "answerable": False, "answers": []})
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _gate(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "gate.yaml"
    path.write_text(text, encoding="utf-8")
    return path


CORRECTED = 'thresholds:\n  - {metric: over_abstention, op: "<=", value: 0.5, use: corrected}\n'


def _run(runs: Path, system: str, cases: Path, gate: Path) -> Any:
    return knowgap_cli("run", "starter", "--data", str(cases), "-m", system, "--runs-dir", str(runs), "--until",
                       "decided", "--thresholds", str(gate), "--concurrency", "1", "--no-cache", "-q")


def _manifest(runs: Path) -> dict[str, Any]:
    [folder] = [p for p in runs.iterdir() if p.is_dir()]
    found: dict[str, Any] = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return found


@pytest.mark.slow
def test_a_corrected_gate_stops_when_decided_and_records_its_card(tmp_path: Path, system: str, cases: Path) -> None:
    runs = tmp_path / "runs"
    gate = _gate(tmp_path, CORRECTED)
    done = _run(runs, system, cases, gate)
    assert done.returncode == 1, done.stderr  # the corrected rate fails <= 0.5
    manifest = _manifest(runs)
    record = manifest["sequential"]
    assert manifest["status"] == "stopped" and record["reason"] == "decided"
    assert record["units_run"] < record["units_total"] == 60
    [threshold] = record["rule"]["thresholds"]
    assert threshold["use"] == "corrected" and threshold["correction"]["card"] == SHIPPED
    assert SHIPPED_CARD is not None
    assert threshold["correction"]["n"] == SHIPPED_CARD.n and threshold["correction"]["counts"] == "positive"
    assert [s["group"] for s in record["sequences"]] == ["prompt=grounded", "prompt=plain"]
    for seq in record["sequences"]:
        by = seq["corrected"]
        assert seq["decision"] == "fail" and by["card"]["card"] == SHIPPED
        assert by["alpha_observed"] + by["alpha_card"] == pytest.approx(0.05)
        # the corrected range is the transform's worst case over the observed sequence and the card's box
        se_high, sp_low = by["sensitivity"][1], by["specificity"][0]
        assert seq["low"] == pytest.approx((by["observed_low"] + sp_low - 1) / (se_high + sp_low - 1))
        assert 0.5 < seq["low"] < by["observed_low"] and seq["high"] == 1.0
    assert f"corrected by the judge's card {SHIPPED} ({SHIPPED_CARD.dataset}, n={SHIPPED_CARD.n}" in done.stdout
    assert "fail      over_abstention (corrected) <= 0.5" in done.stdout
    run_id = manifest["run_id"]
    report = (runs / run_id / "report.md").read_text(encoding="utf-8")
    assert "| over_abstention (corrected) | prompt=plain | over_abstention (corrected) <= 0.5 | fail |" in report
    assert f"- over_abstention [prompt=plain]: corrected by the judge's card {SHIPPED}" in report
    html = (runs / run_id / "report.html").read_text(encoding="utf-8")
    assert html.count('<p class="corrected">') == 2 and html.count('class="chart sequence-chart"') == 2

    gated = knowgap_cli("gate", run_id, "--runs-dir", str(runs), "--thresholds", str(gate))
    assert gated.returncode == 1, gated.stdout + gated.stderr
    assert f"corrected by the judge's card {SHIPPED}" in gated.stdout and "violates <= 0.5" in gated.stdout

    # the same gate on the observed value decides on fewer cases: the card's box and the alpha split cost some
    plain = tmp_path / "plain"
    uncorrected = _run(plain, system, cases, _gate(tmp_path, "thresholds:\n  - over_abstention <= 0.5\n"))
    assert uncorrected.returncode == 1, uncorrected.stderr
    other = _manifest(plain)["sequential"]
    assert "corrected" not in other["sequences"][0] and "use" not in other["rule"]["thresholds"][0]
    assert other["units_run"] <= record["units_run"]


def test_a_card_no_run_could_decide_with_is_refused_before_any_call(tmp_path: Path, system: str,
                                                                     cases: Path) -> None:
    # the abstention judge measured on 40 English replies of two models: se 0.60, sp 0.55 (a judge near chance)
    tp, fn, fp, tn = 12, 8, 9, 11
    verdicts: list[bool | None] = []
    verdicts += [True] * tp + [False] * fn + [True] * fp + [False] * tn
    labels = [True] * (tp + fn) + [False] * (fp + tn)
    save_card(binary_card("abstention", abstention.VERSION, verdicts, labels, positive="abstained",
                          dataset="test/abstention-poor.jsonl", dataset_sha256="0" * 64, writers=["a", "b"] * 20,
                          item_languages=["en"] * 40, claim="did the response decline to answer?"))
    runs = tmp_path / "runs"
    refused = _run(runs, system, cases, _gate(tmp_path, CORRECTED))
    assert refused.returncode == 2, refused.stdout + refused.stderr
    said = " ".join(refused.stderr.split())
    assert (f"cannot decide 'over_abstention (corrected) <= 0.5': the judge's card {SHIPPED} "
            "(test/abstention-poor.jsonl, n=40) gives sensitivity [") in said
    assert "may be 0 or below there (a judge no better than chance)" in said
    assert not runs.exists() or not any(runs.iterdir())

    # a metric that is no rate of one judge's verdicts has no card to correct it
    refused = _run(runs, system, cases, _gate(tmp_path, 'thresholds:\n  - {metric: accuracy, op: ">=", value: 0.5, '
                                                        'use: corrected}\n'))
    assert refused.returncode == 2 and "accuracy is no rate of one judge's verdicts" in " ".join(
        refused.stderr.split())


def test_without_until_the_gate_compares_the_reports_corrected_rate(tmp_path: Path, system: str,
                                                                     cases: Path) -> None:
    runs = tmp_path / "runs"
    done = knowgap_cli("run", "starter", "--data", str(cases), "-m", system, "--runs-dir", str(runs), "--no-cache",
                       "-q")
    assert done.returncode == 0, done.stderr
    run_id = _manifest(runs)["run_id"]
    gate = _gate(tmp_path, 'thresholds:\n  - {metric: over_abstention, op: ">=", value: 0.9, use: corrected}\n'
                           '  - {metric: accuracy, op: ">=", value: 0.0, use: corrected}\n')
    gated = knowgap_cli("gate", run_id, "--runs-dir", str(runs), "--thresholds", str(gate))
    said = " ".join(gated.stdout.split())
    assert gated.returncode == 1, said + gated.stderr
    # every answerable question declined: the judged rate 1.0 corrects to 1.0 (clipped), as report.md shows it
    assert "over_abstention[prompt=plain] corrected=1 satisfies >= 0.9" in said
    assert "accuracy[prompt=plain] has no corrected rate: no card of its judge corrects it" in said
