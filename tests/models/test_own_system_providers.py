"""The user's own system as the target (issue 17): ``python:MODULE:FUNCTION`` in-process and ``http:URL`` over
a real JSON service on 127.0.0.1, evaluated by real suites."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import knowgap
from knowgap.errors import KnowgapError
from knowgap.models.errors import ModelUnavailableError, PermanentModelError
from knowgap.models.http_json import json_path
from knowgap.models.registry import create_model
from knowgap.models.types import ChatRequest
from tests.helpers import REPO, free_port, knowgap_cli, wait_for_http

EXAMPLE = REPO / "examples" / "own_system"
RAG = f"python:{EXAMPLE / 'rag_app.py'}:answer"
EXTRACT = f"python:{EXAMPLE / 'rag_app.py'}:extract_review"


def write_module(path: Path, body: str) -> Path:
    path.write_text(body, encoding="utf-8")
    return path


def chat(spec: str, request: ChatRequest) -> Any:
    model = create_model(spec)

    async def go() -> Any:
        try:
            return await model.chat(request)
        finally:
            await model.aclose()

    return asyncio.run(go())


# python: ---------------------------------------------------------------------------------------------------

def test_sync_async_and_dict_returning_functions(tmp_path: Path) -> None:
    module = write_module(tmp_path / "app.py", """
import asyncio

def plain(request):
    return "echo: " + request.messages[-1].content

async def later(request):
    await asyncio.sleep(0)
    return {"text": "async " + request.messages[-1].content, "usage": {"prompt_tokens": 3, "completion_tokens": 2},
            "tool_calls": [{"id": "c1", "type": "function",
                            "function": {"name": "request_evidence", "arguments": "{\\"path\\": \\"crm\\"}"}}]}
later.supports_tools = True
""")
    request = ChatRequest.simple("hello")
    assert chat(f"python:{module}:plain", request).text == "echo: hello"
    response = chat(f"python:{module}:later", request)
    assert response.text == "async hello" and response.usage.completion_tokens == 2
    assert response.tool_calls[0].name == "request_evidence" and response.tool_calls[0].arguments == {"path": "crm"}
    assert create_model(f"python:{module}:later").supports_tools
    assert not create_model(f"python:{module}:plain").supports_tools


def test_an_importable_module_works_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_module(tmp_path / "my_qa_app.py", "def answer(request):\n    return 'from a module'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert chat("python:my_qa_app:answer", ChatRequest.simple("q")).text == "from a module"


@pytest.mark.parametrize(("spec", "message"), [
    ("python:no_such_module_xyz:answer", "cannot import module no_such_module_xyz"),
    ("python:{dir}/missing.py:answer", "no Python file"),
    ("python:{dir}/app.py:nope", "has no function nope"),
    ("python:answer", "expected python:MODULE:FUNCTION"),
])
def test_bad_python_specs_say_what_is_wrong(tmp_path: Path, spec: str, message: str) -> None:
    write_module(tmp_path / "app.py", "def answer(request):\n    return 'x'\n")
    with pytest.raises(ModelUnavailableError, match=message):
        create_model(spec.format(dir=tmp_path))


def test_a_function_that_raises_is_a_trial_error_with_its_traceback(tmp_path: Path, runs_root: Path) -> None:
    module = write_module(tmp_path / "broken.py", """
def answer(request):
    return lookup(request.messages[-1].content)

def lookup(question):
    raise RuntimeError("vector store unavailable")
""")
    result = knowgap.run("starter", models={"target": f"python:{module}:answer"}, options={"sample": 2},
                         runs_root=runs_root)
    assert result.manifest.trials_error == result.manifest.trials_total == 4
    record = knowgap.iter_trials(result.run_id, runs_root)[0]
    assert record.status == "error" and record.error is not None
    assert "RuntimeError: vector store unavailable" in record.error
    assert "in lookup" in record.error and "broken.py" in record.error, "the traceback is stored"
    assert record.calls[0].attempts == 1, "an exception of the user's system is not retried"


def test_a_function_returning_garbage_is_a_clear_error(tmp_path: Path) -> None:
    module = write_module(tmp_path / "app.py", "def answer(request):\n    return 42\n")
    with pytest.raises(PermanentModelError, match="returned int; expected a string"):
        chat(f"python:{module}:answer", ChatRequest.simple("q"))


def test_editing_the_function_is_a_cache_miss(tmp_path: Path, runs_root: Path) -> None:
    module = write_module(tmp_path / "app.py", "def answer(request):\n    return \"I don't know.\"\n")
    spec = f"python:{module}:answer"
    assert knowgap.run("starter", models={"target": spec}, runs_root=runs_root).provider_calls == 32
    assert knowgap.run("starter", models={"target": spec}, runs_root=runs_root).provider_calls == 0
    write_module(module, "def answer(request):\n    return '20:00'\n")
    again = knowgap.run("starter", models={"target": spec}, runs_root=runs_root)
    assert again.provider_calls == 32
    assert {r.calls[0].response.text for r in knowgap.iter_trials(again.run_id, runs_root)
            if r.calls[0].response} == {"20:00"}


@pytest.mark.slow  # embeds the knowledge base (the smallest, 29 facts) with e5 (CPU)
def test_the_example_rag_function_under_the_abstain_suite(runs_root: Path) -> None:
    result = knowgap.run("abstain", models={"target": RAG},
                         options={"kb": "policybench:medishield", "retrieval": ["rag"], "prompts": ["conservative"],
                                  "sample": 8},
                         runs_root=runs_root)
    assert result.manifest.status == "finished", result.manifest
    values = {m.name: m for m in result.metrics if m.group == "rag/conservative"}
    assert values["parse_failure_rate"].value == 0.0, "the example answers in the suite's JSON format"
    assert values["abstention_rate"].n == 8
    # with the answering fact left out, the example's coverage threshold makes it abstain most of the time
    assert values["abstention_rate"].value is not None and values["abstention_rate"].value >= 0.5


def test_the_example_review_extractor_under_the_extract_suite(runs_root: Path) -> None:
    result = knowgap.run("extract", models={"target": EXTRACT},
                         options={"kinds": ["normal", "adversarial"], "runs": 1, "faithfulness_runs": 0,
                                  "offline_checker": False, "sample": 10},
                         runs_root=runs_root)
    assert result.manifest.status == "finished"
    names = {m.name for m in result.metrics}
    assert {"sentiment_accuracy", "flip_rate", "parse_failure_rate"} <= names
    assert next(m for m in result.metrics if m.name == "parse_failure_rate").value == 0.0


# http: -----------------------------------------------------------------------------------------------------

@pytest.fixture
def example_service(tmp_path: Path) -> Iterator[str]:
    """examples/own_system/serve.py as a real server process; yields its base URL."""
    port = free_port()
    with (tmp_path / "service.log").open("wb") as log:
        proc = subprocess.Popen([sys.executable, str(EXAMPLE / "serve.py"), "--port", str(port)], stdout=log,
                                stderr=subprocess.STDOUT)
        try:
            wait_for_http(f"http://127.0.0.1:{port}/health", timeout=30, proc=proc)
            yield f"http://127.0.0.1:{port}"
        finally:
            proc.terminate()
            proc.wait(timeout=10)


@pytest.mark.server
def test_http_default_shape_and_a_mapped_shape(example_service: str, runs_root: Path) -> None:
    fact = "The library closing time on weekdays is 20:00."
    context = f"Context:\nFact 0: {fact}\n\nQuestion: What is the library closing time on weekdays?"
    request = ChatRequest.simple(context)
    assert chat(f"{example_service}/chat", request).text == fact
    assert chat(f"http:{example_service}/chat", request).text == fact
    mapped = f"{example_service}/ask#request=question&response=data.answer"
    assert chat(mapped, request).text == fact
    assert create_model(mapped).identity() != create_model(f"{example_service}/ask").identity()
    with pytest.raises(PermanentModelError, match="no 'data.missing'"):
        chat(f"{example_service}/ask#request=question&response=data.missing", request)
    with pytest.raises(ModelUnavailableError, match="unknown option 'answer'"):
        create_model(f"{example_service}/ask#answer=x")


@pytest.mark.server
@pytest.mark.slow  # CLI subprocesses
def test_a_suite_runs_against_the_service_from_the_cli(example_service: str, tmp_path: Path, kg_home: Path) -> None:
    runs = tmp_path / "runs"
    env = {"KNOWGAP_HOME": str(kg_home)}
    first = knowgap_cli("run", "extract", "--model", f"{example_service}/review", "--kinds", "normal", "--runs", "1",
                        "--faithfulness-runs", "0", "--sample", "4", "--runs-dir", str(runs), "-q", env=env)
    assert first.returncode == 0, first.stderr
    assert "trials: 4 ok, 0 errors of 4" in first.stdout
    again = knowgap_cli("run", "extract", "--model", f"{example_service}/review", "--kinds", "normal", "--runs", "1",
                        "--faithfulness-runs", "0", "--sample", "4", "--runs-dir", str(runs), "-q", env=env)
    assert "model calls made now: 0" in again.stdout, "the same endpoint is a cache hit"


class _Flaky(BaseHTTPRequestHandler):
    """Answers 503 (Retry-After: 0) to every first request, then 200; 401 to /private without the token."""

    seen: dict[str, int] = {}
    auth: list[str] = []
    lock = threading.Lock()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.lock:
            self.auth.append(self.headers.get("Authorization") or "")
            count = self.seen[body.decode()] = self.seen.get(body.decode(), 0) + 1
        if self.path == "/private" and self.headers.get("Authorization") != "Bearer tok-3141-secret":
            status, payload = 401, {"error": "unauthorised"}
        elif count == 1:
            status, payload = 503, {"error": "warming up"}
        else:
            status, payload = 200, {"text": "ok " + json.loads(body)["messages"][-1]["content"]}
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Retry-After", "0")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def flaky_service() -> Iterator[str]:
    _Flaky.seen, _Flaky.auth = {}, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.server
def test_http_retries_transient_errors_and_keeps_the_token_secret(flaky_service: str, runs_root: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_BEARER", "tok-3141-secret")
    result = knowgap.run("starter", models={"target": f"{flaky_service}/private#bearer=SERVICE_BEARER"},
                         options={"sample": 2}, runs_root=runs_root, max_retries=2)
    assert result.manifest.status == "finished"
    records = knowgap.iter_trials(result.run_id, runs_root)
    assert all(r.calls[0].attempts == 2 for r in records), "each first 503 was retried once"
    assert set(_Flaky.auth) == {"Bearer tok-3141-secret"}
    stored = "".join(p.read_text(encoding="utf-8") for p in result.path.iterdir() if p.is_file())
    assert "tok-3141-secret" not in stored
    monkeypatch.setenv("SERVICE_BEARER", "wrong-token")
    denied = knowgap.run("starter", models={"target": f"{flaky_service}/private#bearer=SERVICE_BEARER"},
                         options={"sample": 1}, runs_root=runs_root, use_cache=False)
    record = knowgap.iter_trials(denied.run_id, runs_root)[0]
    assert record.status == "error" and "HTTP 401" in (record.error or "") and record.calls[0].attempts == 1
    monkeypatch.delenv("SERVICE_BEARER")
    with pytest.raises(KnowgapError, match="SERVICE_BEARER"):
        knowgap.run("starter", models={"target": f"{flaky_service}/private#bearer=SERVICE_BEARER"},
                    options={"sample": 1}, runs_root=runs_root)


def test_json_path() -> None:
    data = {"data": {"answer": "a", "items": [{"t": "x"}, {"t": "y"}]}}
    assert json_path(data, "data.answer") == "a"
    assert json_path(data, "$.data.items[1].t") == "y"
    assert json_path(data, "data.items.0.t") == "x"
    with pytest.raises(KeyError, match="nope"):
        json_path(data, "data.nope")
