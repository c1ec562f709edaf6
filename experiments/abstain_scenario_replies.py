"""A labelling sheet of real replies to the abstain scenarios (issue 37, the card rule): one item per distinct reply
to a scenario question, with what a labeller of the abstention-scenarios card may see and nothing a judge decided.

Reads stored ``knowgap run abstain --scenario S`` runs through knowgap's public API
(:func:`real_reply_sheets.target_trials`) and, for each trial that finished, copies ONLY:

- the target model's reply, stripped as the suite gives it to the abstention detector (``run_scenario_trial``);
- the model (the run manifest's target), the run id and date;
- from the shipped scenario file (``load_scenario``): the question, its paragraph (unanswerable-context) and its
  language.

It never copies a trial's ``output`` (the detector's phrase and reason, the answer check) or ``scores`` (abstained,
correct), nor the run's verdicts or metrics, so the sheet can be labelled blind to the detector.

One item per distinct (model, question, reply); the id is ``PREFIX/SCENARIO/CASE`` (the 1.5B rows of
``abstention_scenarios.jsonl`` are ``SCENARIO/CASE``; ``scenario_answers.jsonl`` names the 0.5B's ``05/...``), so a
second reply of the same model to the same question (another run) is an error, not a silent second item. ``source``
is written the way the 1.5B rows write it: ``MODEL, knowgap run abstain --scenario S --sample N --seed K (run ID,
DATE)``.

Run from the repository root: ``python experiments/abstain_scenario_replies.py RUN_DIR [RUN_DIR ...] --id-prefix 05
-o SHEET.jsonl``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pydantic import BaseModel, Field
from real_reply_sheets import target_trials, write_sheet

from knowgap.suites.abstain.scenario_data import ScenarioCase, load_scenario


class SheetItem(BaseModel):
    """One distinct real reply to a scenario question, as a labeller sees it (the labelled set's fields but the
    labels, with the model and language the sheet counts by)."""

    id: str
    scenario: str
    question: str
    context: str | None = None
    response: str = Field(description="the reply as the abstention detector is given it (stripped)")
    source: str
    model: str
    lang: str


def _command(options: dict[str, object], scenario: str, seed: int) -> str:
    sample = options.get("sample")
    return (f"knowgap run abstain --scenario {scenario}" + (f" --sample {sample}" if sample is not None else "")
            + f" --seed {seed}")


def sheet_items(run_dirs: list[Path], id_prefix: str) -> list[SheetItem]:
    items: dict[str, SheetItem] = {}
    cases: dict[str, dict[str, ScenarioCase]] = {}
    for manifest, trial, calls in target_trials(run_dirs, "abstain"):
        options = dict(manifest.config.options)
        scenario = str(options.get("scenario", "loo"))
        if scenario == "loo" or options.get("data") is not None:
            raise SystemExit(f"{manifest.run_id}: not a run of a shipped --scenario question set")
        if scenario not in cases:
            cases[scenario] = {c.id: c for c in load_scenario(scenario)}
        case = cases[scenario][trial.case_id]
        model = manifest.config.models["target"]
        response = calls[0].response
        assert response is not None
        item_id = f"{id_prefix}/{scenario}/{case.id}"
        reply = response.text.strip()
        if item_id in items:
            if items[item_id].response != reply:
                raise SystemExit(f"{item_id}: two different replies of {model} to one question (runs "
                                 f"{items[item_id].source} and {manifest.run_id}): give one run per scenario")
            continue
        source = (f"{model}, {_command(options, scenario, manifest.config.seed)} "
                  f"(run {manifest.run_id}, {manifest.started_at[:10]})")
        items[item_id] = SheetItem(id=item_id, scenario=scenario, question=case.question, context=case.context,
                                   response=reply, source=source, model=model, lang=case.lang)
    return sorted(items.values(), key=lambda it: it.id)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="abstain --scenario run folders (RUNS_ROOT/RUN_ID)")
    parser.add_argument("--id-prefix", required=True, help="the items' id prefix naming the model (05 for the 0.5B)")
    parser.add_argument("-o", "--out", type=Path, required=True, help="the sheet (JSONL) to write")
    args = parser.parse_args(argv)
    write_sheet(sheet_items(args.runs, args.id_prefix), args.out, "replies")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
