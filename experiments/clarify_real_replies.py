"""A labelling sheet of real clarify replies (issue 37, the card rule): one item per distinct reply, with what a
labeller may see and nothing a judge decided.

Reads stored clarify runs (their folders: ``RUNS_ROOT/RUN_ID``) through knowgap's public API
(:func:`knowgap.iter_trials`, :func:`knowgap.load_run`) and, for each trial that finished, copies ONLY the target
model's reply (the text of its ``target`` call, and the call's finish reason so a labeller knows a reply was cut),
the model (the run manifest's target) and the run and trial ids, with the case's own fields from the clarify
suite's case file (query, language, kind, missing information, hidden facts, expected clarifying questions, the
conditional and reference conclusions, conclusion terms, legal basis). It never copies a trial's ``output`` or
``scores`` (the judges' verdicts: asked, conditionals, dangerous assertions, coverage, citations), nor the run's
metrics, so the sheet can be labelled blind to every judge.

One item per distinct (model, case, reply text): the same reply written by the same model for the same case in two
runs or under two prompts is one item that lists every run and trial it came from. The item id is stable across
re-runs of this script (``MODEL/CASE/sha256(reply)[:8]``), so items labelled earlier keep their ids when runs are
added. Reading the runs' finished trials and grouping the replies are ``real_reply_sheets.py``'s, shared with
``partial_real_replies.py``.

Run from the repository root: ``python experiments/clarify_real_replies.py RUN_DIR [RUN_DIR ...] -o SHEET.jsonl``.
Used by the clarify cards re-measured on real replies (clarification, dangerous-assertion; element-coverage,
clarify-correctness-approx, citation-check): each keeps its own labelled set built from this sheet.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pydantic import BaseModel, Field
from real_reply_sheets import reply_id, seen_before, short_model, target_trials, write_sheet

from knowgap.suites.clarify.dataset import load_cases

__all__ = ["Origin", "SheetItem", "main", "sheet_items", "short_model"]


class Origin(BaseModel):
    run: str
    trial: str
    prompt: str = Field(description="the trial's prompt (its config's 'prompt')")


class SheetItem(BaseModel):
    """One distinct real reply with its case, as a labeller sees it."""

    id: str
    model: str
    origins: list[Origin]
    case_id: str
    lang: str
    kind: str
    domain: str
    query: str
    missing_information: list[str]
    hidden_facts: list[str]
    expected_clarifying_questions: list[str]
    conditional_answer: str
    conclusion: str
    conclusion_terms: list[str]
    legal_basis: list[str]
    reply: str
    finish_reason: str | None = Field(description="'length' when the reply was cut at max_tokens")


def sheet_items(run_dirs: list[Path], cases_file: Path | None = None) -> list[SheetItem]:
    """The sheet of ``run_dirs``; ``cases_file``: the case file the runs were given (default: the shipped cases)."""
    cases = {c.id: c for c in (load_cases(cases_file) if cases_file else load_cases())}
    items: dict[str, SheetItem] = {}
    for manifest, trial, target in target_trials(run_dirs, "clarify"):
        model = manifest.config.models["target"]
        response = target[-1].response
        assert response is not None
        reply = response.text
        case = cases[trial.case_id]
        key = reply_id(model, case.id, reply)
        origin = Origin(run=manifest.run_id, trial=trial.trial_id, prompt=str(trial.config.get("prompt", "")))
        if seen_before(items, key, origin):
            continue
        items[key] = SheetItem(
            id=key, model=model, origins=[origin], case_id=case.id, lang=case.lang, kind=case.kind,
            domain=case.domain, query=case.query, missing_information=[m.text for m in case.missing_information],
            hidden_facts=case.hidden_facts, expected_clarifying_questions=case.expected_clarifying_questions,
            conditional_answer=case.conditional_answer, conclusion=case.conclusion,
            conclusion_terms=case.conclusion_terms, legal_basis=case.legal_basis, reply=reply,
            finish_reason=response.finish_reason)
    return list(items.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="clarify run folders (RUNS_ROOT/RUN_ID)")
    parser.add_argument("-o", "--out", type=Path, required=True, help="the sheet (JSONL) to write")
    args = parser.parse_args(argv)
    items = sheet_items(args.runs)
    write_sheet(items, args.out, "replies")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
