"""The real thing: `maubinh serve` under gunicorn on a free loopback port."""

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import golden_cases
from server import call, free_port, start

from service.contract import RoomRejected
from service.documents import score_document
from service.serialize import dumps

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    metrics_dir = tmp_path_factory.mktemp("metrics")
    base, process = start({"PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)})
    yield base, process, metrics_dir
    if process.poll() is None:
        process.kill()


def test_the_wsgi_entry_builds_the_advisors_tables_for_the_workers_to_inherit() -> None:
    """gunicorn preloads the entry in the master; a fresh interpreter shows what importing it builds."""
    probe = (
        "import sys, service.api.wsgi\n"
        "from service.advisor.splits import split_grid\nfrom service.advisor.opponents import strong_fields\n"
        "print('numpy' in sys.modules, split_grid.cache_info().currsize, strong_fields.cache_info().currsize)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "1", "1"]


@pytest.mark.parametrize("metrics_dir", ["missing", "unset"])
def test_serve_starts_whatever_the_metrics_directory(tmp_path: Path, metrics_dir: str) -> None:
    extra = {"PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "not" / "there")} if metrics_dir == "missing" else {}
    base, process = start(extra)
    try:
        assert call(base, "/metrics")[0] == 200
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0


def test_every_golden_case_over_http_matches_in_process(server: tuple[str, subprocess.Popen[bytes], Path]) -> None:
    base, _, _ = server
    for case in golden_cases():
        status, body = call(base, "/v1/score", case["request"])
        try:
            expected_status, expected = 200, dumps(score_document(case["request"]))
        except RoomRejected:
            expected_status, expected = 422, b""
        assert status == expected_status, case["name"]
        if status == 200:
            assert body == expected, case["name"]
        else:
            wanted = {f["pointer"] for f in case["expect"]["faults"]}
            assert wanted <= {e["pointer"] for e in json.loads(body)["errors"]}


def test_metrics_are_summed_across_workers(server: tuple[str, subprocess.Popen[bytes], Path]) -> None:
    base, _, metrics_dir = server
    for _ in range(40):
        assert call(base, "/healthz")[0] == 200
    text = call(base, "/metrics")[1].decode()
    served = [
        line
        for line in text.splitlines()
        if line.startswith("maubinh_http_requests_total{") and 'route="/healthz"' in line
    ]
    assert sum(float(line.rsplit(" ", 1)[1]) for line in served) >= 40
    scored = [line for line in text.splitlines() if line.startswith("maubinh_rooms_scored_total{")]
    assert sum(float(line.rsplit(" ", 1)[1]) for line in scored) == sum(
        1 for c in golden_cases() if "error" not in c["expect"]
    )
    pids = {f.name.rsplit("_", 1)[1] for f in metrics_dir.glob("counter_*.db")}
    assert len(pids) >= 2, "requests should have reached both workers"


def test_sigterm_drains_and_exits_cleanly(server: tuple[str, subprocess.Popen[bytes], Path]) -> None:
    _, process, _ = server
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=15) == 0
    assert time.monotonic() - started < 12
    said = process.stderr.read().decode() if process.stderr else ""
    assert "Traceback" not in said and "Exception ignored" not in said  # workers leave quietly (heap unfrozen)


@pytest.mark.parametrize("keys", ["", ",", " "])
@pytest.mark.parametrize("how", ["maubinh serve", "gunicorn -c deploy/gunicorn.conf.py"])
def test_a_key_setting_that_holds_no_key_refuses_to_start_in_one_line(keys: str, how: str) -> None:
    """Before: MAUBINH_API_KEYS set to nothing usable started the service open to anyone, saying nothing."""
    env = {**os.environ, "MAUBINH_API_KEYS": keys, "MAUBINH_PORT": str(free_port())}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    if how == "maubinh serve":
        command = [str(Path(sys.executable).with_name("maubinh")), "serve"]
    else:
        command = [sys.executable, "-m", "gunicorn", "-c", str(ROOT / "deploy" / "gunicorn.conf.py")]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False, cwd=ROOT)
    assert done.returncode != 0
    said = done.stderr.strip().splitlines()
    assert len(said) == 1 and "not starting, MAUBINH_API_KEYS is set but holds no key" in said[0], said


@pytest.mark.parametrize(
    ("keys", "line"), [(None, "/v1 routes are open to anyone"), ("k1,k2", "/v1 routes need a key: 2")]
)
def test_the_start_log_says_whether_v1_needs_a_key(keys: str | None, line: str) -> None:
    _, process = start({"MAUBINH_API_KEYS": keys} if keys else {})
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=15)
    said = process.stderr.read().decode() if process.stderr else ""
    assert line in said


def test_a_server_stopped_as_it_starts_exits_in_seconds() -> None:
    """Before: a SIGTERM while a worker was still booting reached the master's handlers the fork had
    copied and was lost; the worker served on, and the stop took the whole graceful timeout (10 s)."""
    _, process = start({})
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=15) == 0
    assert time.monotonic() - started < 5
