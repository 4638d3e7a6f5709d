"""Quotas across instances: two `maubinh serve` share Debian's redis-server on loopback (tests/redis_server.py)."""

from __future__ import annotations

import hashlib
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import golden_cases
from redis_server import redis_command, redis_server
from server import free_port, start
from server import post_json as post

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]
QUOTA = 30
LIMITED, FREE = "mbk_limited-key", "mbk_free-key"


@pytest.fixture(scope="module")
def redis_port() -> Iterator[int]:
    with redis_server() as port:
        yield port


def commands_processed(port: int) -> int:
    info = redis_command(port, "INFO", "stats").decode()
    return int(next(line.split(":")[1] for line in info.splitlines() if line.startswith("total_commands_processed:")))


@pytest.fixture(scope="module")
def callers_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("callers") / "callers.toml"
    path.write_text(
        f"""[callers.club-limited]
keys = [{{ sha256 = "{hashlib.sha256(LIMITED.encode()).hexdigest()}" }}]
rooms_per_minute = {QUOTA}

[callers.club-free]
keys = [{{ sha256 = "{hashlib.sha256(FREE.encode()).hexdigest()}" }}]
"""
    )
    return path


@pytest.fixture(scope="module")
def two_instances(redis_port: int, callers_file: Path) -> Iterator[list[tuple[str, subprocess.Popen[bytes]]]]:
    env = {"MAUBINH_CALLERS_FILE": str(callers_file), "MAUBINH_QUOTA_REDIS_URL": f"redis://127.0.0.1:{redis_port}/0"}
    started = [start(env), start(env)]
    yield started
    for _, process in started:
        process.terminate()
        process.wait(timeout=20)


def test_a_quota_holds_across_two_instances_and_a_batch_counts_its_rooms(
    two_instances: list[tuple[str, subprocess.Popen[bytes]]], redis_port: int
) -> None:
    redis_command(redis_port, "FLUSHALL")
    if time.time() % 60 > 40:  # windows are clock minutes: all of this in one
        time.sleep(60.5 - time.time() % 60)
    bases = [base for base, _ in two_instances]
    admitted, remaining = 0, []
    for n in range(6):  # alternately through both
        status, headers, _ = post(bases[n % 2], "/v1/score", E1, LIMITED)
        assert status == 200
        admitted += 1
        remaining.append(int(headers["RateLimit"].split(";r=")[1].split(";")[0]))
        assert headers["RateLimit-Policy"] == f'"rooms";q={QUOTA};w=60;qu="rooms";pk=:Y2x1Yi1saW1pdGVk:'
    assert remaining == [QUOTA - 1 - n for n in range(6)]  # one count, whichever instance answered
    status, headers, _ = post(bases[0], "/v1/score/batch", {"rooms": [E1] * 20}, LIMITED)
    assert status == 200 and ";r=4;" in headers["RateLimit"]
    admitted += 20
    status, headers, problem = post(bases[1], "/v1/score/batch", {"rooms": [E1] * 5}, LIMITED)
    assert status == 429 and problem["type"] == "/problems/quota-exceeded"
    assert 1 <= int(headers["Retry-After"]) <= 60 and "asks for 5 and 4 are left" in problem["detail"]
    for n in range(10):
        status, _, _ = post(bases[n % 2], "/v1/score", E1, LIMITED)
        admitted += status == 200
        assert status in (200, 429)
    assert admitted == QUOTA


def test_a_caller_without_a_quota_never_touches_redis(
    two_instances: list[tuple[str, subprocess.Popen[bytes]]], redis_port: int
) -> None:
    before = commands_processed(redis_port)
    for base, _ in two_instances:
        status, headers, _ = post(base, "/v1/score/batch", {"rooms": [E1] * 50}, FREE)
        assert status == 200 and "RateLimit" not in headers
    assert commands_processed(redis_port) == before + 1  # the INFO that read the count


def test_without_redis_scoring_goes_on_without_quotas_and_says_so_once(redis_port: int, callers_file: Path) -> None:
    gone = free_port()  # nothing listens there
    base, process = start(
        {
            "MAUBINH_CALLERS_FILE": str(callers_file),
            "MAUBINH_QUOTA_REDIS_URL": f"redis://127.0.0.1:{gone}/0",
            "MAUBINH_WORKERS": "1",
        }
    )
    try:
        took = []
        for _ in range(QUOTA + 10):
            began = time.monotonic()
            status, headers, _ = post(base, "/v1/score", E1, LIMITED)
            took.append(time.monotonic() - began)
            assert status == 200 and "RateLimit" not in headers
        assert sorted(took)[len(took) // 2] < 0.25  # no request waits on the missing store
        with urllib.request.urlopen(base + "/metrics", timeout=10) as response:
            text = response.read().decode()
        errors = [line for line in text.splitlines() if line.startswith("maubinh_quota_store_errors_total ")]
        assert errors and float(errors[0].split()[1]) >= 1
    finally:
        process.terminate()
        said = process.communicate(timeout=20)[1].decode()
    assert said.count("quota store does not answer, scoring goes on without quotas") == 1


def test_the_start_log_says_once_whether_quotas_are_enforced(redis_port: int, callers_file: Path) -> None:
    """Before: nothing of quotas, and a rooms_per_minute without MAUBINH_QUOTA_REDIS_URL went unenforced silently."""
    url = f"redis://127.0.0.1:{redis_port}/0"
    for env, said in (
        (
            {},
            "quotas are NOT enforced, MAUBINH_QUOTA_REDIS_URL is not set; callers with rooms_per_minute: 1 (club-limited)",
        ),
        ({"MAUBINH_QUOTA_REDIS_URL": url}, f"quotas are counted in Redis at {url} (MAUBINH_QUOTA_REDIS_URL)"),
    ):
        _, process = start({"MAUBINH_CALLERS_FILE": str(callers_file), **env})
        process.terminate()
        log = process.communicate(timeout=20)[1].decode()
        assert log.count(said) == 1, log[-2000:]  # the master's, not each worker's
