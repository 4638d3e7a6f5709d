"""Receipts by the line (issue 53): the signature base written for the service's own form gives
http-message-signatures' verdict, genuine or tampered; each kind of fault has its code; a line past
the cap, a receipt that is not JSON and one of the wrong shape are refused by number, and the run goes on."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest
from nacl.bindings import crypto_sign
from receipt_month import CREATED, Maker, room

from service.cli import main
from service.rulesets.catalogue import builtin_catalogue
from service.trust.answer_signatures import AnswerKeys
from service.trust.receipt_lines import ReceiptLines
from service.trust.signing import Unverified, verify

MAKER = Maker()
ROOM = room(__import__("random").Random(1), "round-1")


def unbound(receipt: dict[str, Any]) -> dict[str, Any]:
    """The receipt signed as answers were before signatures covered the route."""
    headers = receipt["response"]["headers"]
    params = headers["signature-input"].removeprefix("maubinh=").replace(' "@path";req', "")
    base = (
        f'"@status": {receipt["response"]["status"]}\n"content-type": {headers["content-type"]}\n'
        f'"content-digest": {headers["content-digest"]}\n"@signature-params": {params}'
    )
    signature = base64.b64encode(crypto_sign(base.encode(), MAKER.signer._secret)[:64]).decode()
    made = copy.deepcopy(receipt)
    made["response"]["headers"].update({"signature-input": f"maubinh={params}", "signature": f"maubinh=:{signature}:"})
    return made


def _headers(change: Callable[[dict[str, str]], None]) -> Callable[[dict[str, Any]], None]:
    return lambda r: change(r["response"]["headers"])


def _flip(value: str) -> str:
    raw = bytearray(base64.b64decode(value.removeprefix("maubinh=:").removesuffix(":")))
    raw[5] ^= 1
    return "maubinh=:" + base64.b64encode(bytes(raw)).decode() + ":"


TAMPERS: dict[str, Callable[[dict[str, Any]], None]] = {
    "genuine": lambda r: None,
    "the status": lambda r: r["response"].update(status=201),
    "the route": lambda r: r["request"].update(path="/v1/verify" if r["request"]["path"] != "/v1/verify" else "/v1/score"),
    "created": _headers(lambda h: h.update({"signature-input": h["signature-input"].replace("created=1", "created=2")})),
    "created with a leading zero": _headers(lambda h: h.update({"signature-input": h["signature-input"].replace("created=", "created=0")})),
    "a signature bit": _headers(lambda h: h.update(signature=_flip(h["signature"]))),
    "the content type": _headers(lambda h: h.update({"content-type": "text/plain"})),
    "no content type": _headers(lambda h: h.pop("content-type")),
    "spaces around the content type": _headers(lambda h: h.update({"content-type": " application/json "})),
    "the content digest": _headers(lambda h: h.update({"content-digest": h["content-digest"].replace("=:", "=:A", 1)})),
    "another tag": _headers(lambda h: h.update({"signature-input": h["signature-input"].replace("maubinh-answer", "x")})),
    "another label": _headers(lambda h: h.update({k: h[k].replace("maubinh=", "other=", 1) for k in ("signature", "signature-input")})),
    "two signatures": _headers(lambda h: h.update(signature=h["signature"] + ", other=:AAAA:")),
    "a short signature": _headers(lambda h: h.update(signature="maubinh=:AAAA:")),
    "a signature not base64": _headers(lambda h: h.update(signature="maubinh=:" + "!" * 86 + "==:")),
    "an unknown key": _headers(lambda h: h.update({"signature-input": h["signature-input"].replace('keyid="p', 'keyid="q')})),
    "no signature": _headers(lambda h: h.pop("signature")),
}  # fmt: skip


def _verdict(check: Callable[..., Any], receipt: dict[str, Any]) -> tuple[Any, ...]:
    response = receipt["response"]
    try:
        done = check(
            response["status"], response["headers"], response["body"].encode(), MAKER.jwks, receipt["request"]["path"]
        )
    except Unverified as failed:
        return ("unverified", failed.args[0].key, failed.args[0].fields)
    return ("verified", done.key_id, done.route_bound)


@pytest.mark.parametrize("route", ["/v1/score", "/v1/score/batch", "/v1/verify", "unbound"])
@pytest.mark.parametrize("tamper", list(TAMPERS))
def test_the_signature_written_here_gives_the_library_s_verdict(route: str, tamper: str) -> None:
    if route == "/v1/score/batch":
        made = MAKER.receipt({"rooms": [ROOM, {**ROOM, "stake": 7}]}, route)
    elif route == "/v1/verify":
        made = MAKER.receipt({**ROOM, "claimed": {"amounts": {}}}, route)
    else:
        made = MAKER.receipt(ROOM, created=CREATED + 12345)
        made = unbound(made) if route == "unbound" else made
    TAMPERS[tamper](made)
    ours, theirs = _verdict(AnswerKeys(MAKER.jwks).verify, made), _verdict(verify, made)
    assert ours == theirs
    # a field's value is read trimmed (RFC 9110 5.5), and the base holds the parameters as RFC 8941 writes them
    same = tamper in ("genuine", "spaces around the content type", "created with a leading zero")
    assert (ours[0] == "verified") == (same or (tamper == "the route" and route == "unbound"))


def checker() -> ReceiptLines:
    return ReceiptLines(MAKER.jwks, builtin_catalogue(), "en")


def test_each_kind_of_fault_has_its_code() -> None:
    genuine = MAKER.receipt(ROOM)
    wrong = MAKER.receipt(ROOM, answered={**ROOM, "stake": ROOM["stake"] * 2})
    faults = {
        None: genuine,
        "content_digest_mismatch": {**genuine, "response": {**genuine["response"], "body": genuine["response"]["body"] + " "}},
        "bad_signature": {**genuine, "response": {**genuine["response"], "status": 201}},
        "unknown_key": MAKER.receipt(ROOM, signer=MAKER.stranger),
        "room_digest_mismatch": {**genuine, "request": {**genuine["request"], "body": json.dumps({**ROOM, "stake": 9})}},
        "ruling_differs": wrong,
        "unreadable": {"receipt": 1},
    }  # fmt: skip
    for code, receipt in faults.items():
        record, rooms = checker()(json.dumps(receipt).encode())
        assert (record["code"], record["verified"]) == (code, code is None), record["message"]
        assert record["round_id"] == (None if code == "unreadable" else "round-1")
        assert bool(rooms) == (code is None)  # only a receipt that checks speaks for its round
    record, _ = checker()(b"{not json")
    assert record["code"] == "unreadable" and "not JSON" in record["message"]


def test_a_request_body_that_is_no_json_is_said_with_why_and_where() -> None:
    """It was "the request or the answer is not JSON": which, and why, went unsaid (found by an attack)."""
    made = MAKER.receipt(ROOM)
    made["request"]["body"] = made["request"]["body"].replace('"stake":', '"stake": NaN, "stake":', 1)
    record, _ = checker()(json.dumps(made).encode())
    assert record["code"] == "room_digest_mismatch"
    assert "the request's body is not JSON: NaN is not JSON, at /stake" in record["message"]


def _run(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes], *paths: str, more: tuple[str, ...] = ()
) -> tuple[int, list[dict[str, Any]], str]:
    (tmp_path / "keys.json").write_text(json.dumps(MAKER.jwks))
    argv = ["receipts", "verify", "--keys", str(tmp_path / "keys.json"), "--format", "jsonl", *more, *paths]
    code = main(argv)
    said = capfdbinary.readouterr()
    return code, [json.loads(line) for line in said.out.splitlines()], said.err.decode()


def test_a_line_past_the_cap_is_refused_by_number_and_the_run_goes_on(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    line = json.dumps(MAKER.receipt(ROOM)).encode()
    monkeypatch.setenv("MAUBINH_MAX_LINE_BYTES", str(len(line) + 10))
    (tmp_path / "r.jsonl").write_bytes(line + b"\n" + line + b" " * 20 + b"\n\n" + b"[1,\n" + line + b"\n")
    code, records, err = _run(tmp_path, capfdbinary, str(tmp_path / "r.jsonl"), more=("--jobs", "1"))
    assert code == 1
    assert [(r["line"], r["code"]) for r in records] == [(1, None), (2, "unreadable"), (4, "unreadable"), (5, None)]
    assert "past the cap" in records[1]["message"] and "MAUBINH_MAX_LINE_BYTES" in records[1]["message"]
    assert "4 receipts: 2 verified, 2 not" in err


def test_files_and_folders_each_receipt_named_by_file_and_line(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    folder = tmp_path / "month"
    (folder / "week-1").mkdir(parents=True)
    (folder / "week-1" / "a.json").write_text(json.dumps(MAKER.receipt(ROOM), indent=1))
    (folder / "b.jsonl").write_text(
        json.dumps(MAKER.receipt(ROOM)) + "\n" + json.dumps(MAKER.receipt(ROOM, created=7)) + "\n"
    )
    (folder / "notes.txt").write_text("not a receipt")
    code, records, _ = _run(tmp_path, capfdbinary, str(folder), str(folder / "week-1" / "a.json"), more=("--jobs", "2"))
    assert code == 0  # the same room sent twice (another created) is a retry, not a re-roll
    assert [(Path(r["file"]).name, r["line"], r["verified"]) for r in records] == [
        ("b.jsonl", 1, True), ("b.jsonl", 2, True), ("a.json", 1, True), ("a.json", 1, True)
    ]  # fmt: skip


def test_a_round_ruled_on_two_rooms_flags_each_naming_the_other(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    other = room(__import__("random").Random(2), "round-1")
    lines = [
        MAKER.receipt(ROOM),
        MAKER.receipt(ROOM, created=9),
        MAKER.receipt(other),
        MAKER.receipt(room(__import__("random").Random(3), "round-2")),
    ]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    code, records, _ = _run(tmp_path, capfdbinary, str(tmp_path / "r.jsonl"))
    assert code == 1
    assert [r["code"] for r in records] == ["round_scored_twice"] * 3 + [None]
    assert "at " + str(tmp_path / "r.jsonl:3:") in records[0]["message"]  # line 2 is its own room again
    assert "at " + str(tmp_path / "r.jsonl:1, ") + str(tmp_path / "r.jsonl:2:") in records[2]["message"]


def test_a_round_sent_thousands_of_times_names_a_few_places_a_verdict(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    """Before, each receipt of a round re-rolled named every other receipt of it: 2,000 retries of one
    room beside one other room wrote 122 MB, 8,000 wrote 2 GB (and took 43 s)."""
    other = MAKER.receipt(room(__import__("random").Random(2), "round-1"))
    retry = json.dumps(MAKER.receipt(ROOM)) + "\n"
    (tmp_path / "r.jsonl").write_text(json.dumps(other) + "\n" + retry * 2000)
    code, records, _ = _run(tmp_path, capfdbinary, str(tmp_path / "r.jsonl"), more=("--jobs", "1"))
    assert code == 1 and len(records) == 2001
    assert all(r["code"] == "round_scored_twice" for r in records)
    first = str(tmp_path / "r.jsonl")
    assert records[0]["message"].endswith(f"at {first}:2, {first}:3, {first}:4, {first}:5, {first}:6 and 1,995 more: "
                                          "the round was scored twice with different rooms")  # fmt: skip
    assert all(f"at {first}:1: " in r["message"] for r in records[1:])  # the one other room, and no more
    assert max(len(r["message"]) for r in records) < 1000


def test_an_empty_round_id_names_no_round_offline_as_online(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    """Rounds scored once records no empty round id (two rooms under "" both score): two receipts of it
    are two rounds, no re-roll, as is a round id past the longest, which no answer ruled on anyway."""
    lines = [MAKER.receipt(room(__import__("random").Random(k), "")) for k in (4, 5)]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    code, records, _ = _run(tmp_path, capfdbinary, str(tmp_path / "r.jsonl"))
    assert [r["code"] for r in records] == [None, None] and code == 0


def test_a_round_id_in_nfc_and_in_nfd_is_one_round_offline(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    """The two spellings of "Bàn 1" (its "à" one character, or "a" and a combining grave) are shown alike:
    two rooms ruled under them are one round scored twice, as rounds scored once refuses the second online."""
    lines = [
        MAKER.receipt(room(__import__("random").Random(k), name)) for k, name in ((8, "B\u00e0n 1"), (9, "Ba\u0300n 1"))
    ]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    code, records, _ = _run(tmp_path, capfdbinary, str(tmp_path / "r.jsonl"))
    assert code == 1 and [r["code"] for r in records] == ["round_scored_twice"] * 2
    assert [r["round_id"] for r in records] == ["B\u00e0n 1", "Ba\u0300n 1"]  # each as its receipt states it


def test_what_a_receipt_says_cannot_forge_a_line_of_the_text_verdicts(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    """A round id may hold control characters (the service scores it): said in a text verdict, a newline
    in it would start a forged "verified" line, and an escape would hide the real one on a terminal."""
    forged = "R1\nforged.json:1: verified\x1b[8m"
    lines = [MAKER.receipt(room(__import__("random").Random(k), forged)) for k in (6, 7)]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    (tmp_path / "keys.json").write_text(json.dumps(MAKER.jwks))
    code = main(["receipts", "verify", "--keys", str(tmp_path / "keys.json"), str(tmp_path / "r.jsonl")])
    said = capfdbinary.readouterr().out.decode()
    assert code == 1 and len(said.splitlines()) == 2 and "\x1b" not in said
    assert all(line.startswith(f"{tmp_path / 'r.jsonl'}:") and "R1\\nforged" in line for line in said.splitlines())


def test_a_receipt_of_millions_of_tiny_values_is_refused_before_it_is_read(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    """A receipt (or its request body) holding millions of empty arrays took some 90 bytes of memory for each
    of its bytes' values (1.9 GB for one of 60 MB): values are counted first, and past MOST_VALUES it is
    unreadable, as a file a counterparty sends for a dispute may be."""
    from service.support.strict_json import BadDocument
    from service.trust.receipt_reading import MOST_VALUES, read_body

    tiny = b"[" + b"[]," * MOST_VALUES + b"[]]"
    with pytest.raises(BadDocument, match="more than"):
        read_body(tiny)
    padded = json.dumps(MAKER.receipt(ROOM)).encode()[:-1] + b', "extra": ' + tiny + b"}"
    (tmp_path / "r.json").write_bytes(padded)
    code, records, _ = _run(tmp_path, capfdbinary, str(tmp_path / "r.json"), more=("--jobs", "1"))
    assert code == 1 and [r["code"] for r in records] == ["unreadable"]
    assert "JSON values" in records[0]["message"]


@pytest.mark.parametrize(
    "argv",
    [
        ["nope.jsonl"],
        ["--jobs", "0", "r.jsonl"],
        ["--format", "csv", "r.jsonl"],
        [],
        ["empty", "r.jsonl"],
        ["blank.jsonl"],
        ["--jobs", "2", "blank.jsonl", "blank.ndjson"],
    ],
    ids=[
        "a missing path",
        "no worker",
        "an unknown format",
        "no path",
        "a folder without receipts",
        "a file of blank lines",
        "no receipt in any file",
    ],
)
def test_a_usage_error_exits_2(tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes], argv: list[str]) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("no receipt here")
    (tmp_path / "r.jsonl").write_text(json.dumps(MAKER.receipt(ROOM)) + "\n")
    (tmp_path / "blank.jsonl").write_text("\n  \r\n\n")
    (tmp_path / "blank.ndjson").write_text("\n")
    (tmp_path / "keys.json").write_text(json.dumps(MAKER.jwks))
    words = [w if w.startswith("-") or w.isdigit() or w == "csv" else str(tmp_path / w) for w in argv]
    with pytest.raises(SystemExit) if not argv or "csv" in argv else nullcontext():
        assert main(["receipts", "verify", "--keys", str(tmp_path / "keys.json"), *words]) == 2
    assert capfdbinary.readouterr().err


def test_re_scoring_without_writing_the_answer_compares_what_the_answer_states() -> None:
    """The rescorer compares the ledger's lines and the amounts of ``settle_room``'s result, not of an
    answer written out: both readings agree on every golden room (each step, refusals included)."""
    from helpers import golden_cases

    from service.contract import RoomRejected
    from service.documents import score_document, settle_room
    from service.trust.rescoring import _ledger, _settled

    catalogue = builtin_catalogue()
    names = ("public.jsonl", "house-public.jsonl", "house2-public.jsonl")
    cases = [c["request"] for name in names for c in golden_cases(name)]
    scored = refused = 0
    for request in cases:
        try:
            written = _ledger(score_document(request, catalogue))
        except RoomRejected as rejected:
            with pytest.raises(RoomRejected) as again:
                settle_room(request, catalogue)
            assert [(f.pointer, f.code) for f in again.value.faults] == [(f.pointer, f.code) for f in rejected.faults]
            refused += 1
            continue
        assert _settled(settle_room(request, catalogue)) == written
        scored += 1
    assert scored > 100 and refused > 10


def test_stdin_is_read_as_json_lines_and_a_receipt_file_past_its_cap_is_refused(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    line = json.dumps(MAKER.receipt(ROOM))
    (tmp_path / "in.jsonl").write_text(line + "\n" + line + "\n")
    (tmp_path / "big.json").write_text(json.dumps(MAKER.receipt(ROOM), indent=4))
    monkeypatch.setattr("service.bulk.receipt_runs.WHOLE_FILE_BYTES", len(line) + 1)
    with open(tmp_path / "in.jsonl", "rb") as given:
        monkeypatch.setattr("sys.stdin", given)
        code, records, _ = _run(tmp_path, capfdbinary, "-", str(tmp_path / "big.json"), more=("--jobs", "1"))
    assert code == 1
    assert [(r["file"], r["line"], r["code"]) for r in records] == [
        ("-", 1, None), ("-", 2, None), (str(tmp_path / "big.json"), 1, "unreadable")
    ]  # fmt: skip
    assert "a receipt file may hold" in records[2]["message"] and "MAUBINH_MAX_LINE_BYTES" not in records[2]["message"]


def test_a_room_holding_a_number_no_double_holds_fails_its_digest_and_the_run_goes_on() -> None:
    """The request body is not signed: a number of 401 digits put in it has no canonical form (RFC 8785
    writes numbers as doubles), so the room has no digest, and the receipt fails that check, alone or in a
    month; a score and a verify receipt alike."""
    checker = ReceiptLines(MAKER.jwks, builtin_catalogue(), "en")
    verify = {**ROOM, "round_id": "round-v", "claimed": {"amounts": {p["id"]: 0 for p in ROOM["players"]}}}
    lines = []
    for made in (MAKER.receipt(ROOM), MAKER.receipt(verify, "/v1/verify")):
        made["request"]["body"] = made["request"]["body"].replace("{", '{"x":1' + "0" * 400 + ",", 1)
        lines.append(json.dumps(made).encode())
    genuine = json.dumps(MAKER.receipt(ROOM)).encode()
    for record, rooms in [*checker.many([*lines, genuine]), *(checker(line) for line in lines)]:
        if record["verified"]:
            continue
        assert record["code"] == "room_digest_mismatch" and rooms == ()
    assert [record["verified"] for record, _ in checker.many([*lines, genuine])] == [False, False, True]


def test_a_key_set_past_its_cap_is_refused_as_too_large_not_read_cut_short(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    """Read cut at 1 MiB, a larger key set was said to be "not JSON … column 1,048,573"."""
    (tmp_path / "keys.json").write_text(json.dumps({"keys": [MAKER.jwks["keys"][0], {"pad": "a" * (1 << 20)}]}))
    (tmp_path / "r.json").write_text(json.dumps(MAKER.receipt(ROOM)))
    code = main(
        [
            "receipts",
            "verify",
            "--keys",
            str(tmp_path / "keys.json"),
            "--jobs",
            "1",
            str(tmp_path / "r.json"),
            str(tmp_path / "r.json"),
        ]
    )
    assert code == 2 and "more than 1,048,576 bytes" in capfdbinary.readouterr().err.decode()


@pytest.mark.parametrize("files", [1, 2])
def test_a_key_set_that_is_no_jwk_set_is_a_usage_error_for_one_file_as_for_several(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes], files: int
) -> None:
    """With one receipt file it was a verdict on the receipt (exit 1), with two a usage error (exit 2)."""
    (tmp_path / "keys.json").write_text(json.dumps({"keys": {}}))
    (tmp_path / "r.json").write_text(json.dumps(MAKER.receipt(ROOM)))
    code = main(["receipts", "verify", "--keys", str(tmp_path / "keys.json"), *[str(tmp_path / "r.json")] * files])
    said = capfdbinary.readouterr()
    assert code == 2 and said.out == b"" and b"not a JWK Set" in said.err


def test_a_pipe_named_among_the_inputs_is_said_to_be_no_file_not_missing(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    """A FIFO given by name was said to be "no such file or directory"."""
    import os

    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "keys.json").write_text(json.dumps(MAKER.jwks))
    (tmp_path / "r.json").write_text(json.dumps(MAKER.receipt(ROOM)))
    code = main(
        ["receipts", "verify", "--keys", str(tmp_path / "keys.json"), str(tmp_path / "fifo"), str(tmp_path / "r.json")]
    )
    assert code == 2 and b"not a regular file or folder" in capfdbinary.readouterr().err
    os.mkfifo(tmp_path / "alone.json")  # named alone, as one receipt file: before, opened and waited on for ever
    assert main(["receipts", "verify", "--keys", str(tmp_path / "keys.json"), str(tmp_path / "alone.json")]) == 2
    assert b"not a regular file or folder" in capfdbinary.readouterr().err
    assert main(["receipts", "verify", "--keys", str(tmp_path / "alone.json"), str(tmp_path / "r.json")]) == 2
    assert b"not a regular file" in capfdbinary.readouterr().err  # the keys too


def test_what_a_folder_holds_and_the_run_does_not_read_is_said(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    """A link to a folder (the search follows none), a pipe or a dangling link named like a receipt file:
    skipped without a word, an auditor took the run to have seen the whole folder."""
    import os

    folder = tmp_path / "month"
    (folder / "elsewhere").mkdir(parents=True)
    (folder / "a.json").write_text(json.dumps(MAKER.receipt(ROOM)))
    os.mkfifo(folder / "pipe.json")
    (folder / "gone.jsonl").symlink_to(tmp_path / "nothing")
    (folder / "linked").symlink_to(folder / "elsewhere")
    (folder / "page.json").symlink_to("/proc/self/pagemap")  # before: followed, and read without end
    (folder / "copy.json").symlink_to(folder / "a.json")
    code, records, err = _run(tmp_path, capfdbinary, str(folder))
    assert code == 0 and [r["verified"] for r in records] == [True]
    said = [line for line in err.splitlines() if "not read" in line]
    assert [line.split("not read: ")[1].split(",")[0] for line in said] == [
        str(folder / n) for n in ("copy.json", "gone.jsonl", "linked", "page.json", "pipe.json")
    ]


def test_what_no_signature_vouches_for_never_stops_the_run(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    """A receipt's round id and money are read from bodies no signature may vouch for: a round id of
    10^30, nested 300 deep or 1,000 characters long, and an amount of 10^30. Before, the first two and the
    amount stopped the run with a traceback (orjson cannot write them) and no verdict at all."""
    genuine = MAKER.receipt(ROOM)

    def unsigned(request: Any, answer: Any) -> dict[str, Any]:
        made = copy.deepcopy(genuine)
        made["request"]["body"] = json.dumps(request)
        made["response"]["body"] = json.dumps(answer)
        return made

    nested: Any = "r"
    for _ in range(300):
        nested = [nested]
    lines = [
        unsigned({"round_id": 10**30}, {}),
        unsigned({"round_id": nested}, {}),
        unsigned({"round_id": "x" * 1000}, {"players": [{"id": "P", "amount": 10**30}]}),
        unsigned({"rooms": [{"round_id": 10**30}, {"round_id": "b"}]}, {}),
        genuine,
    ]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    code, records, err = _run(
        tmp_path, capfdbinary, str(tmp_path / "r.jsonl"), more=("--report", str(tmp_path / "report"))
    )
    assert code == 1 and "Traceback" not in err
    assert [r["verified"] for r in records] == [False] * 4 + [True]
    assert [r["round_id"] for r in records] == [None, None, "x" * 128 + "…", [None, "b"], "round-1"]
    failures = json.loads((tmp_path / "report" / "report.json").read_text())["failures"]
    assert [f["money"] for f in failures] == [0, 0, None, 0]


@pytest.mark.parametrize("form", ["jsonl", "text"])
def test_a_file_name_that_is_not_utf8_is_named_escaped_and_the_run_goes_on(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes], form: str
) -> None:
    """Before, such a name inside a folder stopped the run at its first verdict, with no summary and no
    report: JSON lines and UTF-8 text cannot hold the lone surrogate Python reads the byte as."""
    import os

    folder = tmp_path / "month"
    folder.mkdir()
    (folder / "a.jsonl").write_text(json.dumps(MAKER.receipt(ROOM)) + "\n")
    with open(os.path.join(os.fsencode(folder), b"day\xff.json"), "w") as odd:
        odd.write(json.dumps(MAKER.receipt(ROOM)))
    (tmp_path / "keys.json").write_text(json.dumps(MAKER.jwks))
    argv = ["receipts", "verify", "--keys", str(tmp_path / "keys.json"), "--format", form, str(folder)]
    assert main([*argv, "--report", str(tmp_path / "report")]) == 0
    out = capfdbinary.readouterr().out.decode()
    assert "day\\\\xff.json" in out if form == "jsonl" else "day\\xff.json:1: verified" in out
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert [Path(i["path"]).name for i in report["inputs"]] == ["a.jsonl", "day\\xff.json"]


@pytest.mark.parametrize("keys", ["missing.json", "not-json.json", "no-set.json", "http", "drip"])
@pytest.mark.parametrize("receipt", ["r.json", "missing.json"])
def test_one_receipt_file_exits_2_for_keys_or_a_file_that_cannot_be_read_as_a_month_does(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch, keys: str, receipt: str
) -> None:
    """Before, `receipts verify FILE` exited 1 (a verdict) for keys that could not be read and for a
    missing file, a key server answering no HTTP ended in a traceback, and one sending a byte every
    second held the run for as long as it liked."""
    from hostile_server import answering_once

    from service.cli import receipts

    monkeypatch.setattr(receipts, "KEY_SET_SECONDS", 1.0)
    if keys == "drip":
        keys = answering_once(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n" + b"{" * 50, 0.5)

    (tmp_path / "r.json").write_text(json.dumps(MAKER.receipt(ROOM)))
    (tmp_path / "not-json.json").write_text("{keys")
    (tmp_path / "no-set.json").write_text('{"keys": 7}')
    where = answering_once(b"NOT HTTP AT ALL\r\n\r\n") if keys == "http" else keys
    where = where if where.startswith("http") else str(tmp_path / keys)
    code = main(["receipts", "verify", "--keys", where, str(tmp_path / receipt)])
    said = capfdbinary.readouterr().err.decode()
    assert code == 2 and "Traceback" not in said and said.startswith("maubinh receipts verify: ")


def test_a_batch_sent_with_a_member_more_does_not_verify_and_one_without_its_method_does() -> None:
    """Before, the first verified: a batch's envelope is bound by no digest, and one with a member more is
    refused whole (unknown_field), never answered room by room, and its verdict says so. The contract lets a receipt leave out
    request.method (every signed route is a POST): it is read as a POST, on every path."""
    from service.trust import receipts
    from service.trust.rescoring import BATCH_MEMBERS, rescorer
    from service.validation.schemas import BatchSchema

    assert set(BatchSchema().fields) == BATCH_MEMBERS
    batch = {"rooms": [ROOM, room(__import__("random").Random(2), "round-2")]}
    genuine = MAKER.receipt(batch, "/v1/score/batch")
    added = copy.deepcopy(genuine)
    added["request"]["body"] = json.dumps({**batch, "note": "x", "round_id": "r"})
    unmethodical = copy.deepcopy(genuine)
    del unmethodical["request"]["method"]
    for receipt, code in ((genuine, None), (added, "ruling_differs"), (unmethodical, None)):
        for record in (
            checker().many([json.dumps(receipt).encode()])[0][0],
            checker()(json.dumps(receipt).encode())[0],
        ):
            assert record["code"] == code
            assert ("refuses such a batch whole" in record["message"]) == (code is not None), record["message"]
        if code is None:
            assert receipts.check(receipt, MAKER.jwks, rescorer(builtin_catalogue())).rescored
        else:
            with pytest.raises(receipts.ReceiptFault):
                receipts.check(receipt, MAKER.jwks, rescorer(builtin_catalogue()))
