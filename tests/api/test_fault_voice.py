"""Every fault is in the service's voice, in both languages, and says what was expected at its place:
none of marshmallow's own messages ("Missing data for required field.", "Invalid input type." …)
reaches a caller."""

from __future__ import annotations

import inspect
from typing import Any

import marshmallow
import pytest
from flask.testing import FlaskClient

from service.api import create_app

E1: dict[str, Any] = {
    "ruleset": "maubinh-2020",
    "stake": 1000,
    "players": [
        {"id": "P", "back": ["AS", "AD", "7C", "7D", "2H"], "middle": ["KS", "KH", "9H", "5D", "3S"],
         "front": ["QH", "JD", "4C"]},
        {"id": "Q", "back": ["9S", "9D", "9C", "4S", "4D"], "middle": ["8S", "8H", "6C", "6D", "TS"],
         "front": ["AH", "3D", "2C"]},
    ],
}  # fmt: skip

MALFORMED: list[tuple[str, Any]] = [
    ("/v1/score/batch", [E1]),
    ("/v1/score/batch", {"room": [E1]}),
    ("/v1/score", [E1]),
    ("/v1/score", "E1"),
    ("/v1/score", {**E1, "stake": 0}),
    ("/v1/score", {**E1, "stake": "1000"}),
    ("/v1/score", {**E1, "extra": 1}),
    ("/v1/score", {"ruleset": "maubinh-2020"}),
    ("/v1/score", {**E1, "round_id": 5}),
    ("/v1/score", {**E1, "players": [None, {"id": "P", "back": None, "status": "gone"}]}),
    ("/v1/score", {**E1, "players": {"P": 1}}),
    ("/v1/verify", {**E1, "claimed": {"P": -3000, "Q": 3000}}),
    ("/v1/verify", {**E1, "claimed": [1]}),
    ("/v1/verify", {**E1, "claimed": {"amounts": {"P": -3000, "Q": 3000}, "ledger": [7, {"payer": "P"}]}}),
    ("/v1/evaluate", []),
    ("/v1/arrange", {"ruleset": "maubinh-2020", "cards": "AS", "alternatives": 99, "opponents": "x"}),
    ("/v1/arrange", 3),
]


def _marshmallow_messages() -> set[str]:
    """Every message marshmallow would write by default: its fields', its schemas' and its validators'."""
    found: set[str] = set(marshmallow.Schema._default_error_messages.values())
    for _, cls in inspect.getmembers(marshmallow.fields, inspect.isclass):
        found.update(m for m in getattr(cls, "default_error_messages", {}).values() if isinstance(m, str))
    for _, cls in inspect.getmembers(marshmallow.validate, inspect.isclass):
        found.update(
            v for k, v in vars(cls).items() if k.startswith(("message", "default_message")) and isinstance(v, str)
        )
    return {m.split("{")[0].strip() for m in found if m.split("{")[0].strip()}


@pytest.fixture(scope="module")
def client() -> FlaskClient:
    return create_app().test_client()


def _errors(client: FlaskClient, path: str, body: Any, language: str) -> list[dict[str, str]]:
    response = client.post(path, json=body, headers={"Accept-Language": language})
    assert response.status_code == 422, response.get_json()
    errors: list[dict[str, str]] = response.get_json()["errors"]
    assert errors
    return errors


@pytest.mark.parametrize(("path", "body"), MALFORMED)
def test_no_fault_speaks_in_marshmallows_voice(client: FlaskClient, path: str, body: Any) -> None:
    defaults = _marshmallow_messages()
    assert {"Missing data for required field.", "Unknown field.", "Invalid input type."} <= defaults | {
        m + "." for m in defaults
    }  # the check has teeth
    english, vietnamese = _errors(client, path, body, "en"), _errors(client, path, body, "vi")
    assert [(e["pointer"], e["code"]) for e in english] == [(e["pointer"], e["code"]) for e in vietnamese]
    for en, vi in zip(english, vietnamese, strict=True):
        assert not any(en["message"].startswith(default) for default in defaults), en
        assert en["message"] != vi["message"], en  # said in Vietnamese too


@pytest.mark.parametrize("language", ["en", "vi"])
def test_a_batch_sent_as_a_bare_array_is_told_the_envelope(client: FlaskClient, language: str) -> None:
    (fault,) = _errors(client, "/v1/score/batch", [E1], language)
    assert fault["pointer"] == "" and '{"rooms": [' in fault["message"]


@pytest.mark.parametrize("language", ["en", "vi"])
def test_claimed_amounts_by_player_are_told_where_they_go(client: FlaskClient, language: str) -> None:
    """The short form the viewer once offered, ``{"P": -3000, "Q": 3000}``: one fault, at /claimed,
    showing the same amounts under ``claimed.amounts``."""
    (fault,) = _errors(client, "/v1/verify", {**E1, "claimed": {"P": -3000, "Q": 3000}}, language)
    assert fault["pointer"] == "/claimed"
    assert "claimed.amounts" in fault["message"]
    assert '{"claimed": {"amounts": {"P": -3000, "Q": 3000}}}' in fault["message"]
