"""A key rotated under load, against a real `maubinh serve` (two workers): the callers file swapped as a
Kubernetes Secret swaps it, then SIGHUP; no request fails, and each worker takes the new file."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from helpers import golden_cases
from server import start

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]
OLD, NEW = "mbk_old-key", "mbk_new-key"


def table(*keys: str) -> str:
    entries = ", ".join(f'{{ sha256 = "{hashlib.sha256(k.encode()).hexdigest()}" }}' for k in keys)
    return f"[callers.club-alpha]\nkeys = [{entries}]\n"


def swap(folder: Path, text: str) -> None:
    """What the kubelet does: a new folder of files, then the `..data` symlink switched in one rename."""
    fresh = folder / f"..{time.monotonic_ns()}"
    fresh.mkdir()
    (fresh / "callers.toml").write_text(text)
    link = folder / "..data_tmp"
    link.symlink_to(fresh.name)
    os.replace(link, folder / "..data")


def status(base: str, key: str) -> int:
    request = urllib.request.Request(
        base + "/v1/score",
        data=json.dumps(E1).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def until(done: Callable[[], bool], seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "not within the time the docs promise"
        time.sleep(0.05)


def test_a_key_rotated_under_load_fails_no_request(tmp_path: Path) -> None:
    """Each worker says each reading it takes, once (read by it or taken from the other's): two lines
    naming the new key count are both workers."""
    secret = tmp_path / "secret"
    secret.mkdir()
    swap(secret, table(OLD))
    (secret / "callers.toml").symlink_to("..data/callers.toml")
    base, process = start({"MAUBINH_CALLERS_FILE": str(secret / "callers.toml")})
    said: list[str] = []
    assert process.stderr is not None
    listener = threading.Thread(target=lambda: said.extend(line.decode() for line in process.stderr), daemon=True)
    listener.start()
    answered: list[tuple[float, int]] = []
    stop = threading.Event()

    def keep_scoring() -> None:
        while not stop.is_set():
            began = time.monotonic()
            answered.append((began, status(base, OLD)))

    def readings(keys: int) -> list[str]:
        return [line for line in said if f"callers, {keys} keys" in line]

    def answered_since(moment: float) -> int:
        return sum(began > moment for began, _ in answered)

    threads = [threading.Thread(target=keep_scoring) for _ in range(4)]
    try:
        for thread in threads:
            thread.start()
        assert status(base, NEW) == 401
        added = time.monotonic()
        swap(secret, table(OLD, NEW))  # the new key added beside the old one
        until(lambda: len(readings(2)) == 2)
        assert sorted("taken" in line for line in readings(2)) == [False, True]  # one read it, the other took it
        assert {status(base, NEW) for _ in range(20)} == {200}
        hupped = time.monotonic()
        process.send_signal(signal.SIGHUP)  # new workers, which start from the last good reading
        until(lambda: len(readings(2)) == 4 and sum("Booting worker" in line for line in said) == 4)
        assert all("taken" in line for line in readings(2)[2:])
        assert {status(base, NEW) for _ in range(20)} == {200}
        until(lambda: answered_since(hupped) > 20)
        revoked = time.monotonic()
        swap(secret, table(NEW))  # the old key revoked
        until(lambda: len(readings(1)) == 2)
        taken = time.monotonic()
        until(lambda: answered_since(taken) > 20)
        stop.set()
        for thread in threads:
            thread.join(timeout=15)
        assert {status(base, OLD) for _ in range(20)} == {401}
    finally:
        stop.set()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
    before = [code for began, code in answered if began < revoked]  # sent before the revocation
    assert answered_since(added) - answered_since(hupped) > 20 and answered_since(hupped) - answered_since(revoked) > 20
    assert set(before) == {200}  # through a swap and a SIGHUP: none failed
    assert {code for began, code in answered if began > taken} == {401}


def test_a_revoked_key_stays_revoked_through_a_sighup_while_the_file_does_not_load(tmp_path: Path) -> None:
    """New workers started from the callers the master read at start: after a revocation and then a
    broken file, SIGHUP (or any worker restart) let the revoked key in again (20 of 20)."""
    path = tmp_path / "callers.toml"
    path.write_text(table(OLD, NEW))
    base, process = start({"MAUBINH_CALLERS_FILE": str(path)})
    try:
        assert {status(base, OLD) for _ in range(10)} == {200}
        path.write_text(table(NEW))  # the old key revoked
        time.sleep(3.5)
        assert {status(base, OLD) for _ in range(20)} == {401}
        path.write_text(table(NEW) + "[callers.broken\n")  # then a file that does not load
        time.sleep(3.5)
        process.send_signal(signal.SIGHUP)  # new workers
        time.sleep(4)
        assert [status(base, OLD) for _ in range(20)] == [401] * 20
        assert {status(base, NEW) for _ in range(20)} == {200}
        with urllib.request.urlopen(base + "/metrics", timeout=10) as response:
            failed = [
                line for line in response.read().decode().splitlines() if line.startswith("maubinh_callers_file_failed")
            ]
        assert failed and all(line.endswith(" 1.0") for line in failed)  # every worker says the file's fault
    finally:
        process.send_signal(signal.SIGTERM)
        said = process.communicate(timeout=20)[1].decode()
    assert "Traceback" not in said
