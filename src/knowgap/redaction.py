"""Keep secrets out of logs, run stores and reports.

Every string the engine writes that could carry a secret (error messages, URLs, manifests) passes through
:func:`redact`. It removes the values of secret-looking environment variables, credentials inside URLs,
bearer tokens and common API-key shapes.
"""

from __future__ import annotations

import os
import re
from typing import Any

_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)
_PATTERNS = [
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-~+/]{8,}=*"),
    re.compile(r"\b(?:sk|pk|rk)-(?:ant-|proj-)?[A-Za-z0-9_\-]{8,}"),
    # an auth scheme word (Basic, Token...) is kept and the credential after it masked
    re.compile(r"(?i)((?:api[_-]?key|x-api-key|authorization|access_token)[\"']?\s*[:=]\s*[\"']?"
               r"(?:(?:bearer|basic|token|digest)\s+)?)(?!(?:bearer|basic|token|digest)\s)[^\s\"',}&]{6,}"),
]
_TRIGGERS: list[tuple[str, ...]] = [  # pattern i can only match a text holding one of these (lower-cased)
    ("bearer",),
    ("k-",),  # sk-, pk-, rk-
    ("api", "authorization", "access_token"),  # api[_-]?key and x-api-key hold "api"
]
_URL_USERINFO = re.compile(r"(?<=://)[^/\s@]+(?=@)")  # user:password@host, token@host
_HAS_USERINFO = re.compile(r"://[^/\s@]+@")
"""Matches where _URL_USERINFO does; searched first because it starts with a literal, which re finds fast (the
look-behind made every trial line, whose model spec holds an "@", cost about 10 µs)."""
_ENV_REF = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")
MASK = "***"


def _mask_userinfo(match: re.Match[str]) -> str:
    """Credentials inside a URL are masked; a ``${NAME}`` reference to an environment variable (a spec's way
    of keeping the secret out of files, see knowgap.models.registry) is not a secret and stays."""
    secret = match.group(0).rpartition(":")[2]
    return match.group(0) if _ENV_REF.fullmatch(secret) else MASK


_found: tuple[dict[Any, Any], list[str]] | None = None
"""The environment the secret values were last found in (a copy), and those values."""


def _secret_values() -> list[str]:
    """The values of secret-looking environment variables, longest first; found again only when the environment
    changed (comparing it with a copy is a C-level dict comparison, scanning it decodes every variable: that
    scan was the largest cost of a trial in benchmarks/http_concurrency.py)."""
    global _found
    raw = getattr(os.environ, "_data", None)  # CPython's own mapping under os.environ
    if raw is not None and _found is not None and _found[0] == raw:
        return _found[1]
    values = [v for k, v in os.environ.items() if _SECRET_ENV.search(k) and v and len(v) >= 6]
    found = sorted(set(values), key=len, reverse=True)
    if isinstance(raw, dict):
        _found = (dict(raw), found)
    return found


def redact(text: str) -> str:
    """Return ``text`` with every secret we can recognise replaced by ``***``."""
    if not text:
        return text
    for value in _secret_values():
        text = text.replace(value, MASK)
    lower = text.lower()  # a pattern runs only on a text holding its trigger: most texts (a trial line) hold none
    for pattern, triggers in zip(_PATTERNS, _TRIGGERS, strict=True):
        if not any(t in lower for t in triggers):
            continue
        if pattern.groups:
            text = pattern.sub(lambda m: (m.group(1) if m.lastindex else "") + MASK, text)
        else:
            text = pattern.sub(MASK, text)
    return _URL_USERINFO.sub(_mask_userinfo, text) if "@" in text and _HAS_USERINFO.search(text) else text


def redact_obj(obj: Any) -> Any:
    """Redact every string inside a JSON-like structure."""
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, dict):
        return {k: redact_obj(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [redact_obj(v) for v in obj]
    return obj
