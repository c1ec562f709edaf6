"""The paper's headline table reproduced: knowgap's judges over KnowOrNot's own GPT-4o answers.

``responses_dev.jsonl`` (in the shared data folder's ``policybench/``) holds 1,729 GPT-4o answers to leave-one-out
PolicyBench questions with the paper's gpt-4.1 judge labels (``abstention`` yes/no, ``factuality`` tier_1/2/3 or
NA). :func:`paper_table` judges every answer with knowgap's offline abstention detector and, on the answers it
finds answered, knowgap's offline factuality judge, and sets the rates per configuration beside the file's own
labels on the same rows and the figures the paper published.

The published figures come from the seed document (``shared/seeds/003_*.txt``, a write-up of KnowOrNot, arXiv
2505.13545): GPT-4o abstained on 1.8% of the questions with the basic prompt and no context (direct); the
conservative prompt with basic RAG abstained most, 60.7%, and was the most factual among its answers, 33.1%;
factuality among answers ranged from 24% to 33% across configurations. The seed gives no other cell of the
table, so the other cells show no published figure rather than a guessed one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel

from knowgap.engine.records import MetricValue
from knowgap.errors import InputError, KnowgapError
from knowgap.jsonl import read_objects
from knowgap.judges.validation import POLICYBENCH_RESPONSES
from knowgap.suites.abstain.answerability import excluded_ids
from knowgap.suites.abstain.prompts import PAPER_CONFIGS

RESPONSES = Path(POLICYBENCH_RESPONSES)
"""The answers file under the data folder (the same file the abstention and factuality cards are measured on)."""
RETRIEVALS = {"DIRECT": "direct", "LONG_CONTEXT": "long_context", "BASIC_RAG": "rag", "HYDE_RAG": "hyde"}
PROMPT_NAMES = {"basic_llm_prompt": "basic", "conservative_llm_prompt": "conservative",
                "opinion_llm_prompt": "opinion"}
SOURCE = ("seed 003 (shared/seeds/003_*.txt: a write-up of KnowOrNot, arXiv 2505.13545): GPT-4o, all four "
          "PolicyBench knowledge bases")
PUBLISHED: dict[tuple[str, str], dict[str, float]] = {
    ("direct", "basic"): {"abstention_rate": 0.018},
    ("rag", "conservative"): {"abstention_rate": 0.607, "factuality_answered": 0.331},
}
"""The cells the seed states; the paper's factuality among answers spans 24%-33% over all configurations."""
PUBLISHED_FACTUALITY_RANGE = (0.24, 0.33)


class PaperRow(BaseModel):
    """One configuration: knowgap's judges and the file's labels on the same answers, and the published
    figures (None where the seed gives none). The metrics are None when the data has no answers for it."""

    retrieval: str
    prompt: str
    rows: int
    abstention_knowgap: MetricValue | None = None
    abstention_labels: MetricValue | None = None
    factuality_knowgap: MetricValue | None = None
    """Acceptable (tier 1 or 2) among the answers knowgap's detector found answered, by the offline judge."""
    factuality_labels: MetricValue | None = None
    """Acceptable among the answers the file labels answered (its tier labels)."""
    published_abstention: float | None = None
    published_factuality: float | None = None

    @property
    def config_id(self) -> str:
        return f"{self.retrieval}/{self.prompt}"


class PaperTable(BaseModel):
    data_file: str
    rows: list[PaperRow]
    """Every answer in the file: the paper's question set, comparable to its figures."""
    rows_without: list[PaperRow] = []
    """The same without the answers to the questions knowgap leaves out by default (still answerable without their
    fact: ``data/policybench_audit.jsonl``): knowgap's default question set."""
    left_out: list[str] = []
    """The question ids left out of :attr:`rows_without` (those of the audit that the file answers)."""
    knowledge_bases: list[str]
    abstention_judge: str
    factuality_judge: str | None
    source: str = SOURCE
    published_factuality_range: tuple[float, float] = PUBLISHED_FACTUALITY_RANGE


def responses_file(data_dir: Path | None = None) -> Path:
    """``policybench/responses_dev.jsonl`` under ``data_dir`` (default: ``$KNOWGAP_DATA``, else the nearest
    ``shared/data`` above the current directory); a clear error when it is not there."""
    from knowgap.judges.catalog import default_data_dir

    folder = data_dir if data_dir is not None else default_data_dir()
    path = folder / RESPONSES
    if not path.is_file():
        raise KnowgapError(f"{path}: not found (the paper's GPT-4o answers, PolicyBench responses_dev.jsonl; give "
                           "--data DIR, the folder holding policybench/responses_dev.jsonl)")
    return path


def _config(row: dict[str, object], where: str, line: int) -> tuple[str, str]:
    retrieval, prompt = RETRIEVALS.get(str(row.get("retrieval"))), PROMPT_NAMES.get(str(row.get("prompt_name")))
    if retrieval is None:
        raise InputError(where, f"unknown retrieval {row.get('retrieval')!r} (expected {', '.join(RETRIEVALS)})",
                         line=line, field="retrieval")
    if prompt is None:
        raise InputError(where, f"unknown prompt {row.get('prompt_name')!r} (expected {', '.join(PROMPT_NAMES)})",
                         line=line, field="prompt_name")
    return retrieval, prompt


def paper_table(data_dir: Path | None = None, *, factuality: bool = True,
                progress: Callable[[int], None] | None = None, leave_out: Sequence[str] | None = None) -> PaperTable:
    """knowgap's judges over the paper's GPT-4o answers, per configuration (all 10 of the paper's, those
    without answers in the data left empty), beside the file's labels and the published figures: on every answer
    (the paper's set) and without the answers to the questions in ``leave_out`` (default: those the audit found
    still answerable without their fact, :func:`.answerability.excluded_ids`)."""
    from knowgap.judges.abstention import VERSION as ABSTENTION_VERSION
    from knowgap.judges.abstention import judge_abstention
    from knowgap.judges.factuality import default_factuality
    from knowgap.judges.factuality_features import FactualityRow

    path = responses_file(data_dir)
    by_config: dict[tuple[str, str], list[dict[str, object]]] = {}
    kbs = set()
    for line, row in read_objects(path, ("question", "expected_answer", "response"), what="responses"):
        by_config.setdefault(_config(row, str(path), line), []).append(row)
        kbs.add(str(row.get("kb")))
    rows_to_judge: list[FactualityRow] = []
    judged: dict[tuple[str, str], list[tuple[bool, dict[str, object]]]] = {}
    for key, rows in by_config.items():
        for row in rows:
            abstained = bool(judge_abstention(str(row["response"])).abstained)
            judged.setdefault(key, []).append((abstained, row))
            if not abstained and factuality:
                rows_to_judge.append(FactualityRow(str(row["question"]), str(row["expected_answer"]),
                                                   str(row["response"])))
    judge = default_factuality() if factuality else None
    verdicts = iter(judge.judge(rows_to_judge, progress=progress) if judge else [])
    acceptable = {id(row): next(verdicts).acceptable for key in judged for abstained, row in judged[key]
                  if not abstained and judge is not None}
    left = set(excluded_ids() if leave_out is None else leave_out)
    answered = {str(row.get("question_id")) for rows in by_config.values() for row in rows}
    return PaperTable(data_file=str(path), rows=_rows(judged, acceptable, judge is not None),
                      rows_without=_rows(judged, acceptable, judge is not None, left),
                      left_out=sorted(left & answered, key=_id_order), knowledge_bases=sorted(kbs),
                      abstention_judge=f"abstention (offline) {ABSTENTION_VERSION}",
                      factuality_judge=f"factuality (offline) {judge.version}" if judge else None)


def _id_order(qid: str) -> tuple[str, int]:
    kb, _, number = qid.rpartition("_")
    return (kb, int(number)) if number.isdigit() else (qid, -1)


def _rows(judged: dict[tuple[str, str], list[tuple[bool, dict[str, object]]]], acceptable: dict[int, bool],
          factuality: bool, leave_out: set[str] | frozenset[str] = frozenset()) -> list[PaperRow]:
    """One row per paper configuration over the judged answers, those to ``leave_out``'s questions left out."""
    out = []
    for retrieval, prompt in PAPER_CONFIGS:
        key = (retrieval, prompt)
        pairs = [(a, r) for a, r in judged.get(key, []) if str(r.get("question_id")) not in leave_out]
        published = PUBLISHED.get(key, {})
        item = PaperRow(retrieval=retrieval, prompt=prompt, rows=len(pairs),
                        published_abstention=published.get("abstention_rate"),
                        published_factuality=published.get("factuality_answered"))
        if item.rows:
            group = item.config_id
            item.abstention_knowgap = MetricValue.proportion("abstention_rate", group, sum(a for a, _ in pairs),
                                                             len(pairs))
            labelled = [str(r.get("abstention")).lower() for _, r in pairs]
            labelled = [v for v in labelled if v in ("yes", "no")]
            item.abstention_labels = MetricValue.proportion("abstention_rate", group, labelled.count("yes"),
                                                            len(labelled))
            tiers = [str(r.get("factuality")) for _, r in pairs]
            tiers = [t for t in tiers if t in ("tier_1", "tier_2", "tier_3")]
            item.factuality_labels = MetricValue.proportion("factuality_answered", group,
                                                            sum(t != "tier_3" for t in tiers), len(tiers))
            if factuality:
                mine = [acceptable[id(r)] for abstained, r in pairs if not abstained]
                item.factuality_knowgap = MetricValue.proportion("factuality_answered", group, sum(mine), len(mine))
        out.append(item)
    return out


def _pct(value: float | None) -> str:
    return "" if value is None else f"{value:.1%}"


def render_paper_table(table: PaperTable) -> str:
    """Markdown: one row per configuration, knowgap's judges beside the file's labels and the published
    figures, each rate with its Wilson 95% CI and n; on every answer (the paper's set), then without the answers to
    the questions knowgap leaves out by default."""
    lines = [f"Answers: {table.data_file} (GPT-4o; knowledge bases {', '.join(table.knowledge_bases)})",
             f"Judges: {table.abstention_judge}" + (f"; {table.factuality_judge}" if table.factuality_judge else ""),
             "", "All answers (the paper's question set, comparable to its figures):", "",
             *_table_lines(table.rows)]
    if table.left_out:
        lines += ["", f"Without the {len(table.left_out)} questions knowgap leaves out by default (still answerable "
                      "without their fact: another fact or the question's own wording gives the answer; "
                      f"data/policybench_audit.jsonl): {', '.join(table.left_out)}", "",
                  *_table_lines(table.rows_without)]
    low, high = table.published_factuality_range
    lines += ["", f"Published figures: {table.source}. The paper's factuality among answers spans {low:.0%}-{high:.0%} "
                  "over its configurations; the seed gives no other cell, so the empty ones are not published there."]
    return "\n".join(lines)


def _table_lines(rows: list[PaperRow]) -> list[str]:
    from knowgap.suites.abstain.tables import cell

    lines = ["| configuration | answers | abstention: knowgap | abstention: file labels (gpt-4.1) | "
             "abstention: published | factuality among answered: knowgap | factuality: file labels | "
             "factuality: published |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if not r.rows:
            lines.append(f"| {r.config_id} | 0 (not in the data) |  |  | {_pct(r.published_abstention)} |  |  | "
                         f"{_pct(r.published_factuality)} |")
            continue
        lines.append(f"| {r.config_id} | {r.rows} | {cell(r.abstention_knowgap)} | {cell(r.abstention_labels)} | "
                     f"{_pct(r.published_abstention)} | {cell(r.factuality_knowgap)} | {cell(r.factuality_labels)} "
                     f"| {_pct(r.published_factuality)} |")
    return lines
