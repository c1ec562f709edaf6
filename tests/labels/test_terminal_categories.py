"""Terminal labelling of a categorical (non yes/no) judge field on a synthetic stored run."""

from __future__ import annotations

import io
from pathlib import Path

from knowgap.engine.records import TrialRecord
from knowgap.labels.sampling import draw_sample
from knowgap.labels.terminal import choices, label_session
from tests.labels.test_agreement_calibration import stored_run


def test_categorical_field(tmp_path: Path) -> None:
    kinds = ["answer", "refuse", "clarify"]
    records = [TrialRecord(trial_id=f"t{i}", case_id=f"c{i}", config_id="x", scores={"behaviour": kinds[i % 3]},
                           output={"response": f"response {i}"}) for i in range(6)]
    store = stored_run(tmp_path / "runs", records)
    assert choices(store.records(), "behaviour") == [("1", "answer"), ("2", "clarify"), ("3", "refuse")]
    store.write_sample(draw_sample(records, store.run_id, "behaviour", n=3, seed=1))
    lines: list[str] = []
    saved = label_session(store, "ann", stdin=io.StringIO("2\n9\n3\n1\n"), echo=lines.append)
    assert saved == 3
    text = "\n".join(lines)
    assert "[1] answer / [2] clarify / [3] refuse" in text and "unknown answer '9'" in text
    assert "response " in text
    order = store.read_sample("behaviour").trial_ids
    assert store.human_labels("behaviour") == {"ann": {order[0]: "clarify", order[1]: "refuse", order[2]: "answer"}}
    # a second session has nothing left to do
    assert label_session(store, "ann", stdin=io.StringIO(""), echo=lines.append) == 0
    assert "0 to go" in lines[-2]
