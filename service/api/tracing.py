"""OpenTelemetry traces, off unless the standard variables turn them on (``OTEL_TRACES_EXPORTER=otlp``
or ``console``; ``OTEL_SDK_DISABLED=true`` wins). Off, nothing of OpenTelemetry is imported and a
stage costs a shared no-op. On, each request is a server span that continues the caller's W3C
``traceparent``, with a child span per stage (service/support/traced_stages.py) and per room of a batch.

Safe under gunicorn's gevent workers:
- the span processor (and its export thread) is made in each worker on first use, never in the
  master: a thread made before the fork does not run in the child;
- spans live in ``contextvars``, which each greenlet has its own of: concurrent requests of one
  worker never see each other's spans;
- export is OTLP over HTTP by ``requests`` on gevent's patched sockets, from the batch processor's
  thread (a greenlet once patched): a collector down or slow costs retries there, never an answer's
  time, and the bounded queue drops spans rather than wait.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from flask import Flask, Response, g, request

from service.api import logs
from service.api.auth import caller_name
from service.support import traced_stages
from service.texts import Text

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer

EXPORTERS = ("otlp", "console")
PROTOCOL_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
"""The signal's own variable wins over the general one, as the SDK reads them."""


class TracingSettingError(ValueError):
    """An OTEL_* variable asks for what this service cannot do: it says so at start."""


def enabled(env: Mapping[str, str] = os.environ) -> bool:
    """Whether the standard variables turn tracing on; an exporter or protocol it lacks is refused."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporter = env.get("OTEL_TRACES_EXPORTER", "none").strip().lower()
    if exporter in ("", "none"):
        return False
    if exporter not in EXPORTERS:
        raise TracingSettingError(Text("setting.exporter", exporter=exporter))
    variable = next((v for v in PROTOCOL_VARIABLES if env.get(v)), PROTOCOL_VARIABLES[-1])
    protocol = env.get(variable, "http/protobuf")
    if exporter == "otlp" and protocol != "http/protobuf":
        raise TracingSettingError(Text("setting.protocol", variable=variable, protocol=protocol))
    return True


_made: tuple[int, Any, Tracer] | None = None
"""(pid, provider, tracer) of the process that made them: a forked worker makes its own."""


def tracer() -> Tracer:
    """This process's tracer, its provider and span processor made here on first use."""
    global _made  # noqa: PLW0603 - one provider a process, made lazily after the fork
    if _made is None or _made[0] != os.getpid():
        provider = _provider()
        _made = (os.getpid(), provider, provider.get_tracer("maubinh"))
    return _made[2]


def _provider() -> Any:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

    from service import version

    resource = Resource.create({"service.name": "maubinh", "service.version": version()})  # OTEL_SERVICE_NAME wins
    provider = TracerProvider(resource=resource, shutdown_on_exit=False)  # shutdown() below, as a worker leaves
    exporter: SpanExporter
    if os.environ.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "console":
        exporter = ConsoleSpanExporter()
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def flush(seconds: float = 5) -> None:
    """Send this process's finished spans now (tests, a worker leaving)."""
    if _made is not None and _made[0] == os.getpid():
        _made[1].force_flush(int(seconds * 1000))


def shutdown() -> None:
    """Flush and stop this process's span processor, if it made one (gunicorn's worker_exit)."""
    if _made is not None and _made[0] == os.getpid():
        _made[1].shutdown()


def _stage_span(name: str, attributes: dict[str, str | int]) -> AbstractContextManager[object]:
    return tracer().start_as_current_span(name, attributes=attributes)


def register(app: Flask) -> None:
    """When tracing is on: a server span a request, its stages' spans, its ids in the log line."""
    if not enabled():
        return
    from opentelemetry import context, trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    propagator = TraceContextTextMapPropagator()
    traced_stages.watch(_stage_span)

    @app.before_request
    def begin() -> None:
        parent = propagator.extract(carrier={k.lower(): v for k, v in request.headers.items()})
        span = tracer().start_span(
            f"{request.method} {logs.route()}",
            context=parent,
            kind=trace.SpanKind.SERVER,
            attributes={"http.request.method": request.method, "http.route": logs.route()},
        )
        g.trace_span = span
        g.trace_token = context.attach(trace.set_span_in_context(span))

    @app.after_request
    def status(response: Response) -> Response:
        span = g.get("trace_span")
        if span is not None:
            span.set_attribute("http.response.status_code", response.status_code)
            span.set_attribute("maubinh.caller", caller_name())
            if response.status_code >= 500:
                span.set_status(trace.Status(trace.StatusCode.ERROR))
        return response

    @app.teardown_request
    def end(error: BaseException | None) -> None:
        span = g.pop("trace_span", None)
        if span is not None:
            span.end()
            context.detach(g.pop("trace_token"))


def log_fields() -> dict[str, Any]:
    """The request's trace and span ids (W3C's hex), when it has a span."""
    span = g.get("trace_span")
    if span is None:
        return {}
    ids = span.get_span_context()
    return {"trace_id": f"{ids.trace_id:032x}", "span_id": f"{ids.span_id:016x}"}
