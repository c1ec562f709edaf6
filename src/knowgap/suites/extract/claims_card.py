"""The extract suite's claim judge as a judge of the catalogue (``extract-claims``: is each claim of a summary
supported by its source?), declared here where it lives, with its validator: SummEdits summaries (read from the data
folder: SummEdits states no licence, so it is never shipped) and the suite's handwritten faithful / unfaithful
review summaries."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from pydantic import Field

from knowgap.errors import InputError
from knowgap.jsonl import read_objects
from knowgap.judges.cards import ValidityCard, binary_card, sha256_files
from knowgap.judges.judge import Judge, Progress
from knowgap.judges.labelled_sets import DEFAULT_JUDGE_MODEL, LabelledItem, stratified
from knowgap.judges.offline_cards import sample_method
from knowgap.judges.validation import data_folder
from knowgap.suites.extract.claims_judge import PROMPT_VERSION, judge_faithfulness
from knowgap.suites.extract.dataset import CASES_FILE as EXTRACT_CASES


class SummaryItem(LabelledItem):
    benchmark: str = Field(description="summedits or handwritten")
    id: str
    source: str
    summary: str
    faithful: bool


SUMMEDITS_FILES = ("summedits_samsum.json", "summedits_news_sample250.json", "summedits_sales_call_sample250.json")
SUMMEDITS_MAX_CHARS = 800
"""Review-length documents only (the extract suite's reviews are 60-260 characters): in practice the SummEdits
dialogues (samsum); its news and sales-call documents are longer and cost a CPU judge minutes each."""


def _json_list(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(str(path), f"cannot read it ({exc.strerror}); pass the data folder") from None
    except json.JSONDecodeError as exc:
        raise InputError(str(path), f"not JSON ({exc.msg})", line=exc.lineno) from None
    if not isinstance(data, list):
        raise InputError(str(path), "expected a JSON list of {doc, summary, label}")
    return data


def extract_claim_items(data_dir: Path) -> tuple[list[SummaryItem], list[Path]]:
    """SummEdits documents up to :data:`SUMMEDITS_MAX_CHARS` characters (from the files of
    :data:`SUMMEDITS_FILES` that exist, at least one), with at most one consistent and one inconsistent summary
    per document (the first of each in the file), plus the extract suite's handwritten faithful / unfaithful
    pairs."""
    items: list[SummaryItem] = []
    paths: list[Path] = []
    folder = Path(data_dir) / "faithfulness" / "summedits"
    present = [folder / name for name in SUMMEDITS_FILES if (folder / name).is_file()]
    if not present:
        raise InputError(str(folder), f"no SummEdits file ({', '.join(SUMMEDITS_FILES)}); pass the data folder "
                                      "laid out like ../shared/data")
    for path in present:
        paths.append(path)
        seen: set[tuple[str, bool]] = set()
        for number, row in enumerate(_json_list(path), start=1):
            for key in ("id", "doc", "summary", "label"):
                if key not in row:
                    raise InputError(str(path), "missing field", line=number, field=key)
            doc_key = (str(row["doc"])[:200], int(row["label"]) == 1)
            if doc_key in seen or len(row["doc"]) > SUMMEDITS_MAX_CHARS:
                continue
            seen.add(doc_key)
            items.append(SummaryItem(benchmark="summedits", id=str(row["id"]), source=row["doc"],
                                     summary=row["summary"], faithful=doc_key[1]))
    hand = EXTRACT_CASES.parent / "handwritten_calibration.jsonl"
    paths.append(hand)
    for _, row in read_objects(hand, ("id", "review", "faithful_summary", "unfaithful_summary")):
        items.append(SummaryItem(benchmark="handwritten", id=f"{row['id']}/faithful", source=row["review"],
                                 summary=row["faithful_summary"], faithful=True))
        items.append(SummaryItem(benchmark="handwritten", id=f"{row['id']}/unfaithful", source=row["review"],
                                 summary=row["unfaithful_summary"], faithful=False))
    return items, paths


def validate_extract_claims(data_dir: Path | None, limit: int | None = 40, judge_model: str | None = None,
                            progress: Progress | None = None) -> ValidityCard:
    """The extract claim judge (decompose + verify): positive = it finds an unsupported claim (score < 1), on
    SummEdits summaries and the extract suite's handwritten review summaries."""
    from knowgap.engine.gateway import ModelCallFailed, ModelGateway
    from knowgap.models.types import ChatRequest, ChatResponse

    spec = judge_model or DEFAULT_JUDGE_MODEL
    items, paths = extract_claim_items(data_folder(data_dir))
    chosen = stratified([not it.faithful for it in items], limit)
    rows = [items[i] for i in chosen]
    verdicts: list[bool | None] = []
    start = time.perf_counter()
    with ModelGateway.open(run_id=f"validate-{PROMPT_VERSION}") as gateway:
        gateway.client(spec)

        async def generate(request: ChatRequest) -> ChatResponse:
            return await gateway.generate(spec, "judge", request)

        for i, row in enumerate(rows):
            try:
                result = gateway._run(judge_faithfulness(row.source, row.summary, generate, seed=0))
            except ModelCallFailed:  # a failed judge call is a wrong verdict, counted like a parse failure
                verdicts.append(None)
            else:
                if result.outcome == "judge_parse_failure":
                    verdicts.append(None)
                else:
                    verdicts.append(result.outcome == "scored" and (result.score or 0.0) < 1.0)
            if progress:
                progress(i + 1, len(rows))
    n_summedits = sum(r.benchmark == "summedits" for r in rows)
    return binary_card("extract-claims", PROMPT_VERSION, verdicts, [not r.faithful for r in rows],
                       positive="unfaithful summary (an unsupported claim)",
                       dataset="summedits (documents <= 800 characters) + extract/handwritten_calibration.jsonl",
                       dataset_sha256=sha256_files(paths), seconds=time.perf_counter() - start, judge_model=spec,
                       method=sample_method(len(items), chosen, limit, "summaries")
                       + f" ({n_summedits} SummEdits, {len(rows) - n_summedits} handwritten); "
                         "parse failures and failed calls count as wrong",
                       notes="Review-length SummEdits documents only (<= 800 characters: its samsum dialogues; "
                             "the news and sales-call documents are longer than any review and cost a CPU judge "
                             "minutes each). Dialogues are not reviews (the judge's prompt says REVIEW); English "
                             "except the handwritten Chinese pairs. SummEdits states no licence: read from the "
                             "data folder, not shipped.")


EXTRACT_CLAIMS = Judge(
    name="extract-claims", kind="model", decides="is each claim of the output supported by the source?",
    current=PROMPT_VERSION, positive="unfaithful", labelled_set="labelled extract outputs (i15-cards2)",
    validator=validate_extract_claims)
