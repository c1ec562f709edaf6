"""The abstain suite on the engine with scripted models: configurations, metrics with CIs, the paper table,
and the proof that the held-out fact never reaches a retrieval query, a generator prompt or a context."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import knowgap
from knowgap.errors import KnowgapError
from knowgap.judges import abstention, factuality
from tests.helpers import scripted

from .conftest import FACTS

ABSTAIN = '{"response": "I cannot answer from the given information.", "citation": "no citation"}'
MARKER = {i: a.split()[-1].rstrip(".") for i, _, a in FACTS}
QUESTION = {i: q for i, q, _ in FACTS}


def metric(result: knowgap.RunResult, group: str, name: str) -> knowgap.MetricValue:
    [m] = [m for m in result.metrics if m.group == group and m.name == name]
    return m


@pytest.fixture
def abstainer_run(tmp_path: Path, small_kb: Path, runs_root: Path) -> knowgap.RunResult:
    return knowgap.run("abstain", models={"target": scripted(tmp_path, ABSTAIN)},
                       options={"kb": str(small_kb), "all": True}, runs_root=runs_root)


def test_all_runs_the_ten_configurations(abstainer_run: knowgap.RunResult) -> None:
    groups = sorted({m.group for m in abstainer_run.metrics})
    assert len(groups) == 10 and "direct/basic" in groups and "direct/conservative" not in groups
    assert abstainer_run.manifest.trials_ok == 70
    for group in groups:
        m = metric(abstainer_run, group, "abstention_rate")
        assert (m.value, m.n) == (1.0, 7)
        assert m.ci_low == pytest.approx(0.6457, abs=1e-4) and m.ci_high == 1.0  # Wilson 7/7
        assert metric(abstainer_run, group, "invented_citation_rate").value == 0.0
        assert metric(abstainer_run, group, "factuality_answered").n == 0


def test_paper_table_in_report(abstainer_run: knowgap.RunResult) -> None:
    report = (abstainer_run.path / "report.md").read_text(encoding="utf-8")
    assert "| prompt \\ retrieval | direct | long_context | rag | hyde |" in report
    assert "| conservative |  | 100.0% [64.6%, 100.0%] n=7 |" in report


def test_the_held_out_fact_never_leaks(abstainer_run: knowgap.RunResult, runs_root: Path) -> None:
    records = list(knowgap.iter_trials(abstainer_run.run_id, runs_root))
    assert len(records) == 70
    seen_other = 0
    for r in records:
        exp = r.output["experiment"]
        held = r.case_id
        assert held not in exp["context_ids"]
        if exp["retrieval"] == "rag":
            assert exp["retrieval_query"] == QUESTION[held]
            assert len(exp["context_ids"]) == 5
        for call in r.calls:  # target and generator (hyde) prompts
            text = " ".join(m.content for m in call.request.messages)
            assert MARKER[held] not in text, (r.trial_id, call.role)
            seen_other += sum(MARKER[o] in text for o in exp["context_ids"])
        if exp["retrieval"] == "hyde":
            assert [c.role for c in r.calls] == ["generator", "target"]
            assert all(MARKER[held] not in q for q in exp["retrieval_query"])
        if exp["retrieval"] == "long_context":
            assert sorted(exp["context_ids"]) == sorted(i for i in MARKER if i != held)
    assert seen_other > 0  # the check can fail: other facts' markers do reach the prompts


def test_invented_citations_parse_failures_and_factuality(tmp_path: Path, small_kb: Path, runs_root: Path) -> None:
    wrong = '{"response": "The warranty lasts 27 months.", "citation": 9}'
    result = knowgap.run("abstain", models={"target": scripted(tmp_path, wrong)},
                         options={"kb": str(small_kb), "retrieval": ["rag"], "prompts": ["basic"]}, runs_root=runs_root)
    assert metric(result, "rag/basic", "abstention_rate").value == 0.0
    assert metric(result, "rag/basic", "invented_citation_rate").value == 1.0
    fact = metric(result, "rag/basic", "factuality_answered")
    assert fact.n == 7 and "offline judge" in fact.description
    kettle = next(r for r in knowgap.iter_trials(result.run_id, runs_root) if r.case_id == "kb_0")
    assert kettle.output["factuality"]["method"] == "offline"
    assert kettle.scores["tier"] in ("tier_1", "tier_2")  # same fact, same number
    library = next(r for r in knowgap.iter_trials(result.run_id, runs_root) if r.case_id == "kb_1")
    assert library.scores["tier"] == "tier_3"

    garbage = knowgap.run("abstain", models={"target": scripted(tmp_path, "Sure thing", name="g.jsonl")},
                          options={"kb": str(small_kb), "retrieval": ["direct"], "prompts": ["basic"]},
                          runs_root=runs_root)
    assert metric(garbage, "direct/basic", "parse_failure_rate").value == 1.0
    assert metric(garbage, "direct/basic", "abstention_rate").n == 7


def test_llm_judges_through_the_judge_role(tmp_path: Path, small_kb: Path, runs_root: Path) -> None:
    target = scripted(tmp_path, '{"response": "It lasts 27 months.", "citation": 0}', name="t.jsonl")
    judge = scripted(tmp_path, '{"outcome": "no"}', name="j1.jsonl")
    result = knowgap.run("abstain", models={"target": target, "judge": judge},
                         options={"kb": str(small_kb), "retrieval": ["direct"], "prompts": ["basic"], "sample": 2,
                                  "abstention_judge": "llm", "factuality_judge": "llm"}, runs_root=runs_root)
    records = list(knowgap.iter_trials(result.run_id, runs_root))
    assert all(r.output["abstention_llm"] == {"outcome": "no", "version": "abstention_v1"} for r in records)
    assert all(r.output.get("factuality_llm_parse_failure") for r in records)  # "no" is not a tier
    assert metric(result, "direct/basic", "factuality_answered").n == 0
    # the dropped answers are counted, not silently lost; the abstention judge parsed every reply
    assert metric(result, "direct/basic", "factuality_judge_parse_failures").value == 2
    assert metric(result, "direct/basic", "abstention_judge_parse_failures").value == 0
    assert [c.role for c in records[0].calls] == ["target", "judge", "judge"]
    recorded = result.manifest.metric_judges or {}
    assert recorded["factuality_answered"].model_dump() == {"judge": "factuality-llm", "version": "factuality_v1",
                                                            "judge_model": judge, "counts": "positive"}


def test_unknown_retrieval_is_a_clear_error(small_kb: Path, runs_root: Path, tmp_path: Path) -> None:
    with pytest.raises(KnowgapError, match="unknown retrieval/prompt"):
        knowgap.run("abstain", models={"target": scripted(tmp_path, ABSTAIN)},
                    options={"kb": str(small_kb), "retrieval": ["bm25"]}, runs_root=runs_root)


def test_cli_prints_the_paper_table(tmp_path: Path, small_kb: Path) -> None:
    from tests.helpers import knowgap_cli

    proc = knowgap_cli("run", "abstain", "--kb", str(small_kb), "--retrieval", "direct", "--retrieval", "rag",
                       "--prompts", "conservative", "--model", scripted(tmp_path, ABSTAIN), "--runs-dir",
                       str(tmp_path / "runs"), "-q")
    assert proc.returncode == 0, proc.stderr
    assert "Abstention rate (higher is better)" in proc.stdout
    assert "| conservative | 100.0% [64.6%, 100.0%] n=7 | 100.0% [64.6%, 100.0%] n=7 |" in proc.stdout
    assert json.loads((tmp_path / "runs").joinpath(next(p.name for p in (tmp_path / "runs").iterdir()),
                                                   "metrics.json").read_text())


def test_manifest_pins_the_judges_and_resume_refuses_other_versions(abstainer_run: knowgap.RunResult,
                                                                    runs_root: Path) -> None:
    assert abstainer_run.manifest.judges == {"abstention": abstention.VERSION, "factuality": factuality.VERSION}
    assert f"- judges: abstention `{abstention.VERSION}`" in (abstainer_run.path / "report.md").read_text(
        encoding="utf-8")
    recorded = abstainer_run.manifest.metric_judges or {}
    assert recorded["abstention_rate"].judge == "abstention" and recorded["abstention_rate"].judge_model is None
    assert "invented_citation_rate" in (abstainer_run.manifest.computed_metrics or [])
    manifest_file = abstainer_run.path / "manifest.json"
    data = json.loads(manifest_file.read_text(encoding="utf-8"))
    data["judges"]["factuality"] = "factuality_v0"  # as if an older prompt had judged the finished trials
    data["status"] = "interrupted"
    manifest_file.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(KnowgapError, match="its judges were .*factuality_v0.* start a new run instead"):
        knowgap.resume(abstainer_run.run_id, runs_root=runs_root)


def test_a_run_over_two_knowledge_bases_is_split_per_kb(tmp_path: Path, runs_root: Path) -> None:
    folder = tmp_path / "kbs"
    folder.mkdir()
    for name, rows in (("alpha", FACTS[:3]), ("beta", FACTS[3:])):
        (folder / f"{name}.jsonl").write_text("".join(json.dumps({"identifier": i, "question": q, "answer": a}) + "\n"
                                                      for i, q, a in rows), encoding="utf-8")
    result = knowgap.run("abstain", models={"target": scripted(tmp_path, ABSTAIN)},
                         options={"kb": str(folder), "retrieval": ["direct"], "prompts": ["basic"]},
                         runs_root=runs_root)
    assert metric(result, "direct/basic", "abstention_rate").n == 7
    assert metric(result, "direct/basic · kb=alpha", "abstention_rate").n == 3
    assert metric(result, "direct/basic · kb=beta", "abstention_rate").n == 4
    assert {r.output["experiment"]["kb"] for r in knowgap.iter_trials(result.run_id, runs_root)} == {"alpha", "beta"}


def test_kb_groups_split_outcomes_and_place_failed_trials() -> None:
    from knowgap.engine.records import TrialRecord
    from knowgap.suites.abstain.metrics import abstain_metrics

    def trial(case: str, kb: str, abstained: bool) -> TrialRecord:
        return TrialRecord(trial_id=case, case_id=case, config_id="rag/basic", output={"experiment": {"kb": kb}},
                           scores={"abstained": abstained, "parse_failed": False, "invented_citation": False,
                                   "tier": None if abstained else "tier_3"})

    records = [trial("a1", "A", True), trial("a2", "A", True), trial("b1", "B", False),
               TrialRecord(trial_id="b2", case_id="b2", config_id="rag/basic", status="error", error="timeout")]
    by = {(m.group, m.name): m for m in abstain_metrics(records, kb_of={"b2": "B"})}
    assert (by["rag/basic", "abstention_rate"].value, by["rag/basic", "abstention_rate"].n) == (2 / 3, 3)
    assert (by["rag/basic · kb=A", "abstention_rate"].value, by["rag/basic · kb=A", "abstention_rate"].n) == (1.0, 2)
    assert (by["rag/basic · kb=B", "abstention_rate"].value, by["rag/basic · kb=B", "factuality_answered"].value) \
        == (0.0, 0.0)
    assert (by["rag/basic · kb=B", "errors"].value, by["rag/basic · kb=A", "errors"].value) == (1, 0)
    # one knowledge base: no kb groups (they would repeat the configuration's numbers)
    assert {m.group for m in abstain_metrics(records[:2])} == {"rag/basic"}


def test_long_context_is_sized_from_the_window_and_the_cut_recorded(tmp_path: Path, small_kb: Path,
                                                                     runs_root: Path) -> None:
    from knowgap.suites.abstain.retrieval import estimated_tokens

    def run(**options: object) -> list[knowgap.TrialRecord]:
        result = knowgap.run("abstain", models={"target": scripted(tmp_path, ABSTAIN)},
                             options={"kb": str(small_kb), "retrieval": ["long_context"], "prompts": ["basic"],
                                      "max_tokens": 100, **options}, runs_root=runs_root)
        return list(knowgap.iter_trials(result.run_id, runs_root))

    # a scripted model reports no window: --context-window decides; 420 tokens leave room for about 2 facts
    for r in run(context_window=420):
        exp = r.output["experiment"]
        budget = exp["context_budget"]
        assert budget["source"] == "--context-window" and budget["window_tokens"] == 420
        assert 1 <= len(exp["context_ids"]) < 6 and exp["facts_cut_for_window"] == 6 - len(exp["context_ids"])
        assert exp["context_chars_kept"] > 0 and exp["context_chars_cut"] > 0
        prompt = sum(estimated_tokens(m.content) for m in r.calls[0].request.messages)
        assert prompt + r.calls[0].request.max_tokens <= 420  # the question, system prompt and answer fit
    # the default window (32,768 tokens) holds the whole small knowledge base
    assert all(r.output["experiment"]["facts_cut_for_window"] == 0 for r in run())
    # --max-context-chars overrides the window
    fixed = run(max_context_chars=200)
    assert all(r.output["experiment"]["context_budget"] == {"source": "--max-context-chars", "max_chars": 200}
               and r.output["experiment"]["context_chars_kept"] <= 200 for r in fixed)


def test_the_embedded_packs_report_their_window() -> None:
    from knowgap.models.local import DEFAULT_CTX, LocalModel

    assert LocalModel("local:qwen2.5-0.5b", "qwen2.5-0.5b").context_window == DEFAULT_CTX
    assert LocalModel("local:qwen2.5-0.5b", "qwen2.5-0.5b", n_ctx=2048).context_window == 2048
