"""The injection metrics are counted from the injected runs' stored verdicts (the driver's, part ``injection I
(ATTACK): ...``), in the suite's one pass: a person who re-judges a stored verdict moves the rate and its
breakdown, not only the listing of what went wrong."""

from __future__ import annotations

import gzip
from pathlib import Path

import knowgap
from knowgap.engine.records import MetricValue, TrialRecord, Verdict
from knowgap.injection.metrics import ATTACK_SUCCESS, CLEAN_TASK_SCORE
from knowgap.suites.extract import ExtractSuite
from knowgap.suites.starter import StarterSuite
from tests.fakes.models import Fixed
from tests.helpers import REPO


def _by(metrics: list[MetricValue]) -> dict[tuple[str, str], MetricValue]:
    return {(m.group, m.name): m for m in metrics}


def _rejudged(records: list[TrialRecord], metric: str, to: str) -> tuple[list[TrialRecord], TrialRecord, Verdict]:
    """``records`` with the first scored stored verdict of ``metric`` set to ``to`` (a person's re-judgement), the
    record it is in and the verdict as it was."""
    for i, record in enumerate(records):
        for j, v in enumerate(record.verdicts):
            if v.metric == metric and v.verdict not in ("not_scored", to):
                verdicts = [*record.verdicts[:j], v.model_copy(update={"verdict": to, "why": "re-judged"}),
                            *record.verdicts[j + 1:]]
                changed = record.model_copy(update={"verdicts": verdicts})
                return [*records[:i], changed, *records[i + 1:]], changed, v
    raise AssertionError(f"no scored verdict of {metric} other than {to}")


def test_a_rejudged_attack_verdict_moves_attack_success_its_breakdown_and_the_clean_task_score(
        runs_root: Path) -> None:
    options = {"inject": True, "sample": 4}
    result = knowgap.run("starter", models={"target": Fixed.spec}, providers={Fixed.spec: Fixed("I don't know.")},
                         options=options, runs_root=runs_root, progress=False)
    lines = (result.path / "trials.jsonl").read_text(encoding="utf-8").splitlines()
    records = [TrialRecord.model_validate_json(line) for line in lines if line.strip()]
    suite = StarterSuite(StarterSuite.Options.model_validate(options))
    before = _by(suite.metrics(records))
    assert before == _by(result.metrics)  # the stored run's metrics.json

    # a person finds that one injected run did follow the hidden instruction (the check said it did not)
    rejudged, record, was = _rejudged(records, ATTACK_SUCCESS, "wrong")
    assert was.part is not None and was.part.startswith("injection ")
    group = record.config_id
    after = _by(suite.metrics(rejudged))
    old, new = before[(group, ATTACK_SUCCESS)], after[(group, ATTACK_SUCCESS)]
    assert (old.value, new.n) == (0.0, old.n) and new.value == 1 / old.n
    index = int(was.part.split()[1])
    position = record.output["injection"]["runs"][index]["injection"]["position"]
    breakdown = after[(group, f"{ATTACK_SUCCESS}:position={position}")]
    assert breakdown.value == 1 / before[(group, f"{ATTACK_SUCCESS}:position={position}")].n

    # and that one clean run did not do the task after all
    rejudged, record, _ = _rejudged(records, CLEAN_TASK_SCORE, "wrong")
    old, new = before[(record.config_id, CLEAN_TASK_SCORE)], _by(suite.metrics(rejudged))[(record.config_id,
                                                                                            CLEAN_TASK_SCORE)]
    assert new.n == old.n and round((old.value - new.value) * old.n) == 1  # type: ignore[operator]


def test_a_rejudged_flip_moves_extracts_flip_rate_and_its_breakdown() -> None:
    path = REPO / "tests" / "fixtures" / "metric_identity" / "runs" / "extract-defences" / "trials.jsonl.gz"
    records = [TrialRecord.model_validate_json(line) for line in gzip.decompress(path.read_bytes()).decode()
               .splitlines() if line.strip()]
    suite = ExtractSuite(ExtractSuite.Options.model_validate({}))
    before = _by(suite.metrics(records))
    rejudged, record, was = _rejudged(records, "flip_rate", "wrong")  # a person sees a flip the labels hid
    after = _by(suite.metrics(rejudged))
    group, position = record.config_id, record.output["position"]
    for name in ("flip_rate", f"flip_rate:position={position}"):
        old, new = before[(group, name)], after[(group, name)]
        assert new.n == old.n and round((new.value - old.value) * old.n) == 1, name  # type: ignore[operator]
    assert after[(group, "flip_above_noise")].value != before[(group, "flip_above_noise")].value
