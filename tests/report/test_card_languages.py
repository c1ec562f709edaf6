"""A metric on a language its judge's card does not cover shows ``no card for zh`` wherever it is shown (issue 37,
item 4): report.md, report.html, ``knowgap show``, ``knowgap compare`` and ``knowgap judges`` (which names each
card's languages). Real starter runs through the CLI, one on the starter's Chinese cases and one on its English
cases, with a scripted model; the abstention judge's card, measured here on English replies of two models, is
reportable for the English run and a screen, with no corrected rate, for the Chinese one."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from knowgap.judges import abstention
from knowgap.judges.cards import ValidityCard, binary_card, save_card
from knowgap.suites.starter.dataset import DATA as CASES_FILE
from tests.helpers import knowgap_cli, scripted

RESPONSES = ["I don't know.", "It is 42.", "Yes, 42."]
NO_CARD = "no card for zh: its card (test/abstention-en.jsonl) holds en items only"


@pytest.fixture
def english_card() -> ValidityCard:
    """The abstention detector's card measured on 100 English replies of two models (BA 0.91)."""
    tp, fn, fp, tn = 45, 5, 4, 46
    verdicts: list[bool | None] = [True] * tp + [False] * fn + [True] * fp + [False] * tn
    labels = [True] * (tp + fn) + [False] * (fp + tn)
    card = binary_card("abstention", abstention.VERSION, verdicts, labels, positive="abstained",
                       dataset="test/abstention-en.jsonl", dataset_sha256="0" * 64, writers=["a", "b"] * 50,
                       item_languages=["en"] * 100, claim="did the response decline to answer?")
    save_card(card)
    return card


def _cases(tmp_path: Path, lang: str) -> Path:
    rows = [line for line in CASES_FILE.read_text(encoding="utf-8").splitlines()
            if line.strip() and json.loads(line)["lang"] == lang]
    assert rows
    path = tmp_path / f"cases-{lang}.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _run(tmp_path: Path, runs: Path, lang: str) -> Path:
    proc = knowgap_cli("run", "starter", "--data", str(_cases(tmp_path, lang)), "--model",
                       scripted(tmp_path, *RESPONSES), "--runs-dir", str(runs), "-q")
    assert proc.returncode == 0, proc.stderr
    (folder,) = [p for p in runs.iterdir() if p.is_dir() and p.name not in _seen]
    _seen.add(folder.name)
    return folder


_seen: set[str] = set()


def _row(report: str, name: str) -> str:
    return next(line for line in report.splitlines() if line.startswith("| ") and f"| {name} |" in line)


def test_a_chinese_run_with_an_english_only_card_shows_no_card_for_zh(tmp_path: Path, runs_root: Path,
                                                                      english_card: ValidityCard) -> None:
    _seen.clear()
    zh = _run(tmp_path, runs_root, "zh")
    en = _run(tmp_path, runs_root, "en")

    zh_md = (zh / "report.md").read_text(encoding="utf-8")
    row = _row(zh_md, "abstention_unanswerable")
    assert f"SCREEN: abstention {abstention.VERSION} · BA 0.91 [" in row and NO_CARD in row
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[5] == ""  # no corrected rate from a card measured on another language
    judges = zh_md.split("## Judges", 1)[1]
    assert f"**SCREEN** ({NO_CARD})" in judges and "languages: en n=100 0.91 [" in judges

    en_md = (en / "report.md").read_text(encoding="utf-8")
    row = _row(en_md, "abstention_unanswerable")
    assert "SCREEN" not in row and "BA 0.91 [" in row
    assert re.search(r"\| \d+\.\d% \[\d+\.\d%, \d+\.\d%\] \|", row)  # the corrected rate

    html = (zh / "report.html").read_text(encoding="utf-8")
    assert f'<span class="badge screen" title="{NO_CARD}">SCREEN</span>' in html

    shown = knowgap_cli("show", zh.name, "--runs-dir", str(runs_root), env={"COLUMNS": "240"})
    assert shown.returncode == 0, shown.stderr
    assert f"  abstention_unanswerable: {NO_CARD}" in shown.stdout
    shown_en = knowgap_cli("show", en.name, "--runs-dir", str(runs_root), env={"COLUMNS": "240"})
    assert "no card for" not in shown_en.stdout

    compared = knowgap_cli("compare", en.name, zh.name, "--runs-dir", str(runs_root), "--md",
                           str(tmp_path / "compare.md"), env={"COLUMNS": "240"})
    assert compared.returncode == 0, compared.stderr
    text = (tmp_path / "compare.md").read_text(encoding="utf-8")
    assert re.search(r"^SCREEN \(abstention\\_unanswerable, over\\_abstention\): B: no card for zh: its card "
                     r"\(test/abstention-en\.jsonl\) holds en items only$", text, re.M)  # markdown-escaped
    assert "SCREEN (abstention_unanswerable, over_abstention): B: " + NO_CARD in compared.stdout

    listed = knowgap_cli("judges")
    assert listed.returncode == 0, listed.stderr
    block = listed.stdout.split("abstention (offline", 1)[1].split("\nabstention-scenarios (", 1)[0]
    assert "languages: en n=100 0.91 [" in block and "replies: real (a 50, b 50)" in block
