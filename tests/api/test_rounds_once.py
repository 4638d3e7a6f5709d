"""Rounds scored once (MAUBINH_ROUNDS_REDIS_URL), in process against Debian's redis-server: two apps stand for
two instances sharing one Redis; threads race two rooms for one round; the store stopped, closed and open."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from helpers import golden_cases
from redis_server import redis_command, redis_server
from server import free_port

from service.api import create_app
from service.api.round_store import IN_FLIGHT_SECONDS, PENDING, digest_bytes, round_key
from service.trust.signing import room_digest

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]
ALPHA, BETA = "mbk_alpha-rounds", "mbk_beta-rounds"
RECEIPT_KEY = Path(__file__).parents[1] / "receipts" / "test-vector-key.pem"


@pytest.fixture(scope="module")
def redis_port() -> Iterator[int]:
    with redis_server() as port:
        yield port


@pytest.fixture
def url(redis_port: int) -> str:
    redis_command(redis_port, "FLUSHALL")
    return f"redis://127.0.0.1:{redis_port}/0"


@pytest.fixture
def callers(tmp_path: Path) -> str:
    path = tmp_path / "callers.toml"
    path.write_text(
        "".join(
            f'[callers.{name}]\nkeys = [{{ sha256 = "{hashlib.sha256(key.encode()).hexdigest()}" }}]\n'
            for name, key in (("club-alpha", ALPHA), ("club-beta", BETA))
        )
    )
    return str(path)


@contextmanager
def logged(name: str = "maubinh.rounds") -> Iterator[list[str]]:
    """What ``name`` logs meanwhile, read at its own logger: the app's "maubinh" logger does not pass its
    records up to the root's, where caplog listens, once an app has given it its handler."""
    lines: list[str] = []
    heard = logging.Handler()
    heard.emit = lambda record: lines.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger(name).addHandler(heard)
    try:
        yield lines
    finally:
        logging.getLogger(name).removeHandler(heard)


def instance(url: str, callers: str | None = None, **settings: Any) -> Flask:
    more = {"callers_file": callers} if callers else {}
    return create_app({"log_requests": False, "rounds_redis_url": url, **more, **settings})


def room(round_id: str = "r-1", stake: int = 1) -> dict[str, Any]:
    return {**E1, "round_id": round_id, "stake": stake}


def as_caller(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_a_round_scores_again_with_its_room_and_refuses_another_on_either_instance(url: str, callers: str) -> None:
    first, second = instance(url, callers).test_client(), instance(url, callers).test_client()
    scored = first.post("/v1/score", json=room(), headers=as_caller(ALPHA))
    assert scored.status_code == 200
    again = second.post("/v1/score", json=room(), headers=as_caller(ALPHA))
    assert again.status_code == 200 and again.get_json()["ledger"] == scored.get_json()["ledger"]
    for client in (first, second):
        refused = client.post("/v1/score", json=room(stake=2), headers=as_caller(ALPHA))
        assert refused.status_code == 422
        problem = refused.get_json()
        assert [(f["pointer"], f["code"]) for f in problem["errors"]] == [("/round_id", "round_already_scored")]
        assert problem["first_room_digest"] == room_digest(room())
        assert room_digest(room()) in problem["errors"][0]["message"]
    assert second.post("/v1/score", json=room(stake=2), headers=as_caller(BETA)).status_code == 200  # beta's own round


def test_a_round_id_spelled_in_nfc_or_nfd_is_one_round(url: str) -> None:
    """ "Bàn 1" with its "à" precomposed (NFC) or as "a" and a combining grave (NFD) looks the same to
    whoever reads the game's records: one round, so a room under the other spelling is a second room for
    it, refused, where it used to be scored as a round of its own."""
    composed, decomposed = "B\u00e0n 1", "Ba\u0300n 1"
    client = instance(url).test_client()
    assert client.post("/v1/score", json=room(composed)).status_code == 200
    refused = client.post("/v1/score", json=room(decomposed, stake=2))
    assert refused.status_code == 422 and refused.get_json()["first_room_digest"] == room_digest(room(composed))
    assert client.post("/v1/score", json=room(composed)).status_code == 200  # the first room again
    assert client.post("/v1/score", json=room("Ba\u0300n 2")).status_code == 200  # another round


def test_a_room_refused_for_its_content_or_without_a_round_id_is_not_recorded(url: str) -> None:
    client = instance(url).test_client()
    broken = room()
    broken["players"] = [dict(broken["players"][0]), *broken["players"][1:]]
    broken["players"][0]["back"] = ["AS"] * 5  # a card five times
    assert client.post("/v1/score", json=broken).status_code == 422
    huge = json.dumps(room()).replace("{", '{"x":1' + "0" * 400 + ",", 1)  # no digest (RFC 8785): never claimed
    assert client.post("/v1/score", data=huge, content_type="application/json").status_code == 422
    assert client.post("/v1/score", json=room(stake=3)).status_code == 200  # the round was still free
    bare = {**E1}
    assert client.post("/v1/score", json=bare).status_code == 200
    assert client.post("/v1/score", json={**bare, "stake": 2}).status_code == 200
    amounts = {
        player["id"]: player["amount"]
        for player in client.post("/v1/score", json={**E1, "stake": 1}).get_json()["players"]
    }
    verified = client.post("/v1/verify", json={**room("audited"), "claimed": {"amounts": amounts}})
    assert verified.status_code == 200 and verified.get_json()["agrees"]
    assert client.post("/v1/score", json=room("audited", 5)).status_code == 200  # verify recorded nothing


def test_a_batch_refuses_a_rerolled_room_in_its_slot_and_scores_the_others(url: str) -> None:
    client = instance(url).test_client()
    assert client.post("/v1/score", json=room("old")).status_code == 200
    rooms = [room("old", stake=2), room("new"), room("new", stake=4), room("new"), {**E1}, room("old")]
    answer = client.post("/v1/score/batch", json={"rooms": rooms})
    assert answer.status_code == 200
    results = answer.get_json()["results"]
    assert [r.get("status", 200) for r in results] == [422, 200, 409, 200, 200, 200]
    assert results[0]["errors"][0]["code"] == "round_already_scored"
    assert results[0]["first_room_digest"] == room_digest(room("old"))
    assert results[2]["type"] == "/problems/round-in-flight" and results[2]["errors"][0]["code"] == "round_in_flight"
    assert client.post("/v1/score", json=room("new", stake=4)).get_json()["first_room_digest"] == room_digest(
        room("new")
    )


def race(clients: list[FlaskClient], round_id: str) -> list[int]:
    """Each client sends its own room for ``round_id``, all at once (a barrier): their statuses."""
    start, statuses = threading.Barrier(len(clients)), [0] * len(clients)

    def send(n: int, client: FlaskClient) -> None:
        start.wait()
        statuses[n] = client.post("/v1/score", json=room(round_id, stake=n + 1)).status_code

    threads = [threading.Thread(target=send, args=(n, client)) for n, client in enumerate(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


def test_two_rooms_racing_for_one_round_across_two_instances_exactly_one_scores(url: str) -> None:
    clients = [instance(url).test_client(), instance(url).test_client()]
    outcomes = [sorted(race(clients, f"race-{n}")) for n in range(30)]
    assert all(statuses[0] == 200 and statuses[1] in (409, 422) for statuses in outcomes), outcomes


def test_while_the_first_room_is_in_flight_another_gets_409_and_the_same_room_scores(url: str, redis_port: int) -> None:
    import redis

    held = redis.Redis(port=redis_port)
    held.set(round_key("anonymous", "r-1"), PENDING + digest_bytes(room_digest(room())), ex=IN_FLIGHT_SECONDS)
    client = instance(url).test_client()
    refused = client.post("/v1/score", json=room(stake=2))
    assert refused.status_code == 409 and refused.content_type == "application/problem+json"
    assert refused.get_json()["first_room_digest"] == room_digest(room())
    assert client.post("/v1/score", json=room()).status_code == 200  # the same room, scored again
    assert client.post("/v1/score", json=room(stake=2)).status_code == 422  # and now it is recorded
    page = client.get("/problems/round-in-flight", headers={"Accept-Language": "vi"})
    assert page.status_code == 200 and "Ván đang được tính" in page.get_data(as_text=True)


def test_a_stopped_store_refuses_503_closed_and_scores_unchecked_open(url: str) -> None:
    gone = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    closed = instance(gone).test_client()
    refused = closed.post("/v1/score", json=room())
    assert refused.status_code == 503 and int(refused.headers["Retry-After"]) >= 1
    assert refused.get_json()["type"] == "/problems/service-unavailable"
    assert "MAUBINH_ROUNDS_UNREACHABLE" in refused.get_json()["detail"]
    assert closed.post("/v1/score", json=E1).status_code == 200  # a room without a round never asks the store
    assert closed.post("/v1/score/batch", json={"rooms": [room()]}).status_code == 503
    opened = instance(gone, rounds_unreachable="open").test_client()
    assert opened.post("/v1/score", json=room()).status_code == 200
    assert opened.post("/v1/score", json=room(stake=2)).status_code == 200  # unchecked: the price of open
    metrics = opened.get("/metrics").get_data(as_text=True)
    assert 'maubinh_rounds_unchecked_total{outcome="scored"}' in metrics
    assert 'maubinh_rounds_unchecked_total{outcome="refused"}' in metrics


def test_a_redis_older_than_7_is_named_in_the_log_and_refused_like_a_store_down(
    url: str, redis_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis 6 answers a claim's SET … NX GET with a syntax error: the operator reads why, once, not that."""
    from redis import Redis

    answers = Redis.info
    monkeypatch.setattr(
        Redis, "info", lambda self, section=None: {"redis_version": "6.2.14"} if section == "server" else answers(self)
    )
    with logged() as said:
        refused = instance(url).test_client().post("/v1/score", json=room())
    assert refused.status_code == 503 and int(refused.headers["Retry-After"]) >= 1
    assert len(said) == 1 and "its Redis is 6.2.14, and rounds need 7.0 or later" in said[0]
    assert redis_command(redis_port, "DBSIZE") == b":0\r\n"  # nothing claimed
    monkeypatch.setattr(Redis, "info", answers)
    assert instance(url).test_client().post("/v1/score", json=room()).status_code == 200  # 7.0.15: checked, used


def test_a_refusal_for_the_round_is_signed_names_both_rooms_and_its_receipt_verifies(url: str) -> None:
    client = instance(url, signing_key_file=str(RECEIPT_KEY)).test_client()
    assert client.post("/v1/score", json=room()).status_code == 200
    sent = json.dumps(room(stake=2))
    refused = client.post("/v1/score", data=sent, content_type="application/json")
    assert refused.status_code == 422 and "Signature" in refused.headers
    problem = refused.get_json()
    assert problem["room_digest"] == room_digest(room(stake=2))
    assert problem["first_room_digest"] == room_digest(room())
    headers = {
        name: refused.headers[name] for name in ("Content-Type", "Content-Digest", "Signature-Input", "Signature")
    }
    receipt = {
        "receipt": 1,
        "request": {"method": "POST", "path": "/v1/score", "body": sent},
        "response": {"status": 422, "headers": headers, "body": refused.get_data(as_text=True)},
    }
    checked = client.post("/v1/verify", json=receipt).get_json()["receipt"]
    assert checked["verified"] and not checked["rescored"]  # the refusal rests on the record, not on the rules
    assert [row["outcome"] for row in checked["checks"]] == ["passed", "passed", "passed", "not_known"]


def test_a_round_taken_by_another_room_while_a_batch_scored_refuses_the_batch_and_records_none(
    url: str, redis_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import redis

    from service.api.rounds import Rounds

    held, claim = redis.Redis(port=redis_port), Rounds.claim

    def lapsed(self: Rounds, rooms: Any, caller: str) -> Any:
        made = claim(self, rooms, caller)  # then the claim of "b" lapses, and another room takes the round
        held.set(round_key(caller, "b"), PENDING + digest_bytes(room_digest(room("b", stake=9))), ex=IN_FLIGHT_SECONDS)
        return made

    monkeypatch.setattr(Rounds, "claim", lapsed)
    client = instance(url).test_client()
    scored_before = rooms_scored(client)
    refused = client.post("/v1/score/batch", json={"rooms": [room("a"), room("b")]})
    assert refused.status_code == 409 and refused.get_json()["errors"][0]["pointer"] == "/rooms/1/round_id"
    assert held.get(round_key("anonymous", "a")) is None  # nothing of the batch recorded
    assert rooms_scored(client) == scored_before  # nor counted as scored


def rooms_scored(client: FlaskClient) -> float:
    lines = client.get("/metrics").get_data(as_text=True).splitlines()
    return sum(float(line.split()[-1]) for line in lines if line.startswith("maubinh_rooms_scored_total{"))


def test_a_password_is_taken_as_it_is_and_a_redis_without_one_yet_accepts_it() -> None:
    """MAUBINH_ROUNDS_REDIS_PASSWORD holds any character (a Secret's value: base64's + / =, a trailing newline),
    never in the log; sent as the default user's, it is accepted by the Redis before it asks for one too,
    so that pods given it may roll out first. A wrong one is a store that does not answer: 503, closed."""
    from service.api.config import Settings

    password = "k3J+9a/Z#?%41==\n"
    settings = Settings.from_env({"MAUBINH_ROUNDS_REDIS_PASSWORD": password})
    assert settings.rounds_redis_password == password
    with redis_server(("--save", "", "--appendonly", "no", "--requirepass", password)) as port, logged() as said:
        asking = f"redis://127.0.0.1:{port}/0"
        assert instance(asking).test_client().post("/v1/score", json=room()).status_code == 503  # no password
        given = instance(asking, rounds_redis_password=password).test_client()
        assert given.post("/v1/score", json=room()).status_code == 200
        assert given.post("/v1/score", json=room(stake=2)).get_json()["errors"][0]["code"] == "round_already_scored"
        wrong = instance(asking, rounds_redis_password=password.strip()).test_client()
        assert wrong.post("/v1/score", json=room("r-2")).status_code == 503
    assert len(said) == 2 and not any(password.strip() in line for line in said)  # the refusals, said once each
    with redis_server() as port:  # not asking yet
        assert (
            instance(f"redis://127.0.0.1:{port}/0", rounds_redis_password=password)
            .test_client()
            .post("/v1/score", json=room())
            .status_code
            == 200
        )


@pytest.mark.parametrize("setting", ["MAUBINH_ROUNDS_REDIS_URL", "MAUBINH_QUOTA_REDIS_URL"])
@pytest.mark.parametrize(
    "url",
    [
        "redis://:k3J+9aZ/w==@maubinh-rounds-redis:6379/0",  # a base64 password unescaped: no port to read
        "redis://:k3J9aZw@maubinh-rounds-redis:6379/0?foo=bar",  # a key redis-py hands its connections as is
        "redis://:k3J9aZw@maubinh-rounds-redis:6379/0?protocol=3&cache_config=x",  # one that fails its start
        "redis://:k3J9aZw@maubinh-rounds-redis:6379/0?socket_timeout=10",  # the service's own timeout
        "redis://:k3J9aZw@maubinh-rounds-redis:6379/0?db=x",
    ],
)
def test_a_redis_url_that_cannot_be_used_stops_the_start_without_quoting_it(setting: str, url: str) -> None:
    """Read at a store's first use, such a URL failed every room with a round id (500), quoting the URL's
    password in the traceback, or crashed the start with a traceback; now the start refuses it in one line
    naming the setting, never its password."""
    from service.api.config import SettingError, Settings

    with pytest.raises(SettingError) as refused:
        Settings.from_env({setting: url})
    said = refused.value.args[0].render("en")
    assert setting in said and "k3J" not in said
    with pytest.raises(SettingError, match="is set but empty"):
        Settings.from_env({"MAUBINH_ROUNDS_REDIS_PASSWORD": ""})


def test_a_password_in_the_url_s_query_stays_out_of_the_log() -> None:
    """redis-py reads ?password= too: the start line and every failure line show the URL without its query."""
    from service.api.config import Settings, rounds_state

    settings = Settings.from_env({"MAUBINH_ROUNDS_REDIS_URL": "unix:///run/redis.sock?db=1&password=SECRET"})
    assert "SECRET" not in rounds_state(settings).render("en") and "unix:///run/redis.sock?…" in rounds_state(
        settings
    ).render("en")


def test_a_full_store_is_logged_by_what_it_said_not_by_the_round_it_refused(url: str, redis_port: int) -> None:
    """redis-py's error for a pipeline quotes its command: a caller's round id and the room's digest as raw
    bytes, in the operator's log. The log says Redis's words alone, which the runbook names."""
    redis_command(redis_port, "CONFIG", "SET", "maxmemory", "1")
    try:
        with logged() as lines:
            refused = instance(url).test_client().post("/v1/score", json=room("club-7/secret-round"))
    finally:
        redis_command(redis_port, "CONFIG", "SET", "maxmemory", "0")
    assert refused.status_code == 503
    (said,) = lines
    assert "maxmemory" in said and "secret-round" not in said and "Command #" not in said
