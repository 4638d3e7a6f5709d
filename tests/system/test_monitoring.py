"""What an operator's Prometheus reads from a real `maubinh serve` after a mixed workload: every
dashboard and rule expression names only metrics and labels it exports, and the worker counters
tell a recycled worker from a killed one."""

import json
import os
import re
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import golden_cases
from prometheus_client.parser import text_string_to_metric_families
from server import call, start

ROOT = Path(__file__).resolve().parents[2]
CASES = {c["name"]: c["request"] for c in golden_cases()}
E1 = CASES["worked-example/E1"]
TARGET_LABELS = {"instance", "job"}
"""Labels Prometheus adds to every series it scrapes: an expression may group by them."""
RECYCLE_AFTER = 30

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    env = {
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path_factory.mktemp("metrics")),
        "MAUBINH_MAX_REQUESTS": str(RECYCLE_AFTER),
        "MAUBINH_MAX_REQUESTS_JITTER": "0",
    }
    base, process = start(env)
    yield base, process
    if process.poll() is None:
        process.kill()


def post(base: str, path: str, body: bytes, content_type: str = "application/json") -> int:
    request = urllib.request.Request(base + path, data=body, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def mixed_workload(base: str) -> None:
    """Every route, answers and refusals of each kind, enough requests to recycle each worker."""
    duplicate = json.loads(json.dumps(E1))
    duplicate["players"][1]["back"][0] = duplicate["players"][0]["back"][0]
    chi = [{"payer": "P", "payee": "Q", "amount": 1000, "step": "chi"}] * 3
    for _ in range(2):
        for name in ("worked-example/E1", "worked-example/E4", "maubinh-2020/n2/instant-dragon"):  # a foul, a dragon
            assert call(base, "/v1/score", CASES[name])[0] == 200
        assert call(base, "/v1/score", duplicate)[0] == 422
        assert call(base, "/v1/score/batch", {"rooms": [E1, E1, duplicate]})[0] == 200
        assert call(base, "/v1/verify", {**E1, "claimed": {"amounts": {"P": -9000, "Q": 9000}}})[0] == 200
        assert (
            call(base, "/v1/verify", {**E1, "claimed": {"amounts": {"P": -3000, "Q": 3000}, "ledger": chi}})[0] == 200
        )
        assert (
            call(
                base,
                "/v1/evaluate",
                {"ruleset": "maubinh-2020", **{k: E1["players"][0][k] for k in ("back", "middle", "front")}},
            )[0]
            == 200
        )
        assert post(base, "/v1/score", b"{") == 400
        assert post(base, "/v1/score", b"{}", "text/plain") == 415
        assert call(base, "/nowhere")[0] == 404
    recycled(base, 1)


def recycled(base: str, workers: int) -> float:
    """Probe until ``workers`` have been recycled: a worker past max_requests keeps answering for up
    to a second (gunicorn's gevent worker checks once a second), then says so as it leaves."""
    deadline = time.monotonic() + 60
    while (stops := value(base, "maubinh_worker_stops_total", reason="recycled")) < workers:
        assert time.monotonic() < deadline, f"{stops} workers recycled in a minute"
        call(base, "/healthz")
        time.sleep(0.01)
    return stops


def scrape(base: str) -> dict[str, set[str]]:
    """Each exported sample name with the label names its samples carry."""
    with urllib.request.urlopen(base + "/metrics", timeout=10) as response:
        text = response.read().decode()
    exported: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            exported.setdefault(sample.name, set()).update(sample.labels)
    return exported


def value(base: str, name: str, **labels: str) -> float:
    with urllib.request.urlopen(base + "/metrics", timeout=10) as response:
        text = response.read().decode()
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items())
    )


def expressions() -> Iterator[tuple[str, str, set[str]]]:
    """(where, PromQL, legend labels) of every dashboard query and every rule."""
    board = json.loads((ROOT / "deploy" / "grafana" / "maubinh.json").read_text())
    for panel in board["panels"]:
        for target in panel.get("targets", []):
            legend = set(re.findall(r"\{\{(\w+)\}\}", target.get("legendFormat", "")))
            yield f"dashboard: {panel['title']}", target["expr"], legend
    rules = yaml.safe_load((ROOT / "deploy" / "prometheus" / "alerts.yaml").read_text())
    for group in rules["groups"]:
        for rule in group["rules"]:
            yield f"rule: {rule.get('alert') or rule['record']}", rule["expr"], set()


def test_every_expression_names_only_what_metrics_exports(served: tuple[str, subprocess.Popen[bytes]]) -> None:
    base, _ = served
    mixed_workload(base)
    exported = scrape(base)
    checked = 0
    for where, expr, legend in expressions():
        names = re.findall(r"\b(maubinh_[a-z_]+)\b", expr)
        labels = set(TARGET_LABELS)
        for name in names:
            assert name in exported, f"{where} reads {name}, which /metrics does not export"
            labels |= exported[name]
        matched = {
            m
            for selector in re.findall(r"maubinh_[a-z_]+\{([^}]*)\}", expr)
            for m in re.findall(r"(\w+)\s*(?:=~|!=|!~|=)", selector)
        }
        grouped = {
            label.strip()
            for group in re.findall(r"\bby\s*\(([^)]*)\)", expr)
            for label in group.split(",")
            if label.strip()
        }
        for label in matched | grouped | legend:
            assert label in labels, f"{where} reads the label {label}, which no series it names carries"
        checked += bool(names)
    assert checked >= 30


def test_workers_recycled_are_stops_and_a_killed_one_is_a_start_without_one(
    served: tuple[str, subprocess.Popen[bytes]],
) -> None:
    base, process = served
    stops = recycled(base, 2)
    time.sleep(1)  # the replacements' starts
    starts = value(base, "maubinh_worker_starts_total")
    assert starts >= 2 + stops
    workers = [
        int(p)
        for p in subprocess.run(
            ["pgrep", "-P", str(process.pid)], capture_output=True, text=True, check=False
        ).stdout.split()
    ]
    os.kill(workers[0], signal.SIGKILL)
    deadline = time.monotonic() + 20
    while value(base, "maubinh_worker_starts_total") < starts + 1 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert value(base, "maubinh_worker_starts_total") >= starts + 1
    assert value(base, "maubinh_worker_stops_total") <= stops + 2  # the kill stopped nothing by itself
    live = {
        int(p)
        for p in subprocess.run(
            ["pgrep", "-P", str(process.pid)], capture_output=True, text=True, check=False
        ).stdout.split()
    }
    with urllib.request.urlopen(base + "/metrics", timeout=10) as response:
        text = response.read().decode()
    pids = {
        int(s.labels["pid"])
        for f in text_string_to_metric_families(text)
        for s in f.samples
        if s.name == "maubinh_worker_resident_memory_bytes"
    }
    assert workers[0] not in pids and pids <= live | {process.pid}


def test_refusals_reach_prometheus_by_code(served: tuple[str, subprocess.Popen[bytes]]) -> None:
    base, _ = served
    before = value(base, "maubinh_refusals_total", code="duplicate_card", route="/v1/score")
    duplicate: dict[str, Any] = json.loads(json.dumps(E1))
    duplicate["players"][1]["front"][0] = duplicate["players"][0]["front"][0]
    assert call(base, "/v1/score", duplicate)[0] == 422
    assert value(base, "maubinh_refusals_total", code="duplicate_card", route="/v1/score") == before + 1
