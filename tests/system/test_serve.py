"""The real thing: `maubinh serve` under gunicorn on a free loopback port."""

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import golden_cases
from server import call, free_port, start

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


def _line_key(line: dict[str, Any]) -> tuple[Any, ...]:
    return (line["step"], line["payer"], line["payee"], line["units"], line.get("position"))


def test_every_golden_case_over_http_gives_its_golden_expectation(
    server: tuple[str, subprocess.Popen[bytes], Path],
) -> None:
    """Against the golden expectations (worked out by an independent implementation), not this code's
    own answer: a room that should be refused and is scored fails here. Each answer is also byte for
    byte what the same code gives in process (JSON through gunicorn changes nothing)."""
    base, _, _ = server
    for case in golden_cases():
        status, body = call(base, "/v1/score", case["request"])
        expect = case["expect"]
        if "error" in expect:
            assert status == 422, case["name"]
            wanted = {f["pointer"] for f in expect["faults"]}
            assert wanted <= {e["pointer"] for e in json.loads(body)["errors"]}, case["name"]
            continue
        assert status == 200, case["name"]
        result = json.loads(body)
        stake = case["request"].get("stake", 1)
        got = [(p["id"], p["units"], p["amount"], p["fouled"]) for p in result["players"]]
        want = [(p["id"], p["units"], p["units"] * stake, p["fouled"]) for p in expect["players"]]
        assert got == want, case["name"]
        assert Counter(map(_line_key, result["ledger"])) == Counter(map(_line_key, expect["ledger"])), case["name"]
        assert body == dumps(score_document(case["request"])), case["name"]


def _metric_sum(base: str, prefix: str, *having: str) -> float:
    text = call(base, "/metrics")[1].decode()
    lines = [line for line in text.splitlines() if line.startswith(prefix) and all(h in line for h in having)]
    return sum(float(line.rsplit(" ", 1)[1]) for line in lines)


def test_metrics_are_summed_across_workers(server: tuple[str, subprocess.Popen[bytes], Path]) -> None:
    """What this test sends, counted whichever worker answered (whatever else the server has done)."""
    base, _, metrics_dir = server
    probes, rooms = (
        _metric_sum(base, "maubinh_http_requests_total{", 'route="/healthz"'),
        _metric_sum(base, "maubinh_rooms_scored_total{"),
    )
    scored = [c["request"] for c in golden_cases() if "error" not in c["expect"]][:40]
    for request in scored:
        assert call(base, "/v1/score", request)[0] == 200
    for _ in range(40):
        assert call(base, "/healthz")[0] == 200
    assert _metric_sum(base, "maubinh_http_requests_total{", 'route="/healthz"') - probes == 40
    assert _metric_sum(base, "maubinh_rooms_scored_total{") - rooms == len(scored)
    pids = {f.name.rsplit("_", 1)[1] for f in metrics_dir.glob("counter_*.db")}
    assert len(pids) >= 2, "requests should have reached both workers"


def test_sigterm_drains_and_exits_cleanly() -> None:
    base, process = start({})  # its own server: the module's serves the other tests, in any order
    assert call(base, "/v1/score", golden_cases()[0]["request"])[0] in (200, 422)
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
