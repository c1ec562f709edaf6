"""Labelling sheets of real clarify replies for the element-coverage, clarify-correctness-approx and citation-check
cards (issue 37, the card rule): from stored clarify run folders, every trial's first target reply with only what a
labeller may see -- the case's question, its annotated missing elements (deficient cases) or its reference
conclusion (complete controls), the model (from the run's manifest), the run id and the prompt -- and never a
judge's verdict, score or the trial's other output fields.

The replies are read by the shared extraction (``experiments/clarify_real_replies.py``, :func:`sheet_items`): one
item per distinct (model, case, reply), listing every run and prompt that gave it (``origins``), with its ids.
Written (label fields empty, filled by the annotator):

- ``judges/data/labelled/clarify_coverage.jsonl``: the deficient cases' replies, each with its missing elements
  (``covered: null``, ``reason: ""``). A reply written in another language than its case's elements is left out:
  element-coverage does not score it (``coverage_other_language``); the script prints how many.
- ``judges/data/labelled/clarify_final_answers.jsonl``: the complete controls' replies (the runs ask once, no
  further turn, so a control's first reply is the final answer ``control_correctness_approx`` scores), with the
  reference conclusion (``correct: null``).

It also prints how many replies mention a statute article ("第N条", "Article N", read by a plain pattern here, not
by citation-check), for deciding whether citation-check can be measured on these replies.

Run from the repository root: ``python experiments/clarify_card_sheets.py RUN_DIR [RUN_DIR ...]`` (each a run
folder holding manifest.json and trials.jsonl). Written up in docs/judges.md (element-coverage,
clarify-correctness-approx).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from knowgap.suites.clarify.dataset import load_cases
from knowgap.text.languages import different_languages

sys.path.insert(0, str(Path(__file__).resolve().parent))
from clarify_real_replies import sheet_items  # noqa: E402  (the shared extraction: experiments/clarify_real_replies.py)

LABELLED = Path("src/knowgap/judges/data/labelled")
COVERAGE_SHEET = LABELLED / "clarify_coverage.jsonl"
ANSWERS_SHEET = LABELLED / "clarify_final_answers.jsonl"
_ARTICLE = re.compile(r"第[一二三四五六七八九十百千零〇两\d]+条|\bArt(?:icle|s?\.)\s*\d+", re.IGNORECASE)


def collect(run_dirs: list[Path]) -> tuple[list[dict[str, object]], list[dict[str, object]], dict[str, int]]:
    """The two sheets' rows from the shared sheet's items (one per distinct model, case and reply), and counts."""
    cases = {c.id: c for c in load_cases()}
    coverage: list[dict[str, object]] = []
    answers: list[dict[str, object]] = []
    items = sheet_items(run_dirs)
    counts = {"distinct": len(items), "other_language": 0, "mention_article": 0}
    for item in items:
        case = cases[item.case_id]
        counts["mention_article"] += bool(_ARTICLE.search(item.reply))
        row: dict[str, object] = {"id": item.id, "case_id": case.id, "lang": case.lang, "model": item.model,
                                  "origins": [o.model_dump() for o in item.origins],
                                  "finish_reason": item.finish_reason, "query": case.query}
        if case.deficient:
            if different_languages(" ".join(m.text for m in case.missing_information), item.reply):
                counts["other_language"] += 1
                continue
            row["reply"] = item.reply
            row["elements"] = [{"text": m.text, "category": m.category, "covered": None, "reason": ""}
                               for m in case.missing_information]
            coverage.append(row)
        else:
            row |= {"conclusion": case.conclusion, "reply": item.reply, "correct": None, "reason": ""}
            answers.append(row)
    return coverage, answers, counts


def _write(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run folders (manifest.json, trials.jsonl)")
    parser.add_argument("--append", action="store_true",
                        help="keep the rows already in the sheets (and their labels); add only new replies")
    args = parser.parse_args()
    coverage, answers, counts = collect(args.runs)
    for path, rows in ((COVERAGE_SHEET, coverage), (ANSWERS_SHEET, answers)):
        if args.append and path.is_file():
            old = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            fresh = {r["id"]: r for r in rows}
            for r in old:  # labels kept; the sources a later run adds are listed
                r["origins"] = fresh[r["id"]]["origins"] if r["id"] in fresh else r["origins"]
            have = {r["id"] for r in old}
            rows = old + [r for r in rows if r["id"] not in have]
        _write(path, rows)
        print(f"{path}: {len(rows)} rows")
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
