"""Errors raised by model providers. Transient ones are retried by the model client; the rest are not."""

from __future__ import annotations

from knowgap.errors import KnowgapError


class ModelError(KnowgapError):
    """A model call failed. ``transient`` errors (429, 5xx, time-outs, lost connections) are retried."""

    transient: bool = False

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class TransientModelError(ModelError):
    transient = True

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message, status=status)
        self.retry_after = retry_after
        """Seconds the server asked us to wait (its Retry-After header), if it said."""


class PermanentModelError(ModelError):
    transient = False


class ModelUnavailableError(PermanentModelError):
    """The model cannot be used at all here (pack not installed, library missing, bad spec)."""
