"""What the web app shows, as plain JSON-able dicts built from the run store and the label store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from knowgap.engine.outcome import error_report, status_text
from knowgap.engine.records import MetricValue, TrialRecord
from knowgap.engine.store import RunStore, list_runs
from knowgap.engine.suite import RubricSpec
from knowgap.errors import KnowgapError
from knowgap.judges.cards import assess
from knowgap.labels.agreement import agreement_report
from knowgap.labels.records import field_kind, verdict_key
from knowgap.labels.reference import References
from knowgap.labels.rubric import check_rubric_label, judge_points, rubric_report, run_rubrics
from knowgap.labels.store import LabelStore, parse_value
from knowgap.report.causes import against, failure_causes
from knowgap.report.charts import headline_charts
from knowgap.report.compare import Comparison, compare_runs
from knowgap.report.data import RunData, load_suite
from knowgap.report.examples import paired_responses
from knowgap.report.failures import list_failures
from knowgap.report.judging import Judgements
from knowgap.report.scorecard import RunCard, by, folded_zero, is_breakdown, scorecard, suite_specs

FAILURES_SHOWN = 500
"""The most failures a run's page lists (the count per metric covers them all)."""
COMPARE_REPS = 500
COMPARE_BUDGET_S = 20.0
"""The comparison's bootstrap on the compare page: resamples, and the time they may take (else the analytic
fallback, which the method line names)."""


def _judgement(judged: Judgements, metric: MetricValue) -> dict[str, Any]:
    """What the metrics table shows of a metric's judge: status, badge, the judge with its balanced accuracy,
    why it is a SCREEN, the corrected rate."""
    j = judged.of(metric)
    return {"status": j.status, "badge": j.badge, "judge": j.judge_label, "accuracy": j.accuracy, "reason": j.reason,
            "corrected": j.corrected_text()}


def _kinds(card: RunCard) -> list[str]:
    """The kinds a card's headline plots are drawn for, in the order :func:`headline_charts` draws them."""
    return list(dict.fromkeys(c.kind for row in card.rows for c in row.cells if c is not None and c.kind != "count"))


class RunsView:
    """Read access to the runs folder, with each run's trials cached until trials.jsonl changes."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[str, tuple[tuple[int, int], dict[str, TrialRecord]]] = {}
        self._references: dict[str, References] = {}
        self._rubrics: dict[str, tuple[RubricSpec, ...]] = {}
        self._comparisons: dict[tuple[str, str], tuple[tuple[int, int], tuple[int, int], Comparison]] = {}

    def store(self, run_id: str) -> LabelStore:
        if "/" in run_id or run_id.startswith("."):
            raise KnowgapError(f"bad run id '{run_id}'")
        return LabelStore(RunStore.open(self.root, run_id).path)

    def records(self, run_id: str) -> dict[str, TrialRecord]:
        store = self.store(run_id)
        file = store.run_path / "trials.jsonl"
        stat = file.stat() if file.exists() else None
        key = (stat.st_mtime_ns, stat.st_size) if stat else (0, 0)
        cached = self._cache.get(run_id)
        if cached and cached[0] == key:
            return cached[1]
        records = store.records()
        self._cache[run_id] = (key, records)
        return records

    def reference(self, run_id: str, record: TrialRecord) -> dict[str, str]:
        """What the trial's judges compared the response with (the run's suite and cases loaded once)."""
        if run_id not in self._references:
            self._references[run_id] = References(self.store(run_id).run_store())
        return self._references[run_id].of(record)

    def rubrics(self, run_id: str) -> tuple[RubricSpec, ...]:
        if run_id not in self._rubrics:
            self._rubrics[run_id] = run_rubrics(self.store(run_id).run_store())
        return self._rubrics[run_id]

    def runs(self) -> list[dict[str, Any]]:
        out = []
        for m in list_runs(self.root):
            labels = LabelStore(self.root / m.run_id)
            out.append({"run_id": m.run_id, "suite": m.config.suite, "status": m.status,
                        "status_text": status_text(m), "trials_error": m.trials_error,
                        "target": m.config.models.get("target", ""), "trials_ok": m.trials_ok,
                        "trials_total": m.trials_total, "started_at": m.started_at,
                        "labels": len(labels.current())})
        return out

    def run(self, run_id: str) -> dict[str, Any]:
        store = self.store(run_id)
        rs = store.run_store()
        records = self.records(run_id)
        fields = sorted({k for r in records.values() for k, v in r.scores.items() if v is not None})
        categories = {f: sorted({verdict_key(r.scores[f]) for r in records.values()
                                 if r.scores.get(f) is not None}) for f in fields}
        manifest = rs.current_manifest()
        judged = Judgements.for_run(manifest)
        metrics = rs.read_metrics()
        return {"manifest": manifest.model_dump(mode="json"), "status_text": status_text(manifest),
                "error_lines": error_report(manifest),
                "metrics": [m.model_dump() | {"judgement": _judgement(judged, m), "breakdown": is_breakdown(m)}
                            for m in metrics],
                "folded": folded_zero(metrics, suite_specs(manifest.config.suite)),
                "breakdowns_by": by([m for m in metrics if is_breakdown(m)]),
                "fields": fields, "categories": categories,
                "configs": sorted({r.config_id for r in records.values()}),
                "samples": [{"name": s.name, "field": s.field, "trial_ids": s.trial_ids} for s in store.samples()],
                "annotators": store.annotators(),
                "rubrics": [r.model_dump(mode="json") for r in self.rubrics(run_id)]}

    def run_data(self, run_id: str) -> RunData:
        """The run as the reports read it (its trials from this view's cache)."""
        rs = self.store(run_id).run_store()
        manifest = rs.current_manifest()
        return RunData(path=rs.path, manifest=manifest, metrics=rs.read_metrics(),
                       records=list(self.records(run_id).values()), suite=load_suite(manifest))

    def scorecard(self, run_id: str) -> dict[str, Any]:
        """What the run's page opens on (as report.html does): the scorecard of its headline metrics and where it
        fails most (:mod:`knowgap.report.scorecard`, :mod:`knowgap.report.causes`), and the kinds of its headline
        plots (``headline.svg?kind=``)."""
        run = self.run_data(run_id)
        sc = scorecard([run])
        return {"scorecard": sc.model_dump(mode="json"), "causes": failure_causes(run).model_dump(mode="json"),
                "plots": _kinds(sc.cards[0])}

    def comparison(self, a: str, b: str) -> Comparison:
        """``knowgap compare A B`` (cached until either run's trials change)."""
        keys = tuple(self._key(r) for r in (a, b))
        cached = self._comparisons.get((a, b))
        if cached is not None and cached[:2] == keys:
            return cached[2]
        result = compare_runs(self.run_data(a), self.run_data(b), reps=COMPARE_REPS, budget_s=COMPARE_BUDGET_S)
        self._comparisons[(a, b)] = (keys[0], keys[1], result)
        return result

    def compare_scorecard(self, a: str, b: str) -> dict[str, Any]:
        """The compare page's top: B's scorecard against baseline A (each change, its CI and significance)."""
        comparison = self.comparison(a, b)
        run_a, run_b = self.run_data(a), self.run_data(b)
        sc = scorecard([run_a, run_b], comparison=comparison)
        return {"scorecard": sc.model_dump(mode="json"), "method": comparison.method,
                "causes": against(failure_causes(run_b), run_a).model_dump(mode="json"),
                "plots": _kinds(sc.cards[0]) if sc.cards else []}

    def headline_svg(self, run_id: str, kind: str, baseline: str | None = None) -> str:
        """The run's headline plot of one kind (against ``baseline`` when given), as an SVG document."""
        if baseline is None:
            card = scorecard([self.run_data(run_id)]).cards[0]
        else:
            comparison = self.comparison(baseline, run_id)
            card = scorecard([self.run_data(baseline), self.run_data(run_id)], comparison=comparison).cards[0]
        charts = [c for k, c in zip(_kinds(card), headline_charts(card), strict=True) if k == kind]
        if not charts:
            raise KnowgapError(f"run {run_id} has no headline {kind} to plot (kinds: {', '.join(_kinds(card))})")
        return charts[0]

    def _key(self, run_id: str) -> tuple[int, int]:
        file = self.store(run_id).run_path / "trials.jsonl"
        stat = file.stat() if file.exists() else None
        return (stat.st_mtime_ns, stat.st_size) if stat else (0, 0)

    def failures(self, run_id: str) -> dict[str, Any]:
        """What went wrong: the run's wrong per-metric verdicts and errored trials (``knowgap show RUN --failed``)."""
        rs = self.store(run_id).run_store()
        manifest = rs.current_manifest()
        run = RunData(path=rs.path, manifest=manifest, metrics=[], records=list(self.records(run_id).values()),
                      suite=load_suite(manifest))
        return list_failures(run, limit=FAILURES_SHOWN).model_dump(mode="json")

    def trials(self, run_id: str, field: str) -> list[dict[str, Any]]:
        store = self.store(run_id)
        humans = store.human_labels(field)
        rubric = next((r for r in self.rubrics(run_id) if field in r.weights), None)
        rows = []
        for r in self.records(run_id).values():
            verdict = verdict_key(r.scores[field]) if r.scores.get(field) is not None else None
            labels = {a: verdict_key(v[r.trial_id]) for a, v in humans.items() if r.trial_id in v}
            if rubric is None:
                disagree = verdict is not None and any(v != verdict for v in labels.values())
            else:  # a person's 1-5 score at least one point from the judge's (put on 1-5)
                points = judge_points(r, field, rubric)
                disagree = points is not None and any(abs(float(v) - points) >= 1 for v in labels.values())
            rows.append({"trial_id": r.trial_id, "case_id": r.case_id, "config_id": r.config_id,
                         "repeat": r.repeat, "status": r.status, "verdict": verdict, "labels": labels,
                         "disagree": disagree})
        return rows

    def trial(self, run_id: str, trial_id: str) -> dict[str, Any]:
        records = self.records(run_id)
        if trial_id not in records:
            raise KnowgapError(f"run {run_id} has no trial '{trial_id}'")
        history = [e.model_dump(mode="json", exclude={"context"}) for e in self.store(run_id).history(trial_id)]
        judges = {ref: v[trial_id] for ref, v in self.store(run_id).judge_verdicts(None).items() if trial_id in v}
        return {"record": records[trial_id].model_dump(mode="json"), "history": history, "judges": judges,
                "reference": self.reference(run_id, records[trial_id])}

    def add_label(self, run_id: str, body: dict[str, Any]) -> dict[str, Any]:
        for key in ("trial_id", "field", "annotator", "value"):
            if not isinstance(body.get(key), str):
                raise KnowgapError(f"label request: '{key}' must be a string")
        records = self.records(run_id)
        if body["trial_id"] not in records:
            raise KnowgapError(f"run {run_id} has no trial '{body['trial_id']}'")
        kind = field_kind(r.scores.get(body["field"]) for r in records.values())
        value = parse_value(body["value"])
        if any(body["field"] in r.weights for r in self.rubrics(run_id)):
            check_rubric_label(body["field"], value)
        record = records[body["trial_id"]]
        event = self.store(run_id).add(record, body["field"], body["annotator"], value, source="web", kind=kind,
                                       sample=body.get("sample") if isinstance(body.get("sample"), str) else None,
                                       reference=self.reference(run_id, record))
        return event.model_dump(mode="json", exclude={"context"})

    def rubric(self, run_id: str, name: str | None = None) -> dict[str, Any]:
        """The rubric report (people's 1-5 scores against the judge, totals against the automatic scores)."""
        return rubric_report(self.store(run_id), name, reps=300).model_dump(mode="json")

    def agreement(self, run_id: str, field: str, by: str | None = None) -> dict[str, Any]:
        fields = sorted({k for r in self.records(run_id).values() for k, v in r.scores.items() if v is not None})
        if field not in fields:
            raise KnowgapError(f"run {run_id} has no judge field '{field}' (fields: {', '.join(fields) or 'none'})")
        report = agreement_report(self.store(run_id), field, reps=500, by=by)
        return {**report.model_dump(mode="json"),
                "card_status": {c.judge: assess(c).model_dump(include={"status", "reason"}) for c in report.cards}}

    def compare(self, a: str, b: str) -> dict[str, Any]:
        sides = {}
        for name, run_id in (("a", a), ("b", b)):
            rs = self.store(run_id).run_store()
            sides[name] = (rs.current_manifest(), rs.read_metrics(), self.records(run_id))
        metrics: dict[tuple[str, str], dict[str, Any]] = {}
        for name, (_m, ms, _r) in sides.items():
            for mv in ms:
                row = metrics.setdefault((mv.group, mv.name), {"group": mv.group, "name": mv.name})
                row[name] = mv.model_dump()
        pairs: dict[str, dict[str, Any]] = {}
        for name, (_m, _ms, records) in sides.items():
            for r in records.values():
                key = f"{r.case_id}|{r.config_id}|r{r.repeat}"
                row = pairs.setdefault(key, {"key": key})
                row[name] = {"trial_id": r.trial_id, "status": r.status, "scores": r.scores, "response": ""}
        suites = {name: load_suite(m) for name, (m, _ms, _r) in sides.items()}
        for row in pairs.values():  # each run's answer to the same part: the one the first wrong verdict is about
            got = {name: sides[name][2][row[name]["trial_id"]] for name in ("a", "b") if name in row}
            for name, text in zip(("a", "b"), paired_responses(suites["a"], got.get("a"), suites["b"], got.get("b")),
                                  strict=True):
                if name in row:
                    row[name]["response"] = text
        return {"a": sides["a"][0].model_dump(mode="json"), "b": sides["b"][0].model_dump(mode="json"),
                "metrics": [metrics[k] for k in sorted(metrics)], "trials": [pairs[k] for k in sorted(pairs)]}
