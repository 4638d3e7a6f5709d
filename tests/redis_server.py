"""Debian's redis-server on loopback, for the tests of the stores kept in Redis (quotas, rounds).

Without redis-server these tests fail, unless MAUBINH_REQUIRE_REDIS=0 lets them skip (a laptop without it).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import pytest
from server import free_port

NO_DISK = ("--save", "", "--appendonly", "no")


@contextmanager
def redis_server(arguments: Sequence[str] = NO_DISK, port: int | None = None) -> Iterator[int]:
    """A fresh redis-server on loopback, on ``port`` or a free one, run with ``arguments`` (by default
    without a disk): its port. It is killed at the end."""
    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get("MAUBINH_REQUIRE_REDIS") == "0":
            pytest.skip("no redis-server (MAUBINH_REQUIRE_REDIS=0)")
        pytest.fail("no redis-server: apt-get install redis-server (MAUBINH_REQUIRE_REDIS=0 skips these tests)")
    port = port or free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", *arguments], stdout=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    try:
        yield port
    finally:
        process.kill()
        process.wait()


def redis_command(port: int, *words: str) -> bytes:
    """One command in RESP, its raw reply (enough for INFO and FLUSHALL)."""
    with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
        sock.sendall(f"*{len(words)}\r\n".encode() + b"".join(f"${len(w)}\r\n{w}\r\n".encode() for w in words))
        time.sleep(0.05)
        return sock.recv(65536)
