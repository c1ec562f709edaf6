"""``knowgap serve``: a small local web app on the standard library's HTTP server (no dependencies).

Safety: it binds 127.0.0.1 by default; requests whose Host is not this server's are refused (DNS
rebinding); a label is only accepted as a JSON POST (no cross-site form can send one); every page carries a
Content-Security-Policy allowing only this server's own script and no inline script; and the page renders
model output with textContent, never as HTML.
"""

from __future__ import annotations

import json
import mimetypes
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from knowgap.errors import KnowgapError
from knowgap.paths import runs_dir
from knowgap.redaction import redact
from knowgap.web.data import RunsView

STATIC = Path(str(files("knowgap.web") / "static"))
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


class _Handler(BaseHTTPRequestHandler):
    server: KnowgapServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's signature
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, data: Any, status: int = 200) -> None:
        self._send(status, redact(json.dumps(data, ensure_ascii=False)).encode("utf-8"),
                   "application/json; charset=utf-8")

    def _host_ok(self) -> bool:
        if self.server.allowed_hosts is None:
            return True
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0].strip("[]")
        return host in self.server.allowed_hosts

    def _route(self, method: str) -> None:
        if not self._host_ok():
            self._json({"error": "unknown Host"}, HTTPStatus.FORBIDDEN)
            return
        url = urlsplit(self.path)
        parts = [unquote(p) for p in url.path.split("/") if p]
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        view = self.server.view
        try:
            with self.server.lock:
                if method == "GET" and not parts:
                    self._static("index.html")
                elif method == "GET" and parts[0] == "static" and len(parts) == 2:
                    self._static(parts[1])
                elif method == "GET" and parts == ["api", "runs"]:
                    self._json(view.runs())
                elif method == "GET" and parts[:2] == ["api", "compare"]:
                    self._json(view.compare(query.get("a", ""), query.get("b", "")))
                elif parts[:2] == ["api", "runs"] and len(parts) >= 3:
                    self._run_api(method, parts[2], parts[3:], query)
                else:
                    self._json({"error": "not found"}, HTTPStatus.NOT_FOUND)
        except KnowgapError as exc:
            self._json({"error": str(exc)}, HTTPStatus.BAD_REQUEST)

    def _run_api(self, method: str, run_id: str, rest: list[str], query: dict[str, str]) -> None:
        view = self.server.view
        if method == "GET" and not rest:
            self._json(view.run(run_id))
        elif method == "GET" and rest == ["trials"]:
            self._json(view.trials(run_id, query.get("field", "")))
        elif method == "GET" and rest == ["failures"]:
            self._json(view.failures(run_id))
        elif method == "GET" and rest == ["trial"]:
            self._json(view.trial(run_id, query.get("id", "")))
        elif method == "GET" and rest == ["rubric"]:
            self._json(view.rubric(run_id, query.get("name") or None))
        elif method == "GET" and rest == ["agreement"]:
            self._json(view.agreement(run_id, query.get("field", ""), query.get("by") or None))
        elif method == "POST" and rest == ["labels"]:
            if not (self.headers.get("Content-Type") or "").startswith("application/json"):
                self._json({"error": "labels are sent as application/json"}, HTTPStatus.UNSUPPORTED_MEDIA_TYPE)
                return
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                raise KnowgapError("label request: body is not valid JSON") from None
            if not isinstance(body, dict):
                raise KnowgapError("label request: expected a JSON object")
            self._json(view.add_label(run_id, body), HTTPStatus.CREATED)
        else:
            self._json({"error": "not found"}, HTTPStatus.NOT_FOUND)

    def _static(self, name: str) -> None:
        file = STATIC / name
        if "/" in name or name.startswith(".") or not file.is_file():
            self._json({"error": "not found"}, HTTPStatus.NOT_FOUND)
            return
        ctype = mimetypes.guess_type(name)[0] or "application/octet-stream"
        if ctype.startswith("text/") or ctype.endswith("javascript"):
            ctype += "; charset=utf-8"
        self._send(200, file.read_bytes(), ctype)

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self._route("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._route("POST")


class KnowgapServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], view: RunsView, verbose: bool = False) -> None:
        super().__init__(address, _Handler)
        self.view = view
        self.verbose = verbose
        self.lock = threading.Lock()
        loopback = {"127.0.0.1", "localhost", "::1"}
        # on loopback only requests naming this machine are served (DNS rebinding); bound to another address
        # on purpose (--host), the app is meant to be reached under names we cannot know
        self.allowed_hosts: set[str] | None = loopback if address[0] in loopback else None


def make_server(runs_root: str | Path | None = None, host: str = "127.0.0.1", port: int = 8765,
                verbose: bool = False) -> KnowgapServer:
    root = runs_dir(runs_root)
    if not root.exists():
        raise KnowgapError(f"no runs folder {root}: run a suite first, or pass --runs-dir")
    try:
        return KnowgapServer((host, port), RunsView(root), verbose)
    except OSError as exc:
        raise KnowgapError(f"cannot listen on {host}:{port} ({exc.strerror}); try another --port") from None
