"""A small JSON client for a code forge's REST API (GitHub, GitLab) over ``urllib``: no dependency, a time-out on
every request, errors that say which request failed and what the server answered, and a token that never
appears in a message (it is masked, with every other secret :func:`knowgap.redaction.redact` knows)."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from knowgap.errors import KnowgapError
from knowgap.redaction import MASK, redact

TIMEOUT_S = 30.0
"""Seconds each request may take (connect and read)."""

_NEXT = re.compile(r'<([^>]+)>;\s*rel="next"')


class ForgeApiError(KnowgapError):
    """A request to the forge's API failed: the message names the request, the status and the server's words."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class ForgeApi:
    """Requests to one API base (``https://api.github.com``, ``https://gitlab.example/api/v4``)."""

    base: str
    headers: dict[str, str]
    """Sent with every request; the credential among them is :attr:`secret`."""
    secret: str
    what: str = "API"
    """The forge's name in messages (``GitHub API``)."""
    requests: list[str] = field(default_factory=list)
    """``METHOD path`` of every request sent, in order (what the command prints with --verbose)."""

    def _mask(self, text: str) -> str:
        if self.secret:
            text = text.replace(self.secret, MASK)
        return redact(text)

    def _url(self, path: str) -> str:
        return path if path.startswith(("http://", "https://")) else self.base.rstrip("/") + path

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[Any, dict[str, str]]:
        """(decoded JSON, response headers) of one request; :class:`ForgeApiError` when it fails."""
        url = self._url(path)
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"Accept": "application/json", "User-Agent": "knowgap-ci", **self.headers}
        if data is not None:
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        shown = self._mask(f"{method} {url}")
        self.requests.append(shown)
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
                raw = resp.read()
                answer_headers = {k.lower(): v for k, v in resp.headers.items()}
        except urllib.error.HTTPError as exc:
            detail = _server_message(exc.read()[:2000])
            raise ForgeApiError(self._mask(f"{self.what}: {shown} answered {exc.code} {exc.reason}"
                                           f"{': ' + detail if detail else ''}"), status=exc.code) from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ForgeApiError(self._mask(f"{self.what}: {shown} failed: {reason}")) from None
        try:
            return (json.loads(raw) if raw.strip() else None), answer_headers
        except ValueError:
            raise ForgeApiError(self._mask(f"{self.what}: {shown} answered with no JSON: {raw[:200]!r}")) from None

    def pages(self, path: str) -> list[Any]:
        """Every item of a paginated list, following the ``Link: <...>; rel="next"`` header both forges send."""
        items: list[Any] = []
        url: str | None = path
        for _ in range(100):  # 100 pages of 100: a bound, never reached by a real pull request
            if url is None:
                break
            page, headers = self.request("GET", url)
            if not isinstance(page, list):
                raise ForgeApiError(self._mask(f"{self.what}: GET {self._url(url)} answered {type(page).__name__}, "
                                               "expected a list"))
            items.extend(page)
            match = _NEXT.search(headers.get("link", ""))
            url = match.group(1) if match else None
            if url is not None and url.startswith(("http://", "https://")) and \
                    not url.startswith(self.base.rstrip("/") + "/"):
                # the token goes with every request: never to a host the server names
                raise ForgeApiError(self._mask(f"{self.what}: the next page of {path} is outside {self.base}: {url}"))
        return items


def _server_message(raw: bytes) -> str:
    """The ``message`` (GitHub, GitLab) or ``error`` of a JSON error body, else its start as text."""
    text = raw.decode("utf-8", "replace").strip()
    try:
        doc = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:300]
    if isinstance(doc, dict):
        for key in ("message", "error"):
            if doc.get(key):
                return " ".join(str(doc[key]).split())[:300]
    return " ".join(text.split())[:300]
