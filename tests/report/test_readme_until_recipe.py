"""The README's ``--until decided`` CI recipe runs as written, with a real ``python:`` system that abstains on every
question: it fails over_abstention long before the 16th case, the run says where it stopped, and the gate it
writes agrees."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

README = REPO / "README.md"


def recipe() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("A CI gate that pays for the decision")
    return re.search(r"```sh\n(.*?)```", text[start:], re.S).group(1)  # type: ignore[union-attr]


@pytest.mark.slow
def test_the_until_recipe_stops_early_and_fails_the_job(tmp_path: Path) -> None:
    script = recipe()
    (tmp_path / "gate-until.yaml").write_text("\n".join(line[2:] for line in script.splitlines()
                                                        if line.startswith("#  ")) + "\n", encoding="utf-8")
    (tmp_path / "abstainer.py").write_text(
        "def reply(request):\n    return \"I don't know: the context does not say.\"\n", encoding="utf-8")
    shell = (f'knowgap() {{ "{sys.executable}" -m knowgap "$@"; }}\n'
             f'MODEL="python:{tmp_path / "abstainer.py"}:reply"\n' + script)
    proc = subprocess.run(["bash", "-c", shell], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ}, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    found = re.search(r"stopped after (\d+) of 16 cases", proc.stdout)
    assert found and int(found.group(1)) < 16, proc.stdout
    assert "every gated metric decided" in proc.stdout
    junit = (tmp_path / "gate-junit.xml").read_text(encoding="utf-8")
    assert 'failures="' in junit and "violates &lt;= 0.25" in junit
