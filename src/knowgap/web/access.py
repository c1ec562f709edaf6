"""Who may use the web app: the Host names it answers to, the token it asks for, the Origin a write may come from.

- Bound to a loopback address (the default, 127.0.0.1), it answers only requests whose ``Host`` names this
  machine (a page of another site whose name was re-pointed at 127.0.0.1 cannot read runs: DNS rebinding) and
  needs no token unless one is given.
- Bound to any other address (``--host 0.0.0.0``, a LAN address, a host name), anyone on the network could reach
  it, so it needs a token: given (``--token`` or ``KNOWGAP_SERVE_TOKEN``) or generated and printed once. Every
  request must carry it: ``Authorization: Bearer TOKEN``, or the cookie a browser gets by opening ``/?token=TOKEN``
  once.
- A write (any method but GET and HEAD) whose ``Origin`` header names another site than the ``Host`` it was sent
  to is refused: a page of another site cannot label.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

from knowgap.errors import KnowgapError

TOKEN_ENV = "KNOWGAP_SERVE_TOKEN"
TOKEN_COOKIE = "knowgap_token"
TOKEN_QUERY = "token"
MIN_TOKEN_CHARS = 16
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
SAFE_METHODS = frozenset({"GET", "HEAD"})


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or name given to ``--host``) is this machine only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(host_header: str) -> str:
    """The name in a ``Host`` header, without its port (``[::1]:8765`` -> ``::1``), lower case."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


@dataclass(frozen=True)
class Access:
    """The access rules of one server. ``allowed_hosts`` None: any ``Host`` (bound off loopback, where the token
    guards it); ``token`` None: no token asked (loopback only)."""

    allowed_hosts: frozenset[str] | None
    token: str | None
    token_generated: bool = False

    @classmethod
    def for_host(cls, host: str, token: str | None = None) -> Access:
        """The rules for a server bound to ``host``: a token given is always required; off loopback, one is
        generated when none is given."""
        if token is not None:
            token = token.strip()
            if len(token) < MIN_TOKEN_CHARS or not token.isprintable() or " " in token:
                raise KnowgapError(f"the web app's token must be at least {MIN_TOKEN_CHARS} printable characters "
                                   "without spaces (--token or KNOWGAP_SERVE_TOKEN)")
        loopback = is_loopback(host)
        generated = token is None and not loopback
        if generated:
            token = secrets.token_urlsafe(32)
        allowed = LOOPBACK_NAMES | {host.strip("[]").lower()} if loopback else None
        return cls(allowed_hosts=allowed, token=token, token_generated=generated)

    def host_ok(self, host_header: str | None) -> bool:
        return self.allowed_hosts is None or host_name(host_header or "") in self.allowed_hosts

    def token_ok(self, authorization: str | None, cookie: str | None) -> bool:
        """Whether a request carries the token (always, when none is asked)."""
        if self.token is None:
            return True
        scheme, _, given = (authorization or "").partition(" ")
        if scheme.lower() == "bearer" and self.matches(given.strip()):
            return True
        return self.matches(cookie)

    def matches(self, given: str | None) -> bool:
        """Whether ``given`` is the token (compared in constant time)."""
        return self.token is not None and given is not None and hmac.compare_digest(
            given.encode("utf-8", "surrogateescape"), self.token.encode("utf-8"))

    @staticmethod
    def origin_ok(method: str, origin: str | None, host_header: str | None) -> bool:
        """A write is accepted without an ``Origin`` (scripts, curl) or with one naming the host it was sent to;
        ``Origin: null`` (a sandboxed page, a file) and any other site are refused."""
        if method.upper() in SAFE_METHODS or origin is None:
            return True
        parts = urlsplit(origin.strip())
        return (parts.scheme in ("http", "https") and bool(parts.netloc)
                and parts.netloc.lower() == (host_header or "").strip().lower())
