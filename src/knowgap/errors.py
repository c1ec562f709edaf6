"""The one exception family a user sees: each message says what failed, where, and how to fix it."""

from __future__ import annotations

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
