"""anthropic:MODEL through the official SDK, against a local HTTP server speaking the Messages API."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from knowgap.engine.gateway import ModelClient, RetryPolicy
from knowgap.models import ChatRequest, create_model
from knowgap.models.errors import ModelUnavailableError

pytest.importorskip("anthropic")
pytestmark = pytest.mark.server


class _Handler(BaseHTTPRequestHandler):
    received: list[dict[str, Any]] = []
    fail_first: list[int] = [0]

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        key = self.headers.get("x-api-key") or self.headers.get("authorization", "")
        self.received.append({"path": self.path, "body": body, "key": key})
        if self.fail_first[0] > 0:
            self.fail_first[0] -= 1
            self._send(529, {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})
            return
        text = "上下文没有提到。" if "周日" in body["messages"][-1]["content"] else "Paris"
        self._send(200, {"id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
                         "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                         "stop_sequence": None, "usage": {"input_tokens": 11, "output_tokens": 2}})

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def messages_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Handler.received = []
    _Handler.fail_first = [0]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-123456")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}")
    try:
        yield _Handler.received
    finally:
        server.shutdown()
        server.server_close()


def test_messages_api_call(messages_server: list[dict[str, Any]]) -> None:
    model = create_model("anthropic:claude-test")
    request = ChatRequest.simple("Capital of France?", system="Be brief.", max_tokens=20, stop=["\n\n"])
    response = asyncio.run(model.chat(request))
    assert response.text == "Paris"
    assert response.usage.prompt_tokens == 11 and response.usage.completion_tokens == 2
    sent = messages_server[0]
    assert sent["path"] == "/v1/messages"
    assert sent["body"]["system"] == "Be brief."
    assert sent["body"]["messages"] == [{"role": "user", "content": "Capital of France?"}]
    assert sent["body"]["stop_sequences"] == ["\n\n"]
    assert "sk-ant-test-key-123456" in sent["key"]


def test_overloaded_is_retried_by_the_model_client(messages_server: list[dict[str, Any]]) -> None:
    _Handler.fail_first[0] = 2
    client = ModelClient(create_model("anthropic:claude-test"), run_id="r", cache=None, use_cache=False,
                         concurrency=1, retry=RetryPolicy(max_retries=3, base_s=0.01))
    record = asyncio.run(client.call("target", ChatRequest.simple("东港市周日有夜班车吗？"), 0))
    assert record.response is not None and record.response.text == "上下文没有提到。"
    assert record.attempts == 3
    assert len(messages_server) == 3  # the SDK's own retries are off: every attempt is ours


def test_missing_key_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ModelUnavailableError, match="ANTHROPIC_API_KEY"):
        create_model("anthropic:claude-test")
