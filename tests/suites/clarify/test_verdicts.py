"""Per-trial verdicts of the clarify suite count to its metrics, over a run whose one scripted model asks, answers
flatly and says nothing useful (and, as the judges, gives replies that do not parse)."""

from __future__ import annotations

from pathlib import Path

import knowgap
from knowgap.suites.clarify.verdicts import LOWER_IS_BETTER
from tests.helpers import scripted
from tests.verdict_counts import assert_verdicts_count_as_metrics

from .test_suite_engine import ASK


def test_verdicts_count_as_the_metrics(tmp_path: Path, data: Path, runs_root: Path) -> None:
    target = scripted(tmp_path, ASK["en"], "You will get compensation of two months' wages.", ASK["zh"],
                      '{"outcome": "dodges"}', "根据《劳动合同法》第87条，您可以获得赔偿金。")
    result = knowgap.run("clarify", models={"target": target}, runs_root=runs_root,
                         options={"data": str(data), "prompts": ["plain", "cautious"], "max_tokens": 200})
    kinds = assert_verdicts_count_as_metrics(result, runs_root, LOWER_IS_BETTER, {
        "clarification_rate", "unqualified_answer_rate", "false_flag_rate", "dangerous_assertion_rate",
        "truncation_rate"})
    assert kinds["right"] and kinds["wrong"]
