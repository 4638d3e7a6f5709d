"""The metrics an operator's dashboard and alerts read: refusals by code, verify outcomes by step,
batch sizes, requests in flight, rulesets served, workers' CPU and memory."""

import json
import re
from collections.abc import Callable

from flask.testing import FlaskClient
from helpers import golden_cases
from prometheus_client.metrics import MetricWrapperBase

from service.api import metrics
from service.rulesets.catalogue import builtin_catalogue

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]
"""P pays Q 1,000 for each of three chi and 6,000 for the scoop: −9,000 and +9,000 (RULES §E1)."""


def scrape(client: FlaskClient) -> dict[str, float]:
    series = {}
    for line in client.get("/metrics").get_data(as_text=True).splitlines():
        if line.startswith("maubinh_"):
            name, _, value = line.rpartition(" ")
            series[name] = float(value)
    return series


def delta(client: FlaskClient, act: Callable[[], object]) -> dict[str, float]:
    before = scrape(client)
    act()
    after = scrape(client)
    return {k: v - before.get(k, 0.0) for k, v in after.items() if v != before.get(k, 0.0)}


def test_refusals_are_counted_by_their_fault_codes_each_once(client: FlaskClient) -> None:
    def act() -> None:
        assert client.post("/v1/score", json=with_duplicates()).status_code == 422
        assert client.post("/v1/score", json={**E1, "ruleset": "nope"}).status_code == 422
        assert client.post("/v1/score", data=b"{", content_type="application/json").status_code == 400
        assert client.post("/v1/score", data=b"{}", content_type="text/plain").status_code == 415
        assert client.get("/v1/nowhere").status_code == 404

    moved = delta(client, act)
    assert moved['maubinh_refusals_total{caller="anonymous",code="duplicate_card",route="/v1/score"}'] == 1
    assert moved['maubinh_refusals_total{caller="anonymous",code="unknown_ruleset",route="/v1/score"}'] == 1
    assert moved['maubinh_refusals_total{caller="anonymous",code="bad_json",route="/v1/score"}'] == 1
    assert moved['maubinh_refusals_total{caller="anonymous",code="unsupported_media_type",route="/v1/score"}'] == 1
    assert moved['maubinh_refusals_total{caller="anonymous",code="not_found",route="unmatched"}'] == 1
    assert moved['maubinh_rejected_total{route="/v1/score"}'] == 2  # the 422s, as before


def with_duplicates() -> dict[str, object]:
    """E1 with two of P's cards dealt to Q too: two faults of one code."""
    room = json.loads(json.dumps(E1))
    room["players"][1]["back"][:2] = room["players"][0]["back"][:2]
    return room


def test_a_batch_counts_its_size_and_its_refused_rooms_codes(client: FlaskClient) -> None:
    moved = delta(client, lambda: client.post("/v1/score/batch", json={"rooms": [E1, E1, with_duplicates()]}))
    assert moved["maubinh_batch_rooms_count"] == 1
    assert moved["maubinh_batch_rooms_sum"] == 3
    assert 'maubinh_batch_rooms_bucket{le="2.0"}' not in moved
    assert moved['maubinh_batch_rooms_bucket{le="5.0"}'] == 1
    assert moved['maubinh_refusals_total{caller="anonymous",code="duplicate_card",route="/v1/score/batch"}'] == 1
    assert moved['maubinh_rooms_scored_total{caller="anonymous",players="2",ruleset="maubinh-2020"}'] == 2


def test_verify_counts_agreement_and_the_steps_that_disagree(client: FlaskClient) -> None:
    chi = [{"payer": "P", "payee": "Q", "amount": 1000, "step": "chi"}] * 3

    def act() -> None:
        agree = client.post("/v1/verify", json={**E1, "claimed": {"amounts": {"P": -9000, "Q": 9000}}})
        short = client.post("/v1/verify", json={**E1, "claimed": {"amounts": {"P": -8000, "Q": 8000}}})
        no_scoop = {"amounts": {"P": -3000, "Q": 3000}, "ledger": chi}  # the scoop's 6,000 left out
        lined = client.post("/v1/verify", json={**E1, "claimed": no_scoop})
        assert [r.json["agrees"] for r in (agree, short, lined)] == [True, False, False]

    moved = delta(client, act)
    assert moved['maubinh_verifications_total{outcome="agree",ruleset="maubinh-2020"}'] == 1
    assert moved['maubinh_verifications_total{outcome="disagree",ruleset="maubinh-2020"}'] == 2
    assert moved['maubinh_verify_disagreements_total{ruleset="maubinh-2020",step="amounts"}'] == 1
    assert moved['maubinh_verify_disagreements_total{ruleset="maubinh-2020",step="scoop"}'] == 1
    assert not any('step="chi"' in k for k in moved)


def test_rulesets_served_in_flight_and_the_workers_own_use(client: FlaskClient) -> None:
    client.get("/healthz")
    series = scrape(client)
    assert series['maubinh_rulesets_loaded{kind="builtin"}'] == len(builtin_catalogue().latest)
    assert series['maubinh_rulesets_loaded{kind="operator"}'] == 0
    assert series["maubinh_http_requests_in_flight"] == 1  # the scrape itself
    assert series["maubinh_worker_cpu_seconds"] > 0
    assert series["maubinh_worker_resident_memory_bytes"] > 10 * 2**20


def test_every_metric_is_documented_and_bounded_in_its_labels() -> None:
    """Each metric says what it counts, and no label can take a caller's words (ids, paths)."""
    callers = {"player", "id", "path", "round_id", "request_id"}
    for metric in vars(metrics).values():
        if isinstance(metric, MetricWrapperBase):
            assert metric._documentation and re.fullmatch(r"maubinh_[a-z_]+", metric._name)
            assert not callers & set(metric._labelnames)
