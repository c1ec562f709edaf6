"""OpenTelemetry export of a run (``--otel``): one span per trial, a child span per model call.

Spans follow the OpenTelemetry GenAI semantic conventions (semconv 1.37+: ``gen_ai.provider.name``; the older
``gen_ai.system`` is set too). A trial is an ``invoke_workflow`` span named ``invoke_workflow knowgap.SUITE`` with
the run, suite, case, configuration and trial ids and, when it ends, its status and each verdict
(``knowgap.verdict.METRIC`` = right / wrong / not_scored; attributes, not span events: the conventions'
``gen_ai.evaluation.result`` is a Logs API event, and a span event per verdict cost about 30% more per trial).
A model call is a ``chat`` span named ``chat MODEL`` (kind CLIENT, INTERNAL for in-process models) with the
provider, model, request settings, token usage, finish reason, role, cache hit and attempts; its timing is the
call's. No prompt, answer or verdict reason is exported unless ``content`` (``--otel-content``) is on; then they go
in ``gen_ai.input.messages`` / ``gen_ai.output.messages`` / ``knowgap.verdict_reason.METRIC``, redacted like
everything else (:mod:`knowgap.redaction`). Every string attribute is redacted.

Spans go through the official SDK's OTLP/HTTP exporter in a batch processor (a background thread), which reads
the standard ``OTEL_EXPORTER_OTLP_*`` variables (endpoint, headers, timeout, compression) and ``OTEL_BSP_*``;
``OTEL_SERVICE_NAME`` names the service (default ``knowgap``). The tracer provider is the run's own (the global one
is left alone) unless a Python caller passes one. :meth:`RunTracer.close` flushes at the end of the run; an export
that fails (an unreachable collector) is one warning then, never a failed run: after 3 failed exports in a row
the rest are dropped, so a dead endpoint costs at most 3 export time-outs. The SDK is an optional extra
(``knowgap[otel]``); it is imported only when tracing is on, and with tracing off the engine's cost is one ``None``
check per trial and per call.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from knowgap.engine.records import CallRecord, TrialRecord, Verdict
from knowgap.errors import KnowgapError
from knowgap.redaction import MASK, redact

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
    from opentelemetry.trace import Span, Tracer

    from knowgap.engine.suite import Trial
    from knowgap.models.base import ChatModel
    from knowgap.models.types import ChatRequest

log = logging.getLogger("knowgap.run")

EXTRA = "otel"
"""The optional extra that installs the SDK and the exporter: ``pip install 'knowgap[otel]'``."""
FAILURES_BEFORE_DROPPING = 3
"""Failed exports in a row after which the rest of the run's spans are dropped (and counted)."""
DEFAULT_QUEUE = 16_384
"""Spans the batch processor holds before dropping (the SDK's default is 2,048), unless OTEL_BSP_MAX_QUEUE_SIZE
says otherwise: an instant model ends spans faster than one exporter thread sends them (benchmarks/README.md)."""
_SDK_LOGGERS = ("opentelemetry.exporter.otlp.proto.http.trace_exporter", "opentelemetry.sdk._shared_internal")
"""Where the SDK logs a failed export (each retry) and a full queue (each span): held back while a run is traced,
the first message kept for the one warning at the end."""

K = "knowgap."
"""The prefix of knowgap's own attribute names and values (``knowgap.run.id``, ``knowgap.verdict.METRIC``): what the
GenAI conventions do not name. Written ``K + "run.id"`` so no string in the package reads as a module of knowgap's
(tests/test_code_references.py imports every such string)."""

PROVIDERS = {"openai": "openai", "openai-compat": "openai", "anthropic": "anthropic", "local": "llama.cpp",
             "python": K + "python", "scripted": K + "scripted", "http": K + "http",
             "https": K + "http"}
"""``gen_ai.provider.name`` by spec prefix: the semconv's well-known value where there is one (an
OpenAI-compatible server speaks OpenAI's API), a knowgap name otherwise; a plugin provider gets its prefix."""
IN_PROCESS = frozenset({"local", "python", "scripted"})
"""Spec prefixes of models that run in this process: their call spans are INTERNAL, not CLIENT."""


@dataclass(frozen=True)
class TraceOptions:
    """What ``--otel`` asks for: prompt and answer text (``content``), and a caller's own tracer provider (None:
    the run makes one with the OTLP/HTTP exporter, flushed and shut down when the run ends)."""

    content: bool = False
    provider: Any = None
    """An ``opentelemetry.trace.TracerProvider`` the caller set up (flushed, not shut down, at the end)."""


def check_installed() -> None:
    """Raise a clear error when the OpenTelemetry SDK or its OTLP/HTTP exporter is not installed."""
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter  # noqa: F401
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError as exc:
        raise KnowgapError(f"--otel needs the OpenTelemetry SDK and its OTLP/HTTP exporter, which are not installed "
                           f"({exc}): pip install 'knowgap[{EXTRA}]'") from None


HEADER_VARIABLES = ("OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS")
_SCHEMES = frozenset({"basic", "bearer", "token", "digest"})


def header_secrets() -> list[str]:
    """The values of the exporter's headers (credentials: ``Authorization=Basic ...``), and each word of a value but
    its scheme, longest first: masked like any secret wherever knowgap writes a text it did not make."""
    from urllib.parse import unquote

    found: set[str] = set()
    for variable in HEADER_VARIABLES:
        for part in os.environ.get(variable, "").split(","):
            _, sep, value = part.partition("=")
            value = unquote(value).strip()
            if sep and len(value) >= 6:
                found.add(value)
                found.update(w for w in value.split() if len(w) >= 6 and w.lower() not in _SCHEMES)
    return sorted(found, key=len, reverse=True)


def masked(text: str, secrets: Sequence[str]) -> str:
    """``text`` redacted (:func:`knowgap.redaction.redact`) and every one of ``secrets`` in it masked."""
    text = redact(text)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


class _ExportWatch(logging.Filter):
    """Counts what the exporter sent and failed to send, keeps the SDK's first failure message, and drops the
    rest of the run's spans after :data:`FAILURES_BEFORE_DROPPING` failed exports in a row."""

    def __init__(self, secrets: Sequence[str] = ()) -> None:
        super().__init__()
        self.secrets = secrets
        self.exported = 0
        self.failed = 0
        self.failed_in_a_row = 0
        self.first_problem: str | None = None
        """The SDK's first warning or error."""
        self.reason: str | None = None
        """The first failed request as the HTTP client saw it: the exception, or the status and the answer's start."""
        self.queue_full = False
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        with self._lock:
            if "Queue full" in message:
                self.queue_full = True
            elif self.first_problem is None and record.levelno >= logging.WARNING:
                self.first_problem = masked(message, self.secrets)
        return False

    def note(self, problem: str) -> None:
        """What went wrong with a request to the collector (the SDK's own message may not say)."""
        with self._lock:
            if self.reason is None:
                self.reason = masked(problem, self.secrets)[:300]


def _watched(exporter: SpanExporter, watch: _ExportWatch) -> SpanExporter:
    """``exporter`` behind a counter of its results (a SpanExporter subclass made here: the SDK is imported only
    when tracing is on)."""
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class Watched(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            if watch.failed_in_a_row >= FAILURES_BEFORE_DROPPING:
                watch.failed += len(spans)
                return SpanExportResult.FAILURE
            try:
                result = exporter.export(spans)
            except Exception as exc:  # an exporter bug must not stop the processor's thread
                result = SpanExportResult.FAILURE
                watch.first_problem = watch.first_problem or masked(f"{type(exc).__name__}: {exc}", watch.secrets)
            if result is SpanExportResult.SUCCESS:
                watch.exported += len(spans)
                watch.failed_in_a_row = 0
            else:
                watch.failed += len(spans)
                watch.failed_in_a_row += 1
            return result

        def shutdown(self) -> None:
            exporter.shutdown()

        def force_flush(self, timeout_millis: int = 30_000) -> bool:
            return exporter.force_flush(timeout_millis)

    return Watched()


def _session(watch: _ExportWatch) -> Any:
    """A requests session for the exporter that tells ``watch`` why a request failed (the SDK logs a request that
    ran out of time without its cause: a refused connection, a 401)."""
    import requests

    class Session(requests.Session):
        def request(self, *args: Any, **kwargs: Any) -> Any:
            try:
                response = super().request(*args, **kwargs)
            except Exception as exc:
                watch.note(f"{type(exc).__name__}: {exc}")
                raise
            if response.status_code >= 400:
                watch.note(f"HTTP {response.status_code} {response.reason}: {response.text[:200]}")
            return response

    return Session()


def _otlp_provider(watch: _ExportWatch) -> tuple[Any, str]:
    """A tracer provider exporting through OTLP/HTTP in a batch processor, and the endpoint it sends to."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    named = os.environ.get("OTEL_SERVICE_NAME") or "service.name=" in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
    resource = Resource.create({} if named else {SERVICE_NAME: "knowgap"})
    # a credential provider's session (OTEL_PYTHON_EXPORTER_OTLP_HTTP_*CREDENTIAL_PROVIDER) is the SDK's to make
    providers = [k for k in os.environ if k.startswith("OTEL_PYTHON_EXPORTER_OTLP_HTTP_") and
                 k.endswith("CREDENTIAL_PROVIDER") and os.environ[k]]
    exporter = OTLPSpanExporter(session=None if providers else _session(watch))
    provider = TracerProvider(resource=resource)
    queue = None if os.environ.get("OTEL_BSP_MAX_QUEUE_SIZE") else DEFAULT_QUEUE
    provider.add_span_processor(BatchSpanProcessor(_watched(exporter, watch), max_queue_size=queue))
    return provider, str(getattr(exporter, "_endpoint", "the OTLP endpoint"))


@dataclass(frozen=True)
class _Model:
    """What every call span of one model says about it (worked out once per model)."""

    name: str
    attributes: dict[str, Any]
    kind: Any


class RunTracer:
    """The run's spans: :meth:`trial` around each trial, :meth:`call` around each model call (set on the run's
    model clients), :meth:`close` when the run ends."""

    def __init__(self, options: TraceOptions, *, run_id: str, suite: str, version: str) -> None:
        check_installed()
        from opentelemetry import trace

        self._trace = trace
        self.content = options.content
        self.secrets = header_secrets()
        """The exporter's header values: masked in the prompts and answers of --otel-content and in the warning."""
        self.watch = _ExportWatch(self.secrets)
        self.own_provider = options.provider is None
        self.provider: Any  # the SDK's TracerProvider (force_flush, shutdown) or the caller's
        if options.provider is None:
            self.provider, self.endpoint = _otlp_provider(self.watch)
            for name in _SDK_LOGGERS:
                logging.getLogger(name).addFilter(self.watch)
        else:
            self.provider, self.endpoint = options.provider, "the caller's tracer provider"
        self.tracer: Tracer = self.provider.get_tracer("knowgap", version)
        self.run_id = run_id
        self.suite = suite
        self.workflow = f"knowgap.{suite}"
        self.ended = 0
        """Spans ended (handed to the processor)."""
        self._models: dict[int, _Model] = {}

    # trials -----------------------------------------------------------------------------------
    async def trial(self, trial: Trial, run: Awaitable[TrialRecord]) -> TrialRecord:
        """Await ``run`` (the trial) inside its span, current while it runs so its calls are its children."""
        with self.tracer.start_as_current_span(
                f"invoke_workflow {self.workflow}", kind=self._trace.SpanKind.INTERNAL, record_exception=False,
                set_status_on_exception=False, attributes={
                    "gen_ai.operation.name": "invoke_workflow", "gen_ai.workflow.name": self.workflow,
                    K + "run.id": self.run_id, K + "suite": self.suite,
                    K + "case.id": redact(trial.case.id), K + "config.id": redact(trial.config.id),
                    K + "trial.id": redact(trial.trial_id), K + "repeat": trial.repeat}) as span:
            try:
                record = await run
            except BaseException as exc:  # Ctrl-C, SIGTERM: the trial was stopped, it is run again on resume
                span.set_attributes({K + "trial.status": "interrupted", "error.type": type(exc).__name__})
                span.set_status(self._trace.StatusCode.ERROR, "interrupted")
                self.ended += 1
                raise
            self._end_trial(span, record)
        self.ended += 1
        return record

    def _end_trial(self, span: Span, record: TrialRecord) -> None:
        attributes: dict[str, Any] = {K + "trial.status": record.status, K + "trial.calls": len(record.calls)}
        if record.status == "error":
            attributes["error.type"] = K + "trial_error"
            span.set_status(self._trace.StatusCode.ERROR, masked(record.error or "", self.secrets)[:500])
        by_metric: dict[str, list[Verdict]] = {}
        for verdict in record.verdicts:
            by_metric.setdefault(verdict.metric, []).append(verdict)
        for metric, verdicts in by_metric.items():
            one = len(verdicts) == 1 and verdicts[0].part is None
            # a verdict per part of the trial (an extract case's runs, a turn): a list, in part order
            attributes[f"knowgap.verdict.{metric}"] = verdicts[0].verdict if one else [v.verdict for v in verdicts]
            if not one:
                attributes[f"knowgap.verdict_part.{metric}"] = [redact(v.part or "") for v in verdicts]
            if self.content:  # the reason may quote the answer
                reasons = [masked(v.why, self.secrets) for v in verdicts]
                attributes[f"knowgap.verdict_reason.{metric}"] = reasons[0] if one else reasons
        span.set_attributes(attributes)  # one call: the SDK takes a lock per call

    # model calls ------------------------------------------------------------------------------
    async def call(self, model: ChatModel, role: str, request: ChatRequest,
                   run: Awaitable[CallRecord]) -> CallRecord:
        """Await ``run`` (one model call) inside a ``chat`` span, a child of the trial's span when in one."""
        about = self._models.get(id(model))
        if about is None:
            about = self._models[id(model)] = self._describe(model)
        attributes = {**about.attributes, K + "role": role, "gen_ai.request.temperature": request.temperature,
                      "gen_ai.request.max_tokens": request.max_tokens}
        if request.seed is not None:
            attributes["gen_ai.request.seed"] = request.seed
        if self.content:
            attributes["gen_ai.input.messages"] = masked(json.dumps(
                [{"role": m.role, "parts": [{"type": "text", "content": m.content}]} for m in request.messages],
                ensure_ascii=False), self.secrets)
        span = self.tracer.start_span(about.name, kind=about.kind, attributes=attributes)
        try:
            record = await run
        except BaseException as exc:  # cancelled (Ctrl-C, a time-out above): the span still ends
            span.set_attribute("error.type", type(exc).__name__)
            span.set_status(self._trace.StatusCode.ERROR)
            span.end()
            self.ended += 1
            raise
        self._end_call(span, record)
        span.end()
        self.ended += 1
        return record

    def _end_call(self, span: Span, record: CallRecord) -> None:
        attributes: dict[str, Any] = {K + "cached": record.cached, K + "attempts": record.attempts}
        response = record.response
        if response is None:
            attributes["error.type"] = K + "model_error"
            span.set_attributes(attributes)
            span.set_status(self._trace.StatusCode.ERROR, masked(record.error or "", self.secrets)[:500])
            return
        attributes["gen_ai.usage.input_tokens"] = response.usage.prompt_tokens
        attributes["gen_ai.usage.output_tokens"] = response.usage.completion_tokens
        if response.finish_reason:
            attributes["gen_ai.response.finish_reasons"] = [response.finish_reason]
        if self.content:
            message: dict[str, Any] = {"role": "assistant", "parts": [{"type": "text", "content": response.text}]}
            if response.tool_calls:
                message["parts"] += [{"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.arguments}
                                     for c in response.tool_calls]
            if response.finish_reason:
                message["finish_reason"] = response.finish_reason
            attributes["gen_ai.output.messages"] = masked(json.dumps([message], ensure_ascii=False), self.secrets)
        span.set_attributes(attributes)

    def _describe(self, model: ChatModel) -> _Model:
        from urllib.parse import urlsplit

        spec = model.spec
        prefix, _, rest = spec.partition(":")
        provider = PROVIDERS.get(prefix, prefix)
        described = model.describe()
        name = redact(described.get("model") or rest or spec)
        kind = self._trace.SpanKind.INTERNAL if prefix in IN_PROCESS else self._trace.SpanKind.CLIENT
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": provider, "gen_ai.system": provider,
            "gen_ai.request.model": name, K + "model.spec": redact(spec)}
        url = described.get("base_url") or described.get("url")  # an HTTP model's server (credentials left out)
        if url:
            try:
                where = urlsplit(url)
                host, port = where.hostname, where.port or {"http": 80, "https": 443}.get(where.scheme)
            except ValueError:
                host = port = None
            if host:
                attributes["server.address"] = host
                if port:
                    attributes["server.port"] = port
        return _Model(name=f"chat {name}", kind=kind, attributes=attributes)

    # the end ----------------------------------------------------------------------------------
    def close(self, timeout_s: float = 30.0) -> None:
        """Export what is left (at most ``timeout_s``), shut the run's own provider down, and warn once when spans
        were not exported."""
        started = time.perf_counter()
        try:
            self.provider.force_flush(int(timeout_s * 1000))
            if self.own_provider:
                self.provider.shutdown()
        finally:
            if self.own_provider:
                for name in _SDK_LOGGERS:
                    logging.getLogger(name).removeFilter(self.watch)
        if not self.own_provider:
            return
        lost = self.ended - self.watch.exported
        if lost > 0:
            why = [f"{self.watch.failed} failed to send" if self.watch.failed else "",
                   "the export queue was full (raise OTEL_BSP_MAX_QUEUE_SIZE)" if self.watch.queue_full else ""]
            problem = self.watch.reason or self.watch.first_problem
            first = f"; first problem: {problem}" if problem else ""
            log.warning("--otel: %d of %d spans were not exported to %s (%s)%s; the run itself is complete",
                        lost, self.ended, redact(self.endpoint), ", ".join(w for w in why if w) or "not sent",
                        first)
        log.debug("--otel: flushed in %.2fs", time.perf_counter() - started)
