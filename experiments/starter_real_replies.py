"""A labelling sheet of real starter replies (issue 37, the card rule): one item per distinct reply to an answerable
starter question, with what a labeller of the answer-match card may see and nothing a judge decided.

Reads stored starter runs (their folders: ``RUNS_ROOT/RUN_ID``) through knowgap's public API
(:func:`experiments.real_reply_sheets.target_trials`) and, for each finished trial of an answerable case, copies
ONLY:

- the target model's reply (the trial's first ``target`` call: later ones are ``--inject``'s injected runs, which
  ``accuracy`` does not score) and its finish reason;
- the model (the run manifest's target), the run and trial ids and the trial's prompt and defence;
- from the case file the run used (the run's ``--data`` option, else the shipped ``cases.jsonl``): the context, the
  question, the accepted answers (the case's reference) and the language.

It never copies a trial's ``output`` (the abstention phrase found) or ``scores`` (answerable, abstained, correct),
nor the run's verdicts or metrics, so the sheet can be labelled blind to every judge.

One item per distinct (model, case, reply): the same reply by the same model to the same question under two
configurations is one item listing every run and trial it came from. The item id is stable across re-runs
(``MODEL/CASE/sha256(reply)[:8]``).

Run from the repository root: ``python experiments/starter_real_replies.py RUN_DIR [RUN_DIR ...] -o SHEET.jsonl``.
Used by the answer-match card re-measured on real replies (rule in
``src/knowgap/judges/data/labelled/answer_match_real_rule.md``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from real_reply_sheets import reply_id, seen_before, target_trials, write_sheet

from knowgap.suites.starter.answer_match_card import ReplyOrigin, StarterReply
from knowgap.suites.starter.dataset import DATA, StarterCase, load_cases


def sheet_items(run_dirs: list[Path]) -> list[StarterReply]:
    """One item per distinct (model, answerable case, reply) of the runs (:class:`StarterReply`, the fields the
    labelled set adds left out)."""
    items: dict[str, StarterReply] = {}
    cases: dict[str, dict[str, StarterCase]] = {}
    for manifest, trial, calls in target_trials(run_dirs, "starter"):
        data = str(manifest.config.options.get("data") or DATA)
        if data not in cases:
            cases[data] = {c.id: c for c in load_cases(Path(data))}
        case = cases[data].get(trial.case_id)
        if case is None or not case.answerable:
            continue
        model = manifest.config.models["target"]
        response = calls[0].response
        assert response is not None
        key = reply_id(model, case.id, response.text)
        origin = ReplyOrigin(run=manifest.run_id, trial=trial.trial_id, prompt=str(trial.config.get("prompt", "")),
                             defence=str(trial.config.get("defence", "none")))
        if seen_before(items, key, origin):
            continue
        items[key] = StarterReply(id=key, model=model, origins=[origin], case_id=case.id, lang=case.lang,
                                  context=case.context, question=case.question, answers=list(case.answers),
                                  reply=response.text, finish_reason=response.finish_reason)
    return list(items.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="starter run folders (RUNS_ROOT/RUN_ID)")
    parser.add_argument("-o", "--out", type=Path, required=True, help="the sheet (JSONL) to write")
    args = parser.parse_args(argv)
    write_sheet(sheet_items(args.runs), args.out, "replies")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
