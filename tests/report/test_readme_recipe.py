"""The README's CI recipe runs as written (with a scripted model): gate and compare fail the job on a
regression, and every file it promises is written."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import knowgap
from tests.helpers import REPO, write_jsonl

README = REPO / "README.md"


def recipe() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("A CI recipe")
    return re.search(r"```sh\n(.*?)```", text[start:], re.S).group(1)  # type: ignore[union-attr]


def run_recipe(folder: Path, model: str) -> subprocess.CompletedProcess[str]:
    script = recipe()
    # gate.yaml is the commented block at the top of the recipe
    (folder / "gate.yaml").write_text("\n".join(line[2:] for line in script.splitlines()
                                                if line.startswith("#  ")) + "\n", encoding="utf-8")
    shell = f'knowgap() {{ "{sys.executable}" -m knowgap "$@"; }}\nMODEL="{model}"\n' + script
    return subprocess.run(["bash", "-c", shell], cwd=folder, capture_output=True, text=True, timeout=300,
                          env={**os.environ}, check=False)


def test_recipe_passes_then_catches_a_regression(tmp_path: Path) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", [{"response": "I don't know."}, {"response": "I don't know."}])
    # the baseline: main's run (abstains everywhere: passes abstention, fails over-abstention)
    base = knowgap.run("starter", models={"target": f"scripted:{good}"}, options={"sample": 16},
                       runs_root=tmp_path / "main-runs")
    (tmp_path / "baseline").mkdir()
    shutil.copytree(base.path, tmp_path / "baseline" / "run")
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"response": "42"}])
    proc = run_recipe(tmp_path, f"scripted:{bad}")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for name in ("gate-junit.xml", "gate.md", "compare.md", "compare.html", "summary.md"):
        assert (tmp_path / name).exists(), name
    assert "gate failed" in proc.stdout
    compare = (tmp_path / "compare.md").read_text(encoding="utf-8")
    assert "| prompt=plain | 0 | 8 | 0.00781 |" in compare  # 8 unanswerable cases per prompt regressed
    assert "abstention\\_unanswerable | 100.0% | 0.0% | -100.0 pp" in compare


def test_recipe_exits_3_when_trials_errored(tmp_path: Path) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", [{"response": "I don't know."}])
    base = knowgap.run("starter", models={"target": f"scripted:{good}"}, options={"sample": 16},
                       runs_root=tmp_path / "main-runs")
    (tmp_path / "baseline").mkdir()
    shutil.copytree(base.path, tmp_path / "baseline" / "run")
    answers_nothing = write_jsonl(tmp_path / "none.jsonl", [{"request_hash": "0" * 64, "response": "never"}])
    proc = run_recipe(tmp_path, f"scripted:{answers_nothing}")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "32 of 32 trials errored" in proc.stderr
    assert (tmp_path / "gate.md").exists() and (tmp_path / "summary.md").exists()
