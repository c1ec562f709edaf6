"""Export a run to inspect_ai's log format, so ``inspect view`` opens it (``pip install 'knowgap[inspect]'``).

The log is built with inspect_ai's own pydantic types: one sample per trial (id ``case|configuration``, epoch =
repeat + 1) with the messages, input and output of one target call (the one the trial's first wrong verdict is
about, else the one the whole trial is judged by: :func:`~knowgap.report.examples.trial_call`; its index and part in
the metadata's ``call`` and ``part``), and the trial's scores as one ``knowgap`` score (a mapping)
plus, when the suite gives a verdict, a ``verdict`` score (C = passed, I = failed); the results hold one score per
group with each metric and its 95% CI bounds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knowgap.engine.records import CallRecord, TrialRecord
from knowgap.errors import KnowgapError
from knowgap.redaction import redact
from knowgap.report.data import RunData, held
from knowgap.report.examples import call_answer, trial_call

_STATUS = {"finished": "success", "finished_with_errors": "success", "running": "started", "interrupted": "cancelled",
           "failed": "error", "stopped": "success"}  # stopped: its --until rule decided (or a budget ran out)


def _inspect() -> Any:
    try:
        import inspect_ai.log as log
    except ImportError:
        raise KnowgapError("inspect_ai export needs inspect_ai: pip install 'knowgap[inspect]'") from None
    return log


def _messages(call: CallRecord | None) -> list[Any]:
    """One call's messages and its answer."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    if call is None:
        return []
    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
    out: list[Any] = [kinds[m.role](content=redact(m.content)) for m in call.request.messages if m.role in kinds]
    if call.response is not None:
        out.append(ChatMessageAssistant(content=redact(call.response.text), model=call.model))
    return out


def _sample(run: RunData, record: TrialRecord) -> Any:
    log = _inspect()
    from inspect_ai.model import ModelOutput, ModelUsage
    from inspect_ai.scorer import Score

    found, part = trial_call(run, record)
    call = record.calls[found.call] if found is not None else None
    messages = _messages(call)
    user = [m for m in messages if m.role == "user"]
    scores = {"knowgap": Score(value={k: v for k, v in record.scores.items()},
                               explanation=redact(record.error) if record.error else None)}
    verdict = run.trial_failed(record)
    if verdict is not None:
        scores["verdict"] = Score(value="I" if verdict else "C")
    prompt_tokens = sum(c.response.usage.prompt_tokens for c in record.calls if c.response)
    completion_tokens = sum(c.response.usage.completion_tokens for c in record.calls if c.response)
    usage = {run.target: ModelUsage(input_tokens=prompt_tokens, output_tokens=completion_tokens,
                                    total_tokens=prompt_tokens + completion_tokens)} if record.calls else {}
    return log.EvalSample(
        id=f"{record.case_id}|{record.config_id}", epoch=record.repeat + 1,
        input=user[-1].text if user else record.case_id, target="", messages=messages,
        output=ModelOutput.from_content(run.target, redact(call_answer(call)) if call else ""), scores=scores,
        metadata={"trial_id": record.trial_id, "config_id": record.config_id, "config": record.config,
                  "call": found.call if found is not None else None, "part": redact(part) if part else None,
                  "output": json.loads(redact(json.dumps(record.output, ensure_ascii=False)))},
        model_usage=usage, total_time=record.duration_s, started_at=record.started_at or None,
        error=log.EvalError(message=redact(record.error), traceback="", traceback_ansi="")
        if record.status != "ok" and record.error else None)


def build_eval_log(run: RunData) -> Any:
    """An ``inspect_ai.log.EvalLog`` of the run (every trial a sample, held in memory: inspect writes the log
    whole)."""
    log = _inspect()
    run = held(run)
    from inspect_ai.model import ModelUsage

    m, cfg = run.manifest, run.manifest.config
    groups: dict[str, dict[str, Any]] = {}
    for metric in run.metrics:
        if metric.value is None:
            continue
        g = groups.setdefault(metric.group, {})
        g[metric.name] = log.EvalMetric(name=metric.name, value=metric.value)
        if metric.ci_low is not None and metric.ci_high is not None:
            g[f"{metric.name}_ci_low"] = log.EvalMetric(name=f"{metric.name}_ci_low", value=metric.ci_low)
            g[f"{metric.name}_ci_high"] = log.EvalMetric(name=f"{metric.name}_ci_high", value=metric.ci_high)
    results = log.EvalResults(
        total_samples=len(run.records), completed_samples=sum(r.status == "ok" for r in run.records),
        scores=[log.EvalScore(name=group, scorer="knowgap", metrics=metrics,
                              scored_samples=sum(r.config_id == group and r.status == "ok" for r in run.records))
                for group, metrics in groups.items()])
    usage = {}
    for specs in m.usage.values():
        for spec, u in specs.items():
            usage[spec] = ModelUsage(input_tokens=u.prompt_tokens, output_tokens=u.completion_tokens,
                                     total_tokens=u.prompt_tokens + u.completion_tokens, total_cost=u.cost_usd)
    spec = log.EvalSpec(
        run_id=m.run_id, eval_id=m.run_id, task_id=m.run_id, created=m.started_at, task=f"knowgap/{cfg.suite}",
        task_args=cfg.options, dataset=log.EvalDataset(name=cfg.suite, samples=len({r.case_id for r in run.records})),
        model=run.target, model_roles=None, config=log.EvalConfig(epochs=cfg.repeats),
        revision=log.EvalRevision(type="git", origin="", commit=m.git_commit) if m.git_commit else None,
        packages={"knowgap": m.knowgap_version},
        metadata={"knowgap": {"models": cfg.models, "seed": cfg.seed, "dataset_hashes": m.dataset_hashes}})
    return log.EvalLog(status=_STATUS.get(m.status, "started"), eval=spec, results=results,
                       stats=log.EvalStats(started_at=m.started_at, completed_at=m.ended_at or "", model_usage=usage),
                       samples=[_sample(run, r) for r in run.records])


def write_inspect_log(run: RunData, out: Path) -> Path:
    """Write the run as an inspect log (``.eval``, or ``.json`` by the file's suffix)."""
    log = _inspect()
    if out.suffix not in (".eval", ".json"):
        raise KnowgapError(f"{out}: an inspect log file ends in .eval or .json")
    out.parent.mkdir(parents=True, exist_ok=True)
    log.write_eval_log(build_eval_log(run), str(out))
    return out
