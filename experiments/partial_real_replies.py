"""A labelling sheet of real partial replies (issue 37, the card rule): one item per distinct reply, with what a
labeller of the leak-detector and gap-matcher cards may see and nothing a judge decided.

Reads stored partial runs (their folders: ``RUNS_ROOT/RUN_ID``) through knowgap's public API
(:func:`knowgap.iter_trials`, :func:`knowgap.load_run`) and, for each role-view trial that finished
(``view=authorized`` or ``budget=N``; the full view hides nothing), copies ONLY:

- the target model's replies (the text of every ``target`` call, the last one being the answer) and the last
  call's finish reason, the prompt it was shown (the system and user messages of the first target call: the
  role's authorized view, the question and the instructions), the model (the run manifest's target), the run,
  trial and the git commit the run was made at;
- from the scenario file the run used (the shipped ``scenarios.jsonl`` at the run's git commit, read with ``git
  show``, unless ``--scenarios RUN_ID=FILE`` names another): the case (scenario, role, task, language, family,
  task type and question), the values the role may not see (each secret's path, value, how it was withheld and
  what was shown of it: :func:`knowgap.suites.partial.view.build_view`), and the role oracle's expected missing
  fields (``hidden_relevant``) with the scenario's words for them (``field_labels``), and whether the role's view
  is enough (the oracle's ``sufficient``);
- the evidence block of the prompt (the view as rendered), which the suite shows the reasoning rubric's judge;
- the ``missing`` items of the answer as the suite's parser reads them
  (:func:`knowgap.suites.partial.scoring.parse_answer`: what the gap matcher is given; parsing, no judge).

It never copies a trial's ``output`` or ``scores`` (leaked paths, gap precision, decisions: the judges'
verdicts), nor the run's metrics or verdicts, so the sheet can be labelled blind to every judge.

One item per distinct (model, case, reply text): the same reply to the same case by the same model in two runs is
one item listing every run and trial it came from (its expected fields are the union of the runs' oracles, each
naming the runs it comes from). The item id is stable across re-runs of this script
(``MODEL/CASE/sha256(reply)[:8]``). Reading the runs' finished trials and grouping the replies are
``real_reply_sheets.py``'s, shared with ``clarify_real_replies.py``.

Run from the repository root: ``python experiments/partial_real_replies.py RUN_DIR [RUN_DIR ...] -o SHEET.jsonl``.
Used by the leak-detector, gap-matcher and partial-rubric cards re-measured on real replies (docs in
``src/knowgap/judges/data/labelled/partial_cards_rule.md``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from real_reply_sheets import reply_id, seen_before, target_trials

from knowgap.suites.partial.dataset import DATA, Scenario, load_dataset
from knowgap.suites.partial.scoring import Answer, parse_answer
from knowgap.suites.partial.view import build_view

SHIPPED = "src/knowgap/suites/partial/data/scenarios.jsonl"
GENERATED = "(a summary the generator model wrote for the trial: see the prompt)"


class Origin(BaseModel):
    run: str
    trial: str
    config: str
    commit: str | None


class Hidden(BaseModel):
    """A value the role may not see in full."""

    path: str
    value: Any
    op: str = Field(description="denied, or the transform (mask_middle, keep_last, bucket, summarise, redact)")
    shown: str | None = Field(description="what the view shows of it (None: nothing)")


class Expected(BaseModel):
    """An expected missing field of the role's oracle (``hidden_relevant``)."""

    path: str
    labels: list[str] = Field(description="the scenario's words for the field (field_labels)")
    runs: list[str] = Field(description="the runs whose oracle lists it")


class SheetItem(BaseModel):
    """One distinct real reply with its case, as a labeller sees it."""

    id: str
    model: str
    origins: list[Origin]
    case_id: str
    scenario_id: str
    role: str
    task_id: str
    lang: str
    family: str | None
    task_type: str
    question: str
    hidden: list[Hidden]
    expected_missing: list[Expected]
    system: str
    prompt: str
    replies: list[str] = Field(description="every target reply of the trial, the answer last")
    finish_reason: str | None = Field(description="'length' when the answer was cut at max_tokens")
    parsed: bool = Field(description="the suite's parser found a JSON answer")
    missing: list[str] = Field(description="the answer's missing items as the suite's parser reads them")
    evidence: str = Field(description="the evidence block of the prompt (the role's view as rendered): what the "
                                      "reasoning rubric's judge is shown beside the task and the reply")
    sufficient: bool = Field(description="the role oracle's 'sufficient': the authorized view is enough to decide")


def scenarios_at(commit: str | None, override: Path | None) -> dict[str, Scenario]:
    """The scenarios a run used: ``override``, else the shipped file at ``commit`` (git show), else today's."""
    if override is not None:
        return load_dataset(override)
    if commit is None:
        print("no git commit in the run's manifest: today's shipped scenarios", file=sys.stderr)
        return load_dataset(DATA)
    text = subprocess.run(["git", "show", f"{commit}:{SHIPPED}"], capture_output=True, text=True, check=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scenarios.jsonl"
        path.write_text(text, encoding="utf-8")
        return load_dataset(path)


def evidence_block(prompt: str, scenario: Scenario, question: str) -> str:
    """The evidence block of a role's task prompt (``prompts.task_prompt``: the title, the evidence, the task, ...,
    joined by blank lines): the text the suite gives the rubric judge as the evidence the agent was shown."""
    head = (f"场景：{scenario.title}" if scenario.effective_lang() == "zh" else f"Scenario: {scenario.title}") + "\n\n"
    task = "\n\n" + ("任务：" if scenario.effective_lang() == "zh" else "Task: ") + question + "\n\n"
    if not prompt.startswith(head) or task not in prompt:
        raise SystemExit(f"{scenario.scenario_id}: the prompt does not hold the scenario's title and task as the "
                         "suite writes them (another prompt version?)")
    return prompt[len(head):prompt.index(task)]


def sheet_items(run_dirs: list[Path], overrides: dict[str, Path]) -> list[SheetItem]:
    items: dict[str, SheetItem] = {}
    runs: dict[str, dict[str, Scenario]] = {}
    for manifest, trial, calls in target_trials(run_dirs, "partial"):
        if str(trial.config.get("view", "")) == "full":
            continue
        model = manifest.config.models["target"]
        if manifest.run_id not in runs:
            runs[manifest.run_id] = scenarios_at(manifest.git_commit, overrides.get(manifest.run_id))
        scenarios = runs[manifest.run_id]
        scenario_id, role, task_id = trial.case_id.split("/")
        scenario = scenarios[scenario_id]
        task = next(t for t in scenario.tasks if t.id == task_id)
        replies = [c.response.text for c in calls if c.response is not None]
        last = calls[-1].response
        assert last is not None
        key = reply_id(model, trial.case_id, replies[-1])
        origin = Origin(run=manifest.run_id, trial=trial.trial_id, config=trial.config_id, commit=manifest.git_commit)
        oracle = task.oracle[role]
        expected = [Expected(path=p, labels=scenario.field_labels.get(p, []), runs=[manifest.run_id])
                    for p in oracle.hidden_relevant]
        if seen_before(items, key, origin):
            for e in expected:
                known = next((x for x in items[key].expected_missing if x.path == e.path), None)
                if known is None:
                    items[key].expected_missing.append(e)
                elif manifest.run_id not in known.runs:
                    known.runs.append(manifest.run_id)
            continue
        messages = calls[0].request.messages
        built = build_view(scenario, scenario.policy(role), summariser=lambda _p, _t: GENERATED)
        answer = parse_answer(replies[-1])
        prompt = "\n".join(m.content for m in messages if m.role == "user")
        items[key] = SheetItem(
            id=key, model=model, origins=[origin], case_id=trial.case_id, scenario_id=scenario_id, role=role,
            task_id=task_id, lang=scenario.effective_lang(), family=scenario.family, task_type=task.type,
            question=task.question,
            hidden=[Hidden(path=s.path, value=s.value, op=s.op, shown=s.shown) for s in built.secrets],
            expected_missing=expected,
            system="\n".join(m.content for m in messages if m.role == "system"),
            prompt=prompt, replies=replies, finish_reason=last.finish_reason, parsed=isinstance(answer, Answer),
            missing=answer.missing if isinstance(answer, Answer) else [],
            evidence=evidence_block(prompt, scenario, task.question), sufficient=oracle.sufficient)
    return list(items.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="partial run folders (RUNS_ROOT/RUN_ID)")
    parser.add_argument("-o", "--out", type=Path, required=True, help="the sheet (JSONL) to write")
    parser.add_argument("--scenarios", action="append", default=[], metavar="RUN_ID=FILE",
                        help="the scenario file a run used, when not the shipped one at its commit")
    args = parser.parse_args(argv)
    overrides = {}
    for spec in args.scenarios:
        run_id, _, file = spec.partition("=")
        overrides[run_id] = Path(file)
    items = sheet_items(args.runs, overrides)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as f:
        for item in items:
            f.write(json.dumps(item.model_dump(), ensure_ascii=False) + "\n")
    by: dict[tuple[str, str], list[int]] = {}
    for item in items:
        n = by.setdefault((item.model, item.lang), [0, 0])
        n[0] += 1
        n[1] += len(item.missing) * len(item.expected_missing)
    print(f"{len(items)} distinct replies -> {args.out}: "
          + ", ".join(f"{m} {lang} {n} replies, {p} (gap, field) pairs" for (m, lang), (n, p) in sorted(by.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
