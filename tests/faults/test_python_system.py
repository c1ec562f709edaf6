"""A user's ``python:`` system that hangs or returns the wrong shape (issue 35, items 1 and 2): the run ends, and
says why, instead of hanging for ever or scoring a wrong answer as an empty one.

Real CLI runs in subprocesses of real ``.py`` files written to ``tmp_path``; the return shapes also in-process
through the real provider.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from knowgap.models.errors import PermanentModelError
from knowgap.models.registry import create_model
from knowgap.models.types import ChatRequest, ChatResponse
from tests.helpers import knowgap_cli

HANG = "import time\n\ndef hang(request):\n    while True:\n        time.sleep(1)\n"
"""The issue's function: never returns."""

HANG_WHEN_GROUNDED = """import time

def answer(request):
    if "only the context" in request.messages[0].content:  # the starter suite's grounded prompt
        while True:
            time.sleep(1)
    return "I do not know."
"""

ENDS_WITHIN_S = 90.0
"""The subprocess's limit: the run takes about 5 s (2 attempts of 2 s and a back-off); the code before this fix never
ended (asyncio.run joined the hanging thread at shutdown), so any limit tells the two apart."""


def _manifest(runs: Path) -> dict[str, Any]:
    (manifest,) = runs.glob("*/manifest.json")
    data: dict[str, Any] = json.loads(manifest.read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize(("body", "function", "status", "ok"), [
    (HANG, "hang", "failed", 0),
    (HANG_WHEN_GROUNDED, "answer", "finished_with_errors", 2),
], ids=["every-call-hangs", "grounded-calls-hang"])
def test_a_sync_function_that_never_returns_ends_the_run(tmp_path: Path, body: str, function: str, status: str,
                                                         ok: int) -> None:
    system = tmp_path / "bad.py"
    system.write_text(body, encoding="utf-8")
    runs = tmp_path / "runs"
    started = time.monotonic()
    done = knowgap_cli("run", "starter", "--model", f"python:{system}:{function}", "--sample", "2", "--timeout", "2",
                       "--max-retries", "1", "--runs-dir", str(runs), "-q", timeout=ENDS_WITHIN_S)
    took = time.monotonic() - started
    assert done.returncode == 3, (took, done.stdout, done.stderr)
    manifest = _manifest(runs)
    assert manifest["status"] == status and manifest["trials_ok"] == ok
    assert manifest["trials_error"] == 4 - ok
    run = runs / manifest["run_id"]
    assert (run / "metrics.json").is_file() and (run / "report.md").is_file(), "the run ended as runs end"
    cause = manifest["error_causes"][0]["message"]
    assert "no answer within 2s" in cause and "did not return" in cause and "thread was abandoned" in cause, cause
    assert "did not return" in done.stderr and "abandoned" in done.stderr, "the summary says why"


def test_threads_of_a_function_that_always_hangs_stop_being_started(tmp_path: Path) -> None:
    """Every attempt of a hanging function leaves a thread behind; past MAX_ABANDONED of them calls are refused
    (a trial error, not retried) rather than piling up threads for the rest of the run."""
    system = tmp_path / "bad.py"
    system.write_text(HANG, encoding="utf-8")
    runs = tmp_path / "runs"
    # 32 trials, 4 in flight, 2 attempts each at 0.2 s: 64 attempts would leave 64 threads; the 33rd is refused
    done = knowgap_cli("run", "starter", "--model", f"python:{system}:hang", "--timeout", "0.2", "--max-retries", "1",
                       "--concurrency", "4", "--runs-dir", str(runs), "-q", timeout=ENDS_WITHIN_S)
    assert done.returncode == 3, done.stderr
    manifest = _manifest(runs)
    assert manifest["status"] == "failed"
    messages = " | ".join(c["message"] for c in manifest["error_causes"])
    assert "earlier calls did not return within the time-out" in messages, messages
    assert "knowgap starts no new call while 32 or more do" in messages, messages
    assert "no answer within 0.2s" in messages, messages


# return shapes --------------------------------------------------------------------------------------------------

SHAPES = """
class Odd(str):
    def __str__(self):
        return "not the value"

def answer_key(request):
    return {"answer": "hello"}

def empty_dict(request):
    return {}

def none(request):
    pass

def a_list(request):
    return ["hello"]

def a_number(request):
    return 0.5

def raw_bytes(request):
    return b"hello"

def text_not_str(request):
    return {"text": 42}

def text_none(request):
    return {"text": None, "sources": []}

def str_subclass(request):
    return Odd("the value")

def empty_text(request):
    return {"text": ""}

def tool_call_only(request):
    return {"tool_calls": [{"id": "c1", "name": "request_evidence", "arguments": {"path": "crm"}}]}

def exits(request):
    import sys
    sys.exit(3)
"""


def _chat(spec: str) -> ChatResponse:
    model = create_model(spec)

    async def go() -> ChatResponse:
        try:
            return await model.chat(ChatRequest.simple("q"))
        finally:
            await model.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize(("function", "message"), [
    ("answer_key", "returned a dict with no 'text' and no 'tool_calls' (it has keys 'answer')"),
    ("empty_dict", "returned a dict with no 'text' and no 'tool_calls' (it has no keys)"),
    ("text_none", "no 'text' and no 'tool_calls' (it has keys 'text', 'sources')"),
    ("none", "returned None (does the function return its answer?)"),
    ("a_list", "returned list; expected a string"),
    ("a_number", "returned float; expected a string"),
    ("raw_bytes", "returned bytes; expected a string"),
    ("text_not_str", "returned a dict whose 'text' is int, not a string"),
    ("exits", "raised SystemExit: 3"),
])
def test_a_return_value_without_an_answer_is_a_trial_error(tmp_path: Path, function: str, message: str) -> None:
    module = tmp_path / "shapes.py"
    module.write_text(SHAPES, encoding="utf-8")
    with pytest.raises(PermanentModelError) as caught:
        _chat(f"python:{module}:{function}")
    assert message in str(caught.value)


def test_well_defined_return_shapes(tmp_path: Path) -> None:
    module = tmp_path / "shapes.py"
    module.write_text(SHAPES, encoding="utf-8")
    odd = _chat(f"python:{module}:str_subclass")
    assert odd.text == "the value" and type(odd.text) is str, "a str subclass is read as its string value"
    assert _chat(f"python:{module}:empty_text").text == "", "an explicit empty reply is a reply"
    calls = _chat(f"python:{module}:tool_call_only")
    assert calls.text == "" and [c.name for c in calls.tool_calls] == ["request_evidence"]


def test_a_dict_without_text_fails_the_run_instead_of_scoring_an_abstention(tmp_path: Path) -> None:
    """The issue's case: before, status finished, exit 0, abstention_unanswerable 1.0."""
    system = tmp_path / "app.py"
    system.write_text('def answer(request):\n    return {"answer": "hello"}\n', encoding="utf-8")
    runs = tmp_path / "runs"
    done = knowgap_cli("run", "starter", "--model", f"python:{system}:answer", "--sample", "2", "--runs-dir",
                       str(runs), "-q", timeout=ENDS_WITHIN_S)
    assert done.returncode == 3, done.stdout
    manifest = _manifest(runs)
    assert manifest["status"] == "failed" and manifest["trials_ok"] == 0
    assert "no 'text' and no 'tool_calls' (it has keys 'answer')" in done.stderr
    metrics = json.loads((runs / manifest["run_id"] / "metrics.json").read_text(encoding="utf-8"))
    assert all(m["value"] is None for m in metrics if m["name"] == "abstention_unanswerable")
