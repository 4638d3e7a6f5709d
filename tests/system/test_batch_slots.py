"""A worker's batch slots against one caller that opens batches and never sends their bodies: a slot is
taken before the body is read, so such a caller held every slot of a worker till MAUBINH_BODY_SECONDS
and reconnected, and every other caller's batch waited 5 s for a 503 (found by an attack on the API).
A caller of the callers file now holds half a worker's slots at most."""

from __future__ import annotations

import hashlib
import json
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from server import start

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from hostile import E1, post

ALPHA, BETA, DEFAULT = "alpha-batch-slots-key", "beta-batch-slots-key", "default-batch-slots-key"


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    callers = tmp_path_factory.mktemp("callers") / "callers.toml"
    callers.write_text(
        "".join(
            f'[callers.{name}]\nkeys = [{{ sha256 = "{hashlib.sha256(key.encode()).hexdigest()}" }}]\n\n'
            for name, key in (("alpha", ALPHA), ("beta", BETA))
        )
    )
    env = {"MAUBINH_CALLERS_FILE": str(callers), "MAUBINH_API_KEYS": DEFAULT, "MAUBINH_WORKERS": "1",
           "MAUBINH_BATCH_SLOTS": "2"}  # fmt: skip
    base, process = start({**env, "MAUBINH_BODY_SECONDS": "8"})
    yield int(base.rsplit(":", 1)[1])
    process.kill()
    process.wait()


def _heads_without_bodies(port: int, key: str, count: int) -> list[socket.socket]:
    """Batches whose heads promise a body that never comes."""
    held = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=20)
        sock.sendall(
            b"POST /v1/score/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Authorization: Bearer {key}\r\nContent-Length: 10\r\n\r\n".encode()
        )
        held.append(sock)
    return held


@pytest.mark.parametrize("holder", [BETA, DEFAULT], ids=["a caller of the file", "MAUBINH_API_KEYS's"])
def test_a_caller_holding_its_share_of_slots_leaves_the_rest_to_others(port: int, holder: str) -> None:
    held = _heads_without_bodies(port, holder, 4)
    try:
        time.sleep(0.5)  # each head read, its slot (or its wait for one) begun
        started = time.monotonic()
        status, answer = post(port, "/v1/score/batch", json.dumps({"rooms": [E1]}).encode(), key=ALPHA)
        assert status == 200, answer[:300]
        assert time.monotonic() - started < 4  # not after the 5 s a batch waits for a slot
        refused = 0
        for sock in held:  # one holds beta's share, the others wait for it and are refused
            head = sock.recv(4096)
            if head.startswith(b"HTTP/1.1 503"):
                refused += 1
                assert b"/problems/busy" in head and b"share" in head, head
        assert refused == 3
    finally:
        for sock in held:
            sock.close()
