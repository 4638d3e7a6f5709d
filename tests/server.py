"""Start a real `maubinh serve` on a free loopback port for the tests that need one."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def call(base: str, path: str, body: Any = None) -> tuple[int, bytes]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def post_json(base: str, path: str, body: Any, key: str | None = None) -> tuple[int, dict[str, str], Any]:
    """POST ``body`` as JSON (with ``key`` as a Bearer token): the status, the headers and the JSON answer."""
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def start(extra_env: dict[str, str], probe: str = "/readyz") -> tuple[str, subprocess.Popen[bytes]]:
    """`maubinh serve` on a free port, once ``probe`` answers 200 (/healthz: alive, ready or not)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
    env.update(MAUBINH_WORKERS="2", MAUBINH_LOG_REQUESTS="off", MAUBINH_GRACEFUL_TIMEOUT="10")
    env.update(extra_env)
    script = Path(sys.executable).with_name("maubinh")
    process = subprocess.Popen(
        [str(script), "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if call(base, probe)[0] == 200:
                return base, process
        except OSError:
            time.sleep(0.1)
    process.kill()
    stderr = process.stderr.read().decode()[-2000:] if process.stderr else ""
    pytest.fail("the server never became ready: " + stderr)
