"""``knowgap extract-matrix`` runs the extract suite per summarizer x judge pair through ``knowgap.run``, which the
command line hands to the suite's commands (``CommandGroups.run``: no module below the API imports it)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import knowgap_cli, scripted


def test_the_matrix_command_runs_a_pair(tmp_path: Path) -> None:
    reply = json.dumps({"summary": "Good food.", "overall_sentiment": "positive",
                        "contains_conflicting_signals": False})
    model = scripted(tmp_path, reply)
    runs = tmp_path / "runs"
    done = knowgap_cli("extract-matrix", "--summarizer", model, "--judge", model, "--sample", "2", "--runs", "1",
                       "--runs-dir", str(runs))
    assert done.returncode == 0, done.stderr
    assert "extract · summarizer x judge" in done.stdout
    [manifest] = [json.loads(p.read_text(encoding="utf-8")) for p in runs.glob("*/manifest.json")]
    assert manifest["config"]["suite"] == "extract" and manifest["trials_ok"] == 2
