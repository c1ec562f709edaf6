"""The validity card of the ``citation-check`` judge, measured on hand-labelled citations
(``judges/data/labelled/citations.jsonl``; provenance in its SOURCES.md).

One item per labelled citation (answer, statute, article), labelled ``wrong`` by the issue's rule (not in the
answer's legal basis, or beyond the statute's last article). The judge's verdict on an item is the check's
verdict on that (statute, article) when it read it from the answer; a labelled citation it did not read (or
read under another statute) has no verdict and counts as wrong (a parse failure of the card). Citations it read
that no label names are spurious: counted in ``extra``, not in the confusion matrix (they have no label).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from knowgap.jsonl import read_models
from knowgap.judges.cards import Estimate, ValidityCard, binary_card, binary_measures, confusion_of, sha256_files
from knowgap.judges.judge import Judge
from knowgap.judges.validation import stratified_sample
from knowgap.suites.clarify.citations import VERSION, check_citations, read_citations

LABELS_FILE = Path(str(files("knowgap.judges") / "data" / "labelled" / "citations.jsonl"))
DATASET = "knowgap judges/data/labelled/citations.jsonl"


class LabelledCitation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    statute: str = Field(description="statute key of data/statutes.json, or other:NAME")
    article: int = Field(ge=0)
    wrong: bool


class CitedAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    source: str
    basis: list[str] = Field(min_length=1)
    text: str = Field(min_length=1)
    citations: list[LabelledCitation] = Field(min_length=1)


def load_cited_answers(path: Path = LABELS_FILE) -> list[CitedAnswer]:
    return [item for _, item in read_models(path, CitedAnswer, what="labelled citations")]


def validate_citation_check(data_dir: Path | None = None, limit: int | None = None, judge_model: str | None = None,
                            progress: Callable[[int, int], None] | None = None) -> ValidityCard:
    """Agreement of the citation check with the labels. ``data_dir`` and ``judge_model`` are not used (the set
    ships with knowgap, the judge is offline); ``limit``: a seeded sample of N labelled citations, equal between
    wrong and right ones."""
    answers = load_cited_answers()
    items = [(a, c) for a in answers for c in a.citations]
    picked = stratified_sample(items, [c.wrong for _, c in items], limit)
    read: dict[str, dict[tuple[str, int], bool]] = {}
    verdicts: list[bool | None] = []
    labels: list[bool] = []
    groups: list[str] = []
    start = time.perf_counter()
    for done, i in enumerate(picked, start=1):
        answer, c = items[i]
        if answer.id not in read:
            read[answer.id] = {(x.citation.statute, x.citation.article): x.wrong
                               for x in check_citations(read_citations(answer.text), answer.basis)}
        verdicts.append(read[answer.id].get((c.statute, c.article)))
        labels.append(c.wrong)
        groups.append("written" if answer.source.startswith("written") else "real")
        if progress:
            progress(done, len(picked))
    spurious = sum(len(set(read[a.id]) - {(c.statute, c.article) for c in a.citations})
                   for a in answers if a.id in read)
    seconds = time.perf_counter() - start
    extra: dict[str, Estimate | float | str] = {"spurious_citations": float(spurious), "answers": float(len(read))}
    for group in ("real", "written"):
        picked = [i for i, g in enumerate(groups) if g == group]
        if picked:
            confusion, _ = confusion_of([verdicts[i] for i in picked], [labels[i] for i in picked])
            ba = binary_measures(confusion)["balanced_accuracy"].value
            extra[f"{group}_n"] = float(len(picked))
            if ba is not None:
                extra[f"{group}_balanced_accuracy"] = ba
    return binary_card("citation-check", VERSION, verdicts, labels, positive="wrong citation",
                       dataset=DATASET, dataset_sha256=sha256_files([LABELS_FILE]), seconds=seconds,
                       method=f"{len(picked)} labelled citations of {len(read)} answers (real: Lawyer LLaMA multi-turn "
                              "lawyer turns, ChatGPT-written, with each consultation's laws as the legal basis; "
                              "written: short zh/en answers written for knowgap)",
                       extra=extra,
                       notes="one annotator (the project), labels set by reading the answers before running the "
                             "check; a labelled citation the reader missed counts as wrong")


CITATION_CHECK = Judge(
    name="citation-check", kind="offline",
    decides="which statute articles does an answer cite, and is each in the case's legal basis and within the "
            "statute's articles?", current=VERSION, positive="wrong citation",
    labelled_set="judges/data/labelled/citations.jsonl (Lawyer LLaMA lawyer turns + written answers, hand-labelled)",
    validator=validate_citation_check, needs_data=False)
