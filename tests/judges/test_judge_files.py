"""`knowgap judge abstention` over a JSONL file: verdicts in order, agreement with a 95% CI, clear errors;
and the YAML judge specs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowgap.errors import InputError
from knowgap.judges.files import agreement, judge_file
from knowgap.judges.spec import load_spec
from knowgap.models.structured import ParseFailure
from tests.helpers import knowgap_cli

ROWS = [
    {"id": 1, "q": "Opening hours?", "response": "The context does not mention the opening hours.", "label": "yes"},
    {"id": 2, "q": "营业时间？", "response": "上下文中没有提到营业时间。", "label": "yes"},
    {"id": 3, "q": "Fee?", "response": "The fee is 45 euros a year.", "label": "no"},
    {"id": 4, "q": "押金？", "response": "押金在7个工作日内退还。", "label": "no"},
    {"id": 5, "q": "Limit?", "response": "Yes, up to 12 items. The context does not mention renewals.", "label": "yes"},
]


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_judge_file_adds_abstained_in_order(tmp_path: Path) -> None:
    src = write(tmp_path / "in.jsonl", ROWS)
    out = tmp_path / "out.jsonl"
    rows, verdicts = judge_file(src, text_field="response", question_field="q", out=out)
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in written] == [1, 2, 3, 4, 5]
    assert [r["abstained"] for r in written] == [True, True, False, False, False]
    assert all({k: r[k] for k in ROWS[0]} == orig for r, orig in zip(written, ROWS, strict=True))


def test_agreement_with_a_wilson_ci(tmp_path: Path) -> None:
    src = write(tmp_path / "in.jsonl", ROWS)
    rows, verdicts = judge_file(src, text_field="response")
    a = agreement(src, rows, verdicts, label_field="label", judge="offline")
    assert (a.agree, a.n) == (4, 5)
    assert a.confusion == {"true_pos": 2, "true_neg": 2, "false_pos": 0, "false_neg": 1}
    assert a.ci_low == pytest.approx(0.3755, abs=1e-4) and a.ci_high == pytest.approx(0.9638, abs=1e-4)


@pytest.mark.parametrize(("content", "message"), [
    ('{"response": "ok"}\nnot json\n', "line 2: not valid JSON"),
    ('{"response": "ok"}\n{"text": "x"}\n', r"line 2, field 'response': missing \(the row has: text\)"),
    ('{"response": 5}\n', "line 1, field 'response': expected a string"),
    ("[1, 2]\n", "line 1: expected a JSON object"),
    ("\n", "holds no rows"),
])
def test_bad_files(tmp_path: Path, content: str, message: str) -> None:
    src = tmp_path / "bad.jsonl"
    src.write_text(content, encoding="utf-8")
    out = tmp_path / "out.jsonl"
    with pytest.raises(InputError, match=message):
        judge_file(src, text_field="response", out=out)
    assert not out.exists()  # nothing half-written


def test_bad_label(tmp_path: Path) -> None:
    src = write(tmp_path / "in.jsonl", [{"response": "x", "label": "maybe"}])
    rows, verdicts = judge_file(src, text_field="response")
    with pytest.raises(InputError, match="line 1, field 'label'"):
        agreement(src, rows, verdicts, label_field="label", judge="offline")


def test_cli_judge_and_report(tmp_path: Path) -> None:
    src = write(tmp_path / "in.jsonl", ROWS)
    out = tmp_path / "out.jsonl"
    proc = knowgap_cli("judge", "abstention", str(src), "--text-field", "response", "--out", str(out),
                       "--label-field", "label", "--report")
    assert proc.returncode == 0, proc.stderr
    assert "agreement with 'label': 4/5 = 80.0% (95% CI 37.6%-96.4%)" in proc.stdout
    assert len(out.read_text().splitlines()) == 5
    bad = knowgap_cli("judge", "abstention", str(src), "--text-field", "answer", "--out", str(out))
    assert bad.returncode == 2 and "line 1, field 'answer': missing (the row has: id, q, response, label)" in bad.stderr


def test_llm_judge_over_a_file_through_the_model_layer(tmp_path: Path) -> None:
    script = write(tmp_path / "judge.jsonl", [{"response": '{"outcome": "yes"}'}, {"response": "hmm, unsure"}])
    src = write(tmp_path / "in.jsonl", ROWS[:2])
    out = tmp_path / "out.jsonl"
    rows, verdicts = judge_file(src, text_field="response", question_field="q", out=out, model=f"scripted:{script}")
    assert verdicts[0] is True and isinstance(verdicts[1], ParseFailure)
    second = json.loads(out.read_text().splitlines()[1])
    assert second["abstained"] is None and "no single outcome" in second["abstained_parse_failure"]


def test_builtin_specs_render_and_parse() -> None:
    spec = load_spec("abstention")
    assert spec.version == "abstention_v1" and spec.outcomes == ["yes", "no"]
    request = spec.request({"question": "Q1?", "response": "R1."})
    assert "QUESTION: Q1?" in request.messages[-1].content and "RESPONSE: R1." in request.messages[-1].content
    assert spec.parse('{"outcome": "NO"}') == "no"
    assert spec.parse("Outcome: yes") == "yes"
    assert isinstance(spec.parse("yes or no"), ParseFailure)
    fact = load_spec("factuality")
    assert fact.should_skip({"abstained": True}) and not fact.should_skip({"abstained": False})
    with pytest.raises(InputError, match="field 'expected_answer'"):
        fact.request({"question": "q", "response": "r"})


def test_custom_spec_file_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nversion: x_v1\noutcomes: [a, b]\nfields: [q]\nprompt: '{q} {response}'\n")
    with pytest.raises(InputError, match="not in fields"):
        load_spec(str(bad))
    with pytest.raises(InputError, match="no such judge spec"):
        load_spec("nope")
