"""A fake GitHub and GitLab REST API on 127.0.0.1 (http.server in a thread) for the CI steps' tests: it keeps
comments (notes) per pull (merge) request, pages its lists 30 at a time with a ``Link: rel="next"`` header as
both forges do, checks the token, records every request, and answers a chosen status when told to fail."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fakes.serving import serving

PAGE = 30

_GH_LIST = re.compile(r"^/repos/([^/]+/[^/]+)/issues/(\d+)/comments$")
_GH_ONE = re.compile(r"^/repos/([^/]+/[^/]+)/issues/comments/(\d+)$")
_GL_LIST = re.compile(r"^/api/v4/projects/([^/]+)/merge_requests/(\d+)/notes$")
_GL_ONE = re.compile(r"^/api/v4/projects/([^/]+)/merge_requests/(\d+)/notes/(\d+)$")


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    """Lower-cased names."""
    body: Any


@dataclass
class Forge:
    """The server's state: comments by thread key, the token it accepts, the failures it is told to answer."""

    token: str
    comments: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    fail: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    """METHOD -> (status, JSON body) to answer instead of doing it."""
    before_post: list[str] = field(default_factory=list)
    """Bodies another job posts just before the next POST is handled (a race between two runs)."""
    next_base: str | None = None
    """Where the Link header sends the next page (default: this server)."""
    next_id: int = 1000
    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def thread(self, key: str) -> list[dict[str, Any]]:
        return self.comments.setdefault(key, [])

    def seed(self, key: str, bodies: list[str]) -> None:
        for body in bodies:
            self.next_id += 1
            self.thread(key).append({"id": self.next_id, "body": body, "user": {"login": "someone"}})

    def writes(self) -> list[Request]:
        return [r for r in self.requests if r.method != "GET"]


def _handler(forge: Forge) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, doc: Any, headers: dict[str, str] | None = None) -> None:
            raw = json.dumps(doc).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(raw)

        def _authorized(self, gitlab: bool) -> bool:
            if gitlab:
                return self.headers.get("PRIVATE-TOKEN") == forge.token
            return self.headers.get("Authorization") == f"Bearer {forge.token}"

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body: dict[str, Any] = json.loads(raw) if raw else {}
            parts = urlsplit(self.path)
            with forge.lock:
                headers = {k.lower(): v for k, v in self.headers.items()}
                forge.requests.append(Request(self.command, self.path, headers, body))
            if self.command in forge.fail:
                status, doc = forge.fail[self.command]
                # a server that echoes the request's headers back, as some proxies do: the token must be masked
                self._send(status, {**doc, "request_headers": dict(self.headers.items())})
                return
            gitlab = parts.path.startswith("/api/v4/")
            if not self._authorized(gitlab):
                self._send(401, {"message": "Bad credentials"})
                return
            if (m := (_GH_LIST.match(parts.path) or _GL_LIST.match(parts.path))) is not None:
                key = f"{m.group(1)}#{m.group(2)}"
                if self.command == "GET":
                    page = int(parse_qs(parts.query).get("page", ["1"])[0])
                    items = forge.thread(key)[(page - 1) * PAGE:page * PAGE]
                    headers = {}
                    if page * PAGE < len(forge.thread(key)):
                        nxt = f"{forge.next_base or forge.url}{parts.path}?per_page={PAGE}&page={page + 1}"
                        headers["Link"] = f'<{nxt}>; rel="next", <{forge.url}{parts.path}?page=1>; rel="first"'
                    self._send(200, items, headers)
                    return
                if self.command == "POST":
                    with forge.lock:
                        for other in forge.before_post:
                            forge.next_id += 1
                            forge.thread(key).append({"id": forge.next_id, "body": other,
                                                      "user": {"login": "knowgap-bot"}})
                        forge.before_post.clear()
                        forge.next_id += 1
                        item = {"id": forge.next_id, "body": body["body"], "user": {"login": "knowgap-bot"},
                                "html_url": f"{forge.url}/{key}#issuecomment-{forge.next_id}"}
                        forge.thread(key).append(item)
                    self._send(201, item)
                    return
            one = _GH_ONE.match(parts.path) or _GL_ONE.match(parts.path)
            if one is not None and self.command in ("PATCH", "PUT", "DELETE"):
                wanted = int(one.group(one.lastindex or 0))
                for items in forge.comments.values():
                    for item in items:
                        if item["id"] == wanted:
                            if self.command == "DELETE":
                                items.remove(item)
                                self.send_response(204)
                                self.end_headers()
                                return
                            item["body"] = body["body"]
                            self._send(200, item)
                            return
            self._send(404, {"message": "Not Found"})

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle

    return Handler


@contextmanager
def fake_forge(token: str) -> Iterator[Forge]:
    forge = Forge(token=token)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(forge))
    forge.url = f"http://127.0.0.1:{server.server_address[1]}"
    with serving(server):
        yield forge
