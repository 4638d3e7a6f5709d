"""Each bound at its edge: the last value it takes and the first it refuses (13 and 14 cards, 4 and 5
players, 500 and 501 rooms, the body limits to the byte)."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from flask.testing import FlaskClient
from helpers import golden_cases

from service.api import create_app
from service.validation.limits import MOST_CARDS

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]
FOUR = next(c for c in golden_cases() if len(c["request"]["players"]) == 4)["request"]
P_CARDS = [*E1["players"][0]["back"], *E1["players"][0]["middle"], *E1["players"][0]["front"]]


def codes(answer: Any) -> list[tuple[str, str]]:
    return [(e["pointer"], e["code"]) for e in answer.get_json().get("errors", [])]


def with_cards(cards: list[str]) -> dict[str, Any]:
    return {**E1, "players": [{"id": "P", "status": "left", "cards": cards}, E1["players"][1]]}


def test_a_player_s_13_cards_are_taken(client: FlaskClient) -> None:
    assert MOST_CARDS == 13
    assert client.post("/v1/score", json=with_cards(P_CARDS)).status_code == 200


@pytest.mark.parametrize("fourteenth", ["TC", "AS"], ids=["new card", "a card twice"])
def test_a_14th_card_is_refused_on_the_list_s_length_alone(client: FlaskClient, fourteenth: str) -> None:
    """One fault, for the list: its cards are not checked one by one (so not as a duplicate)."""
    answer = client.post("/v1/score", json=with_cards([*P_CARDS, fourteenth]))
    assert answer.status_code == 422
    assert codes(answer) == [("/players/0/cards", "card_count")]
    assert "too many to check one by one" in answer.get_json()["errors"][0]["message"]


def test_12_cards_are_too_few(client: FlaskClient) -> None:
    answer = client.post("/v1/score", json=with_cards(P_CARDS[:12]))
    assert codes(answer) == [("/players/0/cards", "card_count")]


def test_four_players_are_seated_and_a_fifth_is_refused(client: FlaskClient) -> None:
    assert client.post("/v1/score", json=FOUR).status_code == 200
    fifth = {"id": "Z", "status": "left", "cards": P_CARDS}  # cards the room already holds: refused anyway
    answer = client.post("/v1/score", json={**FOUR, "players": [*FOUR["players"], fifth]})
    assert answer.status_code == 422 and ("/players", "player_count") in codes(answer)
    assert client.post("/v1/score", json={**FOUR, "players": FOUR["players"][:2]}).status_code == 200
    alone = client.post("/v1/score", json={**FOUR, "players": FOUR["players"][:1]})
    assert codes(alone) == [("/players", "player_count")]


def test_a_batch_of_500_rooms_is_scored_and_one_of_501_refused(client: FlaskClient) -> None:
    full = client.post("/v1/score/batch", json={"rooms": [E1] * 500})
    assert full.status_code == 200 and len(full.get_json()["results"]) == 500
    over = client.post("/v1/score/batch", json={"rooms": [E1] * 501})
    assert over.status_code == 422 and codes(over) == [("/rooms", "batch_too_large")]


def padded(document: Any, size: int) -> bytes:
    """``document`` as JSON, padded with trailing whitespace to exactly ``size`` bytes."""
    body = json.dumps(document).encode()
    assert len(body) <= size
    return body + b" " * (size - len(body))


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_body_of_the_limit_is_read_and_one_byte_more_is_413(chunked: bool) -> None:
    client = create_app({"log_requests": False, "max_body_bytes": 4096}).test_client()

    def post(body: bytes) -> int:
        if chunked:  # no Content-Length: the limit holds as the body is read
            headers = {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
            return client.post("/v1/score", input_stream=io.BytesIO(body), headers=headers).status_code
        return client.post("/v1/score", data=body, content_type="application/json").status_code

    assert post(padded(E1, 4096)) == 200
    assert post(padded(E1, 4097)) == 413


def test_a_batch_body_of_its_limit_is_read_and_one_byte_more_is_413() -> None:
    client = create_app({"log_requests": False, "max_batch_bytes": 8192}).test_client()
    batch = {"rooms": [E1] * 3}
    assert client.post("/v1/score/batch", data=padded(batch, 8192), content_type="application/json").status_code == 200
    over = client.post("/v1/score/batch", data=padded(batch, 8193), content_type="application/json")
    assert over.status_code == 413


def test_an_object_of_32_members_is_read_and_one_of_33_refused_on_its_size(client: FlaskClient) -> None:
    """Past MOST_MEMBERS an object is one fault, unread: a claim naming 33 players is not checked name by name."""
    for members, refused_whole in ((32, False), (33, True)):
        amounts = {f"x{k}": 0 for k in range(members)}
        answer = client.post("/v1/verify", json={**E1, "claimed": {"amounts": amounts}})
        assert answer.status_code == 422
        assert (codes(answer) == [("/claimed/amounts", "too_many")]) is refused_whole, members


def test_a_middle_equal_to_its_back_is_legal(client: FlaskClient) -> None:
    """§2.3 (foul.equal_hands_legal): only a middle stronger than the back fouls; the same ranks in other
    suits are equal hands."""
    room = {
        "ruleset": "maubinh-2020",
        "players": [
            {"id": "P", "back": ["8H", "7D", "5C", "3S", "2H"], "middle": ["8S", "7C", "5D", "3H", "2D"],
             "front": ["6H", "4D", "2C"]},
            {"id": "Q", "back": ["9S", "9D", "9C", "4S", "4C"], "middle": ["KS", "KH", "6C", "6D", "TS"],
             "front": ["AH", "3D", "2S"]},
        ],
    }  # fmt: skip
    answer = client.post("/v1/score", json=room)
    assert answer.status_code == 200
    p = answer.get_json()["players"][0]
    assert p["hands"]["middle"]["strength"] == p["hands"]["back"]["strength"] and p["fouled"] is False


@pytest.mark.parametrize("route", ["/v1/score", "/v1/verify", "/v1/evaluate", "/v1/arrange"])
def test_a_body_of_null_is_refused_as_a_body_not_read_twice(client: FlaskClient, route: str) -> None:
    """``null`` is a document like any other: refused for its shape, not taken for a body still unread
    (verify read it again, and said the body ended after 0 of its 4 bytes)."""
    answer = client.post(route, data="null", content_type="application/json")
    assert answer.status_code == 422, answer.get_json()
    assert "ended" not in json.dumps(answer.get_json())
