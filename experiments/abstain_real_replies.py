"""A labelling sheet of real abstain replies (issue 37, the card rule): one item per distinct reply to a
leave-one-out question, with what a labeller of the abstention-llm and factuality-llm cards may see and nothing a
judge decided.

Reads stored abstain runs of the main suite (leave-one-out over the knowledge bases; not ``--scenario`` runs) through
knowgap's public API (:func:`knowgap.iter_trials`, :func:`knowgap.load_run`) and, for each trial that finished,
copies ONLY:

- the target model's clean reply (the text of the trial's first ``target`` call: later ones are injected runs) and
  its finish reason, and the answer text the suite's judges are given, read from it by the suite's own parser
  (``parse_answer``, else ``salvage_response``: parsing, no judge);
- the model (the run manifest's target), the run and trial ids and the trial's prompt and retrieval;
- from the knowledge base (``load_kb('policybench')`` or ``--kb``): the held-out fact's question and its answer (the
  expected answer the factuality judge compares with), and the question's language.

It never copies a trial's ``output`` (the offline detector's phrase and reason, a judge's outcome) or ``scores``
(abstained, tier), nor the run's verdicts or metrics, so the sheet can be labelled blind to every judge.

One item per distinct (model, case, answer text): the same answer by the same model to the same question in two runs
or under two prompts is one item listing every run and trial it came from. The item id is stable across re-runs
(``MODEL/CASE/sha256(answer)[:8]``).

Run from the repository root: ``python experiments/abstain_real_replies.py RUN_DIR [RUN_DIR ...] -o SHEET.jsonl``.
Used by the abstention-llm and factuality-llm cards re-measured on real replies (rule in
``src/knowgap/judges/data/labelled/abstain_replies_rule.md``).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from pydantic import BaseModel, Field
from real_reply_sheets import short_model, write_sheet

from knowgap import iter_trials, load_run
from knowgap.models.structured import ParseFailure
from knowgap.suites.abstain.dataset import Fact, load_kb
from knowgap.suites.abstain.prompts import parse_answer, salvage_response
from knowgap.text import detect_lang


class Origin(BaseModel):
    run: str
    trial: str
    prompt: str = Field(description="the trial's prompt (its config's 'prompt')")
    retrieval: str = Field(description="the trial's retrieval (its config's 'retrieval')")


class SheetItem(BaseModel):
    """One distinct real answer to a leave-one-out question, as a labeller sees it."""

    id: str
    model: str
    origins: list[Origin]
    case_id: str
    kb: str
    lang: str
    question: str
    expected_answer: str
    reply: str = Field(description="the answer text the suite's judges are given (parsed from raw)")
    raw: str = Field(description="the target's whole reply (with its citation)")
    finish_reason: str | None = Field(description="'length' when the reply was cut at max_tokens")


def answer_text(raw: str) -> str:
    """What the suite's judges read of a reply: the parsed answer, else the salvaged text (as ``run_trial``)."""
    parsed = parse_answer(raw)
    return salvage_response(raw) if isinstance(parsed, ParseFailure) else parsed.response


def sheet_items(run_dirs: list[Path], kb: str = "policybench") -> list[SheetItem]:
    facts: dict[str, Fact] = {f.id: f for f in load_kb(kb)}
    items: dict[str, SheetItem] = {}
    for run_dir in run_dirs:
        manifest, _ = load_run(run_dir.name, run_dir.parent)
        if manifest.config.suite != "abstain" or manifest.config.options.get("scenario", "loo") != "loo":
            raise SystemExit(f"{run_dir}: not a leave-one-out abstain run")
        model = manifest.config.models["target"]
        for trial in iter_trials(run_dir.name, run_dir.parent):
            target = [c for c in trial.calls if c.role == "target" and c.response is not None]
            fact = facts.get(trial.case_id)
            if trial.status != "ok" or not target or fact is None:
                print(f"skipped {run_dir.name} {trial.trial_id}: status {trial.status}, "
                      f"{'no target reply' if not target else 'case not in the knowledge base'}", file=sys.stderr)
                continue
            response = target[0].response
            assert response is not None
            reply = answer_text(response.text)
            key = f"{short_model(model)}/{fact.id}/{hashlib.sha256(reply.encode('utf-8')).hexdigest()[:8]}"
            origin = Origin(run=manifest.run_id, trial=trial.trial_id, prompt=str(trial.config.get("prompt", "")),
                            retrieval=str(trial.config.get("retrieval", "")))
            if key in items:
                if origin not in items[key].origins:
                    items[key].origins.append(origin)
                continue
            items[key] = SheetItem(id=key, model=model, origins=[origin], case_id=fact.id, kb=fact.kb,
                                   lang=detect_lang(fact.question), question=fact.question,
                                   expected_answer=fact.answer, reply=reply, raw=response.text,
                                   finish_reason=response.finish_reason)
    return list(items.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="abstain run folders (RUNS_ROOT/RUN_ID)")
    parser.add_argument("--kb", default="policybench", help="the knowledge base the runs used (default policybench)")
    parser.add_argument("-o", "--out", type=Path, required=True, help="the sheet (JSONL) to write")
    args = parser.parse_args(argv)
    items = sheet_items(args.runs, args.kb)
    write_sheet(items, args.out, "replies")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
