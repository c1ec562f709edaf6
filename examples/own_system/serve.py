"""Serve the example system (rag_app.py) as a JSON service, the way a product team's API might look, so knowgap
can evaluate it over HTTP with an ``http:`` spec (standard library only).

    python examples/own_system/serve.py --port 9000

- ``POST /chat``: knowgap's default shape: ``{"messages": [...], ...}`` in, ``{"text": "..."}`` out
  (spec ``http://127.0.0.1:9000/chat``);
- ``POST /ask``: a service with its own shape: ``{"question": "..."}`` in, ``{"data": {"answer": "..."}}`` out
  (spec ``http://127.0.0.1:9000/ask#request=question&response=data.answer``);
- ``POST /review``: the review extractor in the default shape.
- ``GET /health``: 200.
"""

from __future__ import annotations

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rag_app import answer, extract_review  # noqa: E402


def _request(messages: list[dict[str, Any]]) -> SimpleNamespace:
    return SimpleNamespace(messages=[SimpleNamespace(role=m.get("role", "user"), content=m.get("content", ""))
                                     for m in messages])


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def _send(self, status: int, payload: Any) -> None:
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        self._send(200 if self.path == "/health" else 404, {"ok": self.path == "/health"})

    def do_POST(self) -> None:  # noqa: N802
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        except ValueError:
            self._send(400, {"error": "body is not JSON"})
            return
        if self.path == "/chat":
            self._send(200, {"text": answer(_request(body.get("messages") or []))})
        elif self.path == "/review":
            self._send(200, {"text": extract_review(_request(body.get("messages") or []))})
        elif self.path == "/ask":
            reply = answer(_request([{"role": "user", "content": str(body.get("question", ""))}]))
            self._send(200, {"data": {"answer": reply}})
        else:
            self._send(404, {"error": f"no route {self.path}"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9000)
    args = parser.parse_args()
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    print(f"example system on http://{args.host}:{server.server_address[1]}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
