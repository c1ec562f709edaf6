"""A resume never mixes two plans (issue 35): when the trials stored in a run are not among the trials knowgap
plans now from the run's options (another sample, other cases or configurations: a sampler that changed
between knowgap versions, a run's options edited), the resume is refused in one line, before any call, and the
run is left as it was; a resume whose plan still holds every stored trial runs the rest."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import knowgap_cli

SYSTEM = """import os, pathlib

def answer(request):
    with open(os.environ["CALLS"], "a", encoding="utf-8") as log:
        log.write("call\\n")
    if os.environ.get("FAIL"):
        raise RuntimeError("down for maintenance")
    return "I do not know."
"""


def _run(tmp_path: Path, system: Path, *args: str, fail: bool) -> tuple[int, str, Path]:
    env = {"CALLS": str(tmp_path / "calls.log"), **({"FAIL": "1"} if fail else {})}
    proc = knowgap_cli(*args, env=env)
    return proc.returncode, proc.stdout + proc.stderr, tmp_path / "runs"


def test_a_resume_whose_plan_no_longer_holds_the_stored_trials_is_refused(tmp_path: Path) -> None:
    system = tmp_path / "system.py"
    system.write_text(SYSTEM, encoding="utf-8")
    runs = tmp_path / "runs"
    code, out, _ = _run(tmp_path, system, "run", "starter", "--model", f"python:{system}:answer", "--sample", "2",
                        "--seed", "0", "--max-retries", "0", "--runs-dir", str(runs), "-q", fail=True)
    assert code == 3, out  # every trial errored: a run to resume
    (run,) = runs.iterdir()
    manifest_file = run / "manifest.json"
    manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    stored = (run / "trials.jsonl").read_bytes()

    # the plan as another knowgap would draw it: the same run, sampled with another seed
    manifest["config"]["seed"] = 7
    manifest_file.write_text(json.dumps(manifest), encoding="utf-8")
    calls_before = (tmp_path / "calls.log").read_text(encoding="utf-8").count("call")
    code, out, _ = _run(tmp_path, system, "resume", run.name, "--runs-dir", str(runs), fail=False)
    assert code == 2, out
    assert "are not among the trials this knowgap plans" in out and "start a new run instead" in out, out
    assert (tmp_path / "calls.log").read_text(encoding="utf-8").count("call") == calls_before  # no call made
    assert (run / "trials.jsonl").read_bytes() == stored

    # the run's own plan: the errored trials are run again and the run finishes
    manifest["config"]["seed"] = 0
    manifest_file.write_text(json.dumps(manifest), encoding="utf-8")
    code, out, _ = _run(tmp_path, system, "resume", run.name, "--runs-dir", str(runs), fail=False)
    assert code == 0, out
    assert json.loads(manifest_file.read_text(encoding="utf-8"))["status"] == "finished"
