"""Files saved by Excel or Notepad start with a UTF-8 byte-order mark and end lines with CRLF: every reader of
a user's file accepts them and reads exactly what the plain UTF-8 / LF file holds."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import knowgap
from knowgap.jsonl import read_lines
from knowgap.models.scripted import ScriptedModel
from knowgap.models.types import ChatRequest
from tests.helpers import REPO, knowgap_cli, script_file

BOM = "\ufeff"


def as_windows(path: Path, out: Path | None = None) -> Path:
    """The same text with a byte-order mark and CRLF line ends (what Notepad and Excel save)."""
    target = out or path.with_name("win-" + path.name)
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n").replace("\n", "\r\n")
    target.write_bytes((BOM + text).encode("utf-8"))
    return target


def test_jsonl_reader(tmp_path: Path) -> None:
    plain = tmp_path / "rows.jsonl"
    plain.write_text('{"id": "a"}\n\n{"id": "b"}\n', encoding="utf-8")
    assert read_lines(as_windows(plain)) == read_lines(plain) == [(1, {"id": "a"}), (3, {"id": "b"})]


def test_run_with_cases_and_scripted_files_from_windows(tmp_path: Path, runs_root: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(row) + "\n" for row in [
        {"id": "a", "lang": "en", "context": "The sky is blue.", "question": "What colour is the sky?",
         "answerable": True, "answers": ["blue"]},
        {"id": "b", "lang": "en", "context": "The sky is blue.", "question": "How old is the sky?",
         "answerable": False}]), encoding="utf-8")
    answers = script_file(tmp_path / "answers.jsonl", "Blue.", "I don't know.")
    result = knowgap.run("starter", models={"target": f"scripted:{as_windows(answers)}"},
                         options={"data": str(as_windows(cases)), "prompts": ["grounded"]}, runs_root=runs_root)
    assert result.manifest.trials_ok == 2
    assert {m.name: m.value for m in result.metrics if m.name in ("accuracy", "abstention_unanswerable")} == {
        "accuracy": 1.0, "abstention_unanswerable": 1.0}


def test_scripted_json_array(tmp_path: Path) -> None:
    plain = tmp_path / "answers.json"
    plain.write_text('[\n  {"response": "one"},\n  {"response": "two"}\n]\n', encoding="utf-8")
    model = ScriptedModel("scripted:x", str(as_windows(plain)))
    reply = asyncio.run(model.chat(ChatRequest.simple("hi")))
    assert reply.text == "one"


def test_partial_view_of_windows_files(tmp_path: Path) -> None:
    scenario = REPO / "examples" / "partial" / "scenario_001_customer_complaint.json"
    policy = REPO / "examples" / "partial" / "policy_agent_tier1.json"
    plain = knowgap_cli("partial", "view", str(scenario), "--policy", str(policy))
    windows = knowgap_cli("partial", "view", str(as_windows(scenario, tmp_path / "s.json")), "--policy",
                          str(as_windows(policy, tmp_path / "p.json")))
    assert plain.returncode == 0 and windows.returncode == 0, windows.stderr
    assert windows.stdout == plain.stdout


@pytest.mark.parametrize(("name", "text"), [
    ("kb.csv", "question,answer\nHow long is the warranty?,27 months\n"),
    ("kb.json", '[{"question": "How long is the warranty?", "answer": "27 months"}]\n'),
    ("kb.jsonl", '{"question": "How long is the warranty?", "answer": "27 months"}\n'),
])
def test_abstain_knowledge_base(tmp_path: Path, name: str, text: str) -> None:
    from knowgap.suites.abstain.dataset import load_file

    plain = tmp_path / name
    plain.write_text(text, encoding="utf-8")
    (tmp_path / "win").mkdir()
    windows = as_windows(plain, tmp_path / "win" / name)
    facts = [(f.question, f.answer) for f in load_file(windows)]
    assert facts == [(f.question, f.answer) for f in load_file(plain)] == [("How long is the warranty?", "27 months")]


def test_abstain_generator_documents(tmp_path: Path) -> None:
    from knowgap.suites.abstain.generate import load_documents

    (tmp_path / "docs").mkdir()
    page, notes = tmp_path / "docs" / "page.json", tmp_path / "docs" / "notes.txt"
    page.write_text('{"text": "Permits are renewed online."}\n', encoding="utf-8")
    notes.write_text("Permits are renewed online.\nFees apply.\n", encoding="utf-8")
    as_windows(page, page)
    as_windows(notes, notes)
    texts = [d.text for d in load_documents(str(tmp_path / "docs"))]
    assert len(texts) == 2 and all(t.startswith("Permits are renewed online.") for t in texts)


def test_extract_prompt_file(tmp_path: Path) -> None:
    from knowgap.suites.extract import ExtractOptions, ExtractSuite

    plain = tmp_path / "prompt.txt"
    plain.write_text("Summarise the review as JSON.\n", encoding="utf-8")
    suite = ExtractSuite(ExtractOptions(prompts=["custom"], prompt_file=str(as_windows(plain))))
    assert suite._prompt("custom") == "Summarise the review as JSON."


@pytest.mark.parametrize("kind", ["gate", "eval"])
def test_yaml_files(tmp_path: Path, kind: str) -> None:
    from knowgap.evaluation.eval_file import load_eval
    from knowgap.report.gate import load_thresholds

    plain = tmp_path / f"{kind}.yaml"
    if kind == "gate":
        plain.write_text("thresholds:\n  - errors == 0\n", encoding="utf-8")
        assert load_thresholds(as_windows(plain)) == load_thresholds(plain)
    else:
        plain.write_text("suites:\n  - suite: starter\nthresholds:\n  - errors == 0\n", encoding="utf-8")
        assert load_eval(as_windows(plain))[0] == load_eval(plain)[0]
