"""POST /v1/score/batch: many rooms, each answered exactly as POST /v1/score answers it."""

from __future__ import annotations

import json
from typing import Any

from flask.testing import FlaskClient
from helpers import golden_cases

from service.api import create_app

ROOMS = [c["request"] for c in golden_cases()] + [c["request"] for c in golden_cases("house-public.jsonl")]


def _without_request_id(body: dict[str, Any]) -> bytes:
    return json.dumps({k: v for k, v in body.items() if k != "request_id"}, sort_keys=True).encode()


def test_every_result_is_the_single_room_answer_byte_for_byte(client: FlaskClient) -> None:
    """145 golden rooms in one batch, 43 of them refused: each result is the single call's body."""
    batch = client.post("/v1/score/batch", json={"rooms": ROOMS})
    assert batch.status_code == 200
    results = batch.get_json()["results"]
    raw = batch.get_data()
    assert len(results) == len(ROOMS)
    refused = 0
    for room, result in zip(ROOMS, results, strict=True):
        single = client.post("/v1/score", json=room)
        if single.status_code == 200:
            assert single.get_data() in raw  # the very bytes, inside the batch's array
            assert result == single.get_json()
        else:
            refused += 1
            assert single.status_code == result["status"] == 422
            assert _without_request_id(result) == _without_request_id(single.get_json())
    assert refused == sum(1 for c in golden_cases() + golden_cases("house-public.jsonl") if "error" in c["expect"])


def test_a_bad_room_never_fails_the_others(client: FlaskClient) -> None:
    good = ROOMS[0]
    results = client.post(
        "/v1/score/batch", json={"rooms": [good, "not a room", {"ruleset": "nope"}, good]}
    ).get_json()["results"]
    assert [("ledger" in r, r.get("status")) for r in results] == [
        (True, None),
        (False, 422),
        (False, 422),
        (True, None),
    ]
    assert results[1]["errors"][0]["pointer"] == ""
    assert {e["pointer"] for e in results[2]["errors"]} == {"/ruleset", "/players"}


def test_an_empty_batch_is_an_empty_answer(client: FlaskClient) -> None:
    answer = client.post("/v1/score/batch", json={"rooms": []})
    assert answer.status_code == 200 and answer.get_json() == {"results": []}


def test_an_oversized_batch_is_refused_whole() -> None:
    settings = {"log_requests": False, "max_batch_rooms": 3, "max_batch_bytes": 50_000, "max_body_bytes": 600}
    small = create_app(settings).test_client()
    too_many = small.post("/v1/score/batch", json={"rooms": [ROOMS[0]] * 4})
    assert too_many.status_code == 422
    assert [(e["pointer"], e["code"]) for e in too_many.get_json()["errors"]] == [("/rooms", "batch_too_large")]
    too_big = small.post("/v1/score/batch", json={"rooms": [ROOMS[0]] * 3, "pad": "x" * 60_000})
    assert too_big.status_code == 413 and "50,000 bytes" in too_big.get_json()["detail"]
    # each limit is its own route's: three rooms (> 600 bytes) pass as a batch, not as one body
    assert len(json.dumps({"rooms": [ROOMS[0]] * 3})) > 600
    assert small.post("/v1/score/batch", json={"rooms": [ROOMS[0]] * 3}).status_code == 200
    padded = small.post("/v1/score", json={**ROOMS[0], "round_id": "x" * 128, "players": ROOMS[0]["players"] * 2})
    assert padded.status_code == 413 and "600 bytes" in padded.get_json()["detail"]


def test_a_bad_envelope_is_a_422_with_pointers(client: FlaskClient) -> None:
    answer = client.post("/v1/score/batch", json={"room": []})
    assert answer.status_code == 422
    assert {e["pointer"] for e in answer.get_json()["errors"]} == {"/room", "/rooms"}


def test_metrics_count_the_rooms_of_a_batch(client: FlaskClient) -> None:
    def rooms_scored() -> float:
        text = client.get("/metrics").get_data(as_text=True)
        return sum(
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith("maubinh_rooms_scored_total{")
        )

    before = rooms_scored()
    client.post("/v1/score/batch", json={"rooms": [ROOMS[0], ROOMS[1], "bad"]})
    assert rooms_scored() - before == 2


def _room_counts(client: FlaskClient) -> dict[str, float]:
    """The room-level metrics, by series (the route label of refusals left out)."""
    counts: dict[str, float] = {}
    for line in client.get("/metrics").get_data(as_text=True).splitlines():
        series, _, value = line.rpartition(" ")
        if series.startswith(("maubinh_rooms_scored_total{", "maubinh_fouls_total{", "maubinh_instant_wins_total{")):
            counts[series] = float(value)
        elif series.startswith("maubinh_rejected_total{") and '"/v1/score' in series:
            counts["rejected"] = counts.get("rejected", 0) + float(value)
    return counts


def _delta(after: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    return {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}


def test_a_batch_counts_its_rooms_as_single_calls_would(client: FlaskClient) -> None:
    """Rooms by ruleset and size, fouls, instant wins by pattern and refused rooms: the golden rooms
    sent as one batch move every series exactly as the same rooms sent one by one."""
    before = _room_counts(client)
    for room in ROOMS:
        client.post("/v1/score", json=room)
    singly = _delta(_room_counts(client), before)
    before = _room_counts(client)
    assert client.post("/v1/score/batch", json={"rooms": ROOMS}).status_code == 200
    batched = _delta(_room_counts(client), before)
    assert batched == singly
    assert singly["rejected"] == sum(
        1 for c in golden_cases() + golden_cases("house-public.jsonl") if "error" in c["expect"]
    )
    assert any(k.startswith("maubinh_instant_wins_total{") for k in singly)
    assert any(k.startswith("maubinh_fouls_total{") for k in singly)


def test_a_batch_of_junk_gets_a_bounded_answer(client: FlaskClient) -> None:
    """250 rooms of 8 players, each list of cards 13 junk texts (about 0.5 MB, 117,000 values, within the
    128,000 a batch of 500 rooms reads): every room refused, each problem cut at 120 faults, the whole
    answer a few MB (not the 12 MB an uncut list would be)."""
    junk = {"id": "p", "back": ["x"] * 13, "middle": ["x"] * 13, "front": ["x"] * 13, "cards": ["x"] * 13}
    room = {"ruleset": "maubinh-2020", "players": [junk] * 8}
    answer = client.post("/v1/score/batch", json={"rooms": [room] * 250})
    results = answer.get_json()["results"]
    assert answer.status_code == 200 and len(results) == 250
    assert all(r["status"] == 422 and len(r["errors"]) == 120 and "first 120" in r["detail"] for r in results)
    assert len(answer.get_data()) < 4_000_000
