"""A witness (c2sp.org/tlog-witness) cosigns a log's checkpoint only when the tree extends the one it last
cosigned: every status of add-checkpoint in the spec's order, its record kept across a restart and
under a race, and cosignatures written as c2sp.org/tlog-cosignature says (checked here with libsodium
on the message the spec spells out, not with the witness's own reader)."""

from __future__ import annotations

import base64
import hashlib
import struct
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from nacl.bindings import crypto_sign_open, crypto_sign_seed_keypair
from tlog_trees import ORIGIN, SIGNER, entries, grow

from service.transparency.merkle import consistency_proof
from service.transparency.note import NoteError, Signer
from service.transparency.reading import reader
from service.transparency.tiles import TiledTree
from service.transparency.witness import Cosigner, CosignerKey, Witness

COSIGNER = Cosigner("witness.test/w1", bytes(range(100, 132)))
NOW = 1796083200


def checkpoints(folder: Path, given: list[bytes], steps: int) -> list[str]:
    """The log's checkpoint note after each of ``steps`` integrations of ``given``."""
    notes, cut = [], len(given) // steps
    for k in range(steps):
        grow(folder, given[k * cut : (k + 1) * cut], steps=1)
        notes.append((folder / "checkpoint").read_text())
    return notes


def body(old: int, note: str, proof: Sequence[bytes] = ()) -> bytes:
    return "\n".join([f"old {old}", *(base64.b64encode(h).decode() for h in proof), "", note]).encode()


def proof(folder: Path, old: int, new: int) -> list[bytes]:
    return consistency_proof(old, new, TiledTree(reader(str(folder)), new).subtree)


@pytest.fixture
def log(tmp_path: Path) -> tuple[Path, list[str]]:
    return tmp_path / "log", checkpoints(tmp_path / "log", entries(300), 3)


def witness(folder: Path) -> Witness:
    return Witness(folder, {ORIGIN: SIGNER.verifier}, COSIGNER)


def test_a_cosignature_is_the_specs_timestamped_ed25519_signature(log: tuple[Path, list[str]]) -> None:
    _, notes = log
    answer = witness(log[0].parent / "w").add_checkpoint(body(0, notes[0]), NOW)
    assert (answer.status, answer.content_type) == (200, "text/plain; charset=utf-8")
    dash, name, blob64 = answer.body.decode().rstrip("\n").split(" ")
    assert (dash, name) == ("\u2014", "witness.test/w1") and answer.body.endswith(b"\n")
    public, _ = crypto_sign_seed_keypair(COSIGNER.seed)
    blob = base64.b64decode(blob64)
    assert blob[:4] == hashlib.sha256(b"witness.test/w1\n\x04" + public).digest()[:4]
    assert struct.unpack(">Q", blob[4:12]) == (NOW,)
    text = notes[0][: notes[0].rfind("\n\n") + 1]
    crypto_sign_open(blob[12:] + f"cosignature/v1\ntime {NOW}\n".encode() + text.encode(), public)
    assert COSIGNER.key.timestamp(notes[0] + answer.body.decode()) == NOW
    assert CosignerKey.parse(COSIGNER.key.vkey) == COSIGNER.key
    name, hex_id, material = COSIGNER.key.vkey.split("+")
    for wrong, why in (
        (SIGNER.verifier.vkey, "type 0x04"),  # a log's verifier key is no cosigner key
        (f"{name}+{int(hex_id, 16) ^ 1:08x}+{material}", "not the hash"),
        (f"{name}+{hex_id[:6]}+{material}", "type 0x04"),
        (f"{name}+{hex_id}", "<name>"),
    ):
        with pytest.raises(NoteError, match=why):
            CosignerKey.parse(wrong)
    with pytest.raises(NoteError, match="no cosignature"):
        Cosigner("witness.test/w2", bytes(32)).key.timestamp(notes[0] + answer.body.decode())


def test_the_specs_example_cosignature_holds_its_timestamp_big_endian_after_the_key_id() -> None:
    example = "jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA=="
    blob = base64.b64decode(example)
    assert len(blob) == 76 and struct.unpack(">Q", blob[4:12]) == (1679315147,)  # its message's "time 1679315147"


def test_each_checkpoint_is_cosigned_only_as_an_extension_of_the_last(log: tuple[Path, list[str]]) -> None:
    folder, notes = log
    seen = witness(folder.parent / "w")
    assert seen.add_checkpoint(body(0, notes[0]), NOW).status == 200
    stale = seen.add_checkpoint(body(0, notes[1]), NOW)
    assert (stale.status, stale.content_type, stale.body) == (409, "text/x.tlog.size", b"100\n")
    assert seen.add_checkpoint(body(100, notes[1], proof(folder, 100, 200)), NOW).status == 200
    assert seen.add_checkpoint(body(200, notes[1]), NOW).status == 200  # the same again
    assert seen.add_checkpoint(body(200, notes[0]), NOW).status == 400  # rolled back: old above the size
    assert seen.add_checkpoint(body(100, notes[2], proof(folder, 100, 300)), NOW).body == b"200\n"
    wrong = proof(folder, 200, 300)
    wrong[0] = bytes(32)
    assert seen.add_checkpoint(body(200, notes[2], wrong), NOW).status == 422
    assert seen.add_checkpoint(body(200, notes[2], proof(folder, 100, 300)), NOW).status == 422
    assert seen.add_checkpoint(body(200, notes[2], proof(folder, 200, 300)), NOW).status == 200
    again = witness(folder.parent / "w").add_checkpoint(body(0, notes[0]), NOW)  # a restart keeps its record
    assert (again.status, again.body) == (409, b"300\n")


def test_a_forked_tree_is_refused_at_the_same_size_and_beyond(log: tuple[Path, list[str]], tmp_path: Path) -> None:
    folder, notes = log
    seen = witness(tmp_path / "w")
    assert seen.add_checkpoint(body(0, notes[1]), NOW).status == 200
    forked = checkpoints(tmp_path / "fork", entries(300, tag="f"), 3)
    assert seen.add_checkpoint(body(200, forked[1]), NOW).status == 409
    assert seen.add_checkpoint(body(200, forked[2], proof(tmp_path / "fork", 200, 300)), NOW).status == 422
    assert seen.add_checkpoint(body(200, notes[2], proof(folder, 200, 300)), NOW).status == 200


@pytest.mark.parametrize(
    ("request_body", "status"),
    [
        (b"old 01\n\n", 400),
        (b"nothing", 400),
        (b"old 0\nnot base64!\n\n", 400),
        (b"old 0\n" + b"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n" * 64 + b"\n", 400),
        (b"old 0\n\nno checkpoint\n", 400),
    ],
)
def test_a_request_that_cannot_be_read_is_a_400(tmp_path: Path, request_body: bytes, status: int) -> None:
    assert witness(tmp_path).add_checkpoint(request_body, NOW).status == status


def test_an_unknown_log_is_a_404_and_a_note_no_trusted_key_signed_a_403(log: tuple[Path, list[str]]) -> None:
    folder, notes = log
    assert Witness(folder.parent / "w", {}, COSIGNER).add_checkpoint(body(0, notes[0]), NOW).status == 404
    text = notes[0][: notes[0].rfind("\n\n") + 1]
    other = Signer(ORIGIN, bytes(32)).sign(text)
    assert witness(folder.parent / "w").add_checkpoint(body(0, other), NOW).status == 403
    assert witness(folder.parent / "w").add_checkpoint(body(0, text + "\n"), NOW).status == 403  # unsigned
    assert witness(folder.parent / "w").add_checkpoint(body(0, text), NOW).status == 400  # no signature block


def ask(seen: Witness, request: bytes, statuses: list[int]) -> None:
    statuses.append(seen.add_checkpoint(request, NOW).status)


def test_two_racing_requests_from_one_size_get_one_cosignature(log: tuple[Path, list[str]], tmp_path: Path) -> None:
    folder, notes = log
    for attempt in range(5):
        seen = witness(tmp_path / f"w{attempt}")
        assert seen.add_checkpoint(body(0, notes[0]), NOW).status == 200
        requests = [body(100, notes[1], proof(folder, 100, 200)), body(100, notes[2], proof(folder, 100, 300))]
        statuses: list[int] = []
        threads = [threading.Thread(target=ask, args=(seen, b, statuses)) for b in requests]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(statuses) == [200, 409]


def test_the_witness_is_served_bounded_as_the_log_is(tmp_path: Path) -> None:
    """Anyone may reach a witness: its connections are bounded in number and in the time a request head
    may take (it had neither, a thread a connection kept for good), and a Content-Length of "²" is a 411."""
    import socket
    import time
    import urllib.request
    from contextlib import suppress

    from service.transparency.witness import WitnessServer

    server = WitnessServer(("127.0.0.1", 0), witness(tmp_path / "w"), most_connections=2, idle_seconds=1.5)
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    serving.start()
    where = ("127.0.0.1", int(server.server_address[1]))

    def healthy() -> bool:
        try:
            with urllib.request.urlopen(f"http://{where[0]}:{where[1]}/healthz", timeout=2) as answer:
                return bool(answer.status == 200)
        except OSError:
            return False

    try:
        smuggled = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
        for head in (
            "POST /add-checkpoint HTTP/1.1\r\nHost: x\r\nContent-Length: \u00b2\r\n\r\n",
            "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: {n}\r\n\r\n",
            "POST /add-checkpoint HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
            "POST /x HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: {n}\r\n\r\n",
        ):
            with socket.create_connection(where, timeout=5) as connection:  # a refusal, then nothing read
                connection.sendall(head.format(n=len(smuggled)).encode() + smuggled)
                answered = b""
                while chunk := connection.recv(65536):
                    answered += chunk
            assert answered.count(b"HTTP/1.1 ") == 1 and answered[9:12] in (b"411", b"404"), answered
        held = [socket.create_connection(where, timeout=5) for _ in range(2)]
        try:
            held[0].sendall(b"GET /healthz HTTP/1.1\r\n")  # and never the rest
            held[1].sendall(b"POST /add-checkpoint HTTP/1.1\r\nContent-Length: 60000\r\n\r\n")
            time.sleep(0.1)
            assert not healthy()  # every slot held
            started = time.monotonic()
            with suppress(OSError):
                while time.monotonic() - started < 8:  # its body a byte every 0.1 s: never idle for 1.5 s
                    held[1].sendall(b"x")
                    time.sleep(0.1)
            assert time.monotonic() - started < 5  # closed once the request was late, body and all
            assert held[0].recv(1) == b""
        finally:
            for connection in held:
                connection.close()
        deadline = time.monotonic() + 3
        while not healthy():
            assert time.monotonic() < deadline, "the slots were not given back"
            time.sleep(0.05)
    finally:
        server.shutdown()
        server.server_close()
        serving.join(5)
