"""A labelling sheet of real extract summaries (issue 37, the card rule): one item per distinct summary of a normal
(non-adversarial) review, with what a labeller of the extract-claims card may see and nothing a judge decided.

Reads stored extract runs (their folders: ``RUNS_ROOT/RUN_ID``) through knowgap's public API
(:func:`experiments.real_reply_sheets.target_trials`) and, for each finished trial of a normal case, copies ONLY:

- each target call's summary, read from its reply by the suite's own parser (``Summarizer.parse``: parsing, no
  judge; a reply that does not parse has no summary for the judge and is skipped, said on stderr), and its finish
  reason;
- the model (the run manifest's target), the run and trial ids and the run index of the call;
- from the case file the run used (the run's ``--data`` option, else the shipped ``cases.jsonl``): the review (the
  source the judge checks the summary against) and its language.

It never copies a trial's ``output`` (its judge and checker scores, sentiments) or ``scores``, nor the run's verdicts
or metrics, so the sheet can be labelled blind to every judge.

One item per distinct (model, case, summary): the same summary in two runs or two repeats is one item listing every
run and trial it came from. The item id is stable across re-runs (``MODEL/CASE/sha256(summary)[:8]``).

Run from the repository root: ``python experiments/extract_real_summaries.py RUN_DIR [RUN_DIR ...] -o SHEET.jsonl``.
Used by the extract-claims card re-measured on real summaries (rule in
``src/knowgap/judges/data/labelled/extract_summaries_rule.md``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pydantic import BaseModel, Field
from real_reply_sheets import reply_id, seen_before, target_trials, write_sheet

from knowgap.models.structured import ParseFailure
from knowgap.suites.extract.dataset import CASES_FILE, ExtractCase, load_cases
from knowgap.suites.extract.summarizer import Summarizer


class Origin(BaseModel):
    run: str
    trial: str
    call: int = Field(description="the index of the target call in the trial (the summarizer run)")


class SheetItem(BaseModel):
    """One distinct real summary of a normal review, as a labeller sees it."""

    id: str
    model: str
    origins: list[Origin]
    case_id: str
    lang: str = Field(description="the review's language (the case's lang)")
    review: str
    summary: str = Field(description="the summary the judge is given (the reply's 'summary' field)")
    finish_reason: str | None


def sheet_items(run_dirs: list[Path]) -> list[SheetItem]:
    items: dict[str, SheetItem] = {}
    cases: dict[str, dict[str, ExtractCase]] = {}
    for manifest, trial, calls in target_trials(run_dirs, "extract"):
        data = str(manifest.config.options.get("data") or CASES_FILE)
        if data not in cases:
            cases[data] = {c.id: c for c in load_cases(Path(data))}
        case = cases[data].get(trial.case_id)
        if case is None or case.kind != "normal":
            continue
        model = manifest.config.models["target"]
        for index, call in enumerate(calls):
            assert call.response is not None
            parsed = Summarizer.parse(call.response.text)
            if isinstance(parsed, ParseFailure):
                print(f"skipped {manifest.run_id} {trial.trial_id} call {index}: {parsed.reason}", file=sys.stderr)
                continue
            key = reply_id(model, case.id, parsed.summary)
            origin = Origin(run=manifest.run_id, trial=trial.trial_id, call=index)
            if seen_before(items, key, origin):
                continue
            items[key] = SheetItem(id=key, model=model, origins=[origin], case_id=case.id, lang=case.lang,
                                   review=case.review, summary=parsed.summary,
                                   finish_reason=call.response.finish_reason)
    return list(items.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="extract run folders (RUNS_ROOT/RUN_ID)")
    parser.add_argument("-o", "--out", type=Path, required=True, help="the sheet (JSONL) to write")
    args = parser.parse_args(argv)
    items = sheet_items(args.runs)
    write_sheet(items, args.out, "summaries")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
