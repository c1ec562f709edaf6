"""Stored starter runs with scripted responses, for the label and web tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import knowgap

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
    file = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.jsonl"
    file.write_text("".join(json.dumps({"response": r}, ensure_ascii=False) + "\n" for r in responses or RESPONSES),
                    encoding="utf-8")
    return knowgap.run("starter", models={"target": f"scripted:{file}"}, runs_root=runs_root, use_cache=False)


def cli(*args: str, stdin: str = "", timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The real knowgap command line, with text on its stdin."""
    return subprocess.run([sys.executable, "-m", "knowgap", *args], input=stdin, capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"}, timeout=timeout, check=False)


def errored_run(runs_root: Path) -> knowgap.RunResult:
    """A finished starter run whose every trial errored: the model refuses each call for good."""
    from knowgap.models.base import ChatModel
    from knowgap.models.errors import PermanentModelError
    from knowgap.models.types import ChatRequest, ChatResponse

    class Down(ChatModel):
        spec = "test:down"

        async def chat(self, request: ChatRequest) -> ChatResponse:
            raise PermanentModelError("test:down: connection refused")

    down = Down()
    return knowgap.run("starter", models={"target": down.spec}, providers={down.spec: down}, runs_root=runs_root,
                       options={"sample": 3}, use_cache=False)
