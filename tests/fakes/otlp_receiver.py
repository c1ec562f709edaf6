"""A real OTLP/HTTP trace receiver on 127.0.0.1 (standard library HTTP server + the protobuf classes of
opentelemetry-proto, which come with the OTLP/HTTP exporter).

In a test: ``with otlp_receiver() as rx:`` gives its ``endpoint`` (for ``OTEL_EXPORTER_OTLP_ENDPOINT``); every
``POST /v1/traces`` body is kept raw (``rx.bodies``, to search for text that must not be there), decoded as an
``ExportTraceServiceRequest`` and flattened into ``rx.spans()``; each request's headers are kept too.
``otlp_receiver(reject=401)`` refuses every export instead, repeating the credential it was sent in its answer.

As a process (a collector apart from the run, for benchmarks): ``python tests/fakes/otlp_receiver.py --port P``
answers the same way, decodes each body and counts its spans; ``GET /count`` returns the count so far.
"""

from __future__ import annotations

import argparse
import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def value_of(value: AnyValue) -> Any:
    """An OTLP attribute value as Python (a list for an array)."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [value_of(v) for v in value.array_value.values]
    if kind is None:
        return None
    return getattr(value, kind)


@dataclass
class Span:
    """One received span, flattened: ids as hex, attributes and events' attributes as dicts."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    status_code: int
    status_message: str
    events: list[tuple[str, dict[str, Any]]]
    resource: dict[str, Any]
    scope: str


@dataclass
class Received:
    endpoint: str = ""
    """The receiver's base URL (``http://127.0.0.1:PORT``): the exporter adds ``/v1/traces``."""
    bodies: list[bytes] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    requests: list[ExportTraceServiceRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    span_count: int = 0

    def spans(self) -> list[Span]:
        with self.lock:
            requests = list(self.requests)
        out = []
        for request in requests:
            for rs in request.resource_spans:
                resource = {a.key: value_of(a.value) for a in rs.resource.attributes}
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        out.append(Span(
                            name=s.name, trace_id=s.trace_id.hex(), span_id=s.span_id.hex(),
                            parent_span_id=s.parent_span_id.hex(), kind=s.kind, start_ns=s.start_time_unix_nano,
                            end_ns=s.end_time_unix_nano, attributes={a.key: value_of(a.value) for a in s.attributes},
                            status_code=s.status.code, status_message=s.status.message,
                            events=[(e.name, {a.key: value_of(a.value) for a in e.attributes}) for e in s.events],
                            resource=resource, scope=ss.scope.name))
        return out


def _handler(received: Received, keep: bool, reject: int | None = None) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            if self.path != "/v1/traces":
                self.send_error(404)
                return
            if reject is not None:  # a collector that refuses the request, and leaks its credential doing so
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with received.lock:
                    received.headers.append({k.lower(): v for k, v in self.headers.items()})
                text = f"rejected {self.headers.get('Authorization', '')}".encode()
                self.send_response(reject)
                self.send_header("Content-Length", str(len(text)))
                self.end_headers()
                self.wfile.write(text)
                return
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            n = sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)
            with received.lock:
                received.span_count += n
                if keep:
                    received.bodies.append(body)
                    received.headers.append({k.lower(): v for k, v in self.headers.items()})
                    received.requests.append(request)
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def do_GET(self) -> None:  # noqa: N802
            text = str(received.span_count).encode()
            self.send_response(200 if self.path == "/count" else 404)
            self.send_header("Content-Length", str(len(text)))
            self.end_headers()
            self.wfile.write(text)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
            pass

    return Handler


@contextmanager
def otlp_receiver(port: int = 0, reject: int | None = None) -> Iterator[Received]:
    """A receiver in a thread of this process; yields what it received (``endpoint`` set on it). ``reject``: answer
    every export with that HTTP status and a body that repeats the request's Authorization header."""
    received = Received()
    server = ThreadingHTTPServer(("127.0.0.1", port), _handler(received, keep=True, reject=reject))
    received.endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield received
    finally:
        server.shutdown()
        server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), _handler(Received(), keep=False))
    server.serve_forever()


if __name__ == "__main__":
    main()
