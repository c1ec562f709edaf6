"""How an HTTP provider's failures become model errors: which are transient (retried, honouring Retry-After)
and which are permanent. Shared by every provider that speaks HTTP (``openai``, ``openai-compat``, ``http``)."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

from knowgap.errors import exception_text
from knowgap.models.errors import ModelError, PermanentModelError, TransientModelError
from knowgap.models.http_pool import HttpAnswer
from knowgap.redaction import redact

TRANSIENT_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524}


def retry_after_seconds(value: str | None) -> float | None:
    """A Retry-After header in seconds: delta-seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


class EndpointUnreachable(TransientModelError):
    """The endpoint itself failed (a time-out, a refused or lost connection), not the request: a replica pool
    (:mod:`knowgap.models.replicas`) takes such an endpoint out and sends the call to another one."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out
        """No answer in time (rather than a refused or lost connection): the endpoint may hold other calls."""


def transport_error(spec: str, url: str, exc: httpx.HTTPError) -> TransientModelError:
    """A time-out or a lost / refused connection: transient."""
    if isinstance(exc, httpx.TimeoutException):
        return EndpointUnreachable(redact(f"{spec}: timed out ({type(exc).__name__})"), timed_out=True)
    return EndpointUnreachable(redact(f"{spec}: cannot reach {url}: {exception_text(exc)}"))


def status_error(spec: str, url: str, resp: HttpAnswer) -> ModelError:
    """A non-200 answer: 429, 5xx and the like are transient (with the server's Retry-After), the rest permanent."""
    detail = redact(resp.text)[:300]
    message = redact(f"{spec}: HTTP {resp.status_code} from {url}: ") + detail
    if resp.status_code in TRANSIENT_STATUS or resp.status_code >= 500:
        return TransientModelError(message, status=resp.status_code,
                                   retry_after=retry_after_seconds(resp.headers.get("retry-after")))
    return PermanentModelError(message, status=resp.status_code)
