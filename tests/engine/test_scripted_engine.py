"""The scripted provider drives the whole engine through the Python API: trials, store, metrics, report,
manifest and replay, with responses chosen per request so the right scores are known in advance."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import knowgap
from knowgap.errors import InputError
from knowgap.models.types import ChatRequest
from knowgap.suites.starter import DATA, PROMPTS
from tests.helpers import write_jsonl

CASES: dict[str, dict[str, Any]] = {
    row["id"]: row for row in map(json.loads, DATA.read_text(encoding="utf-8").splitlines()) if row}
GROUPS = ("prompt=grounded", "prompt=plain")
# Wilson 95% intervals for 8 of 8 and 0 of 8 (standard values: 1 - 0.6756 = 0.3244)
CI_8_OF_8 = (0.6756, 1.0)
CI_0_OF_8 = (0.0, 0.3244)


def right_answer(case: dict[str, Any]) -> str:
    """What a perfect model says: the accepted answer, or that the context does not say."""
    if not case["answerable"]:
        return "I don't know." if case["lang"] == "en" else "上下文中没有提到。"
    if case["lang"] == "en":
        return f"According to the context, it is {case['answers'][0]}."
    return f"根据上下文，答案是{case['answers'][0]}。"


def trial_requests(run_id: str, runs_root: Path) -> dict[str, tuple[str, ChatRequest]]:
    """trial_id -> (case id, the request the trial sent)."""
    return {r.trial_id: (r.case_id, r.calls[0].request) for r in knowgap.iter_trials(run_id, runs_root)}


def perfect_file(tmp_path: Path, runs_root: Path) -> Path:
    """A by-hash scripted file answering every starter request right, built from a first (in-order) run."""
    probe = write_jsonl(tmp_path / "probe.jsonl", [{"response": "probe"}])
    first = knowgap.run("starter", models={"target": f"scripted:{probe}"}, runs_root=runs_root)
    rows = [{"request_hash": request.fingerprint(), "response": right_answer(CASES[case_id])}
            for case_id, request in trial_requests(first.run_id, runs_root).values()]
    assert len(rows) == 32 and len({r["request_hash"] for r in rows}) == 32
    return write_jsonl(tmp_path / "perfect.jsonl", rows)


def metric(result: knowgap.RunResult, group: str, name: str) -> knowgap.MetricValue:
    [m] = [m for m in result.metrics if m.group == group and m.name == name]
    return m


@pytest.fixture
def perfect(tmp_path: Path, runs_root: Path) -> tuple[Path, knowgap.RunResult]:
    file = perfect_file(tmp_path, runs_root)
    return file, knowgap.run("starter", models={"target": f"scripted:{file}"}, runs_root=runs_root)


def test_perfect_model_gets_perfect_metrics(perfect: tuple[Path, knowgap.RunResult]) -> None:
    _, result = perfect
    assert sorted({m.group for m in result.metrics}) == list(GROUPS)
    assert len(result.metrics) == 8
    for group in GROUPS:
        for name, value, ci in (("abstention_unanswerable", 1.0, CI_8_OF_8), ("accuracy", 1.0, CI_8_OF_8),
                                ("over_abstention", 0.0, CI_0_OF_8)):
            m = metric(result, group, name)
            assert (m.value, m.n, m.kind) == (value, 8, "proportion"), (group, name)
            assert m.ci_low == pytest.approx(ci[0], abs=5e-5)
            assert m.ci_high == pytest.approx(ci[1], abs=5e-5)
        errors = metric(result, group, "errors")
        assert (errors.value, errors.kind) == (0.0, "count")
    assert result.manifest.trials_ok == 32 and result.manifest.trials_error == 0
    assert result.provider_calls == 32


def test_trials_jsonl_has_every_trial(perfect: tuple[Path, knowgap.RunResult]) -> None:
    _, result = perfect
    lines = (result.path / "trials.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    ids = {r["trial_id"] for r in records}
    assert len(records) == 32
    assert ids == {f"{case}|{group}|r0" for case in CASES for group in GROUPS}
    for r in records:
        case = CASES[r["case_id"]]
        assert r["status"] == "ok" and r["error"] is None
        [call] = r["calls"]
        assert call["role"] == "target" and call["model"] == result.manifest.config.models["target"]
        user = call["request"]["messages"][-1]["content"]
        assert case["context"] in user and case["question"] in user
        assert call["request"]["messages"][0] == {"role": "system", "content": PROMPTS[r["config"]["prompt"]]}
        assert call["response"]["text"] == right_answer(case)
        assert call["response"]["usage"]["completion_tokens"] == len(right_answer(case).split())
        assert call["response"]["latency_s"] >= 0
        assert r["duration_s"] >= 0 and r["started_at"]
        assert r["scores"] == {"answerable": case["answerable"], "abstained": not case["answerable"],
                               "correct": True if case["answerable"] else None}


def test_requests_are_deterministic_across_runs(tmp_path: Path, runs_root: Path) -> None:
    file = write_jsonl(tmp_path / "s.jsonl", [{"response": "x"}])
    one = knowgap.run("starter", models={"target": f"scripted:{file}"}, runs_root=runs_root, use_cache=False)
    two = knowgap.run("starter", models={"target": f"scripted:{file}"}, runs_root=runs_root, use_cache=False)
    assert one.run_id != two.run_id
    first, second = trial_requests(one.run_id, runs_root), trial_requests(two.run_id, runs_root)
    assert ({k: v[1].fingerprint() for k, v in first.items()}
            == {k: v[1].fingerprint() for k, v in second.items()})
    # each trial gets its own seed
    assert len({req.seed for _, req in first.values()}) == 32


def test_manifest(perfect: tuple[Path, knowgap.RunResult]) -> None:
    file, result = perfect
    manifest = json.loads((result.path / "manifest.json").read_text(encoding="utf-8"))
    spec = f"scripted:{file}"
    assert manifest["run_id"] == result.run_id == result.path.name
    assert manifest["knowgap_version"] == importlib.metadata.version("knowgap")
    assert manifest["status"] == "finished"
    assert manifest["config"]["suite"] == "starter"
    assert manifest["config"]["models"] == {"target": spec}
    assert manifest["config"]["repeats"] == 1 and manifest["config"]["seed"] == 0
    assert manifest["dataset_hashes"] == {str(DATA): hashlib.sha256(DATA.read_bytes()).hexdigest()}
    sha = hashlib.sha256(file.read_bytes()).hexdigest()
    assert manifest["models"] == {"target": {"spec": spec, "backend": "scripted", "file": str(file), "sha256": sha,
                                             "identity": f"scripted:sha256:{sha}"}}
    started = datetime.fromisoformat(manifest["started_at"])
    ended = datetime.fromisoformat(manifest["ended_at"])
    assert started <= ended
    assert (manifest["trials_total"], manifest["trials_ok"], manifest["trials_error"]) == (32, 32, 0)
    usage = manifest["usage"]["target"][spec]
    assert (usage["calls"], usage["cached_calls"], usage["failed_calls"], usage["retries"]) == (32, 0, 0, 0)
    expected_out = sum(len(right_answer(c).split()) for c in CASES.values()) * 2
    assert usage["completion_tokens"] == expected_out
    assert usage["prompt_tokens"] > 0
    assert usage["cost_usd"] is None  # no price given
    loaded = knowgap.load_run(result.run_id, result.path.parent)[0]
    assert loaded.damage is None  # what a read found wrong with the files: set on reading, never written
    assert loaded.model_dump(mode="json", exclude={"damage"}) == manifest


def test_metrics_file_and_report(perfect: tuple[Path, knowgap.RunResult]) -> None:
    _, result = perfect
    stored = json.loads((result.path / "metrics.json").read_text(encoding="utf-8"))
    assert stored == [m.model_dump() for m in result.metrics]
    report = (result.path / "report.md").read_text(encoding="utf-8")
    assert f"# knowgap run {result.run_id}" in report
    assert "status: finished; trials: 32 ok, 0 errors of 32" in report
    for group in GROUPS:
        assert f"| {group} | abstention_unanswerable | 100.0% | [67.6%, 100.0%] | 8 |" in report
        assert f"| {group} | accuracy | 100.0% | [67.6%, 100.0%] | 8 |" in report
        assert f"| {group} | over_abstention | 0.0% | [0.0%, 32.4%] | 8 |" in report
        assert f"| {group} | errors | 0 |  | 0 |" in report
    assert f"| target | `{result.manifest.config.models['target']}` | 32 | 0 | 0 |" in report


def test_replay_a_run_from_its_trials(perfect: tuple[Path, knowgap.RunResult], runs_root: Path) -> None:
    _, original = perfect
    replay = knowgap.run("starter", models={"target": f"scripted:{original.path / 'trials.jsonl'}"},
                         runs_root=runs_root)
    assert replay.run_id != original.run_id
    assert replay.provider_calls == 32  # a new spec: nothing is served from the cache
    scores = {r.trial_id: r.scores for r in knowgap.iter_trials(original.run_id, runs_root)}
    replayed = {r.trial_id: r.scores for r in knowgap.iter_trials(replay.run_id, runs_root)}
    assert replayed == scores
    assert [m.model_dump() for m in replay.metrics] == [m.model_dump() for m in original.metrics]


def test_in_order_file_cycles(tmp_path: Path, runs_root: Path) -> None:
    """An ordered file is served in trial order (config, then case), cycling when it runs out."""
    file = write_jsonl(tmp_path / "s.jsonl", [{"response": "I don't know."}, {"response": "42"}])
    result = knowgap.run("starter", models={"target": f"scripted:{file}"}, runs_root=runs_root)
    case_ids = list(CASES)
    for r in knowgap.iter_trials(result.run_id, runs_root):
        config_index = GROUPS[::-1].index(r.config_id)  # the starter runs plain, then grounded
        position = config_index * len(case_ids) + case_ids.index(r.case_id)
        assert r.calls[0].response is not None
        assert r.calls[0].response.text == ("I don't know." if position % 2 == 0 else "42")
    # every even case (all answerable) is answered "I don't know.": over-abstention is 100%, accuracy 0%
    assert all(CASES[c]["answerable"] for c in case_ids[::2])
    for group in GROUPS:
        assert metric(result, group, "over_abstention").value == 1.0
        assert metric(result, group, "accuracy").value == 0.0
        assert metric(result, group, "abstention_unanswerable").value == 0.0


def test_missing_file(tmp_path: Path, runs_root: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(InputError) as info:
        knowgap.run("starter", models={"target": f"scripted:{missing}"}, runs_root=runs_root)
    assert info.value.file == str(missing)
    assert "not found" in str(info.value)
    assert not runs_root.exists() or not any(runs_root.iterdir())  # no half-made run folder


def test_bad_json_line(tmp_path: Path, runs_root: Path) -> None:
    file = tmp_path / "s.jsonl"
    file.write_text('{"response": "a"}\n\n{"response": "b"\n', encoding="utf-8")
    with pytest.raises(InputError) as info:
        knowgap.run("starter", models={"target": f"scripted:{file}"}, runs_root=runs_root)
    assert (info.value.file, info.value.line) == (str(file), 3)
    assert str(info.value).startswith(f"{file}, line 3: not valid JSON")


@pytest.mark.parametrize("row", [{"request_hash": "abc"}, {"response": 3}, {"text": "hi"}])
def test_missing_response_field(tmp_path: Path, runs_root: Path, row: dict[str, Any]) -> None:
    file = write_jsonl(tmp_path / "s.jsonl", [{"response": "ok"}, row])
    with pytest.raises(InputError) as info:
        knowgap.run("starter", models={"target": f"scripted:{file}"}, runs_root=runs_root)
    assert (info.value.file, info.value.line, info.value.field) == (str(file), 2, "response")
    assert str(info.value) == f"{file}, line 2, field 'response': expected a string"


def test_non_object_line_and_empty_file(tmp_path: Path) -> None:
    from knowgap.models.scripted import ScriptedModel

    file = tmp_path / "s.jsonl"
    file.write_text('["a list"]\n', encoding="utf-8")
    with pytest.raises(InputError, match="line 1: expected a JSON object"):
        ScriptedModel("scripted:x", str(file))
    file.write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputError, match="holds no responses"):
        ScriptedModel("scripted:x", str(file))


def test_json_list_form(tmp_path: Path, runs_root: Path) -> None:
    file = tmp_path / "s.json"
    file.write_text(json.dumps([{"response": "I don't know."}]), encoding="utf-8")
    result = knowgap.run("starter", models={"target": f"scripted:{file}"}, runs_root=runs_root)
    assert metric(result, "prompt=plain", "abstention_unanswerable").value == 1.0
    assert metric(result, "prompt=plain", "over_abstention").value == 1.0


def test_unknown_request_is_a_trial_error_not_a_crash(tmp_path: Path, runs_root: Path) -> None:
    file = write_jsonl(tmp_path / "s.jsonl", [{"request_hash": "0" * 64, "response": "never used"}])
    result = knowgap.run("starter", models={"target": f"scripted:{file}"}, runs_root=runs_root)
    records = knowgap.iter_trials(result.run_id, runs_root)
    assert len(records) == 32
    for r in records:
        assert r.status == "error"
        assert r.error is not None and "no scripted response for request" in r.error
        assert r.calls[0].response is None and r.calls[0].error == r.error
        assert r.scores == {}
    assert result.manifest.status == result.status == "failed" and not result.ok
    assert (result.manifest.trials_ok, result.manifest.trials_error) == (0, 32)
    for group in GROUPS:
        assert metric(result, group, "errors").value == 16.0
        assert metric(result, group, "accuracy").value is None
        assert metric(result, group, "accuracy").n == 0
    assert "| prompt=plain | errors | 16 |" in (result.path / "report.md").read_text(encoding="utf-8")


def test_partial_hash_file_scores_what_it_can(tmp_path: Path, runs_root: Path) -> None:
    """Only the plain prompt's requests are scripted: grounded trials error, plain ones are scored."""
    full = perfect_file(tmp_path, runs_root)
    rows = [json.loads(line) for line in full.read_text(encoding="utf-8").splitlines()]
    probe_run = knowgap.list_runs(runs_root)[0]
    probe_requests = trial_requests(probe_run.run_id, runs_root)
    plain_hashes = {req.fingerprint() for trial_id, (_, req) in probe_requests.items()
                    if "|prompt=plain|" in trial_id}
    partial = write_jsonl(tmp_path / "partial.jsonl", [r for r in rows if r["request_hash"] in plain_hashes])
    result = knowgap.run("starter", models={"target": f"scripted:{partial}"}, runs_root=runs_root)
    assert (result.manifest.trials_ok, result.manifest.trials_error) == (16, 16)
    assert metric(result, "prompt=plain", "accuracy").value == 1.0
    assert metric(result, "prompt=plain", "errors").value == 0.0
    assert metric(result, "prompt=grounded", "errors").value == 16.0
    usage = result.manifest.usage["target"][f"scripted:{partial}"]
    assert (usage.calls, usage.failed_calls) == (16, 16)
