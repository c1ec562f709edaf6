"""A stored run's groups are those its trials ran under: each trial keeps its case's tags (partial's restriction
dimensions and family, its cluster) in its record, and the metrics counted again from the stored trials read them
there, not from today's dataset. A trial stored without them (a run made before knowgap kept them) falls back to
today's dataset, and the run's show, report and compare say so in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import knowgap
from knowgap.report.data import load_run_data
from tests.helpers import REPO, knowgap_cli

SYSTEM = f"python:{REPO}/tests/stats/identity_system.py:reply"
"""Every role's model: the metric-identity runs' system (replies of every kind, seeded by the request)."""
SCENARIOS = REPO / "src" / "knowgap" / "suites" / "partial" / "data" / "scenarios.jsonl"
OTHER_FAMILY = {"customer_support": "due_diligence", "due_diligence": "compliance_audit",
                "compliance_audit": "security_incident", "security_incident": "customer_support"}
OTHER_DIMENSION = {"breadth": "timeliness", "timeliness": "depth", "depth": "breadth", "cost": "cost"}

Numbers = dict[tuple[str, str], tuple[Any, ...]]


def numbers(metrics: list[knowgap.MetricValue]) -> Numbers:
    return {(m.group, m.name): (m.value, m.ci_low, m.ci_high, m.n, m.n_cases) for m in metrics}


def retag(path: Path) -> None:
    """Today's dataset tags every case otherwise: each scenario in another family, each task's and each role's
    restriction dimensions swapped for others (the scenarios, their data and their answers unchanged)."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        scenario = json.loads(line)
        scenario["family"] = OTHER_FAMILY[scenario["family"]]
        for task in scenario["tasks"]:
            task["dimensions"] = [OTHER_DIMENSION[d] for d in task.get("dimensions", [])]
            for oracle in task["oracle"].values():
                if oracle.get("dimensions") is not None:
                    oracle["dimensions"] = [OTHER_DIMENSION[d] for d in oracle["dimensions"]]
        lines.append(json.dumps(scenario, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def untag(run: Path) -> None:
    """The run's trials as a knowgap that kept no case tags stored them."""
    trials = run / "trials.jsonl"
    records = [json.loads(line) for line in trials.read_text(encoding="utf-8").splitlines()]
    for record in records:
        del record["case_tags"]
    trials.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def test_a_stored_runs_groups_are_those_it_ran_under_and_a_run_without_tags_says_so(tmp_path: Path) -> None:
    data = tmp_path / "scenarios.jsonl"
    shutil.copy(SCENARIOS, data)
    runs = tmp_path / "runs"
    result = knowgap.run("partial", models={"target": SYSTEM, "judge": SYSTEM, "generator": SYSTEM},
                         options={"data": str(data), "sample": 10, "no_rubric": True}, runs_root=runs,
                         use_cache=False)
    assert result.manifest.trials_ok == result.manifest.trials_total > 0
    stored = numbers(result.metrics)
    split = {g for g, _ in stored if " · dim=" in g or " · family=" in g}
    assert len(split) >= 6  # both views by dimension and by family, and the pre-test's families

    retag(data)
    run = load_run_data(result.run_id, runs)
    assert run.suite is not None
    assert numbers(run.suite.metrics(run.records)) == stored  # counted again after the dataset changed: no move
    assert run.dataset_note() is None

    # the same trials stored without their tags: their groups come from today's (retagged) dataset, said once
    old = runs / "old-run"
    shutil.copytree(result.path, old)
    untag(old)
    before = load_run_data(old)
    assert before.suite is not None
    today = numbers(before.suite.metrics(before.records))
    assert {k: v for k, v in today.items() if k[0] in ("view=full", "view=authorized")} == \
        {k: v for k, v in stored.items() if k[0] in ("view=full", "view=authorized")}
    moved = {g for g, _ in today.keys() ^ stored.keys()} | {k[0] for k in today.keys() & stored.keys()
                                                             if today[k] != stored[k]}
    assert moved and all(" · dim=" in g or " · family=" in g for g in moved), moved
    note = before.dataset_note()
    assert note is not None and result.run_id in note
    assert "dim=, family= groups" in note and "clusters" in note and "today's dataset" in note

    shown = knowgap_cli("show", str(old), "--runs-dir", str(runs))
    assert shown.returncode == 0, shown.stderr
    assert note in shown.stdout.replace("\n", " ")
    fresh = knowgap_cli("show", result.run_id, "--runs-dir", str(runs))
    assert fresh.returncode == 0 and "today's dataset" not in fresh.stdout
    compared = knowgap_cli("compare", str(old), result.run_id, "--runs-dir", str(runs), "--reps", "100")
    assert compared.returncode == 0, compared.stderr
    assert note in compared.stdout.replace("\n", " ")


def test_an_abstain_scenario_runs_languages_and_clusters_are_those_it_ran_under(tmp_path: Path) -> None:
    """abstain's ``· lang=`` groups and its clusters (a question's paragraph) come from the questions' file: a copy
    of the shipped unanswerable-context file, run, then every question's language swapped and its group made its
    own."""
    data = tmp_path / "unanswerable-context.jsonl"
    shutil.copy(REPO / "src" / "knowgap" / "suites" / "abstain" / "data" / "scenarios" / "unanswerable-context.jsonl",
                data)
    runs = tmp_path / "runs"
    result = knowgap.run("abstain", models={"target": SYSTEM, "judge": SYSTEM},
                         options={"scenario": "unanswerable-context", "data": str(data), "sample": 30},
                         runs_root=runs, use_cache=False)
    stored = numbers(result.metrics)
    assert {g for g, _ in stored if " · lang=" in g} == {"unanswerable-context/neutral · lang=zh",
                                                        "unanswerable-context/neutral · lang=en"}
    assert any(n_cases < n for (_, _, _, n, n_cases) in stored.values() if n_cases is not None)  # paragraphs

    items = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    data.write_text("".join(json.dumps(item | {"lang": "en" if item["lang"] == "zh" else "zh", "group": item["id"]},
                                       ensure_ascii=False) + "\n" for item in items), encoding="utf-8")
    run = load_run_data(result.run_id, runs)
    assert run.suite is not None
    assert numbers(run.suite.metrics(run.records)) == stored
    assert run.suite.clusters(run.records) == {r.case_id: r.case_tags["cluster"] for r in run.records
                                               if r.case_tags is not None}


def test_a_clarify_runs_clusters_are_those_it_ran_under(tmp_path: Path) -> None:
    """clarify's clusters (a case's LawBench row) come from the case file: a copy of the shipped cases, run, then
    every case given one row; counted again, each case is still the cluster it ran as."""
    data = tmp_path / "cases.jsonl"
    shutil.copy(REPO / "src" / "knowgap" / "suites" / "clarify" / "data" / "cases.jsonl", data)
    runs = tmp_path / "runs"
    result = knowgap.run("clarify", models={"target": SYSTEM, "judge": SYSTEM, "generator": SYSTEM},
                         options={"data": str(data), "sample": 12, "prompts": ["plain"]}, runs_root=runs,
                         use_cache=False)
    stored = numbers(result.metrics)
    assert any(n_cases == n > 1 for (_, _, _, n, n_cases) in stored.values())

    cases = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    data.write_text("".join(json.dumps(case | {"source": {"dataset": "lawbench-2-4", "row": 1}}, ensure_ascii=False)
                            + "\n" for case in cases), encoding="utf-8")
    run = load_run_data(result.run_id, runs)
    assert run.suite is not None
    assert numbers(run.suite.metrics(run.records)) == stored


def test_a_leave_one_out_runs_clusters_are_the_documents_it_ran_with(tmp_path: Path) -> None:
    """abstain's leave-one-out clusters (a generated fact's document, from its ``source``) come from the knowledge
    base: a file of 12 questions on 6 documents in two knowledge bases, run, then every source moved to one document
    and every question to the other knowledge base; counted again, nothing moves."""
    kb = tmp_path / "kb.jsonl"

    def write(source: Any, name: Any) -> None:
        kb.write_text("".join(json.dumps({"id": f"q{i}", "question": f"What is the fee of service {i}?",
                                          "answer": f"{10 + i} dollars", "kb": name(i), "source": source(i)}) + "\n"
                              for i in range(12)), encoding="utf-8")

    write(lambda i: f"doc{i // 2}:{i % 2}", lambda i: "alpha" if i % 3 else "beta")
    runs = tmp_path / "runs"
    result = knowgap.run("abstain", models={"target": SYSTEM, "judge": SYSTEM, "generator": SYSTEM},
                         options={"kb": str(kb), "retrieval": ["direct"], "prompts": ["basic"]}, runs_root=runs,
                         use_cache=False)
    stored = numbers(result.metrics)
    assert {"direct/basic · kb=alpha", "direct/basic · kb=beta"} <= {g for g, _ in stored}
    assert any(n_cases == 6 and n == 12 for (_, _, _, n, n_cases) in stored.values())  # 6 documents

    write(lambda i: f"docZ:{i}", lambda i: "beta" if i % 3 else "alpha")
    run = load_run_data(result.run_id, runs)
    assert run.suite is not None
    assert numbers(run.suite.metrics(run.records)) == stored
    assert set(run.suite.clusters(run.records).values()) == {f"document:doc{d}" for d in range(6)}
