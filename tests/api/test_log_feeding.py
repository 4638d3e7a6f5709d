"""The service's side of the transparency log, in process: each signed answer hands its statements to
the feeder as it leaves (one a room, a batch's in order), the same bytes a verifier writes from the
answer's receipt; nothing without a signing key; a full queue drops and counts, never waits."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import golden_cases

from service.api import create_app
from service.api.config import SettingError, Settings, check_usable
from service.transparency.add_key import ADD_KEY_FILE_ENV, AddKeyError, carries, read_add_key
from service.transparency.feeder import Feeder
from service.trust.ruling_log import receipt_statements

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]
LOG = "http://127.0.0.1:9"  # nothing listens: the thread that would post is never started here


@pytest.fixture
def handed(monkeypatch: pytest.MonkeyPatch) -> list[list[bytes]]:
    given: list[list[bytes]] = []
    monkeypatch.setattr(Feeder, "submit", lambda self, statements: given.append(statements))
    return given


def signing_key(folder: Path) -> str:
    pem = folder / "signing.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(pem)], check=True, capture_output=True)
    return str(pem)


def receipt(path: str, body: dict[str, Any], answer: Any) -> dict[str, Any]:
    headers = {k.lower(): v for k, v in answer.headers.items()}
    return {"receipt": 1, "request": {"method": "POST", "path": path, "body": json.dumps(body)},
            "response": {"status": answer.status_code, "headers": headers, "body": answer.get_data(as_text=True)}}  # fmt: skip


def test_each_signed_ruling_is_handed_over_as_its_receipt_says_it(tmp_path: Path, handed: list[list[bytes]]) -> None:
    client = create_app(
        {"log_requests": False, "signing_key_file": signing_key(tmp_path), "log_url": LOG}
    ).test_client()
    sent = {**E1, "round_id": "t7-r1"}
    answer = client.post("/v1/score", json=sent)
    batch = {"rooms": [{**E1, "round_id": "b1"}, {**E1, "stake": 2}]}
    batched = client.post("/v1/score/batch", json=batch)
    refused = {**E1, "players": E1["players"][:1]}
    refusal = client.post("/v1/score", json=refused)
    client.get("/v1/rulesets")  # signs nothing, logs nothing
    assert refusal.status_code == 422
    wanted = [
        receipt_statements(receipt(p, b, a), b)[0]
        for p, b, a in (
            ("/v1/score", sent, answer),
            ("/v1/score/batch", batch, batched),
            ("/v1/score", refused, refusal),
        )
    ]
    assert handed == wanted
    assert [json.loads(s)["round_id"] for s in handed[1]] == ["b1", None]
    assert json.loads(handed[0][0])["room_digest"] == answer.get_json()["room_digest"]
    assert b"AS" not in b"".join(handed[0])  # a digest of the room, never its cards


def test_nothing_is_handed_over_unsigned_or_without_a_log(tmp_path: Path, handed: list[list[bytes]]) -> None:
    for settings in ({"log_url": LOG}, {"signing_key_file": signing_key(tmp_path)}):
        client = create_app({"log_requests": False, **settings}).test_client()
        assert client.post("/v1/score", json=E1).status_code == 200
    assert handed == []


def test_a_full_queue_drops_and_counts_without_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    counted: list[tuple[str, int]] = []
    feeder = Feeder(LOG, lambda outcome, n: counted.append((outcome, n)), capacity=2)
    monkeypatch.setattr(feeder, "_start", lambda: None)
    feeder.submit([b"1", b"2", b"3"])
    feeder.submit([b"4"])
    assert counted == [("dropped", 1), ("queued", 2), ("dropped", 1)]


def test_the_add_key_is_read_whole_and_compared_as_a_bearer_token(tmp_path: Path) -> None:
    good = tmp_path / "add.key"
    good.write_text("  k3y-of+the/log_~.0123456789==\n")
    assert read_add_key(str(good)) == "k3y-of+the/log_~.0123456789=="
    for text, why in (("\n", "tlog.add_key_empty"), ("two keys-on-one-line\n", "tlog.add_key_character"),
                      ("é" * 20, "tlog.add_key_character"), ("short-key", "tlog.add_key_short"),
                      ("k" * 257, "tlog.add_key_long")):  # fmt: skip
        (tmp_path / "bad.key").write_text(text)
        with pytest.raises(AddKeyError) as refused:
            read_add_key(str(tmp_path / "bad.key"))
        assert refused.value.args[0].key == why
    os.mkfifo(tmp_path / "fifo.key")
    for unreadable in ("absent.key", "fifo.key", "."):  # a FIFO would block the start
        with pytest.raises(AddKeyError) as refused:
            read_add_key(str(tmp_path / unreadable))
        assert refused.value.args[0].key == "tlog.add_key_unreadable"
    key = "k3y-of+the/log_~.0123456789=="
    assert carries(f"Bearer {key}", key) and carries(f"bearer {key}", key)
    assert not any(carries(given, key) for given in (None, "", key, f"Basic {key}", f"Bearer {key}x", "Bearer "))


def test_a_log_add_key_that_cannot_be_read_stops_the_start(tmp_path: Path) -> None:
    assert Settings.from_env({ADD_KEY_FILE_ENV: "add.key"}).log_add_key_file == "add.key"  # the log's variable
    settings = {"signing_key_file": signing_key(tmp_path), "log_url": LOG, "log_add_key_file": str(tmp_path / "none")}
    with pytest.raises(SettingError) as refused:
        check_usable(Settings(**settings))
    assert "MAUBINH_LOG_ADD_KEY_FILE" in str(refused.value) and "none" in str(refused.value)
    with pytest.raises(SettingError):
        create_app({"log_requests": False, **settings})


def test_the_monitor_finds_no_re_roll_in_a_refusal_corrected_an_audit_or_a_receipt_naming_a_round(
    tmp_path: Path, handed: list[list[bytes]]
) -> None:
    """Found by an attack on the API: a room refused then sent corrected, a settlement of the round
    audited by POST /v1/verify (its digest covered the claim), and a receipt sent to /v1/verify with a
    round_id of its own were each read as the round ruled on a second room; and one room past canonical
    JSON in a batch (no digest) took every round id of its batch out of the log. A verify's entry is its
    room less the claim: the same room audited is no second room, another room settled by verify is."""
    from service.trust.ruling_log import Findings

    client = create_app(
        {"log_requests": False, "signing_key_file": signing_key(tmp_path), "log_url": LOG}
    ).test_client()
    assert client.post("/v1/score", json={**E1, "round_id": "r1", "stake": 0}).status_code == 422
    assert client.post("/v1/score", json={**E1, "round_id": "r1"}).status_code == 200
    claimed = {"amounts": {"P": -9000, "Q": 9000}}
    assert client.post("/v1/verify", json={**E1, "round_id": "r1", "claimed": claimed}).status_code == 200
    framing = {"receipt": 1, "request": {"method": "POST", "path": "/v1/score", "body": "{}"},
               "response": {"status": 200, "headers": {}, "body": "{}"}, "round_id": "r1"}  # fmt: skip
    assert client.post("/v1/verify", json=framing).status_code == 200
    rooms = [{**E1, "round_id": "b1"}, {**E1, "round_id": "b2", "stake": int("9" * 400)}, {**E1, "round_id": "b3"}]
    assert client.post("/v1/score/batch", json={"rooms": rooms}).status_code == 200
    assert client.post("/v1/score/batch", json={"rooms": rooms[:1], "x": 1}).status_code == 422
    log = [s for statements in handed for s in statements]
    named = [(json.loads(s)["route"], json.loads(s)["round_id"]) for s in log]
    assert named == [
        ("/v1/score", None),  # refused: no round's settlement, as rounds scored once records none
        ("/v1/score", "r1"),
        ("/v1/verify", "r1"),
        ("/v1/verify", None),
        ("/v1/score/batch", "b1"),
        ("/v1/score/batch", "b3"),  # b2 has no digest and no statement; b3 keeps its round
        ("/v1/score/batch", None),  # its envelope refused: one ruling on the whole batch, of no round
    ]
    findings = Findings()
    for at, statement in enumerate(log):
        findings.see(at, statement, None)
    assert findings.report(log.__getitem__)["rounds_scored_twice"] == {}
    p, q = E1["players"]
    swapped = {**E1, "round_id": "r1", "players": [{**q, "id": "P"}, {**p, "id": "Q"}], "claimed": claimed}
    assert client.post("/v1/verify", json=swapped).status_code == 200  # r1 settled on another room, by verify
    log.extend(handed[-1])
    findings.see(len(log) - 1, log[-1], None)
    assert list(findings.report(log.__getitem__)["rounds_scored_twice"]) == ["r1"]


def test_a_receipt_of_a_refusal_is_found_under_the_statement_first_written_for_it(
    tmp_path: Path, handed: list[list[bytes]]
) -> None:
    """Until 2026-12-07 a refused room's statement named its round: its receipt is found in a log written
    then, and proven by the proof of then."""
    from tlog_trees import SIGNER, entries, grow

    from service.transparency.reading import latest, prove_inclusion, reader
    from service.transparency.tiles import TiledTree
    from service.trust.ruling_log import LogIndex, in_log

    client = create_app(
        {"log_requests": False, "signing_key_file": signing_key(tmp_path), "log_url": LOG}
    ).test_client()
    sent = {**E1, "round_id": "r1", "stake": 0}
    refusal = client.post("/v1/score", json=sent)
    kept = receipt("/v1/score", sent, refusal)
    (now,), created = receipt_statements(kept, sent)
    (then,), _ = receipt_statements(kept, sent, first_form=True)
    assert json.loads(now)["round_id"] is None and json.loads(then)["round_id"] == "r1"
    grow(tmp_path / "log", [*entries(5), then, json.dumps({"created": created + 120}).encode()], steps=1)
    read = reader(str(tmp_path / "log"))
    checkpoint = latest(read, SIGNER.verifier)
    index = LogIndex.of(TiledTree(read, checkpoint.size), checkpoint.root)
    assert in_log(kept, sent, index, SIGNER.verifier).code is None
    proven = {**kept, "log": {"proofs": [prove_inclusion(read, checkpoint, 5).text()]}}
    assert in_log(proven, sent, None, SIGNER.verifier).code is None
    other = {**kept, "log": {"proofs": [prove_inclusion(read, checkpoint, 4).text()]}}
    assert in_log(other, sent, None, SIGNER.verifier).code == "bad_log_proof"


def test_a_receipt_the_log_holds_no_ruling_of_says_nothing_of_the_log(
    tmp_path: Path, handed: list[list[bytes]]
) -> None:
    """A room past canonical JSON is refused unbound, and logged as nothing: its receipt's verdict does not
    say it is 'in the log (entries  of N)'."""
    from tlog_trees import SIGNER, entries, grow

    from service.transparency.reading import latest, reader
    from service.transparency.tiles import TiledTree
    from service.trust.ruling_log import LogIndex, in_log

    client = create_app(
        {"log_requests": False, "signing_key_file": signing_key(tmp_path), "log_url": LOG}
    ).test_client()
    sent = {**E1, "stake": int("9" * 400)}
    kept = receipt("/v1/score", sent, client.post("/v1/score", json=sent))
    assert handed == [[]]
    grow(tmp_path / "log", entries(3), steps=1)
    read = reader(str(tmp_path / "log"))
    checkpoint = latest(read, SIGNER.verifier)
    found = in_log(kept, sent, LogIndex.of(TiledTree(read, checkpoint.size), checkpoint.root), SIGNER.verifier)
    assert found.code is None and found.said is None
