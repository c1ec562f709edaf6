"""Stored starter runs with scripted responses, for the label and web tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import knowgap
from knowgap.models.errors import PermanentModelError
from tests.fakes.models import Failing
from tests.helpers import scripted

SCRIPT = '<script>window.__pwned = 1; document.title = "pwned"</script><img src=x onerror="window.__pwned=2">'
RESPONSES = [
    "I don't know.",
    "The answer is 42.",
    SCRIPT + " The context does not say.",
    "上下文中没有提到。",
    "It opens at 9.",
]


def starter_run(tmp_path: Path, runs_root: Path, responses: list[str] | None = None) -> knowgap.RunResult:
    """A finished starter run (32 trials) whose responses cycle through ``responses``."""
    return knowgap.run("starter", models={"target": scripted(tmp_path, *(responses or RESPONSES))},
                       runs_root=runs_root, use_cache=False)


def cli(*args: str, stdin: str = "", timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The real knowgap command line, with text on its stdin."""
    return subprocess.run([sys.executable, "-m", "knowgap", *args], input=stdin, capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"}, timeout=timeout, check=False)


def errored_run(runs_root: Path) -> knowgap.RunResult:
    """A finished starter run whose every trial errored: the model refuses each call for good."""
    down = Failing(PermanentModelError("test:down: connection refused"), spec="test:down")
    return knowgap.run("starter", models={"target": down.spec}, providers={down.spec: down}, runs_root=runs_root,
                       options={"sample": 3}, use_cache=False)
