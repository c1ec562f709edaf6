"""`knowgap abstain paper-table`: knowgap's judges over KnowOrNot's own GPT-4o answers (the shared data's
PolicyBench responses_dev.jsonl), beside the file's labels and the published figures. Skipped when the data is
not on this machine."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from knowgap.errors import KnowgapError
from knowgap.suites.abstain.paper import (
    PROMPT_NAMES,
    RESPONSES,
    RETRIEVALS,
    paper_table,
    render_paper_table,
    responses_file,
)
from tests.helpers import knowgap_cli


@pytest.fixture(scope="module")
def data_dir() -> Path:
    try:
        return responses_file().parent.parent
    except KnowgapError as exc:
        pytest.skip(f"the PolicyBench answers are not here: {exc}")


def _rows(data_dir: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in (data_dir / RESPONSES).read_text(encoding="utf-8").splitlines() if line]


def test_every_configuration_beside_the_labels_and_the_published_figures(data_dir: Path) -> None:
    table = paper_table(data_dir, factuality=False)
    rows = _rows(data_dir)
    by_config = Counter((RETRIEVALS[r["retrieval"]], PROMPT_NAMES[r["prompt_name"]]) for r in rows)
    yes = Counter((RETRIEVALS[r["retrieval"]], PROMPT_NAMES[r["prompt_name"]]) for r in rows
                  if r["abstention"] == "yes")
    assert len(table.rows) == 10 and sum(r.rows for r in table.rows) == len(rows)
    for r in table.rows:
        key = (r.retrieval, r.prompt)
        assert r.rows == by_config[key]
        if not r.rows:  # the data has no long_context answers: shown empty, not invented
            assert r.abstention_knowgap is None and r.retrieval == "long_context"
            continue
        assert r.abstention_labels is not None and r.abstention_knowgap is not None
        assert (r.abstention_labels.value, r.abstention_labels.n) == (yes[key] / by_config[key], by_config[key])
        # knowgap's detector agrees with the paper's judge per configuration: the CIs overlap
        assert r.abstention_knowgap.ci_low is not None and r.abstention_knowgap.ci_high is not None
        assert r.abstention_labels.ci_low is not None and r.abstention_labels.ci_high is not None
        assert r.abstention_knowgap.ci_low <= r.abstention_labels.ci_high
        assert r.abstention_labels.ci_low <= r.abstention_knowgap.ci_high
        assert r.factuality_knowgap is None  # factuality=False
    published = {(r.retrieval, r.prompt): (r.published_abstention, r.published_factuality) for r in table.rows}
    assert published[("direct", "basic")] == (0.018, None) and published[("rag", "conservative")] == (0.607, 0.331)
    assert sum(a is not None for a, _ in published.values()) == 2  # only the cells the seed states


@pytest.mark.slow
def test_factuality_of_the_answers_knowgap_finds_answered(data_dir: Path, tmp_path: Path) -> None:
    rows = _rows(data_dir)
    small = [r for key in sorted({(r["retrieval"], r["prompt_name"]) for r in rows})
             for r in [x for x in rows if (x["retrieval"], x["prompt_name"]) == key][:4]]
    (tmp_path / RESPONSES).parent.mkdir(parents=True)
    (tmp_path / RESPONSES).write_text("".join(json.dumps(r) + "\n" for r in small), encoding="utf-8")
    table = paper_table(tmp_path)
    for r in table.rows:
        if r.rows:
            assert r.abstention_knowgap is not None and r.factuality_knowgap is not None
            answered = r.abstention_knowgap.n - round((r.abstention_knowgap.value or 0) * r.abstention_knowgap.n)
            assert r.factuality_knowgap.n == answered
    assert table.factuality_judge and table.factuality_judge.startswith("factuality (offline)")


def test_cli_prints_the_table_and_names_missing_data(data_dir: Path, tmp_path: Path) -> None:
    rows = _rows(data_dir)[:30]
    (tmp_path / RESPONSES).parent.mkdir(parents=True)
    (tmp_path / RESPONSES).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    proc = knowgap_cli("abstain", "paper-table", "--no-factuality", env={"KNOWGAP_DATA": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert "| configuration | answers | abstention: knowgap |" in proc.stdout
    assert "| long_context/basic | 0 (not in the data) |" in proc.stdout and "arXiv 2505.13545" in proc.stdout
    missing = knowgap_cli("abstain", "paper-table", "--data", str(tmp_path / "nowhere"))
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert "responses_dev.jsonl: not found" in missing.stderr + missing.stdout


def test_a_bad_row_names_file_line_and_field(tmp_path: Path) -> None:
    (tmp_path / RESPONSES).parent.mkdir(parents=True)
    (tmp_path / RESPONSES).write_text(json.dumps({"retrieval": "BM25", "prompt_name": "basic_llm_prompt",
                                                  "question": "q", "expected_answer": "a", "response": "r"}) + "\n",
                                      encoding="utf-8")
    with pytest.raises(KnowgapError, match=r"responses_dev.jsonl.*line 1.*retrieval|retrieval.*BM25"):
        paper_table(tmp_path, factuality=False)


def test_the_table_again_without_the_questions_left_out_by_default(data_dir: Path) -> None:
    from knowgap.suites.abstain.answerability import excluded_ids

    table = paper_table(data_dir, factuality=False)
    rows = _rows(data_dir)
    left = set(excluded_ids())
    assert set(table.left_out) == left & {r["question_id"] for r in rows} and table.left_out
    kept = Counter((RETRIEVALS[r["retrieval"]], PROMPT_NAMES[r["prompt_name"]]) for r in rows
                   if r["question_id"] not in left)
    yes = Counter((RETRIEVALS[r["retrieval"]], PROMPT_NAMES[r["prompt_name"]]) for r in rows
                  if r["question_id"] not in left and r["abstention"] == "yes")
    for full, without in zip(table.rows, table.rows_without, strict=True):
        key = (without.retrieval, without.prompt)
        assert without.rows == kept[key] and (full.rows > without.rows or not full.rows)
        if without.rows:
            assert without.abstention_labels is not None
            assert (without.abstention_labels.value, without.abstention_labels.n) == (yes[key] / kept[key], kept[key])
            assert without.published_abstention == full.published_abstention  # the paper's figures stay beside
    text = render_paper_table(table)
    assert "All answers (the paper's question set" in text and f"Without the {len(table.left_out)} questions" in text
    same = paper_table(data_dir, factuality=False, leave_out=[])
    assert same.left_out == [] and same.rows_without == same.rows
