"""Writes deploy/grafana/maubinh.json, the operators' Grafana dashboard, from the panels below. Run after
editing them; a test checks the file is this script's output, and another that every expression
names only what a live server's /metrics exports."""

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "deploy" / "grafana" / "maubinh.json"
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
RATE = "$__rate_interval"
CALLER = 'caller=~"$caller"'
"""The dashboard's caller variable, as a selector."""


def panel(
    title: str, description: str, queries: dict[str, str], unit: str, kind: str = "timeseries", **extra: Any
) -> dict[str, Any]:
    """One panel: each query's legend is its key (Grafana's ``{{label}}`` templates)."""
    return extra | {
        "type": kind,
        "title": title,
        "description": description,
        "datasource": DATASOURCE,
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "options": {"legend": {"displayMode": "list", "placement": "bottom", "showLegend": True}},
        "targets": [
            {"datasource": DATASOURCE, "refId": chr(ord("A") + k), "expr": expr, "legendFormat": legend}
            for k, (legend, expr) in enumerate(queries.items())
        ],
    }


def latency(quantile: str) -> str:
    return (
        f"histogram_quantile({quantile}, sum by (route, le) "
        f"(rate(maubinh_http_request_duration_seconds_bucket[{RATE}])))"
    )


ROWS: list[tuple[str, list[dict[str, Any]]]] = [
    (
        "Requests",
        [
            panel(
                "Requests by route and status",
                "Answers a second, every worker of every pod.",
                {"{{route}} {{status}}": f"sum by (route, status) (rate(maubinh_http_requests_total[{RATE}]))"},
                "reqps",
            ),
            panel(
                "Error ratio (5xx) by route",
                "The availability SLO's bad events: answers that are 5xx. Refusals (4xx) are not errors.",
                {
                    "{{route}}": f'sum by (route) (rate(maubinh_http_requests_total{{status=~"5.."}}[{RATE}]))'
                    f" / sum by (route) (rate(maubinh_http_requests_total[{RATE}]))"
                },
                "percentunit",
            ),
            panel(
                "Latency by route: p50, p90, p99",
                "The score-latency SLO wants 99% of POST /v1/score within 50 ms.",
                {f"{{{{route}}}} p{q[2:]}": latency(q) for q in ("0.50", "0.90", "0.99")},
                "s",
            ),
            panel(
                "In-flight requests",
                "Requests being answered, by pod.",
                {"{{instance}}": "sum by (instance) (maubinh_http_requests_in_flight)"},
                "short",
            ),
        ],
    ),
    (
        "Rooms and refusals",
        [
            panel(
                "Refusals by code",
                "Refused requests (4xx) and refused rooms of batches, by fault code: one code jumping is "
                "usually one caller's bug (docs/runbook.md, MaubinhRefusalsJumped).",
                {"{{code}}": f"sum by (code) (rate(maubinh_refusals_total[{RATE}]))"},
                "short",
            ),
            panel(
                "Rooms scored by ruleset",
                "Built-in ids, operator ids, and <base>~custom for requests' own variants.",
                {"{{ruleset}}": f"sum by (ruleset) (rate(maubinh_rooms_scored_total[{RATE}]))"},
                "short",
            ),
            panel(
                "Rulesets served",
                "Built-in and operator rulesets each pod serves (the lowest pod's count), and the pods whose "
                "operator folder failed to load (unready, docs/runbook.md).",
                {
                    "{{kind}}": "min by (kind) (maubinh_rulesets_loaded)",
                    "pods failing to load": "sum(maubinh_operator_rulesets_failed)",
                },
                "short",
                kind="stat",
            ),
            panel(
                "Batch sizes",
                "Rooms per POST /v1/score/batch: median, p99 and mean.",
                {
                    "p50": f"histogram_quantile(0.5, sum by (le) (rate(maubinh_batch_rooms_bucket[{RATE}])))",
                    "p99": f"histogram_quantile(0.99, sum by (le) (rate(maubinh_batch_rooms_bucket[{RATE}])))",
                    "mean": f"sum(rate(maubinh_batch_rooms_sum[{RATE}]))"
                    f" / sum(rate(maubinh_batch_rooms_count[{RATE}]))",
                },
                "short",
            ),
            panel(
                "Fouls and instant wins",
                "Fouled players and instant wins (by pattern) in scored rooms.",
                {
                    "fouls": f"sum(rate(maubinh_fouls_total[{RATE}]))",
                    "{{pattern}}": f"sum by (pattern) (rate(maubinh_instant_wins_total[{RATE}]))",
                },
                "short",
            ),
        ],
    ),
    (
        "Callers",
        [
            panel(
                "Rooms scored per caller per day",
                "For billing: rooms each caller had scored, a bar a UTC day (POST /v1/score and each room of a "
                "batch; refused rooms are not counted).",
                {"{{caller}}": f"sum by (caller) (increase(maubinh_rooms_scored_total{{{CALLER}}}[1d]))"},
                "short",
                interval="1d",
                maxDataPoints=400,
                fieldConfig={
                    "defaults": {"unit": "short", "custom": {"drawStyle": "bars", "fillOpacity": 80}},
                    "overrides": [],
                },
            ),
            panel(
                "Requests per caller",
                "Answers by caller and status class: unknown is a key no caller holds (or an expired one), "
                "anonymous no key.",
                {
                    "{{caller}} {{status}}": "sum by (caller, status) "
                    f'(label_replace(rate(maubinh_http_requests_total{{{CALLER}}}[{RATE}]), "status", "${{1}}xx", '
                    '"status", "(.).."))'
                },
                "reqps",
            ),
            panel(
                "Refusals per caller",
                "By caller and code: forbidden is a route outside the caller's routes, quota_exceeded its "
                "rooms_per_minute spent (docs/operations.md, Callers).",
                {"{{caller}} {{code}}": f"sum by (caller, code) (rate(maubinh_refusals_total{{{CALLER}}}[{RATE}]))"},
                "short",
            ),
        ],
    ),
    (
        "Verify",
        [
            panel(
                "Verified claims: agree and disagree",
                "POST /v1/verify by outcome.",
                {"{{outcome}}": f"sum by (outcome) (rate(maubinh_verifications_total[{RATE}]))"},
                "short",
            ),
            panel(
                "Disagreements by step",
                "The step in which a claim disagrees (amounts: a claim without ledger lines).",
                {"{{step}}": f"sum by (step) (rate(maubinh_verify_disagreements_total[{RATE}]))"},
                "short",
            ),
        ],
    ),
    (
        "Workers",
        [
            panel(
                "Worker CPU",
                "CPU seconds a second, by pod and worker: a worker near 1 is saturated.",
                {"{{instance}} {{pid}}": f"rate(maubinh_worker_cpu_seconds[{RATE}])"},
                "percentunit",
            ),
            panel(
                "Worker memory",
                "Resident memory by pod and worker.",
                {"{{instance}} {{pid}}": "maubinh_worker_resident_memory_bytes"},
                "bytes",
            ),
            panel(
                "Worker starts and stops",
                "Starts without a stop of their own are workers killed or aborted "
                "(docs/runbook.md, MaubinhWorkersRestarting).",
                {
                    "started": "sum(increase(maubinh_worker_starts_total[1h]))",
                    "stopped {{reason}}": "sum by (reason) (increase(maubinh_worker_stops_total[1h]))",
                },
                "short",
            ),
            panel(
                "Versions running",
                "Pods by maubinh version.",
                {"{{version}}": "count by (version) (maubinh_build_info)"},
                "short",
                kind="stat",
            ),
        ],
    ),
]


def dashboard() -> dict[str, Any]:
    """The rows, laid out on Grafana's 24-column grid, two panels a line."""
    panels: list[dict[str, Any]] = []
    y = 0
    for title, row in ROWS:
        panels.append(
            {
                "type": "row",
                "title": title,
                "collapsed": False,
                "gridPos": {"x": 0, "y": y, "w": 24, "h": 1},
                "panels": [],
            }
        )
        y += 1
        for k, each in enumerate(row):
            each["gridPos"] = {"x": 12 * (k % 2), "y": y + 8 * (k // 2), "w": 12, "h": 8}
            panels.append(each)
        y += 8 * ((len(row) + 1) // 2)
    for number, each in enumerate(panels, start=1):
        each["id"] = number
    return {
        "title": "maubinh",
        "uid": "maubinh",
        "description": "The maubinh scoring service: requests, latency, refusals, rooms, callers, verify, workers.",
        "tags": ["maubinh"],
        "editable": True,
        "schemaVersion": 39,
        "version": 1,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "30s",
        "timezone": "utc",
        "templating": {
            "list": [
                {
                    "type": "datasource",
                    "name": "datasource",
                    "label": "Prometheus",
                    "query": "prometheus",
                    "current": {},
                    "hide": 0,
                    "refresh": 1,
                    "options": [],
                },
                {
                    "type": "query",
                    "name": "caller",
                    "label": "Caller",
                    "datasource": DATASOURCE,
                    "query": {"query": "label_values(maubinh_http_requests_total, caller)", "refId": "callers"},
                    "definition": "label_values(maubinh_http_requests_total, caller)",
                    "includeAll": True,
                    "multi": True,
                    "allValue": ".*",
                    "current": {"text": "All", "value": "$__all"},
                    "refresh": 2,
                    "sort": 1,
                    "hide": 0,
                    "options": [],
                },
            ]
        },
        "annotations": {"list": []},
        "links": [],
        "panels": panels,
    }


def text() -> str:
    return json.dumps(dashboard(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_text(text(), "utf-8")
