"""OpenTelemetry against a real `maubinh serve` and a local OTLP/HTTP receiver: a caller's trace
continues, each stage and each room of a batch is a span, the log line carries the ids, and the
gevent traps (a span processor made before the fork, greenlets sharing context, an exporter stuck
on a collector that is down) do not bite."""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from helpers import golden_cases
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from server import free_port, start

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]

pytestmark = pytest.mark.slow


class Receiver:
    """An OTLP/HTTP trace receiver on loopback: keeps every span it is sent, by trace id."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = ExportTraceServiceRequest.FromString(body)
                with receiver.lock:
                    for resource in request.resource_spans:
                        for scope in resource.scope_spans:
                            for span in scope.spans:
                                receiver.spans.append(
                                    {
                                        "trace_id": span.trace_id.hex(),
                                        "span_id": span.span_id.hex(),
                                        "parent": span.parent_span_id.hex(),
                                        "name": span.name,
                                        "attributes": {a.key: a.value for a in span.attributes},
                                    }
                                )
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def trace(self, trace_id: str, count: int, seconds: float = 15) -> list[dict[str, Any]]:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self.lock:
                found = [s for s in self.spans if s["trace_id"] == trace_id]
            if len(found) >= count:
                return found
            time.sleep(0.1)
        return found


def traced(endpoint: str, **more: str) -> dict[str, str]:
    return {
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "100",
        "MAUBINH_LOG_REQUESTS": "on",
        **more,
    }


@pytest.fixture(scope="module")
def receiver() -> Receiver:
    return Receiver()


@pytest.fixture(scope="module")
def served(receiver: Receiver) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    base, process = start(traced(receiver.endpoint))
    yield base, process
    if process.poll() is None:
        process.kill()


def post(base: str, path: str, body: Any, traceparent: str, key: str | None = None) -> tuple[int, bytes]:
    import urllib.request

    request = urllib.request.Request(
        base + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "traceparent": traceparent}
        | ({"Authorization": f"Bearer {key}"} if key else {}),
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.read()


def ids(k: int) -> tuple[str, str]:
    """A made-up caller's trace id and span id."""
    return f"{k:032x}".replace("0", "a", 4), f"{k:016x}".replace("0", "b", 2)


def test_the_server_span_names_the_caller(receiver: Receiver) -> None:
    base, process = start(traced(receiver.endpoint, MAUBINH_API_KEYS="trace-key"))  # one caller, default
    try:
        trace_id, parent = ids(7)
        assert post(base, "/v1/score", E1, f"00-{trace_id}-{parent}-01", key="trace-key")[0] == 200
        server = next(s for s in receiver.trace(trace_id, 5) if s["name"] == "POST /v1/score")
        assert server["attributes"]["maubinh.caller"].string_value == "default"
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_a_callers_trace_continues_with_a_span_per_stage(
    served: tuple[str, subprocess.Popen[bytes]], receiver: Receiver
) -> None:
    base, _ = served
    trace_id, parent = ids(1)
    assert post(base, "/v1/score", E1, f"00-{trace_id}-{parent}-01")[0] == 200
    spans = receiver.trace(trace_id, 5)
    by_name = {s["name"]: s for s in spans}
    assert set(by_name) == {"POST /v1/score", "parse", "validate", "settle", "serialize"}
    server = by_name["POST /v1/score"]
    assert server["parent"] == parent
    assert server["attributes"]["http.route"].string_value == "/v1/score"
    assert server["attributes"]["http.response.status_code"].int_value == 200
    assert server["attributes"]["maubinh.caller"].string_value == "anonymous"  # no callers: no key
    assert all(by_name[n]["parent"] == server["span_id"] for n in ("parse", "validate", "settle", "serialize"))


def test_a_batch_has_a_span_per_room(served: tuple[str, subprocess.Popen[bytes]], receiver: Receiver) -> None:
    base, _ = served
    trace_id, parent = ids(2)
    assert (
        post(base, "/v1/score/batch", {"rooms": [E1, E1, {**E1, "ruleset": "nope"}]}, f"00-{trace_id}-{parent}-01")[0]
        == 200
    )
    spans = receiver.trace(trace_id, 1 + 1 + 3 + 3 + 2)
    server = next(s for s in spans if s["name"] == "POST /v1/score/batch")
    rooms = sorted((s for s in spans if s["name"] == "room"), key=lambda s: s["attributes"]["index"].int_value)
    assert [r["attributes"]["index"].int_value for r in rooms] == [0, 1, 2]
    assert all(r["parent"] == server["span_id"] for r in rooms)
    settled = [s["parent"] for s in spans if s["name"] == "settle"]
    assert settled == [r["span_id"] for r in rooms[:2]] or sorted(settled) == sorted(r["span_id"] for r in rooms[:2])


def test_concurrent_requests_on_one_worker_keep_their_own_traces(receiver: Receiver) -> None:
    """One gevent worker, 20 requests at once, each body sent in two halves so that their greenlets
    interleave: every span lands in its own request's trace, under its own server span."""
    base, process = start(traced(receiver.endpoint, MAUBINH_WORKERS="1"))
    try:
        port = int(base.rsplit(":", 1)[1])
        body = json.dumps(E1).encode()
        sockets = []
        for k in range(100, 120):
            trace_id, parent = ids(k)
            sock = socket.create_connection(("127.0.0.1", port))
            head = (
                f"POST /v1/score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\ntraceparent: 00-{trace_id}-{parent}-01\r\nConnection: close\r\n\r\n"
            )
            sock.sendall(head.encode() + body[:100])
            sockets.append(sock)
        time.sleep(0.3)
        for sock in sockets:
            sock.sendall(body[100:])
        for sock in sockets:
            assert sock.makefile("rb").readline().startswith(b"HTTP/1.1 200")
            sock.close()
        for k in range(100, 120):
            trace_id, parent = ids(k)
            spans = receiver.trace(trace_id, 5)
            server = [s for s in spans if s["name"] == "POST /v1/score"]
            assert len(spans) == 5 and len(server) == 1 and server[0]["parent"] == parent
            assert all(s["parent"] == server[0]["span_id"] for s in spans if s is not server[0])
    finally:
        process.kill()


def test_the_log_line_carries_the_trace_and_span_ids(receiver: Receiver) -> None:
    base, process = start(traced(receiver.endpoint))
    trace_id, parent = ids(3)
    assert post(base, "/v1/score", E1, f"00-{trace_id}-{parent}-01")[0] == 200
    server = next(s for s in receiver.trace(trace_id, 5) if s["name"] == "POST /v1/score")
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    lines = [json.loads(line) for line in stderr.decode().splitlines() if line.startswith("{")]
    [line] = [line for line in lines if line.get("msg") == "request" and line.get("route") == "/v1/score"]
    assert (line["trace_id"], line["span_id"]) == (trace_id, server["span_id"])


def test_a_collector_that_is_down_slows_no_answer_nor_the_stop() -> None:
    """The collector accepts connections and never answers (worse than refusing them): each export
    waits out its timeout in the processor's greenlet, while the answers keep their pace."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(100)
    endpoint = f"http://127.0.0.1:{silent.getsockname()[1]}"
    base, process = start(
        traced(endpoint, OTEL_EXPORTER_OTLP_TIMEOUT="5", MAUBINH_LOG_REQUESTS="off")
    )  # none reads stderr
    try:
        slowest = 0.0
        for k in range(300):
            started = time.monotonic()
            assert post(base, "/v1/score", E1, "00-{}-{}-01".format(*ids(1000 + k)))[0] == 200
            slowest = max(slowest, time.monotonic() - started)
        assert slowest < 0.5, f"an answer took {slowest:.2f} s while the collector hung"
        silent.settimeout(5)
        silent.accept()[0].close()  # an export was tried
        stopping = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        assert time.monotonic() - stopping < 15
    finally:
        if process.poll() is None:
            process.kill()
        silent.close()


def test_tracing_off_imports_nothing_of_opentelemetry() -> None:
    probe = "import sys, service.api.wsgi; print(any(m.startswith('opentelemetry') for m in sys.modules))"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.strip() == "False"


def test_a_tracing_setting_it_cannot_honour_stops_the_start() -> None:
    from pathlib import Path

    maubinh = Path(sys.executable).with_name("maubinh")
    for env, said in (
        ({"OTEL_TRACES_EXPORTER": "zipkin"}, "OTEL_TRACES_EXPORTER=zipkin"),
        ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"),
    ):
        done = subprocess.run(
            [str(maubinh), "serve", "--port", str(free_port())],
            env={**os.environ, **env}, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr
