"""Bulk audits: the same rooms as JSON lines, as Parquet tables, and through Spark, in one run.

Figures (medians over rounds, each command run whole, start-up included):
- `maubinh score --jsonl --jobs 2` writing JSON lines, against the same with `--format parquet`
  (goal: Parquet costs <= 15% over JSON lines), and the peak RSS of its largest process;
- the Spark job (`service.bulk.spark.audit`) on `local[2]` over the same file, against the CLI's
  `--jobs 2` JSON lines (goal >= 0.7x), its session started once and not counted (a cluster's
  executors are up before a job), each round scoring and writing every table;
- sizing on paper: executors and hours for 10^9 rooms at the measured rate per core.
Run: .venv/bin/python bench/audit.py [--rooms N] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from rooms import four_player_rooms

MAUBINH = str(Path(sys.executable).with_name("maubinh"))


def timed(command: list[str]) -> tuple[float, int]:
    """Seconds, and the peak RSS (KiB) of the largest process it ran (itself or a worker)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    return seconds, max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rooms", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp())
    source = work / "rooms.jsonl"
    with source.open("w") as out:
        for room in four_player_rooms(args.rooms, seed=3):
            out.write(json.dumps(room) + "\n")
    json_s, parquet_s, spark_s = [], [], []
    peak = 0
    for _ in range(args.rounds):  # the CLI first, JSON lines and Parquet in turns, with no JVM running
        seconds, _ = timed([MAUBINH, "score", "--jsonl", str(source), "--jobs", "2", "-o", str(work / "out.jsonl")])
        json_s.append(seconds)
        shutil.rmtree(work / "tables", ignore_errors=True)
        command = [
            MAUBINH,
            "score",
            "--jsonl",
            str(source),
            "--jobs",
            "2",
            "--format",
            "parquet",
            "-o",
            str(work / "tables"),
        ]
        seconds, peak = timed(command)
        parquet_s.append(seconds)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from service.bulk.spark import audit

    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.driver.memory", "4g").config("spark.ui.showConsoleProgress", "false").getOrCreate())  # fmt: skip
    spark.sparkContext.setLogLevel("ERROR")
    audit(spark, str(source), str(work / "spark"), "score")  # the JVM's first job compiles its code: unmeasured
    for _ in range(args.rounds):
        start = time.perf_counter()
        audit(spark, str(source), str(work / "spark"), "score")
        spark_s.append(time.perf_counter() - start)
    spark.stop()
    j, p, s = (statistics.median(x) for x in (json_s, parquet_s, spark_s))
    n = args.rooms
    print(f"four-player rooms: {n:,}; rounds: {args.rounds}; medians; 2 cores")
    print(f"maubinh score --jsonl --jobs 2, JSON lines : {n / j:>8,.0f} rooms/s  ({j:.1f} s)")
    print(f"  the same, --format parquet              : {n / p:>8,.0f} rooms/s  ({p:.1f} s): "
          f"+{p / j - 1:.0%} over JSON lines (goal <= 15%); peak RSS {peak / 1024:.0f} MiB")  # fmt: skip
    print(f"Spark local[2], every table written        : {n / s:>8,.0f} rooms/s  ({s:.1f} s): "
          f"{j / s:.2f}x the CLI's JSON lines (goal >= 0.7x)")  # fmt: skip
    per_core = n / s / 2
    hours = 1e9 / per_core / 3600
    print(f"sizing: {per_core:,.0f} rooms/s a core -> 10^9 rooms take {hours:,.0f} core-hours: "
          f"{hours / 64:.1f} h on 16 executors of 4 cores, {hours / 256:.1f} h on 64")  # fmt: skip
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
