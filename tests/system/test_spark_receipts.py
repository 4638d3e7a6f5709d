"""The Spark job's receipts (issue 53): a small month of signed receipts in two files, faults of every
kind planted and a round re-rolled across the files, checked on local[2] (a file over several
partitions) agrees with ``maubinh receipts verify --format jsonl``, receipt for receipt."""

from __future__ import annotations

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
    if JAVA is None:
        if os.environ.get("MAUBINH_REQUIRE_JAVA") == "1":
            pytest.fail("MAUBINH_REQUIRE_JAVA=1 but there is no java: apt-get install openjdk-17-jre-headless")
        pytest.skip("Spark needs Java (CI installs it; MAUBINH_REQUIRE_JAVA=1 makes this a failure)")
    from pyspark.sql import SparkSession

    from service.bulk.spark_receipts import verify_receipts
    from service.trust.receipt_lines import ReceiptLines

    month, keys, plants = write_month(tmp_path / "made", 600)
    lines = month.read_bytes().splitlines(keepends=True)
    cut = plants["round_scored_twice"][1] - 1  # the re-rolled round's two receipts in two files
    folder = tmp_path / "month"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(b"".join(lines[:cut]))
    (folder / "b.jsonl").write_bytes(b"".join(lines[cut:]))
    cli = subprocess.run(
        [MAUBINH, "receipts", "verify", "--keys", str(keys), "--format", "jsonl", "--jobs", "2", str(folder)],
        capture_output=True, check=False,
    )  # fmt: skip
    assert cli.returncode == 1, cli.stderr
    expected = [json.loads(line) for line in cli.stdout.splitlines()]
    assert len(expected) == len(lines)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.files.maxPartitionBytes", str(1024 * 1024))  # a file over several partitions
             .getOrCreate())  # fmt: skip
    spark.sparkContext.setLogLevel("ERROR")
    try:
        jwks = json.loads(keys.read_text())
        counts = verify_receipts(spark, str(folder), str(tmp_path / "spark"), jwks, ReceiptLines)
    finally:
        spark.stop()
    table = pq.read_table(tmp_path / "spark" / "receipts").to_pylist()
    got = sorted(table, key=lambda r: (r["file"], r["line"]))
    for row in expected:
        if isinstance(row["round_id"], list):
            row["round_id"] = json.dumps(row["round_id"], ensure_ascii=False)
    assert got == sorted(expected, key=lambda r: (r["file"], r["line"]))
    flagged = {code: len(found) for code, found in plants.items() if code != "retried"}
    assert counts == {"receipts": len(lines), "verified": len(lines) - sum(flagged.values()), **flagged}
