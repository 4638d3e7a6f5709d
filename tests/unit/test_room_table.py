"""The table of rooms (service.bulk.room_table): claims and score's tables convert to it, and the engine
reading it passes only rows the per-room path finds agreeing, however the table was written."""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from test_bulk_engine import claims

from service.bulk import jsonl, room_conversion, room_table, table_engine, table_runs
from service.cli import main
from service.documents import OPERATIONS, answer
from service.rulesets.operator_folder import catalogue_for
from service.scoring.claims import settles


def table_of(tmp_path: Path, requests: list[dict[str, Any]]) -> tuple[Path, room_conversion.Converted]:
    path = tmp_path / "rooms.parquet"
    out = room_table.RoomTableWriter(path)
    done = room_conversion.from_claims([json.dumps(r).encode() for r in requests], catalogue_for(None), out)
    out.close()
    return path, done


def test_verify_rooms_answers_as_verify_jsonl_does(tmp_path: Path, monkeypatch: Any) -> None:
    """Claims of amounts, some moved by a unit's stake: the same answers, in the same order, and the
    same counts; with row groups of 64 rooms, the same bytes with one worker and with two."""
    monkeypatch.setattr(room_table, "ROW_GROUP_ROOMS", 64)
    rng = random.Random(4)
    made = claims(300, seed=9)
    for request in made:
        if rng.random() < 0.1:
            first, second = list(request["claimed"]["amounts"])[:2]
            request["claimed"]["amounts"][first] += request["stake"]
            request["claimed"]["amounts"][second] -= request["stake"]
    path, done = table_of(tmp_path, made)
    assert done.rooms == len(made) and done.left_out == [] and done.ledgers == 0
    with (tmp_path / "jsonl.out").open("wb") as sink:
        expected = jsonl.run("verify", iter(json.dumps(r).encode() + b"\n" for r in made), sink, 1)
    with (tmp_path / "rooms.out").open("wb") as sink:
        found = table_runs.verify(path, catalogue_for(None), sink)
    assert (found.lines, found.agreed, found.refused) == (expected.lines, expected.agreed, expected.refused)
    assert 0 < expected.agreed < expected.lines
    read = [json.loads(line) for line in (tmp_path / "rooms.out").read_text().splitlines()]
    assert read == [json.loads(line) for line in (tmp_path / "jsonl.out").read_text().splitlines()]
    assert pq.ParquetFile(path).metadata.num_row_groups == 5
    with (tmp_path / "two.out").open("wb") as sink:
        two = table_runs.verify(path, catalogue_for(None), sink, jobs=2)
    assert (tmp_path / "two.out").read_bytes() == (tmp_path / "rooms.out").read_bytes()
    assert (two.lines, two.agreed, two.refused) == (found.lines, found.agreed, found.refused)


def _edits(count: int) -> list[tuple[str, Callable[[dict[str, Any]], None]]]:
    """Ways a table written by someone else may hold what the per-room path refuses, or accepts."""

    def seat(row: dict[str, Any], column: str, at: int, value: int) -> None:
        data = bytearray(row[column])
        data[at] = value
        row[column] = bytes(data)

    return [
        ("two ids alike", lambda r: r["ids"].__setitem__(1, r["ids"][0])),
        ("an id with a space", lambda r: r["ids"].__setitem__(0, "a b")),
        ("an id too long", lambda r: r["ids"].__setitem__(0, "x" * 65)),
        ("an empty id", lambda r: r["ids"].__setitem__(0, "")),
        ("one id too few", lambda r: r["ids"].pop()),
        ("no ids", lambda r: r.__setitem__("ids", None)),
        ("not a card", lambda r: seat(r, "cards", 3, 0xFF)),
        ("card 60", lambda r: seat(r, "cards", 3, 60)),
        ("a card twice", lambda r: seat(r, "cards", 3, r["cards"][4])),
        ("status 3", lambda r: seat(r, "status", 0, 3)),
        ("left", lambda r: seat(r, "status", 0, 2)),
        ("declare 2", lambda r: seat(r, "declare", 0, 2)),
        ("a declaration", lambda r: seat(r, "declare", 0, 1)),
        ("claims off by one", lambda r: r["claimed"].__setitem__(0, r["claimed"][0] + 1)),
        ("claims moved", lambda r: r["claimed"].__setitem__(slice(0, 2), [r["claimed"][0] + 1, r["claimed"][1] - 1])),
        ("stake 0", lambda r: r.__setitem__("stake", 0)),
        ("stake 10^12", lambda r: r.__setitem__("stake", 10**12)),
        ("no stake", lambda r: r.__setitem__("stake", None)),
        ("round id 129", lambda r: r.__setitem__("round_id", "x" * 129)),
        ("no round id", lambda r: r.__setitem__("round_id", None)),
        ("five players", lambda r: r.__setitem__("players", 5)),
        ("one player", lambda r: r.__setitem__("players", 1)),
        ("unknown rules", lambda r: r.__setitem__("ruleset", "no-such-rules")),
        ("no rules", lambda r: r.__setitem__("ruleset", None)),
        ("no line", lambda r: r.__setitem__("line", None)),
        ("no claim", lambda r: r.__setitem__("claimed", None)),
    ][:count]


def test_a_row_the_engine_passes_is_one_the_per_room_path_finds_agreeing(tmp_path: Path) -> None:
    """Every row of a converted table changed in one of 26 ways: no row the engine passes is refused,
    or disagrees, when the per-room path answers the request it stands for."""
    made = claims(120, seed=13)
    path, _ = table_of(tmp_path, made)
    rows = pq.read_table(path).to_pylist()
    edits = _edits(26)
    changed = []
    for k, written in enumerate(rows):
        name, edit = edits[k % len(edits)]
        row = {**written, "ids": list(written["ids"]), "claimed": list(written["claimed"])}
        edit(row)
        changed.append((name, row))
    foreign = tmp_path / "foreign.parquet"
    pq.write_table(pa.Table.from_pylist([row for _, row in changed], schema=room_table.schema()), foreign)
    catalogue = catalogue_for(None)
    known: dict[str, Any] = {}
    passed: list[str] = []
    for batch in room_table.batches(foreign):
        table_engine.resolved(batch, catalogue, known)
        agrees = table_engine.agreeing(batch, known).tolist()
        for (name, row), yes in zip(changed, agrees, strict=True):
            if yes:
                passed.append(name)
                status, body = answer(OPERATIONS["verify"], json.dumps(room_table.request_of(row)).encode(), catalogue)
                assert settles(status, body), (name, row, status, body)
    assert {"no round id", "left"} <= set(passed)  # a room without round id, a leaver with hands: both fine
    assert not set(passed) & {"two ids alike", "not a card", "claims moved", "stake 0", "unknown rules", "no claim"}


def test_score_s_tables_convert_and_every_room_agrees_with_its_amounts(tmp_path: Path, capsys: Any) -> None:
    made = claims(60, seed=21)
    rooms = tmp_path / "rooms.jsonl"
    rooms.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "claimed"}) + "\n" for r in made))
    assert (
        main(["score", "--jsonl", str(rooms), "--format", "parquet", "-o", str(tmp_path / "scored"), "--jobs", "1"])
        == 0
    )
    assert main(["rooms", str(tmp_path / "scored"), "-o", str(tmp_path / "table.parquet")]) == 0
    table = pq.read_table(tmp_path / "table.parquet")
    assert table.num_rows == len(made)
    assert table.column("claimed").to_pylist() == [
        [*r["claimed"]["amounts"].values(), *[0] * (4 - len(r["players"]))] for r in made
    ]
    found = table_runs.verify(tmp_path / "table.parquet", catalogue_for(None), (tmp_path / "out").open("wb"))
    assert (found.lines, found.agreed, found.refused) == (len(made), len(made), 0)
    shuffled = tmp_path / "shuffled"  # as Spark writes them: in no order
    shuffled.mkdir()
    for name in ("rooms", "players"):
        table = pq.read_table(tmp_path / "scored" / f"{name}.parquet")
        pq.write_table(table.take(list(range(table.num_rows))[::-1]), shuffled / f"{name}.parquet")
    assert main(["rooms", str(shuffled), "-o", str(tmp_path / "never.parquet")]) == 2
    assert "players.parquet is not in line order" in capsys.readouterr().err
    assert not (tmp_path / "never.parquet").exists()


def test_the_converter_says_what_it_leaves_out(tmp_path: Path, capsys: Any) -> None:
    made = claims(5, seed=3)
    lines = [json.dumps(r) for r in made]
    lines[1] = lines[1].replace('"ruleset": "maubinh', '"ruleset": "nomaubinh', 1)
    lines[3] = "{not json"
    (tmp_path / "claims.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["rooms", str(tmp_path / "claims.jsonl"), "-o", str(tmp_path / "t.parquet")]) == 0
    said = capsys.readouterr().err
    assert "3 rooms written" in said and "2 left out (lines 2, 4)" in said
    assert main(["rooms", str(tmp_path), "-o", str(tmp_path / "u.parquet")]) == 2
    assert "rooms.parquet" in capsys.readouterr().err


def test_score_rooms_gives_each_room_s_amounts_without_explanations(tmp_path: Path) -> None:
    """The engine's amounts where it settles a row, the per-room path's where it does not (a leaver's
    hand with a card twice is refused; one with an unknown ruleset too): the claims, which agree."""
    made = claims(80, seed=8)
    path, _ = table_of(tmp_path, made)
    rows = pq.read_table(path).to_pylist()
    rows[5]["cards"] = rows[5]["cards"][:1] + rows[5]["cards"][:1] + rows[5]["cards"][2:]
    rows[6]["ruleset"] = "no-such-rules"
    rows[7]["status"] = b"\x02" + rows[7]["status"][1:]  # a leaver with hands: the engine settles it
    pq.write_table(pa.Table.from_pylist(rows, schema=room_table.schema()), path)
    assert main(["score", "--rooms", str(path), "-o", str(tmp_path / "amounts.parquet"), "--jobs", "1"]) == 0
    scored = pq.read_table(tmp_path / "amounts.parquet").to_pylist()
    assert [r["line"] for r in scored] == [r["line"] for r in rows]
    assert [r["refused"] for r in scored[5:7]] == ["duplicate_card", "unknown_ruleset"]
    catalogue = catalogue_for(None)
    for k, (row, found) in enumerate(zip(rows, scored, strict=True)):
        if k in (5, 6):
            continue
        request = {key: value for key, value in room_table.request_of(row).items() if key != "claimed"}
        body = OPERATIONS["score"](request, catalogue, "en")
        size = row["players"]
        assert found["amounts"][:size] == [p["amount"] for p in body["players"]], k
        assert found["units"][:size] == [p["units"] for p in body["players"]]
        assert found["ruleset_digest"] == body["ruleset"]["digest"]
    assert scored[0]["amounts"][: rows[0]["players"]] == list(made[0]["claimed"]["amounts"].values())


def test_a_file_that_is_not_a_table_of_rooms_is_said_so_and_a_null_is_a_refusal(tmp_path: Path, capsys: Any) -> None:
    """Not Parquet, a column missing, a column of another kind: exit 2 naming the file and what is
    wrong. A table whose rows hold nulls where cards, statuses or declarations go: the row without cards
    is refused by the per-room path, as the request it stands for (a refusal is not a disagreement:
    exit 0, as verify --jsonl); no status is "arranged", no declaration none."""
    assert main(["verify", "--rooms", str(tmp_path / "missing.parquet")]) == 2
    assert f"cannot open {tmp_path / 'missing.parquet'}" in capsys.readouterr().err
    (tmp_path / "text.parquet").write_text("not parquet")
    assert main(["verify", "--rooms", str(tmp_path / "text.parquet")]) == 2
    assert "text.parquet: not a Parquet file" in capsys.readouterr().err
    path, _ = table_of(tmp_path, claims(6, seed=2))
    table = pq.read_table(path)
    pq.write_table(table.drop_columns(["declare"]), tmp_path / "less.parquet")
    assert main(["verify", "--rooms", str(tmp_path / "less.parquet")]) == 2
    assert "no column declare" in capsys.readouterr().err
    pq.write_table(table.set_column(2, "ruleset", pa.array([1] * table.num_rows)), tmp_path / "kind.parquet")
    assert main(["score", "--rooms", str(tmp_path / "kind.parquet"), "-o", str(tmp_path / "a.parquet")]) == 2
    assert "column ruleset is int64, not string" in capsys.readouterr().err
    rows = table.to_pylist()
    rows[0]["cards"], rows[1]["status"], rows[2]["declare"] = None, None, None
    pq.write_table(pa.Table.from_pylist(rows, schema=room_table.schema()), tmp_path / "nulls.parquet")
    assert main(["verify", "--rooms", str(tmp_path / "nulls.parquet"), "-o", str(tmp_path / "out.jsonl")]) == 0
    answers = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [a["line"] for a in answers] == [1] and answers[0]["status"] == 422  # no cards: refused
    assert "6 rooms checked, 5 agree, 0 disagree, 1 refused" in capsys.readouterr().err


def test_what_verify_rooms_cannot_write_is_a_usage_error_and_a_run_that_checked_nothing_is_no_clean_one(
    tmp_path: Path, capsys: Any
) -> None:
    """Before, ``verify --rooms`` dropped ``--report`` and ``--format parquet`` unsaid (exit 0, no report;
    the answers in a file named for the tables' folder), and a run whose every line was refused exited 0,
    as if every round agreed."""
    path, _ = table_of(tmp_path, claims(6, seed=2))
    for more in (["--report", str(tmp_path / "r.html")], ["--format", "parquet", "-o", str(tmp_path / "t")]):
        assert main(["verify", "--rooms", str(path), *more]) == 2
        assert "--format parquet and --report read --jsonl input" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "t").exists()
    (tmp_path / "refused.jsonl").write_text('{"stake": "1000"}\n' * 3)
    assert main(["verify", "--jsonl", str(tmp_path / "refused.jsonl"), "-o", str(tmp_path / "out.jsonl")]) == 1
    assert "no room could be checked (every line was refused)" in capsys.readouterr().err


def test_a_row_whose_players_column_is_not_its_ids_count_is_refused_naming_the_column(tmp_path: Path) -> None:
    """The table says a room's players twice, in ``players`` and in ``ids``. Before, a row saying 127
    (or null) beside 4 ids agreed: the per-room path read the ids and never the column. Now such a row
    is refused by both commands, its fault at /players with code player_count; the rows around it are
    answered as before."""
    made = claims(12, seed=5)
    path, _ = table_of(tmp_path, made)
    rows = pq.read_table(path).to_pylist()
    held = [len(row["ids"]) for row in rows[:3]]
    rows[0]["players"], rows[1]["players"], rows[2]["players"] = 127, None, held[2] - 1
    pq.write_table(pa.Table.from_pylist(rows, schema=room_table.schema()), path)
    assert main(["verify", "--rooms", str(path), "-o", str(tmp_path / "out.jsonl"), "--jobs", "1"]) == 0
    answers = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [a["line"] for a in answers] == [row["line"] for row in rows[:3]]
    for answer_, said in zip(answers, ("127", "null", str(held[2] - 1)), strict=True):
        assert answer_["status"] == 422
        [fault] = answer_["errors"]
        assert (fault["pointer"], fault["code"]) == ("/players", "player_count")
        assert f"players column says {said}" in fault["message"]
    assert f"holds {held[0]} ids" in answers[0]["errors"][0]["message"]
    assert main(["score", "--rooms", str(path), "-o", str(tmp_path / "amounts.parquet"), "--jobs", "1"]) == 0
    scored = pq.read_table(tmp_path / "amounts.parquet").to_pylist()
    assert [r["refused"] for r in scored] == ["player_count"] * 3 + [None] * (len(rows) - 3)
    assert all(r["amounts"] == [0] * 4 for r in scored[:3])


def _hostile_tables(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Tables another writer may make, each with what its refusal says: before, each ended in a
    traceback, or (a wider integer) was read as another number and agreed."""
    path, _ = table_of(tmp_path, claims(6, seed=3))
    table = pq.read_table(path)
    rows = table.to_pylist()
    made: dict[str, tuple[Path, str]] = {}

    def write(name: str, written: pa.Table, said: str) -> None:
        pq.write_table(written, tmp_path / f"{name}.parquet")
        made[name] = (tmp_path / f"{name}.parquet", said)

    write("column twice", table.append_column("line", table.column("line")), "column line is there twice")
    wider = pa.array([len(r["ids"]) + 256 for r in rows], pa.int16())  # 3 ids and 259: read as int8, 3
    write("players wrapped", table.set_column(4, "players", wider), "column players holds a value its type, int8")
    claimed = pa.FixedSizeListArray.from_arrays(pa.array([2**64 - 1] * 4 * len(rows), pa.uint64()), 4)
    write("claim past 2^63", table.set_column(9, "claimed", claimed), "column claimed holds a value")
    bad = pa.array([[b"\xffa", *(i.encode() for i in r["ids"][1:])] for r in rows], pa.list_(pa.binary()))
    write(
        "ids not UTF-8",
        table.set_column(5, "ids", bad.view(pa.list_(pa.string()))),
        "column ids holds text that is not UTF-8",
    )
    return made


def test_a_hostile_table_is_refused_naming_what_is_wrong_and_never_destroyed(tmp_path: Path, capsys: Any) -> None:
    """A column twice, an integer wider than its column (which wrapped), text not UTF-8, a pipe as the
    table (which hung), the table as its own -o (which emptied it), a second input beside --rooms (never
    read): each exit 2 with one line naming it, the table and -o left as they were."""
    for name, (path, said) in _hostile_tables(tmp_path).items():
        for command in (
            ["verify", "--rooms", str(path)],
            ["score", "--rooms", str(path), "-o", str(tmp_path / "a.pq")],
        ):
            assert main([*command, "--jobs", "1"]) == 2, name
            err = capsys.readouterr().err
            assert said in err and "Traceback" not in err and err.count("\n") == 1, (name, err)
    (tmp_path / "t").mkdir()
    path, _ = table_of(tmp_path / "t", claims(6, seed=3))
    kept = path.read_bytes()
    for command in (["verify", "--rooms", str(path)], ["score", "--rooms", str(path)]):
        assert main([*command, "-o", str(path)]) == 2
        assert "is the input" in capsys.readouterr().err and path.read_bytes() == kept
    (tmp_path / "out.jsonl").write_text("kept\n")
    assert main(["verify", "--rooms", str(tmp_path / "missing.parquet"), "-o", str(tmp_path / "out.jsonl")]) == 2
    assert (tmp_path / "out.jsonl").read_text() == "kept\n"
    assert main(["verify", "--rooms", str(path), "--jsonl", str(tmp_path / "out.jsonl")]) == 2
    assert "--rooms names the input" in capsys.readouterr().err
    os.mkfifo(tmp_path / "pipe")
    assert main(["verify", "--rooms", str(tmp_path / "pipe")]) == 2  # never opened to wait for a writer
    assert "not a regular file" in capsys.readouterr().err


def test_a_table_of_many_row_groups_has_its_footer_read_once_a_process(tmp_path: Path, monkeypatch: Any) -> None:
    """Each row group opened the file and read its footer, which lists every group: 4,000 groups of a
    row took 4 minutes. Now the table is opened a few times a run, whatever its groups."""
    path, _ = table_of(tmp_path, claims(1, seed=3))
    pq.write_table(pa.Table.from_pylist(pq.read_table(path).to_pylist() * 300, schema=room_table.schema()),
                   path, row_group_size=1)  # fmt: skip
    opened = []
    real = pq.ParquetFile

    def counted(*args: Any, **kwargs: Any) -> Any:
        opened.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(pq, "ParquetFile", counted)
    assert main(["verify", "--rooms", str(path), "-o", str(tmp_path / "out.jsonl"), "--jobs", "1"]) == 0
    assert 0 < len(opened) <= 4  # the checks, the shares, the worker: never once a group


def test_a_damaged_page_is_the_table_s_refusal_not_a_traceback(tmp_path: Path, capsys: Any) -> None:
    """Bytes flipped in the data pages (the footer whole, so the first check passes): whatever pyarrow
    finds, the run ends in one line, exit 0, 1 or 2, never a traceback."""
    path, _ = table_of(tmp_path, claims(60, seed=7))
    pq.write_table(pq.read_table(path), path, compression="none")
    whole = path.read_bytes()
    footer = len(whole) - 8 - int.from_bytes(whole[-8:-4], "little")
    said = []
    for seed in range(12):
        rng = random.Random(seed)
        damaged = bytearray(whole)
        for _ in range(8):
            damaged[rng.randrange(4, footer)] ^= 0xFF
        path.write_bytes(bytes(damaged))
        assert main(["verify", "--rooms", str(path), "-o", str(tmp_path / "out.jsonl"), "--jobs", "1"]) in (0, 1, 2)
        err = capsys.readouterr().err
        assert "Traceback" not in err, (seed, err)
        said.append(err)
    assert any("does not read: the file is damaged" in err for err in said)


def test_a_row_too_large_to_be_a_room_is_refused_unread(tmp_path: Path, monkeypatch: Any) -> None:
    """3,000,000 ids in a row of 3 KB on disk took 1.7 GB read into Python. A row past 64 ids, or a text
    past 4,096 characters, is refused unread (payload-too-large, as a line past the cap), its texts kept
    out of score's table; the rows around it are answered as before."""
    import pyarrow.compute as pc

    path, _ = table_of(tmp_path, claims(5, seed=4))
    rows = pq.read_table(path).to_pylist()
    rows[1]["ids"] = [f"p{k}" for k in range(100)]
    rows[3]["round_id"] = "r" * 5000
    pq.write_table(pa.Table.from_pylist(rows, schema=room_table.schema()), path)
    assert main(["verify", "--rooms", str(path), "-o", str(tmp_path / "out.jsonl"), "--jobs", "1"]) == 0
    answers = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [(a["line"], a["status"], a["round_id"]) for a in answers] == [(2, 413, None), (4, 413, None)]
    assert "ids is 100 long, past the 64" in answers[0]["detail"]
    assert "round_id is 5,000 long, past the 4,096" in answers[1]["detail"]
    assert main(["score", "--rooms", str(path), "-o", str(tmp_path / "amounts.parquet"), "--jobs", "1"]) == 0
    scored = pq.read_table(tmp_path / "amounts.parquet")
    assert scored.column("refused").to_pylist() == [None, "payload-too-large", None, "payload-too-large", None]
    assert pc.max(pc.utf8_length(scored.column("round_id"))).as_py() < 100
    assert scored.column("ids").to_pylist()[1] is None


def test_score_s_tables_changed_by_hand_convert_what_they_can_and_name_the_rest(tmp_path: Path, capsys: Any) -> None:
    """Before, each of these ended ``maubinh rooms`` in a traceback with its -o left behind: a room the
    table cannot hold (a card 'ZZ', a back of 4 cards, a status not score's, a fifth player) is left out
    and named; tables not score's (a column gone, not Parquet, a player row of no room) exit 2 in one
    line, nothing written; an -o that cannot be written is named, not the input."""
    made = claims(8, seed=6)
    rooms = tmp_path / "rooms.jsonl"
    rooms.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "claimed"}) + "\n" for r in made))
    scored = tmp_path / "scored"
    assert main(["score", "--jsonl", str(rooms), "--format", "parquet", "-o", str(scored), "--jobs", "1"]) == 0
    players = pq.read_table(scored / "players.parquet")
    rows = players.to_pylist()
    capsys.readouterr()

    def converted(changed: list[dict[str, Any]] | pa.Table) -> tuple[int, str]:
        table = changed if isinstance(changed, pa.Table) else pa.Table.from_pylist(changed, schema=players.schema)
        pq.write_table(table, scored / "players.parquet")
        (tmp_path / "t.parquet").unlink(missing_ok=True)
        code = main(["rooms", str(scored), "-o", str(tmp_path / "t.parquet")])
        return code, capsys.readouterr().err

    for change in (
        lambda r: r.__setitem__("back", "ZZ " + r["back"].split(" ", 1)[1]),
        lambda r: r.__setitem__("back", r["back"].rsplit(" ", 1)[0]),
        lambda r: r.__setitem__("status", "bogus"),
    ):
        changed = [dict(r) for r in rows]
        change(changed[0])
        assert converted(changed) == (0, f"maubinh rooms: 7 rooms written to {tmp_path / 't.parquet'}; 1 left out "
                                         "(lines 1): verify --jsonl checks those\n")  # fmt: skip
    four = next(line for line in range(1, 9) if sum(r["line"] == line for r in rows) == 4)
    at = max(k for k, r in enumerate(rows) if r["line"] == four) + 1
    code, said = converted([*rows[:at], {**rows[at - 1], "player": "fifth"}, *rows[at:]])
    assert code == 0 and f"1 left out (lines {four})" in said
    code, said = converted(players.drop_columns(["back"]))
    assert (
        code == 2 and "players.parquet is not the table maubinh score --format parquet writes: no column back" in said
    )
    assert not (tmp_path / "t.parquet").exists() and said.count("\n") == 1
    code, said = converted([*rows, {**rows[-1], "line": 99}])
    assert code == 2 and "player rows for line 99, which no room of rooms.parquet holds" in said
    assert not (tmp_path / "t.parquet").exists()
    pq.write_table(players, scored / "players.parquet")
    (tmp_path / "adir").mkdir()
    assert main(["rooms", str(scored), "-o", str(tmp_path / "adir")]) == 2
    assert f"cannot open {tmp_path / 'adir'}: is a directory" in capsys.readouterr().err
    (scored / "rooms.parquet").write_text("not parquet")
    code, said = converted(players)
    assert code == 2 and "rooms.parquet is not the table maubinh score" in said and "Traceback" not in said


def test_a_fault_in_a_later_row_group_leaves_no_half_answers_in_the_file_o_names(tmp_path: Path, capsys: Any) -> None:
    """Five groups of one disagreeing row, the fourth's round id not UTF-8: before, -o kept the answers of
    the first three (score's a valid table of three rooms) and nothing said they were not the table's."""
    made = claims(5, seed=9)
    for request in made:
        first, second = list(request["claimed"]["amounts"])[:2]
        request["claimed"]["amounts"][first] += request["stake"]
        request["claimed"]["amounts"][second] -= request["stake"]
    path, _ = table_of(tmp_path, made)
    table = pq.read_table(path)
    ids = [r.encode() for r in table.column("round_id").to_pylist()]
    ids[3] = b"\xff\xfe"
    bad = pa.array(ids, pa.binary()).view(pa.string())
    pq.write_table(table.set_column(1, "round_id", bad), path, row_group_size=1)
    for jobs in ("1", "2"):
        for command in (["verify", "--rooms"], ["score", "--rooms"]):
            out = tmp_path / f"out-{command[0]}-{jobs}"
            out.write_text("before\n")
            assert main([*command, str(path), "-o", str(out), "--jobs", jobs]) == 2
            assert "column round_id holds text that is not UTF-8" in capsys.readouterr().err
            assert not out.exists(), (command, jobs)


def test_rooms_reads_only_the_columns_it_converts_and_never_writes_over_its_standard_input(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    """A column the converter never reads, not UTF-8, ended it in a traceback; a column it reads given
    twice was said to be missing; ``rooms - -o F < F`` emptied F and exited 0."""
    made = claims(4, seed=2)
    claims_file = tmp_path / "claims.jsonl"
    claims_file.write_text("".join(json.dumps(r) + "\n" for r in made))
    rooms = tmp_path / "rooms.jsonl"
    rooms.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "claimed"}) + "\n" for r in made))
    scored = tmp_path / "scored"
    assert main(["score", "--jsonl", str(rooms), "--format", "parquet", "-o", str(scored), "--jobs", "1"]) == 0
    players = pq.read_table(scored / "players.parquet")
    note = pa.array([b"\xff"] * players.num_rows, pa.binary()).view(pa.string())
    pq.write_table(players.append_column("note", note), scored / "players.parquet")
    assert main(["rooms", str(scored), "-o", str(tmp_path / "t.parquet")]) == 0
    pq.write_table(players.append_column("amount", players.column("amount")), scored / "players.parquet")
    assert main(["rooms", str(scored), "-o", str(tmp_path / "u.parquet")]) == 2
    assert "column amount is there twice" in capsys.readouterr().err
    kept = claims_file.read_bytes()
    with claims_file.open("rb") as given:
        monkeypatch.setattr("sys.stdin", given)
        assert main(["rooms", "-", "-o", str(claims_file)]) == 2
    assert "is the input -" in capsys.readouterr().err and claims_file.read_bytes() == kept


def test_what_a_failed_run_removes_is_a_regular_file_it_wrote_never_a_device_a_pipe_or_a_link(tmp_path: Path) -> None:
    """The removal of a half-written -o removed whatever the name named: ``score --rooms BAD -o /dev/null``
    removed /dev/null, and the next writer made it a regular file (the suite's postgres then failed)."""
    from service.support.regular_files import remove_half_written

    written, target = tmp_path / "written", tmp_path / "target"
    written.write_text("half")
    target.write_text("kept")
    (tmp_path / "link").symlink_to(target)
    os.mkfifo(tmp_path / "pipe")
    for name in ("written", "link", "pipe", "missing"):
        remove_half_written(tmp_path / name)
    assert not written.exists() and target.read_text() == "kept"
    assert (tmp_path / "link").is_symlink() and (tmp_path / "pipe").exists()
    made = claims(2, seed=1)
    path, _ = table_of(tmp_path, made)
    bad = pa.array([b"\xff"] * 2, pa.binary()).view(pa.string())
    pq.write_table(pq.read_table(path).set_column(1, "round_id", bad), path)
    assert main(["score", "--rooms", str(path), "-o", str(tmp_path / "link")]) == 2
    assert (tmp_path / "link").is_symlink()
