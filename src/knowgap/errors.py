"""The one exception family a user sees: each message says what failed, where, and how to fix it."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from pydantic import ValidationError


class KnowgapError(Exception):
    """An error meant for the person running knowgap; the CLI prints it on one line and exits non-zero."""


class InputError(KnowgapError):
    """A bad input: names the file, the record (line) and the field, and what was expected."""

    def __init__(self, file: str, message: str, *, line: int | None = None, field: str | None = None) -> None:
        where = file
        if line is not None:
            where += f", line {line}"
        if field:
            where += f", field '{field}'"
        super().__init__(f"{where}: {message}")
        self.file, self.line, self.field = file, line, field

    @classmethod
    def from_validation(cls, file: str, exc: ValidationError, *, line: int | None = None) -> InputError:
        """The first problem pydantic found, as an InputError naming file, line and field."""
        field, message = first_validation_error(exc)
        return cls(file, message, line=line, field=field or None)


def first_validation_error(exc: ValidationError) -> tuple[str, str]:
    """(dotted field path, message) of the first problem in a pydantic ValidationError."""
    first = exc.errors()[0]
    return ".".join(str(p) for p in first["loc"]), first["msg"]


def did_you_mean(name: str, known: Sequence[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``known`` (or the one ``name`` begins), or nothing."""
    close = difflib.get_close_matches(name, list(known), n=1) or [k for k in known if name and k.startswith(name)][:1]
    return f" (did you mean '{close[0]}'?)" if close else ""


def parse_choices(values: Sequence[str], known: Sequence[str], flag: str) -> list[str]:
    """``start,end`` (or the flag repeated) as a list of known names, in the order given, without repeats."""
    out: list[str] = []
    for item in values:
        for name in (part.strip() for part in item.split(",")):
            if not name:
                continue
            if name not in known:
                raise KnowgapError(f"{flag} '{name}': unknown{did_you_mean(name, known)} (known: {', '.join(known)})")
            if name not in out:
                out.append(name)
    if not out:
        raise KnowgapError(f"{flag}: give at least one of {', '.join(known)}")
    return out


def exception_text(exc: BaseException) -> str:
    """What ``exc`` says, never empty: its message; when it has none (httpx's ``ReadError()`` for a connection the
    server reset), its class name and the first message among the exceptions that caused it
    (``ReadError (ConnectionResetError: [Errno 104] Connection reset by peer)``), or its class name alone."""
    said = str(exc).strip()
    if said:
        return said
    seen: set[int] = {id(exc)}
    inner = exc.__cause__ or exc.__context__
    while inner is not None and id(inner) not in seen:
        seen.add(id(inner))
        inner_said = str(inner).strip()
        if inner_said:
            return f"{type(exc).__name__} ({type(inner).__name__}: {inner_said})"
        inner = inner.__cause__ or inner.__context__
    return type(exc).__name__
