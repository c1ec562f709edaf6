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
_BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-~+/]{8,}=*")
_KEY_TAIL = re.compile(r"k-(?:ant-|proj-)?[A-Za-z0-9_\-]{8,}")
"""An API-key shape after its first letter (a key is sk-, pk- or rk- at the start of a word, then an optional ant- or
proj-, then 8 or more letters, digits, _ or -): it starts with a literal, which ``re`` finds fast (the whole shape,
with its word boundary and alternation, cost about 0.6 ms on 32 KB of text); :func:`_mask_key_shapes` checks the
letter before it."""
_CREDENTIAL = re.compile(r"(?i)((?:api[_-]?key|x-api-key|authorization|access_token)[\"']?\s*[:=]\s*[\"']?"
                         r"(?:(?:bearer|basic|token|digest)\s+)?)(?!(?:bearer|basic|token|digest)\s)[^\s\"',}&]{6,}")
"""An auth scheme word (Basic, Token...) is kept and the credential after it masked."""
_CREDENTIAL_WORDS = ("apikey", "api_key", "api-key", "authorization", "access_token")
"""``_CREDENTIAL`` can only match a text whose lower-cased form holds one of these (case-insensitive patterns are
slow in ``re``: about 1 ms on 32 KB of text, so it runs only on the texts that hold one)."""
_API_WORDS_BYTES = tuple(word.encode() for word in _CREDENTIAL_WORDS if word.startswith("api"))
_KELVIN = "\u212a"
"""KELVIN SIGN, the one non-ASCII character besides İ (whose lower case adds a combining dot, so it cannot make a
trigger word) that lower-cases to an ASCII letter (k), which the case-insensitive patterns match: a text holding it
is lower-cased as a str, not as bytes (which lower-case ASCII only)."""
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


def _mask_key_shapes(text: str) -> str:
    """Every API-key shape masked (the shape in :data:`_KEY_TAIL`'s note), found from the literal ``k-``
    of each: the same matches, left to right, each starting one character before its ``k-`` (s, p or r, not
    preceded by a word character)."""
    parts: list[str] = []
    kept = pos = 0
    while (match := _KEY_TAIL.search(text, pos)) is not None:
        start = match.start() - 1
        if start >= kept and text[start] in "spr" and (start == 0 or not _is_word(text[start - 1])):
            parts += (text[kept:start], MASK)
            kept = pos = match.end()
        else:
            pos = match.start() + 1
    if not parts:
        return text
    parts.append(text[kept:])
    return "".join(parts)


def _is_word(char: str) -> bool:
    """A character ``\\w`` matches in a ``str`` pattern."""
    return char.isalnum() or char == "_"


def redact(text: str) -> str:
    """Return ``text`` with every secret we can recognise replaced by ``***``."""
    if not text:
        return text
    for value in _secret_values():
        text = text.replace(value, MASK)
    bearer, key, credential, at = _triggers(text)  # each pattern runs only on a text holding its trigger
    if bearer:
        text = _BEARER.sub(lambda m: m.group(1) + MASK, text)
    if key:
        text = _mask_key_shapes(text)
    if credential:
        text = _CREDENTIAL.sub(lambda m: m.group(1) + MASK, text)
    return _URL_USERINFO.sub(_mask_userinfo, text) if at and _HAS_USERINFO.search(text) else text


def _triggers(text: str) -> tuple[bool, bool, bool, bool]:
    """Whether ``text`` holds each pattern's trigger: ``bearer``, ``k-``, a credential word (case-insensitive) and
    ``@``; most texts hold none, and most patterns are slow. A text that is ASCII but for a few characters (curly
    quotes in English) is stored with 2 bytes a character, which makes lower-casing and scanning it as a str cost
    about twice as much as its UTF-8 bytes (a 32 KB trial line of English policy text: 236 -> 136 µs a redaction);
    a text of Chinese is scanned faster as a str. Which way is picked from about 512 characters taken evenly."""
    sample = text[::len(text) // 512 + 1]
    if not text.isascii() and len(sample.encode("utf-8", "surrogatepass")) < 1.25 * len(sample) \
            and _KELVIN not in text:
        data = text.encode("utf-8", "surrogatepass")
        lower = data.lower()
        return (b"bearer" in lower, b"k-" in data,
                b"authorization" in lower or b"access_token" in lower
                or (b"api" in lower and any(word in lower for word in _API_WORDS_BYTES)), b"@" in data)
    lowered = text.lower()
    return ("bearer" in lowered, "k-" in text, any(word in lowered for word in _CREDENTIAL_WORDS), "@" in text)


def redact_obj(obj: Any) -> Any:
    """Redact every string inside a JSON-like structure."""
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, dict):
        return {k: redact_obj(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [redact_obj(v) for v in obj]
    return obj
