"""The ledger as tables: ``maubinh score|verify --jsonl --format parquet`` against the JSON lines it
stands for, read back by pyarrow and DuckDB; the Spark job's tables against the command line's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from service.bulk.tables import COLUMNS, VERIFY_TABLES, arrow_schema

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
MAUBINH = str(Path(sys.executable).with_name("maubinh"))
KEYS = {
    "rooms": ["line"],
    "players": ["line", "player"],
    "ledger": ["line", "seq"],
    "problems": ["line", "pointer", "code", "message"],
    "differences": ["line", "kind", "player", "payer", "payee", "step"],
}


def _golden_requests() -> list[dict[str, Any]]:
    return [
        json.loads(line)["request"]
        for name in ("public", "house-public", "house2-public")
        for line in (GOLDEN / f"{name}.jsonl").read_text().splitlines()
        if line.strip()
    ]


def _rooms_file(path: Path, copies: int) -> Path:
    """Every golden request (refused ones included), ``copies`` times, each with its own round_id,
    and two lines no room can be read from."""
    lines = []
    for copy in range(copies):
        for k, request in enumerate(_golden_requests()):
            lines.append(json.dumps({**request, "round_id": f"g{copy}/{k}"} if isinstance(request, dict) else request))
    lines[3:3] = ["not json", '{"ruleset": "maubinh-2020", "round_id": "no-players"}']
    path.write_text("\n".join(lines) + "\n")
    return path


def _claims_file(path: Path, rooms: Path) -> Path:
    """Each scored room's claim: its computed amounts, every seventh with 1000 moved from its first
    player to its second (and the ledger claimed without its scoop lines for every eleventh)."""
    out = []
    answers = subprocess.run([MAUBINH, "score", "--jsonl", str(rooms), "--jobs", "1"], capture_output=True, check=False)
    for k, (line, answer) in enumerate(zip(rooms.read_text().splitlines(), answers.stdout.splitlines(), strict=True)):
        body = json.loads(answer)
        if "ledger" not in body:
            out.append(line)
            continue
        amounts = {p["id"]: p["amount"] for p in body["players"]}
        if k % 7 == 0:
            first, second = list(amounts)[:2]
            amounts[first] -= 1000
            amounts[second] += 1000
        claimed: dict[str, Any] = {"amounts": amounts}
        if k % 11 == 0:
            claimed["ledger"] = [
                {key: each[key] for key in ("payer", "payee", "amount", "step")}
                for each in body["ledger"]
                if each["step"] != "scoop"
            ]
        out.append(json.dumps({**json.loads(line), "claimed": claimed}))
    path.write_text("\n".join(out) + "\n")
    return path


def _parquet(operation: str, source: Path, out: Path, *more: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MAUBINH, operation, "--jsonl", str(source), "--format", "parquet", "-o", str(out), "--jobs", "2", *more],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


def _sorted(table: pa.Table, name: str) -> pa.Table:
    return table.sort_by([(key, "ascending") for key in KEYS[name]])


@pytest.fixture(scope="module")
def rooms(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _rooms_file(tmp_path_factory.mktemp("rooms") / "rooms.jsonl", 3)


def test_parquet_columns_are_as_documented_and_amounts_are_integers(rooms: Path, tmp_path: Path) -> None:
    done = _parquet("score", rooms, tmp_path)
    assert done.returncode == 0, done.stderr
    for table in ("rooms", "players", "ledger", "problems"):
        schema = pq.read_schema(tmp_path / f"{table}.parquet")
        assert schema.names == [name for name, _ in COLUMNS[table]]
        assert schema.equals(arrow_schema(table)), table
    assert pq.read_schema(tmp_path / "ledger.parquet").field("amount").type == pa.int64()
    assert README_COLUMNS() >= {(t, c) for t, columns in COLUMNS.items() for c, _ in columns}


def README_COLUMNS() -> set[tuple[str, str]]:  # noqa: N802 - read like a constant
    """Each ``table.column`` the README's "Audits at scale" documents."""
    text = (ROOT / "docs" / "audits.md").read_text().split("## The tables", 1)[1].split("\n## ", 1)[0]
    found = set()
    for line in text.splitlines():
        if line.startswith("| `") and "." in line.split("`")[1]:
            table, column = line.split("`")[1].split(".", 1)
            found.add((table, column))
    return found


def test_the_tables_hold_what_the_json_lines_say(rooms: Path, tmp_path: Path) -> None:
    """Every scored line's players and ledger, every refused line's problem, row for row, with the
    line number and round_id of its input line."""
    assert _parquet("score", rooms, tmp_path).returncode == 0
    answers = subprocess.run([MAUBINH, "score", "--jsonl", str(rooms), "--jobs", "2"], capture_output=True, check=False)
    scored = [json.loads(line) for line in answers.stdout.splitlines()]
    ledger = pq.read_table(tmp_path / "ledger.parquet").to_pylist()
    players = pq.read_table(tmp_path / "players.parquet").to_pylist()
    rooms_table = pq.read_table(tmp_path / "rooms.parquet").to_pylist()
    assert [r["line"] for r in rooms_table] == list(range(1, len(scored) + 1))
    expected_ledger = [
        (k, body["round_id"], line["seq"], line["payer"], line["payee"], line["amount"], line["explanation"])
        for k, body in enumerate(scored, start=1)
        if "ledger" in body
        for line in body["ledger"]
    ]
    assert [(r["line"], r["round_id"], r["seq"], r["payer"], r["payee"], r["amount"], r["explanation"])
            for r in ledger] == expected_ledger  # fmt: skip
    assert [(r["line"], r["player"], r["amount"]) for r in players] == [
        (k, p["id"], p["amount"])
        for k, body in enumerate(scored, start=1)
        if "players" in body
        for p in body["players"]
    ]
    refused = [(k, body.get("round_id")) for k, body in enumerate(scored, start=1) if "ledger" not in body]
    assert refused and [(r["line"], r["round_id"]) for r in rooms_table if r["refused"]] == refused
    assert (4, None) in refused and (5, "no-players") in refused  # the two unreadable lines, by their numbers
    problems = pq.read_table(tmp_path / "problems.parquet").to_pylist()
    assert {r["line"] for r in problems} == {k for k, _ in refused}
    assert {"bad-json", "required"} <= {r["code"] for r in problems}


def test_duckdb_reads_the_files_and_its_totals_are_the_json_totals(tmp_path: Path, rooms: Path) -> None:
    import duckdb

    claims = _claims_file(tmp_path / "claims.jsonl", rooms)
    out = tmp_path / "tables"
    done = _parquet("verify", claims, out)
    assert done.returncode == 1, done.stderr  # some claims disagree
    json_lines = subprocess.run(
        [MAUBINH, "verify", "--jsonl", str(claims), "--jobs", "2"], capture_output=True, check=False
    )
    disagreements = [json.loads(line) for line in json_lines.stdout.splitlines()]
    differing = Counter()
    for body in disagreements:
        for player in body.get("players", []):
            differing[body["line"]] += abs(player["difference"])
    with duckdb.connect() as db:
        by_line = dict(db.sql(f"select line, sum(abs(difference)) from '{out}/differences.parquet' "
                              "where kind = 'player' group by line").fetchall())  # fmt: skip
        assert by_line == {line: total for line, total in differing.items() if total}
        underpaid = dict(db.sql(f"select step, sum(difference) from '{out}/differences.parquet' "
                                "where kind <> 'player' group by step").fetchall())  # fmt: skip
        assert underpaid and set(underpaid) == {"scoop"} and underpaid["scoop"] < 0  # the scoops left out
        refusals = dict(db.sql(f"select code, count(*) from '{out}/problems.parquet' group by code").fetchall())
        assert refusals == Counter(
            fault["code"] if "errors" in body else "bad-json"
            for body in disagreements if body.get("status") in (400, 422)
            for fault in body.get("errors", [{}])
        )  # fmt: skip
        ((agree,),) = db.sql(f"select count(*) from '{out}/rooms.parquet' where agrees").fetchall()
        assert done.stderr.split("checked, ")[1].startswith(f"{agree} agree")


def test_a_big_file_is_written_in_row_groups_not_held(
    tmp_path: Path, rooms: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows leave memory a row group at a time: with a row group of 500 rows, the ledger of a few
    hundred rooms is several row groups."""
    from service import cli
    from service.bulk import table_files

    monkeypatch.setattr(table_files, "ROW_GROUP_ROWS", 500)
    assert cli.main(["score", "--jsonl", str(rooms), "--format", "parquet", "-o", str(tmp_path), "--jobs", "1"]) == 0
    ledger = pq.ParquetFile(tmp_path / "ledger.parquet")
    assert ledger.metadata.num_row_groups >= 5
    assert all(ledger.metadata.row_group(k).num_rows <= 2 * 500 for k in range(ledger.metadata.num_row_groups))


def test_parquet_needs_jsonl_and_a_directory(tmp_path: Path) -> None:
    room = tmp_path / "room.json"
    room.write_text(json.dumps(_golden_requests()[0]))
    no_jsonl = subprocess.run([MAUBINH, "score", str(room), "--format", "parquet", "-o", str(tmp_path / "t")],
                              capture_output=True, text=True, check=False)  # fmt: skip
    assert no_jsonl.returncode == 2 and "--jsonl" in no_jsonl.stderr
    no_dir = subprocess.run([MAUBINH, "score", "--jsonl", str(room), "--format", "parquet"],
                            capture_output=True, text=True, check=False)  # fmt: skip
    assert no_dir.returncode == 2 and "-o" in no_dir.stderr


JAVA = shutil.which("java")


@pytest.mark.slow
def test_spark_local_gives_the_command_lines_tables(tmp_path: Path) -> None:
    """local[2] over some 870 golden rooms (each four times), refused ones included (one not UTF-8), verified with their claims:
    every table equals the command line's, row for row, and so do a replay's under maubinh-bao. Without Java it skips, unless
    MAUBINH_REQUIRE_JAVA=1 (CI, which installs it) makes that a failure."""
    if JAVA is None:
        if os.environ.get("MAUBINH_REQUIRE_JAVA") == "1":
            pytest.fail("MAUBINH_REQUIRE_JAVA=1 but there is no java: apt-get install openjdk-17-jre-headless")
        pytest.skip("Spark needs Java (CI installs it; MAUBINH_REQUIRE_JAVA=1 makes this a failure)")
    from pyspark.sql import SparkSession

    from service.bulk.replay import read_candidate
    from service.bulk.spark import LOCAL_FILES, audit, exit_status
    from service.rulesets.operator_folder import catalogue_for

    rooms = _rooms_file(tmp_path / "rooms.jsonl", 4)
    claims = _claims_file(tmp_path / "claims.jsonl", rooms)
    assert len(claims.read_text().splitlines()) > 800
    with claims.open("ab") as more:  # not UTF-8, and past the cap: one refusal each, as the command line
        more.write(b'{"round_id": "\xff"}\n')  # gives; the first ended the job, the second was scored
        more.write(b'{"round_id": "' + b"x" * (3 << 19) + b'"}\r\n')
    cli_verified = _parquet("verify", claims, tmp_path / "cli")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").config(*LOCAL_FILES)
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.files.maxPartitionBytes", str(256 * 1024))  # several partitions, scored apart
             .getOrCreate())  # fmt: skip
    spark.sparkContext.setLogLevel("ERROR")
    candidate = read_candidate("maubinh-bao", catalogue_for(None))
    try:
        counts = audit(spark, str(claims), str(tmp_path / "spark"), "verify")
        audit(spark, str(claims), str(tmp_path / "spark-replay"), "replay", candidate=candidate)
        first = claims.read_bytes().splitlines()[:10]  # as bytes: a binary column ended the job
        pq.write_table(pa.table({"body": first}), tmp_path / "named.parquet")
        named = audit(spark, str(tmp_path / "named.parquet"), str(tmp_path / "named"), room_column="body")
        folder = tmp_path / "folder"  # before, a k=v folder was read as a partition, the rest dropped, and
        (folder / "region=north").mkdir(parents=True)  # the lines were numbered in Spark's order of splits
        first_file = folder / "2026-11-01T00:00.jsonl"  # a colon: Hadoop's checksum path for it ended the job
        first_file.write_bytes(b"".join(claims.read_bytes().splitlines(keepends=True)[:40]))
        (folder / "region=north" / "b.jsonl").write_bytes(b"".join(claims.read_bytes().splitlines(keepends=True)[40:]))
        audit(spark, str(folder), str(tmp_path / "spark-folder"), "verify")
    finally:
        spark.stop()
    replayed = subprocess.run([MAUBINH, "replay", "--jsonl", str(claims), "--ruleset", "maubinh-bao", "--format",
                               "parquet", "-o", str(tmp_path / "cli-replay"), "--jobs", "2"],
                              capture_output=True, text=True, check=False)  # fmt: skip
    assert replayed.returncode == 0, replayed.stderr
    for table, keys in (("replayed", ["line"]), ("replayed_players", ["line", "player"]),
                        ("replayed_steps", ["line", "player", "step"])):  # fmt: skip
        cli = pq.read_table(tmp_path / "cli-replay" / f"{table}.parquet")
        ours = pq.read_table(tmp_path / "spark-replay" / table).select(cli.column_names).cast(cli.schema)
        order = [(key, "ascending") for key in keys]
        assert ours.sort_by(order).equals(cli.sort_by(order)), table
        assert cli.num_rows > 0
    for table in VERIFY_TABLES:
        cli = pq.read_table(tmp_path / "cli" / f"{table}.parquet")
        ours = pq.read_table(tmp_path / "spark" / table).select(cli.column_names).cast(cli.schema)
        assert counts[table] == cli.num_rows
        assert _sorted(ours, table).equals(_sorted(cli, table)), table
    assert counts["problems"] >= 12 and counts["differences"] > 0
    cli_rooms = pq.read_table(tmp_path / "cli" / "rooms.parquet").to_pylist()  # the job's exit status reads these
    assert counts["disagree"] == sum(r["agrees"] is False for r in cli_rooms) > 0
    assert counts["refused"] == sum(r["refused"] is not None for r in cli_rooms) >= 12
    assert exit_status("verify", counts, "en") == cli_verified.returncode == 1  # some claims disagree, as the CLI says
    for table in VERIFY_TABLES:  # a folder's files one after the other, in the order of their names
        cli = pq.read_table(tmp_path / "cli" / f"{table}.parquet")
        ours = pq.read_table(tmp_path / "spark-folder" / table).select(cli.column_names).cast(cli.schema)
        assert _sorted(ours, table).equals(_sorted(cli, table)), table
    assert named["rooms"] == 10  # --room-column: Parquet rooms read from the column it names


def test_a_score_run_leaves_no_stale_verify_table(tmp_path: Path, rooms: Path) -> None:
    """Scoring into a directory a verify run wrote drops its differences table: DuckDB must not read
    another run's differences beside this run's rooms."""
    (tmp_path / "differences.parquet").write_bytes(b"from an earlier verify run")
    assert _parquet("score", rooms, tmp_path).returncode == 0
    assert not (tmp_path / "differences.parquet").exists()
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    done = _parquet("score", rooms, a_file)
    assert done.returncode == 2 and "directory" in done.stderr


def test_the_spark_job_exits_as_the_command_line_does(capsys: pytest.CaptureFixture[str]) -> None:
    """verify: 1 when a room disagrees, or when every room was refused (before, the job exited 0 for
    both, where ``maubinh verify`` exits 1); score and replay 0 whatever their rooms."""
    from service.bulk.spark import exit_status

    clean = {"rooms": 5, "disagree": 0, "refused": 2}
    assert exit_status("verify", clean, "en") == 0
    assert exit_status("verify", {**clean, "disagree": 1}, "en") == 1
    assert capsys.readouterr().err == ""
    assert exit_status("verify", {**clean, "refused": 5}, "vi") == 1
    said = capsys.readouterr().err
    assert said.startswith("maubinh-spark: ") and said.count("\n") == 1 and "no room could be checked" not in said
    assert exit_status("verify", {"rooms": 0, "disagree": 0, "refused": 0}, "en") == 0  # an empty input: as the CLI
    assert exit_status("score", {"rooms": 5, "problems": 5}, "en") == exit_status("replay", {"replayed": 0}, "en") == 0
