"""Receipts on Spark: a folder of JSON-lines receipts checked on the executors, each as ``maubinh
receipts verify`` checks it, into one Parquet table (``OUT/receipts/``) of the same verdicts.

The check of one receipt is the trust side's, handed in by the job's entry point
(``deploy/spark/audit.py``): this module knows files, lines and partitions, not receipts. Each line is
numbered within its file (its file's splits are scanned in order), checked in ``mapInArrow``, and the
rounds ruled on two different rooms are found in the JVM (a group by round id over the rooms of the
receipts that checked); their few receipts are flagged ``round_scored_twice`` on the driver, named as
the command line names them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from service.bulk.lines import MAX_LINE_ENV, max_line_bytes
from service.bulk.receipt_runs import ROUND_SCORED_TWICE, others_named
from service.support.rerolls import Others
from service.texts import Language, Text

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

SCHEMA = (
    "file string, line bigint, round_id string, verified boolean, code string, message string, "
    "rooms array<struct<round_id:string,digest:string>>"
)
COLUMNS = ("file", "line", "round_id", "verified", "code", "message")
"""The table's columns, as ``receipts verify --format jsonl`` names them (a batch's round ids as a JSON list)."""

Make = Callable[[Any, Any, Language], Any]
"""What makes the check of one receipt: (key set, catalogue, language) → a checker
(``service.trust.receipt_lines.ReceiptLines``)."""

_checkers: dict[int, Any] = {}


def _checker(make: Make, jwks: Any, language: Language) -> Any:
    """The checker, made once per executor process (the keys read, the rulesets loaded)."""
    key = id(make)
    if key not in _checkers:
        from service.rulesets.catalogue import RULESETS_DIR_ENV
        from service.rulesets.operator_folder import catalogue_for

        _checkers[key] = make(jwks, catalogue_for(os.environ.get(RULESETS_DIR_ENV) or None), language)
    return _checkers[key]


def _round_text(round_id: Any) -> str | None:
    return round_id if round_id is None or isinstance(round_id, str) else json.dumps(round_id, ensure_ascii=False)


def check_partition(
    batches: Iterator[pa.RecordBatch], make: Make, jwks: Any, language: Language
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow``'s function: batches of (file, line, text) → batches of verdicts and rooms."""
    import pyarrow as pa

    checker = _checker(make, jwks, language)
    limit = max_line_bytes()
    for batch in batches:
        columns: dict[str, list[Any]] = {name: [] for name in (*COLUMNS, "rooms")}
        for file, line, text in zip(*(batch.column(n).to_pylist() for n in ("file", "line", "text")), strict=True):
            raw = (text or "").encode("utf-8", "surrogatepass")
            record, rooms = (
                checker.too_long(len(raw), limit, MAX_LINE_ENV) if len(raw) > limit else checker(raw.rstrip(b"\r"))
            )
            for name, value in (("file", file), ("line", line), ("round_id", _round_text(record["round_id"]))):
                columns[name].append(value)
            for name in ("verified", "code", "message"):
                columns[name].append(record[name])
            columns["rooms"].append([{"round_id": r, "digest": d} for r, d in rooms])
        yield pa.RecordBatch.from_pydict(columns)


def numbered(spark: SparkSession, path: str) -> DataFrame:
    """The non-blank lines of every file at ``path`` as (file, line, text), ``line`` from 1 within its
    file: each (file, partition)'s rows counted, a file's partitions in order (Spark packs a file's
    equal splits in offset order), a row's line the rows before it in its file plus its place."""
    from pyspark.sql import functions as fn

    texts = spark.read.text(path).select(
        fn.regexp_replace(fn.input_file_name(), "^file:(//)?", "").alias("file"),
        fn.spark_partition_id().alias("partition"),
        fn.monotonically_increasing_id().alias("id"),
        fn.col("value").alias("text"),
    )
    counts = sorted(texts.groupBy("file", "partition").count().collect())
    starts, before, last = [], 0, None
    for file, partition, count in counts:
        before = 0 if file != last else before
        starts.append((file, partition, before))
        before, last = before + count, file
    offsets = spark.createDataFrame(starts or [("", 0, 0)], "file string, partition int, start bigint")
    line = fn.col("start") + fn.col("id") - fn.shiftleft(fn.col("partition").cast("bigint"), 33) + 1
    joined = texts.join(fn.broadcast(offsets), ["file", "partition"])
    return joined.select("file", line.alias("line"), "text").where(fn.trim(fn.col("text")) != "")


def _flagged(spark: SparkSession, checked: DataFrame, language: Language) -> DataFrame:
    """The receipts of each round ruled on two rooms, flagged and naming the others, as (file, line,
    code, message): found in the JVM, worded on the driver (they are few)."""
    from pyspark.sql import functions as fn

    rooms = checked.select("file", "line", fn.explode("rooms").alias("room")).select(
        "file", "line", "room.round_id", "room.digest"
    )
    twice = rooms.groupBy("round_id").agg(
        fn.countDistinct("digest").alias("rooms"), fn.collect_list(fn.struct("file", "line", "digest")).alias("where")
    )
    rows: dict[tuple[str, int], str] = {}
    for round_id, _, where in twice.where("rooms > 1").orderBy("round_id").collect():
        held = sorted({(w["file"], w["line"], w["digest"]) for w in where})
        others = Others.of([(digest, (f, n)) for f, n, digest in held])
        for f, n, digest in held:
            if (f, n) in rows:
                continue
            named = others_named(others, digest, lambda w: f"{w[0]}:{w[1]}", language)
            rows[f, n] = Text("receipts.round_scored_twice", round_id=round_id, others=named).render(language)
    found = [(f, n, ROUND_SCORED_TWICE, said) for (f, n), said in sorted(rows.items())]
    return spark.createDataFrame(found, "file string, line bigint, twice string, twice_message string")


def verify_receipts(
    spark: SparkSession, path: str, out: str, jwks: Any, make: Make, language: Language = "en"
) -> dict[str, int]:
    """Check every receipt of the JSON-lines files at ``path`` into ``out/receipts/`` (Parquet):
    the counts of receipts and of each code."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as fn

    lines = numbered(spark, path)
    lines = lines.repartition(max(spark.sparkContext.defaultParallelism, 1))
    checked = lines.mapInArrow(lambda batches: check_partition(batches, make, jwks, language), SCHEMA)
    checked = checked.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        flagged = _flagged(spark, checked, language)
        table = (
            checked.join(fn.broadcast(flagged), ["file", "line"], "left")
            .select(
                "file",
                "line",
                "round_id",
                fn.when(fn.col("twice").isNotNull(), fn.lit(False)).otherwise(fn.col("verified")).alias("verified"),
                fn.coalesce("twice", "code").alias("code"),
                fn.coalesce("twice_message", "message").alias("message"),
            )
            .orderBy("file", "line")
        )
        table.write.mode("overwrite").parquet(f"{out.rstrip('/')}/receipts")
        counts = {row["code"] or "verified": int(row["count"]) for row in table.groupBy("code").count().collect()}
        return {"receipts": sum(counts.values()), **dict(sorted(counts.items()))}
    finally:
        checked.unpersist()
