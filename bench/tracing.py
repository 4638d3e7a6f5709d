"""What tracing costs a POST /v1/score, counted by valgrind (cachegrind --cache-sim=no): instructions
per request through the WSGI app in process (Flask, metrics, logs off), (I(800) − I(200)) / 600, with
tracing off, off with the stages unmarked (today's path before the stages existed: each ``stage()``
replaced by nothing), and on (OTLP over HTTP to a receiver in another process that drops what it gets).
Run: .venv/bin/python bench/tracing.py        (about 2 minutes)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from instructions import per_room, sample

LOOP = """
import io, json, os, sys, tempfile
os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp()
mode, path = sys.argv[1], sys.argv[2]
if mode == "unmarked":
    import contextlib, service.support.traced_stages
    service.support.traced_stages.stage = lambda name, **attributes: contextlib.nullcontext()
    import service.documents, service.api.views
    service.documents.stage = service.support.traced_stages.stage
    service.api.views.stage = service.support.traced_stages.stage
from service.api import create_app
app = create_app({"log_requests": False})
for line in open(path, "rb"):
    environ = {"REQUEST_METHOD": "POST", "PATH_INFO": "/v1/score", "SERVER_NAME": "x", "SERVER_PORT": "80",
               "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(line), "CONTENT_LENGTH": str(len(line)),
               "CONTENT_TYPE": "application/json", "SERVER_PROTOCOL": "HTTP/1.1", "wsgi.errors": sys.stderr,
               "HTTP_TRACEPARENT": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
    statuses = []
    b"".join(app(environ, lambda status, headers, exc=None: statuses.append(status)))
    assert statuses[0].startswith("200"), statuses
if mode == "on":
    from service.api import tracing
    tracing.shutdown()
"""

RECEIVER = """
from http.server import BaseHTTPRequestHandler, HTTPServer
class Drop(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *args): pass
server = HTTPServer(("127.0.0.1", 0), Drop)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def main() -> None:
    small, large, loop = sample("tracing", LOOP)
    receiver = subprocess.Popen([sys.executable, "-c", RECEIVER], stdout=subprocess.PIPE, text=True)
    assert receiver.stdout is not None
    port = receiver.stdout.readline().strip()
    off = {"OTEL_TRACES_EXPORTER": "none"}
    on = {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}"}
    figures = {}
    try:
        for mode, env in (("unmarked", off), ("off", off), ("on", on)):
            figures[mode] = per_room([sys.executable, str(loop), mode], small, large, env)
    finally:
        receiver.kill()
    print("instructions per POST /v1/score, in process (valgrind, (I(800) - I(200)) / 600)")
    print("| tracing | instructions | against unmarked |")
    print("|---|---|---|")
    for mode, count in figures.items():
        print(f"| {mode} | {count / 1e6:.3f} M | {count / figures['unmarked']:.3f}x |")


if __name__ == "__main__":
    main()
