"""Receipts on Spark: a folder of receipts checked on the executors, each as ``maubinh receipts verify``
checks it, into one Parquet table (``OUT/receipts/``) of the same verdicts.

The check of one receipt is the trust side's, handed in by the job's entry point
(``deploy/spark/audit.py``): this module knows files, lines and partitions, not receipts. The job reads
what the command line reads, as it reads it: the files :func:`receipt_runs.inputs` finds (a ``k=v``
folder is no partition, no file but a receipt file is read, no link is followed), each line through the
same capped reader (a line past the cap is refused by its number unread, a line not UTF-8 is one receipt
that cannot be read), so a backend cannot lay out a folder that one of the two sees otherwise. A
JSON-lines file is cut in blocks that the executors scan for their newlines first, so that each block's
lines are numbered within their file without the driver reading the month. The rounds ruled on two
different rooms are found in the JVM (a group by round id over the rooms of the receipts that checked);
their few receipts are flagged ``round_scored_twice`` on the driver, named as the command line names
them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from service.bulk.receipt_runs import (
    CHUNK,
    CHUNK_BYTES,
    ROUND_SCORED_TWICE,
    Shared,
    checked,
    holds_lines,
    others_named,
    read_span,
    shown_path,
    whole_receipt,
)
from service.bulk.spans import Span, block_lines, block_spans, shared_identity
from service.support.regular_files import open_regular
from service.support.rerolls import Others
from service.texts import Language, Text

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

SCHEMA = (
    "file_index int, line bigint, round_id string, verified boolean, code string, message string, "
    "rooms array<struct<round_id:string,digest:string>>"
)
COLUMNS = ("file", "line", "round_id", "verified", "code", "message")
"""The table's columns, as ``receipts verify --format jsonl`` names them (a batch's round ids as a JSON list)."""

Make = Callable[[Any, Any, Language], Any]
"""What makes the check of one receipt: (key set, catalogue, language) → a checker
(``service.trust.receipt_lines.ReceiptLines``)."""

UNREAD = "file_unread"
"""A row's code for a share its task could not read (the file gone, or changed since the driver found it),
its ``line`` the error's number: never a verdict, the run's end (:class:`Unread`)."""


class Unread(OSError):
    """A file of the run that an executor could not read, or found changed: the run has no table."""


Work = tuple[int, str, Span | None]
"""A task's share: a file's index and path, and a span of its lines (None: a whole-file receipt)."""

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


def check_work(works: Iterable[Work], make: Make, jwks: Any, language: Language) -> Iterator[tuple[Any, ...]]:
    """A partition's shares → a row of :data:`SCHEMA` a receipt, checked :data:`CHUNK` receipts at a time."""
    checker = _checker(make, jwks, language)
    for index, path, span in works:
        try:
            if span is None:
                with open_regular(path) as source:
                    numbered = [(index, 1, whole_receipt(source))]
            else:
                numbered = read_span(Shared(index, span))
        except OSError as error:  # gone, or changed since the driver found it: the driver says so, exit 2
            yield index, error.errno or 0, None, False, UNREAD, error.strerror or str(error), []
            continue
        for at in range(0, len(numbered), CHUNK):
            for file, line, record, rooms in checked(checker, numbered[at : at + CHUNK]):
                yield (
                    file, line, _round_text(record["round_id"]), record["verified"], record["code"],
                    record["message"], [{"round_id": r, "digest": d} for r, d in rooms],
                )  # fmt: skip


TASKS_PER_CORE = 16
"""A task a share (a span, a file) up to so many a core, then several shares a task: a folder of 100,000
small files is not 100,000 tasks, each with Spark's own cost, and a slow share still holds up few others."""


def _slices(spark: SparkSession, shares: int) -> int:
    return max(1, min(shares, TASKS_PER_CORE * spark.sparkContext.defaultParallelism))


def _scanned(path: str, start: int, end: int) -> tuple[int, int | None, bool] | OSError:
    """:func:`block_lines`, or why the block could not be read (the driver says it, naming the file)."""
    try:
        return block_lines(path, start, end)
    except OSError as error:
        return error


def shares(spark: SparkSession, files: list[str], block: int = CHUNK_BYTES) -> list[Work]:
    """What the tasks check: each JSON-lines file in spans of about ``block`` bytes, found from its
    blocks' newlines (counted on the executors), and each other file whole."""
    blocks: list[tuple[int, int, int]] = []
    identities: dict[int, tuple[int, ...]] = {}
    for index, path in enumerate(files):
        if holds_lines(path):
            identities[index] = shared_identity(os.stat(path))
            size = identities[index][0]
            blocks += [(index, start, min(size, start + block)) for start in range(0, size, block)]
    counted = (
        spark.sparkContext.parallelize(blocks, _slices(spark, len(blocks)))
        .map(lambda piece: (piece, _scanned(files[piece[0]], piece[1], piece[2])))
        .collect()
        if blocks
        else []
    )
    by_file: dict[int, list[tuple[int, tuple[int, int | None, bool]]]] = {}
    for (index, start, _), found in sorted(counted):
        if isinstance(found, OSError):
            raise Unread(found.errno, found.strerror or str(found), shown_path(files[index]))
        by_file.setdefault(index, []).append((start, found))
    works: list[Work] = []
    for index, path in enumerate(files):
        if index not in identities:
            works.append((index, path, None))
        else:
            works += [(index, path, span) for span in block_spans(path, identities[index], by_file.get(index, []))]
    return works


def _flagged(spark: SparkSession, checked: DataFrame, names: list[str], language: Language) -> DataFrame:
    """The receipts of each round ruled on two rooms, flagged and naming the others, as (file_index, line,
    code, message): found in the JVM, worded on the driver (they are few). A receipt whose rooms name
    two such rounds is worded by the first of them in its rooms, as the command line words it."""
    from pyspark.sql import functions as fn

    rooms = checked.select("file_index", "line", fn.posexplode("rooms").alias("position", "room")).select(
        "file_index", "line", "position", "room.round_id", "room.digest"
    )
    twice = rooms.groupBy("round_id").agg(
        fn.countDistinct("digest").alias("rooms"),
        fn.collect_list(fn.struct("file_index", "line", "position", "digest")).alias("where"),
    )
    said: dict[tuple[int, int], tuple[int, str]] = {}
    for round_id, _, where in twice.where("rooms > 1").collect():
        held = sorted({(w["file_index"], w["line"], w["digest"]) for w in where})
        others = Others.of([(digest, (f, n)) for f, n, digest in held])
        for w in where:
            place, position = (w["file_index"], w["line"]), w["position"]
            if place in said and said[place][0] <= position:
                continue
            named = others_named(others, w["digest"], lambda at: f"{names[at[0]]}:{at[1]}", language)
            words = Text("receipts.round_scored_twice", round_id=round_id, others=named)
            said[place] = position, words.render(language)
    found = [(f, n, ROUND_SCORED_TWICE, message) for (f, n), (_, message) in sorted(said.items())]
    return spark.createDataFrame(found, "file_index int, line bigint, twice string, twice_message string")


def verify_receipts(
    spark: SparkSession,
    files: list[str],
    out: str,
    jwks: Any,
    make: Make,
    language: Language = "en",
    block: int = CHUNK_BYTES,
) -> dict[str, int]:
    """Check every receipt of ``files`` (:func:`receipt_runs.inputs`' of the job's folder) into
    ``out/receipts/`` (Parquet): the counts of receipts and of each code."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as fn

    names = [shown_path(path) for path in files]
    works = shares(spark, files, block)
    tasks = spark.sparkContext.parallelize(works, _slices(spark, len(works)))
    rows = tasks.mapPartitions(lambda shared: check_work(shared, make, jwks, language))
    checked = spark.createDataFrame(rows, SCHEMA).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        unread = checked.where(fn.col("code") == UNREAD).select("file_index", "line", "message")
        for index, number, why in unread.limit(1).collect():
            raise Unread(number, why, names[index])
        flagged = _flagged(spark, checked, names, language)
        named = spark.createDataFrame(list(enumerate(names)), "file_index int, file string")
        table = (
            checked.join(fn.broadcast(flagged), ["file_index", "line"], "left")
            .join(fn.broadcast(named), "file_index")
            .orderBy("file_index", "line")
            .select(
                "file",
                "line",
                "round_id",
                fn.when(fn.col("twice").isNotNull(), fn.lit(False)).otherwise(fn.col("verified")).alias("verified"),
                fn.coalesce("twice", "code").alias("code"),
                fn.coalesce("twice_message", "message").alias("message"),
            )
        )
        table.write.mode("overwrite").parquet(f"{out.rstrip('/')}/receipts")
        counts = {row["code"] or "verified": int(row["count"]) for row in table.groupBy("code").count().collect()}
        return {"receipts": sum(counts.values()), **dict(sorted(counts.items()))}
    finally:
        checked.unpersist()
