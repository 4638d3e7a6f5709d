"""The Spark job's receipts (issue 53): a small month of signed receipts in two files, faults of every
kind planted and a round re-rolled across the files, checked on local[2] (a file over several
partitions) agrees with ``maubinh receipts verify --format jsonl``, receipt for receipt."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from receipt_month import write_month

JAVA = shutil.which("java") or ("/usr/bin/java" if Path("/usr/bin/java").exists() else None)
MAUBINH = str(Path(sys.executable).with_name("maubinh"))


@pytest.mark.slow
def test_spark_checks_a_month_of_receipts_as_the_command_line_does(tmp_path: Path) -> None:
    """The month laid out as a hostile backend might (found by an attack on the job): a ``k=v`` folder,
    which Spark's reader took for a partition and then read nothing else; many files, whose lines Spark
    numbered across the files it packed together; a name with a colon, which Hadoop cannot open; a name
    not UTF-8; a line not UTF-8 and a line past the cap, either of which ended the job; a pretty-printed
    receipt; files and links the command line does not read, and a batch re-rolling two rounds. The job
    reads the folder as the command line does, so the two tables are equal, row for row (an empty file
    too)."""
    if JAVA is None:
        if os.environ.get("MAUBINH_REQUIRE_JAVA") == "1":
            pytest.fail("MAUBINH_REQUIRE_JAVA=1 but there is no java: apt-get install openjdk-17-jre-headless")
        pytest.skip("Spark needs Java (CI installs it; MAUBINH_REQUIRE_JAVA=1 makes this a failure)")
    import random

    from pyspark.sql import SparkSession
    from receipt_month import Maker, room

    from service.bulk.receipt_runs import inputs
    from service.bulk.spark_receipts import verify_receipts
    from service.trust.receipt_lines import ReceiptLines

    month, keys, plants = write_month(tmp_path / "made", 600)
    lines = month.read_bytes().splitlines(keepends=True)
    cut = plants["round_scored_twice"][1] - 1  # the re-rolled round's two receipts in two files
    folder = tmp_path / "month"
    (folder / "region=north").mkdir(parents=True)
    (folder / "region=north" / "a.jsonl").write_bytes(b"".join(lines[:100]))
    for k, at in enumerate(range(100, cut, 40)):  # many small files
        (folder / f"day-{k:02}.jsonl").write_bytes(b"".join(lines[at : min(at + 40, cut)]))
    (folder / "2026-11-30T00:00.jsonl").write_bytes(
        b"".join(lines[cut : cut + 50])
        + b"\xff\xfe not UTF-8\n"
        + b"x" * (3 << 20)
        + b"\n\t\n"
        + b"".join(lines[cut + 50 :])
    )
    os.close(os.open(bytes(folder) + b"/odd-\xff.jsonl", os.O_WRONLY | os.O_CREAT))
    with open(bytes(folder) + b"/odd-\xff.jsonl", "wb") as odd:
        odd.write(lines[5])
    (folder / "one.json").write_text(json.dumps(json.loads(lines[7]), indent=2))
    (folder / "notes.txt").write_bytes(lines[8])
    (folder / "quiet-hour.jsonl").write_bytes(b"")  # before, an empty file ended the job on its driver
    (tmp_path / "outside.jsonl").write_bytes(lines[9])
    (folder / "link.jsonl").symlink_to(tmp_path / "outside.jsonl")
    maker, rng = Maker(), random.Random(11)
    batch = {"rooms": [room(rng, "zz"), room(rng, "aa")]}
    (folder / "rerolls.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in (maker.receipt(batch, "/v1/score/batch"), maker.receipt(room(rng, "zz")),
                                               maker.receipt(room(rng, "aa"))))
    )  # fmt: skip
    cli = subprocess.run(
        [MAUBINH, "receipts", "verify", "--keys", str(keys), "--format", "jsonl", "--jobs", "2", str(folder)],
        capture_output=True, check=False,
    )  # fmt: skip
    assert cli.returncode == 1, cli.stderr
    expected = [json.loads(line) for line in cli.stdout.splitlines()]
    assert len(expected) == len(lines) + 2 + 1 + 1 + 3, "the month, the two odd lines, two files and a batch"
    assert "zz" in next(row["message"] for row in expected if row["file"].endswith("rerolls.jsonl"))
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())  # fmt: skip
    spark.sparkContext.setLogLevel("ERROR")
    try:
        jwks = json.loads(keys.read_text())
        files = inputs([str(folder)])
        counts = verify_receipts(spark, files, str(tmp_path / "spark"), jwks, ReceiptLines, block=100_000)
    finally:
        spark.stop()
    table = pq.read_table(tmp_path / "spark" / "receipts").to_pylist()
    for row in expected:
        if isinstance(row["round_id"], list):
            row["round_id"] = json.dumps(row["round_id"], ensure_ascii=False)
    assert table == expected, "in the command line's order too"
    codes = {row["code"] or "verified": 0 for row in expected}
    for row in expected:
        codes[row["code"] or "verified"] += 1
    assert counts == {"receipts": len(expected), **dict(sorted(codes.items()))}


@pytest.mark.parametrize(
    "case", ["keys a pipe", "keys not a set", "keys missing", "folder empty", "folder missing", "a URL"]
)
def test_the_receipts_job_refuses_what_the_command_line_refuses_before_spark_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    """Before, a key set that was a pipe held the driver for ever, one that was no JWK Set failed once the
    month was read (seven tracebacks, exit 1), and an empty folder was a clean month (exit 0)."""
    from service.bulk.spark import main, read_job, receipts_inputs
    from service.trust.receipt_lines import ReceiptLines

    month, keys, _ = write_month(tmp_path / "made", 200)
    folder = tmp_path / "month"
    folder.mkdir()
    if case != "folder empty":
        (folder / "a.jsonl").write_bytes(month.read_bytes())
    (tmp_path / "notes.txt").write_text("{}")
    given = {
        "keys a pipe": (str(folder), str(tmp_path / "pipe")),
        "keys not a set": (str(folder), str(tmp_path / "notes.txt")),
        "keys missing": (str(folder), str(tmp_path / "nothing.json")),
        "folder empty": (str(folder), str(keys)),
        "folder missing": (str(tmp_path / "nowhere"), str(keys)),
        "a URL": ("s3a://lake/receipts/", str(keys)),
    }[case]
    os.mkfifo(tmp_path / "pipe")
    argv = ["receipts", given[0], "--keys", given[1], "-o", str(tmp_path / "out")]
    with pytest.raises(SystemExit) as stopped:
        receipts_inputs(read_job(argv), ReceiptLines)
    assert stopped.value.code == 2
    said = capsys.readouterr().err
    assert said.startswith("maubinh-spark: ") and "Traceback" not in said and said.count("\n") == 1, said
    assert main(argv, receipts=ReceiptLines) == 2, "and the job's exit, before Spark starts"


def test_a_file_changed_after_the_driver_found_it_is_no_verdict_but_the_run_s_end(tmp_path: Path) -> None:
    """Before, a file appended to while the job ran ended it in a traceback, exit 1 (which says receipts
    failed): the share it was in is now a row the driver turns into "cannot open", exit 2, no table."""
    from service.bulk import spans
    from service.bulk.spark_receipts import UNREAD, check_work
    from service.trust.receipt_lines import ReceiptLines

    month, keys, _ = write_month(tmp_path / "made", 200)
    path = str(month)
    size = month.stat().st_size
    (span,) = spans.block_spans(path, spans.shared_identity(month.stat()), [(0, spans.block_lines(path, 0, size))])
    with month.open("ab") as more:
        more.write(month.read_bytes().splitlines(keepends=True)[0])
    jwks = json.loads(keys.read_text())
    rows = list(check_work([(0, path, span), (1, str(tmp_path / "gone.json"), None)], ReceiptLines, jwks, "en"))
    assert [(row[0], row[1], row[4]) for row in rows] == [(0, errno.ESTALE, UNREAD), (1, errno.ENOENT, UNREAD)]
    assert "changed or replaced" in rows[0][5] and "No such file" in rows[1][5]
