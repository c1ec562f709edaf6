"""``knowgap data check`` / ``data schema`` and ``knowgap.casefiles.check_file``: the shipped datasets pass, the
printed schema accepts them, a bad file lists every problem, and ``run --data`` says the same as ``data check``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import BaseModel, ConfigDict

from knowgap.casefiles import CaseFileCheck, Problem, case_schema, check, check_file
from knowgap.engine.suite import Suite
from knowgap.engine.suite_data import data_of
from knowgap.errors import KnowgapError
from knowgap.suites import get_suite, register
from knowgap.suites import registry as suite_registry
from knowgap.suites.abstain.dataset import POLICYBENCH
from knowgap.suites.clarify.dataset import CASES_FILE as CLARIFY_CASES
from knowgap.suites.extract.dataset import CASES_FILE as EXTRACT_CASES
from knowgap.suites.partial.dataset import DATA as PARTIAL_SCENARIOS
from knowgap.suites.starter.dataset import DATA as STARTER_CASES
from tests.helpers import knowgap_cli, scripted, write_jsonl

SHIPPED = [("starter", STARTER_CASES), ("extract", EXTRACT_CASES), ("clarify", CLARIFY_CASES),
           ("partial", PARTIAL_SCENARIOS), *(("abstain", path) for path in sorted(POLICYBENCH.glob("*.json")))]


@pytest.mark.parametrize(("suite", "path"), SHIPPED, ids=[f"{s}-{p.name}" for s, p in SHIPPED])
def test_every_shipped_dataset_passes_the_strict_check(suite: str, path: Path) -> None:
    result = check(suite, path)
    assert result.problems == [] and check_file(suite, path) == []
    assert len(result.records) > 0 and sum(result.kinds.values()) == len(result.records)


def shipped_rows(suite: str, path: Path) -> list[dict[str, object]]:
    """The records of a shipped file as written (a PolicyBench file: its questions)."""
    if path.suffix == ".json":
        return list(json.loads(path.read_text(encoding="utf-8"))["questions"])
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize(("suite", "path"), SHIPPED[:5], ids=[s for s, _ in SHIPPED[:5]])
def test_the_printed_schema_accepts_every_shipped_record_and_refuses_an_unknown_field(suite: str, path: Path) -> None:
    schema = case_schema(suite)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    rows = shipped_rows(suite, path)
    for row in rows:
        validator.validate(row)
    with pytest.raises(jsonschema.ValidationError, match="Additional properties"):
        validator.validate(rows[0] | {"expected_sentment": "positive"})


def test_data_schema_prints_json_schema() -> None:
    done = knowgap_cli("data", "schema", "extract")
    assert done.returncode == 0, done.stderr
    schema = json.loads(done.stdout)
    assert schema["properties"]["kind"]["enum"] == ["normal", "adversarial", "calibration"]
    assert schema["additionalProperties"] is False and "review" in schema["required"]


def _extract_rows() -> list[dict[str, object]]:
    return [json.loads(line) for line in EXTRACT_CASES.read_text(encoding="utf-8").splitlines()[:3]]


def test_data_check_lists_every_problem_and_exits_1(tmp_path: Path) -> None:
    rows = _extract_rows()
    rows[0]["expected_sentment"] = rows[0].pop("expected_sentiment")
    rows[1]["expected_conflicting"] = "yes"
    rows[2]["id"] = rows[0]["id"]
    path = write_jsonl(tmp_path / "mine.jsonl", rows)
    done = knowgap_cli("data", "check", "extract", str(path))
    assert done.returncode == 1 and "Traceback" not in done.stderr and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"{path}, line 1, field 'expected_sentment': unknown field (did you mean 'expected_sentiment'? the fields "
        "are: id, kind, lang, review, label_source, expected_sentiment, expected_conflicting, analysis_labels, "
        "base_id, attack_id, attack_type, attack_family, attack_source, position, disguise, injected_review, "
        "summary, faithful)",
        f"{path}, line 2, field 'expected_conflicting': Input should be a valid boolean (got a string \"yes\")",
        f"{path}, line 3, field 'id': duplicate id '{rows[0]['id']}' (also on line 1)",
        f"3 problems in {path}"]
    ok = knowgap_cli("data", "check", "extract", str(write_jsonl(tmp_path / "ok.jsonl", _extract_rows())))
    assert ok.returncode == 0 and ok.stdout.strip() == f"{tmp_path / 'ok.jsonl'}: 3 cases OK (normal 3)"


def test_data_check_refuses_an_unknown_suite_and_a_missing_file(tmp_path: Path) -> None:
    done = knowgap_cli("data", "check", "nosuch", str(tmp_path / "x.jsonl"))
    assert done.returncode == 2 and "unknown suite 'nosuch'" in done.stderr and "Traceback" not in done.stderr
    with pytest.raises(KnowgapError, match="unknown suite"):
        check_file("nosuch", tmp_path / "x.jsonl")
    assert [str(p) for p in check_file("starter", tmp_path / "x.jsonl")] == [f"{tmp_path / 'x.jsonl'}: file not found"]


def test_run_data_and_data_check_say_the_same_thing(tmp_path: Path, runs_root: Path) -> None:
    rows = [json.loads(line) for line in STARTER_CASES.read_text(encoding="utf-8").splitlines()[:3]]
    rows[0]["answerable"] = "true"
    rows[1]["contxt"] = rows[1].pop("context")
    path = write_jsonl(tmp_path / "mine.jsonl", rows)
    problems = [str(p) for p in check_file("starter", path)]
    assert len(problems) == 3  # the bool, the unknown field, the missing one it stands for
    done = knowgap_cli("run", "starter", "--data", str(path), "--model", scripted(tmp_path, "I don't know."),
                       "--runs-dir", str(runs_root), "--quiet")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert [line.removeprefix("error: ") for line in done.stderr.splitlines()] == problems


class _Line(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    question: str


def _suite(name: str, **attributes: Any) -> type[Suite]:
    """A registered suite ``name`` with ``attributes`` (no case, no configuration: only its data part is asked)."""
    body: dict[str, Any] = {"name": name, "description": "a test suite", "cases": lambda self: [],
                            "configurations": lambda self: [], "run_trial": None, "metrics": lambda self, r: [],
                            **attributes}
    return register(type(name.title(), (Suite,), body))


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Suites registered by a test do not outlive it."""
    monkeypatch.setattr(suite_registry, "_SUITES", dict(suite_registry._SUITES))


def test_a_suite_without_a_case_file_says_so(tmp_path: Path, registry: None) -> None:
    assert Suite.data is None and data_of(Suite) is None
    assert data_of(get_suite("starter")) is get_suite("starter").data is not None
    _suite("no-file")
    with pytest.raises(KnowgapError, match="suite 'no-file' reads no case file"):
        check("no-file", tmp_path / "x.jsonl")
    with pytest.raises(KnowgapError, match="reads no case file"):
        case_schema("no-file")


def test_a_suite_written_before_the_data_part_keeps_its_case_file(tmp_path: Path, registry: None) -> None:
    """An older plugin suite declares ``case_file_model`` (and maybe ``check_case_file``) on the class: ``knowgap
    data`` reads its files with them."""
    _suite("older", case_file_model=_Line)
    path = write_jsonl(tmp_path / "q.jsonl", [{"id": "a", "question": "?"}, {"id": "a", "questoin": "?"}])
    assert [str(p) for p in check_file("older", path)] == [
        f"{path}, line 2, field 'id': duplicate id 'a' (also on line 1)",
        f"{path}, line 2, field 'question': missing (a required field)",
        f"{path}, line 2, field 'questoin': unknown field (did you mean 'question'? the fields are: id, question)"]
    assert case_schema("older")["required"] == ["id", "question"]

    def own_check(cls: type, file: Path) -> CaseFileCheck[Any]:
        return CaseFileCheck(str(file), "questions", problems=[Problem(file=str(file), message="never good")])

    _suite("older-own", case_file_model=_Line, check_case_file=classmethod(own_check))
    assert [str(p) for p in check_file("older-own", path)] == [f"{path}: never good"]
