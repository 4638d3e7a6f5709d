"""The log in process, on a folder: what it integrates checks whole, a journal torn by a crash is cut
and integrated again to the same bytes, and every tampering is refused: a tile's byte changed, an entry
removed, a checkpoint rolled back or forked, a note signed by another key. And a receipt's rulings
found in the log, missing from it past the merge delay, or proven by the proofs it carries."""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from tlog_trees import ORIGIN, SIGNER, entries, grow

from service.transparency.integrate import Integrator
from service.transparency.merkle import ProofError, leaf_hash
from service.transparency.note import NoteError, Signer, open_checkpoint
from service.transparency.reading import check_consistent, latest, prove_inclusion, reader
from service.transparency.stores import JOURNAL, FolderStore
from service.transparency.tiles import Read, TiledTree, TreeFault, check_tree, tile_path
from service.trust.ruling_log import MERGE_DELAY, LogIndex, in_log, receipt_statements

VECTORS = json.loads((Path(__file__).resolve().parents[1] / "receipts" / "vectors.json").read_text("utf-8"))


def read_all(folder: Path) -> list[bytes]:
    read = reader(str(folder))
    checkpoint = latest(read, SIGNER.verifier)
    return [entry for _, entry in check_tree(TiledTree(read, checkpoint.size), checkpoint.root)]


def test_what_the_log_integrates_checks_whole_at_every_level(tmp_path: Path) -> None:
    given = entries(70_000 // 100)  # 700: full level-0 tiles, a partial one, a partial level-1 tile
    grow(tmp_path, given, steps=7)
    assert read_all(tmp_path) == given
    assert (tmp_path / tile_path(1, 0, 2)).is_file() and (tmp_path / tile_path("entries", 2, 188)).is_file()


def test_a_restart_integrates_the_journals_rest_to_the_same_bytes(tmp_path: Path) -> None:
    given = entries(600)
    grow(tmp_path / "once", given, steps=1)
    store = FolderStore(tmp_path / "twice")
    Integrator(store, SIGNER, ORIGIN)
    store.sequence(given[:300])
    Integrator(store, SIGNER, ORIGIN).integrate()
    store.sequence(given[300:])  # sequenced, then the process dies before integrating
    store.close()
    with open(tmp_path / "twice" / JOURNAL, "ab") as journal:
        journal.write(b"\x00\x00\x00\x09torn")  # a record the crash cut short: never acknowledged
    store = FolderStore(tmp_path / "twice")
    assert store.sequenced() == 600
    Integrator(store, SIGNER, ORIGIN).integrate()
    store.close()
    for name in ("checkpoint", tile_path(0, 1), tile_path("entries", 2, 88), tile_path(1, 0, 2)):
        assert (tmp_path / "once" / name).read_bytes() == (tmp_path / "twice" / name).read_bytes(), name


def test_a_changed_tile_byte_or_a_removed_entry_is_refused(tmp_path: Path) -> None:
    grow(tmp_path / "log", entries(300))
    for name, change in (
        (tile_path(0, 0), lambda data: data[:100] + bytes([data[100] ^ 1]) + data[101:]),
        (tile_path(1, 0, 1), lambda data: bytes(32)),
        (tile_path("entries", 1, 44), lambda data: data[data.index(b"}") + 1 :]),  # its first entry removed
        (tile_path("entries", 0), lambda data: data.replace(b'{"e":7}', b'{"e":8}')),
    ):
        copy = tmp_path / name.replace("/", "_")
        shutil.copytree(tmp_path / "log", copy)
        (copy / name).write_bytes(change((copy / name).read_bytes()))
        with pytest.raises(TreeFault):
            read_all(copy)


def test_a_checkpoint_rolled_back_forked_or_signed_by_another_key_is_refused(tmp_path: Path) -> None:
    grow(tmp_path / "log", entries(100), steps=1)
    old = (tmp_path / "log" / "checkpoint").read_text()
    grow(tmp_path / "fork", entries(100, "f"), steps=1)
    forked = (tmp_path / "fork" / "checkpoint").read_text()
    store = FolderStore(tmp_path / "log")
    store.sequence(entries(50, "more"))
    Integrator(store, SIGNER, ORIGIN).integrate()
    read = reader(str(tmp_path / "log"))
    new = latest(read, SIGNER.verifier)
    check_consistent(read, open_checkpoint(old, SIGNER.verifier), new)  # append only: holds
    with pytest.raises(ProofError):  # another tree of the same size
        check_consistent(read, open_checkpoint(forked, SIGNER.verifier), new)
    with pytest.raises(ProofError):  # a tree of 100 cannot extend one of 150: rolled back
        check_consistent(read, new, open_checkpoint(old, SIGNER.verifier))
    stranger = Signer(ORIGIN, bytes(32))
    with pytest.raises(NoteError):
        open_checkpoint(stranger.sign(new.text()), SIGNER.verifier)


def vector_receipt() -> dict[str, object]:
    return {"receipt": 1, "request": VECTORS["request"], "response": VECTORS["response"]}


def test_a_receipts_ruling_is_found_missing_past_the_merge_delay_or_proven(tmp_path: Path) -> None:
    receipt = vector_receipt()
    request = json.loads(VECTORS["request"]["body"])
    (ruling,), created = receipt_statements(receipt, request)
    assert json.loads(ruling) == {
        "round_id": "vector-1", "room_digest": VECTORS["room_digest"],
        "content_digest": VECTORS["response"]["headers"]["content-digest"],
        "keyid": "pksIOXuFhdBB4yqVMO6Bm6bBlk_1FwL-48voif6qhz8", "created": 1796083200, "route": "/v1/score",
    }  # fmt: skip
    assert b" " not in ruling and ruling.index(b'"content_digest"') < ruling.index(b'"created"')  # RFC 8785
    later = json.dumps({"created": created + MERGE_DELAY}).encode()
    grow(tmp_path / "without", [later], steps=1)
    read = reader(str(tmp_path / "without"))
    checkpoint = latest(read, SIGNER.verifier)
    index = LogIndex.of(TiledTree(read, checkpoint.size), checkpoint.root)
    assert in_log(receipt, request, index, SIGNER.verifier).code == "not_in_log"
    index.latest = created + MERGE_DELAY - 1  # nothing in the log is that late: not yet due
    assert in_log(receipt, request, index, SIGNER.verifier).code is None

    grow(tmp_path / "with", [*entries(9), ruling, later], steps=1)
    read = reader(str(tmp_path / "with"))
    checkpoint = latest(read, SIGNER.verifier)
    index = LogIndex.of(TiledTree(read, checkpoint.size), checkpoint.root)
    assert index.at(leaf_hash(ruling)) == 9
    assert in_log(receipt, request, index, SIGNER.verifier).code is None
    proof = prove_inclusion(read, checkpoint, 9).text()
    carried = {**receipt, "log": {"proofs": [proof]}}
    assert in_log(carried, request, None, SIGNER.verifier).code is None  # no log at hand: the proof alone
    bad = {**receipt, "log": {"proofs": [proof.replace("index 9", "index 8")]}}
    assert in_log(bad, request, None, SIGNER.verifier).code == "bad_log_proof"
    other = Signer(ORIGIN, bytes(32)).verifier
    assert in_log(carried, request, None, other).code == "bad_log_proof"


def test_an_index_finds_each_entry_by_its_leaf_hash_the_last_of_two_alike() -> None:
    """Kept as 16 bytes each and sorted: a hash ending in zero bytes (which numpy drops from an item read
    alone) found as well as any other, one differing only there not found, the later of two alike given."""
    rng = random.Random(9)
    hashes = [rng.randbytes(16) for _ in range(500)]
    hashes[7] = hashes[3][:15] + b"\x00"
    hashes[11] = hashes[3][:14] + b"\x00\x00"
    hashes[400] = hashes[20]  # the same entry twice: the later index, as a dict of them gave
    index = LogIndex(len(hashes), bytearray(b"".join(hashes)))
    expected = {h: k for k, h in enumerate(hashes)}
    for leaf, at in expected.items():
        assert index.at(leaf + rng.randbytes(16)) == at
    assert index.at(hashes[3][:15] + b"\x01" + bytes(16)) is None
    assert index.at(hashes[3][:14] + b"\x00\x01" + bytes(16)) is None
    assert index.at(bytes(32)) is None and index.at(b"\xff" * 32) is None


def test_the_monitor_notes_each_ruling_in_a_few_bytes_and_reads_again_only_the_rounds_ruled_twice() -> None:
    from service.trust.ruling_log import Findings, statement

    def ruling(round_id: str | None, room: str, keyid: str = "k1") -> bytes:
        return statement(round_id, room, "sha-256=:x:", keyid, 1796083200, "/v1/score")

    log = [ruling(f"r-{k}", f"sha256:{k:064x}") for k in range(300)]
    log[10] = ruling("r-3", "sha256:" + "3".rjust(64, "0"))  # r-3 sent again, the same room: a retry
    log[20] = ruling("r-5", "sha256:" + "f" * 64)  # r-5 on another room: a re-roll
    log[30] = ruling("r-9", "sha256:" + "9".rjust(64, "0"), keyid="stranger")
    log[40] = b'{"round_id": "r-40", "room_digest": ["not", "a", "digest"], "keyid": "k1"}'
    log[50] = b"not a statement"
    log[60] = ruling(None, "sha256:" + "e" * 64)  # a ruling that names no round
    findings = Findings()
    for at, entry in enumerate(log):
        findings.see(at, entry, {"k1"})
    read_again: list[int] = []

    def entry(at: int) -> bytes:
        read_again.append(at)
        return log[at]

    report = findings.report(entry)
    assert report["entries"] == 300
    assert report["rounds_scored_twice"] == {
        "r-5": {"rooms": sorted(["sha256:" + "5".rjust(64, "0"), "sha256:" + "f" * 64]), "entries": [5, 20]}
    }
    assert read_again == [5, 20]  # only the re-rolled round's entries are read again
    assert report["unknown_keys"] == {"stranger": [30]}
    assert report["unreadable_entries"] == [40, 50]
    assert len(findings.rounds.rounds) == 300 - 3  # 8 bytes a round, 8 a room, no text kept


def test_the_monitor_takes_a_round_id_in_nfc_and_in_nfd_for_one_round() -> None:
    """As rounds scored once and receipts verify do: "Bàn 1" with a precomposed or a combining accent."""
    from service.trust.ruling_log import Findings, statement

    log = [
        statement(name, f"sha256:{k:064x}", "sha-256=:x:", "k1", 1796083200, "/v1/score")
        for k, name in enumerate(("B\u00e0n 1", "Ba\u0300n 1", "Ba\u0300n 2"))
    ]
    findings = Findings()
    for at, entry in enumerate(log):
        findings.see(at, entry, {"k1"})
    twice = findings.report(lambda at: log[at])["rounds_scored_twice"]
    assert twice == {"B\u00e0n 1": {"rooms": [f"sha256:{k:064x}" for k in (0, 1)], "entries": [0, 1]}}


def test_a_walk_through_every_entry_keeps_a_tile_a_level_and_reads_each_once(tmp_path: Path) -> None:
    given = entries(700)  # three level-0 tiles, one level-1
    grow(tmp_path, given, steps=7)
    read = reader(str(tmp_path))
    checkpoint = latest(read, SIGNER.verifier)
    asked: list[str] = []

    def counted(path: str) -> bytes | None:
        asked.append(path)
        return read(path)

    tree = TiledTree(counted, checkpoint.size, keep_all=False)
    assert [entry for _, entry in check_tree(tree, checkpoint.root)] == given
    assert sorted(asked) == sorted(set(asked)) and len(asked) == 3 + 3 + 1  # bundles, level-0 tiles, a level-1 tile
    assert sorted(level for level, _ in tree._tiles) == [0, 1]  # the last of each level, not all seven


def honest_once(honest: Path, doctored: Path) -> Callable[[str], Read]:
    """A reader (for ``reading.reader``'s place) of a hostile log: each file from ``honest`` the first time
    it is asked for, from ``doctored`` after (the checkpoint always honest)."""
    first, then, served = reader(str(honest)), reader(str(doctored)), set()

    def hostile(where: str) -> Read:
        def read(path: str) -> bytes | None:
            again = path in served and path != "checkpoint"
            served.add(path)
            return then(path) if again else first(path)

        return read

    return hostile


def test_the_monitor_proves_each_entry_it_reads_again_against_the_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A log that serves its tiles and bundles honestly once, then another tree's (a round's second room
    made its first), hid the re-roll: the entries read again were checked against a tile read again, never
    against the checkpoint's root, and the monitor exited 0."""
    from service.cli import main
    from service.transparency import reading
    from service.trust.ruling_log import statement

    def ruling(round_id: str, k: int) -> bytes:
        return statement(round_id, f"sha256:{k:064x}", "sha-256=:x:", "k1", 1796083200, "/v1/score")

    honest = [ruling(f"r-{k}", k) for k in range(300)]
    honest[20] = ruling("r-5", 20)
    doctored = [*honest[:20], ruling("r-5", 5), *honest[21:]]
    grow(tmp_path / "honest", honest, steps=1)
    grow(tmp_path / "doctored", doctored, steps=1)
    hostile = honest_once(tmp_path / "honest", tmp_path / "doctored")
    (tmp_path / "log.vkey").write_text(SIGNER.verifier.vkey)
    assert main(["log", "monitor", "--log", str(tmp_path / "honest"), "--vkey", str(tmp_path / "log.vkey")]) == 1
    assert '"r-5"' in capsys.readouterr().out
    monkeypatch.setattr(reading, "reader", hostile)
    assert main(["log", "monitor", "--log", "hostile", "--vkey", str(tmp_path / "log.vkey")]) == 1
    assert "another root" in capsys.readouterr().err


def test_a_log_s_files_are_bounded_in_kind_size_and_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before, a folder's checkpoint that was a pipe blocked the monitor for ever, one that was a link to
    /dev/zero or a 40 GB sparse file ended in MemoryError, a server that answered no HTTP in a traceback,
    and one that sent a byte every two seconds held it for as long as it liked."""
    import os
    import time

    from hostile_server import answering_once

    from service.transparency import reading

    grow(tmp_path / "log", entries(3), steps=1)
    os.mkfifo(tmp_path / "pipe")
    for name, odd in (("fifo", tmp_path / "pipe"), ("zero", Path("/dev/zero"))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "checkpoint").symlink_to(odd)
        with pytest.raises(reading.LogUnreadable, match="not a regular file"):
            reading.reader(str(tmp_path / name))("checkpoint")
    monkeypatch.setattr(reading, "FILE_MOST", 64)
    with pytest.raises(reading.LogUnreadable, match="more than 64 bytes"):
        reading.reader(str(tmp_path / "log"))("checkpoint")
    monkeypatch.setattr(reading, "FETCH_SECONDS", 1.0)
    with pytest.raises(reading.LogUnreadable, match="BadStatusLine"):
        reading.reader(answering_once(b"NOT HTTP\r\n\r\n"))("checkpoint")
    started = time.monotonic()
    with pytest.raises(reading.LogUnreadable, match="within 1 s"):
        reading.reader(answering_once(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 100, 0.3))(
            "checkpoint"
        )
    assert time.monotonic() - started < 3


def test_the_monitor_names_unknown_keys_in_a_few_bytes_whatever_their_ids() -> None:
    """Before, every distinct key id was kept whole: 3,000 entries of 64 KB made-up ids took 631 MB."""
    from service.trust import ruling_log
    from service.trust.ruling_log import Findings, statement

    findings = Findings()
    for at in range(1500):
        findings.see(
            at, statement(None, f"sha256:{at:064x}", "sha-256=:x:", f"{at:05d}" + "k" * 70_000, 1, "/v1/score"), {"k1"}
        )
    findings.see(1500, b'{"room_digest": "sha256:' + b"0" * 64 + b'", "keyid": [[[1]]]}', {"k1"})
    unknown = findings.report(lambda at: b"")["unknown_keys"]
    assert len(unknown) == ruling_log.UNKNOWN_KEYS_NAMED + 1
    assert max(map(len, unknown)) == ruling_log.KEY_ID_SHOWN
    assert unknown["…"] == [*range(1000, 1500), 1500]  # the list's id names no key in a few bytes too
    assert sum(map(len, unknown.values())) == 1501


def test_the_monitor_reads_each_bundle_again_once_and_takes_no_room_digest_past_a_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, the second pass read a bundle (up to 16 MiB; over HTTP, a fetch) and made a proof for every
    entry of a re-rolled round (30,000 such entries: 21 s against 0.4), and a room digest of any length was
    kept and reported (3,000 of 60 KB: 614 MB)."""
    from service.cli import main
    from service.transparency import reading
    from service.trust.ruling_log import statement

    log = [statement("R", f"sha256:{k % 2:064x}", "sha-256=:x:", "k1", 1796083200, "/v1/score") for k in range(600)]
    log[7] = statement("S", "sha256:" + "ab" * 30_000, "sha-256=:x:", "k1", 1796083200, "/v1/score")
    log[9] = statement("S", "sha256:" + "cd" * 30_000, "sha-256=:x:", "k1", 1796083200, "/v1/score")
    grow(tmp_path / "log", log, steps=1)
    (tmp_path / "log.vkey").write_text(SIGNER.verifier.vkey)
    read = reading.reader(str(tmp_path / "log"))
    bundles: list[str] = []

    def counted(where: str) -> reading.Read:
        def each(path: str) -> bytes | None:
            bundles.extend([path] if path.startswith("tile/entries") else [])
            return read(path)

        return each

    monkeypatch.setattr(reading, "reader", counted)
    assert main(["log", "monitor", "--log", "counted", "--vkey", str(tmp_path / "log.vkey")]) == 1
    report = json.loads(capsys.readouterr().out)
    assert list(report["rounds_scored_twice"]) == ["R"] and len(report["rounds_scored_twice"]["R"]["entries"]) == 598
    assert report["unreadable_entries"] == [7, 9]
    assert sorted(bundles) == sorted(["tile/entries/000", "tile/entries/001", "tile/entries/002.p/88"] * 2)


def test_log_proof_proves_what_it_writes_and_says_a_receipt_s_faults_as_the_receipt_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, `log proof` wrote (exit 0) a proof made from tiles a log served on a second read, which no
    verifier could then prove; and a receipt whose headers were a list ended in a traceback."""
    from service.cli import main
    from service.transparency import reading

    receipt = vector_receipt()
    (ruling,), _ = receipt_statements(receipt, json.loads(VECTORS["request"]["body"]))
    grow(tmp_path / "honest", [*entries(300), ruling, *entries(40, "f")], steps=1)
    grow(tmp_path / "doctored", [*entries(299), b"{}", ruling, *entries(40, "f")], steps=1)
    (tmp_path / "log.vkey").write_text(SIGNER.verifier.vkey)
    (tmp_path / "receipt.json").write_text(json.dumps(receipt))
    argv = ["log", "proof", str(tmp_path / "receipt.json"), "--vkey", str(tmp_path / "log.vkey"), "--log"]
    assert main([*argv, str(tmp_path / "honest")]) == 0
    assert json.loads(capsys.readouterr().out)["log"]["proofs"][0].startswith("c2sp.org/tlog-proof@v1\nindex 300\n")
    monkeypatch.setattr(reading, "reader", honest_once(tmp_path / "honest", tmp_path / "doctored"))
    assert main([*argv, "hostile"]) == 1
    said = capsys.readouterr()
    assert said.out == "" and "another root" in said.err
    (tmp_path / "empty").mkdir()  # a second read that finds nothing: before, a traceback (TreeFault)
    monkeypatch.setattr(reading, "reader", honest_once(tmp_path / "honest", tmp_path / "empty"))
    assert main([*argv, "hostile"]) == 1
    said = capsys.readouterr()
    assert said.out == "" and "is missing" in said.err and "Traceback" not in said.err
    monkeypatch.undo()
    headers = receipt["response"]["headers"]
    endless = {**headers, "signature-input": headers["signature-input"].replace("created=", "created=" + "9" * 5000)}
    for odd in (
        {**receipt, "response": {**receipt["response"], "headers": []}},  # before: a traceback
        {**receipt, "response": {**receipt["response"], "headers": endless}},
    ):  # before: int()'s limit
        (tmp_path / "receipt.json").write_text(json.dumps(odd))
        assert main([*argv, str(tmp_path / "honest")]) == 1
        said = capsys.readouterr()
        assert said.out == "" and "Traceback" not in said.err and said.err.startswith("maubinh log proof: ")
    os.mkfifo(tmp_path / "pipe.json")  # before: opened and waited on for ever
    assert main([*argv[:2], str(tmp_path / "pipe.json"), *argv[3:], str(tmp_path / "honest")]) == 2
    assert "not a regular file" in capsys.readouterr().err


def test_a_witness_that_drips_its_refusal_is_given_up_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Before, a witness answering an error status at once, then its body a byte every two seconds, held
    `log cosign` for ever: the error's body was read outside the deadline."""
    from hostile_server import answering_once

    from service.transparency import witness

    monkeypatch.setattr(witness, "ASKING_SECONDS", 1.0)
    grow(tmp_path / "log", entries(3), steps=1)
    read = reader(str(tmp_path / "log"))
    dripping = answering_once(b"x" * 40, 0.3, head=b"HTTP/1.1 500 Oops\r\nContent-Length: 40\r\n\r\n")
    with pytest.raises(TimeoutError):
        witness.request_cosignature(read, latest(read, SIGNER.verifier), dripping)


def test_log_check_says_a_checkpoint_it_cannot_read_as_the_auditor_s_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, a missing checkpoint file was said to be "not consistent" (exit 1), and a pipe was waited on."""
    from service.cli import main

    grow(tmp_path / "log", entries(3), steps=1)
    (tmp_path / "log.vkey").write_text(SIGNER.verifier.vkey)
    os.mkfifo(tmp_path / "pipe")
    mine = str(tmp_path / "log" / "checkpoint")
    for other in ("pipe", "missing"):
        argv = [
            "log",
            "check",
            str(tmp_path / other),
            mine,
            "--log",
            str(tmp_path / "log"),
            "--vkey",
            str(tmp_path / "log.vkey"),
        ]
        assert main(argv) == 2
        assert "cannot open" in capsys.readouterr().err
    assert main([*argv[:2], mine, *argv[3:]]) == 0
