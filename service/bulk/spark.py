"""Bulk audits on Spark: a DataFrame of rooms scored (or verified) on the executors by the same
pipeline as the command line, into the same tables (:mod:`service.bulk.tables`).

``mapInArrow``, not ``mapInPandas``: each partition arrives as Arrow record batches and leaves as
Arrow record batches built straight from the table rows (a list of structs per table and room), with
no pandas frame on the way, whose object columns would only wrap the same Python lists. Each room is
scored once: one nested row per room (a list column per table) is kept, then each table is that
column exploded, so the tables agree with each other and with ``maubinh score|verify --jsonl
--format parquet``, table for table. A refused room is a row of ``rooms`` and ``problems``, never an
error: no room stops a partition.

Run it with ``spark-submit`` on ``deploy/spark/audit.py`` (docs/audits.md); executors need
the package (``pip install 'maubinh[spark]'``, or the wheel with ``--py-files``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from service.bulk.lines import Overlong, max_line_bytes
from service.bulk.tables import COLUMNS, Rows, round_id_of, tables_for
from service.support.extras import SPARK, missing
from service.texts import DEFAULT_LANGUAGE, LANGUAGES, Language

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from service.bulk.replay import Candidate

ROOMS_PER_PARTITION = 10_000
"""Rooms a partition scores: every core busy however small the file, and a partition's tables (about
20 ledger rows a room) a few hundred MB at most however large, so that they stay cached until each
table is written (a split of the default 128 MB would hold 280,000 rooms)."""
LOCAL_FILES = ("spark.hadoop.fs.file.impl", "org.apache.hadoop.fs.RawLocalFileSystem")
"""Local files read and written by Hadoop's raw file system, without a checksum file beside each:
Hadoop makes a checksum file's path as a relative URI, so a file named with a colon
(``2026-11-01T00:00.jsonl``) ended the job in a traceback. Paths of their own scheme (``s3a://``,
``hdfs://``) are read as before."""
SPARK_TYPES = {"int64": "bigint", "int32": "int", "string": "string", "bool": "boolean"}


def nested_schema(operation: str) -> str:
    """The scored DataFrame's schema as Spark DDL: one list of rows per table."""
    tables = []
    for table in tables_for(operation):
        fields = ",".join(f"{name}:{SPARK_TYPES[kind]}" for name, kind in COLUMNS[table])
        tables.append(f"{table} array<struct<{fields}>>")
    return ", ".join(tables)


_answering: dict[str, Any] = {}


def _scorer(operation: str) -> Any:
    """The operation and the catalogue, made once per executor process (tables, rulesets)."""
    if operation not in _answering:
        from service.documents import OPERATIONS, prepare
        from service.rulesets.catalogue import RULESETS_DIR_ENV
        from service.rulesets.operator_folder import catalogue_for

        prepare(operation)
        _answering[operation] = (OPERATIONS[operation], catalogue_for(os.environ.get(RULESETS_DIR_ENV) or None))
    return _answering[operation]


def _texts(batch: pa.RecordBatch) -> Iterator[tuple[int, bytes]]:
    """A batch of :func:`capped` rooms as the command line reads its lines: each line's number and its
    bytes, or an :class:`Overlong` for a room past the cap (refused by its number, as the CLI refuses it)."""
    columns = (batch.column(name).to_pylist() for name in ("line", "room", "length", "limit"))
    for line, room, length, limit in zip(*columns, strict=True):
        yield line, room if room is not None else Overlong(length, limit) if length is not None else b""


def capped(rooms: DataFrame) -> DataFrame:
    """``rooms`` (``line``, ``room``) with each room's text as bytes, and a room past
    ``MAUBINH_MAX_LINE_BYTES`` left out in the JVM, its length and the cap kept: no room is handed to Python
    that the command line would not read, nor shuffled whole. A text not UTF-8 is that room's refusal,
    where Arrow's strings would end the job. Applied once (:func:`audit` caps before it shares the rooms)."""
    from pyspark.sql import functions as fn

    if "limit" in rooms.columns:
        return rooms
    limit, text = max_line_bytes(), fn.col("room").cast("binary")
    over = fn.length(text) > fn.lit(limit)
    return rooms.select(
        "line",
        fn.when(over, fn.lit(None)).otherwise(text).alias("room"),
        fn.when(over, fn.length(text)).alias("length"),
        fn.lit(limit).alias("limit"),
    )


def score_partition(
    batches: Iterator[pa.RecordBatch], operation: str, language: Language = "en"
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow``'s function: batches of :func:`capped` rooms → batches of nested table rows."""
    from service.bulk.jsonl import answer_line

    handler, catalogue = _scorer(operation)
    for batch in batches:
        rows = Rows(operation)
        for line, text in _texts(batch):
            status, body = answer_line(handler, text, catalogue, {}, language)
            rows.add(line, None if status == 200 else round_id_of(text), status, body, language)
        yield rows.nested()


def replay_partition(
    batches: Iterator[pa.RecordBatch], candidate: str | dict[str, Any], only: str | None, language: Language = "en"
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow``'s function for a replay: batches of :func:`capped` recorded rounds → batches of
    nested replay table rows. ``candidate``: as a request names it (resolved here, on the executor)."""
    from service.bulk.replay import Candidate, ReplayRows

    _, catalogue = _scorer("verify")
    replaying = Candidate(candidate, catalogue.resolve(candidate), only)
    for batch in batches:
        rows = ReplayRows()
        for line, text in _texts(batch):
            rows.replay(line, text, catalogue, replaying, language)
        yield rows.nested()


def score_rooms(
    rooms: DataFrame, operation: str = "score", language: Language = "en", candidate: Candidate | None = None
) -> DataFrame:
    """``rooms`` (columns ``line``: bigint, ``room``: the request's JSON text) → one nested row per room;
    a replay's (``operation`` "replay") under ``candidate``. The rooms are :func:`capped` first."""
    rooms = capped(rooms)
    if operation == "replay":
        assert candidate is not None
        reference, only = candidate.reference, candidate.only
        return rooms.mapInArrow(
            lambda batches: replay_partition(batches, reference, only, language), nested_schema(operation)
        )
    return rooms.mapInArrow(lambda batches: score_partition(batches, operation, language), nested_schema(operation))


def tables(scored: DataFrame, operation: str = "score") -> dict[str, DataFrame]:
    """Each table of :func:`score_rooms`' rows, as its own DataFrame with the CLI's columns."""
    return {table: scored.selectExpr(f"inline({table})") for table in tables_for(operation)}


def numbered(texts: DataFrame) -> DataFrame:
    """``line`` for each row of ``texts`` (column ``room``, from a scan of files) as the command line counts
    the lines of its files one after the other in the order of their names (``cat`` of a folder), from 1,
    computed in the JVM: the rows of each split of each file are counted, a file's splits ordered by where
    they start, and a row's line is the rows of the files and splits before it plus its place in its own
    (``monotonically_increasing_id`` counts a partition's rows in order, whatever files Spark packed into
    it). The splits are found from the scan's own rows, not from the order of Spark's partitions, which
    take the largest split first."""
    from pyspark.sql import functions as fn

    ids = texts.select(
        fn.input_file_name().alias("file"),
        fn.input_file_block_start().alias("split"),
        fn.monotonically_increasing_id().alias("id"),
        "room",
    )
    counts = ids.groupBy("file", "split").agg(fn.count("*").alias("rows"), fn.min("id").alias("first"))
    starts, total = [], 0
    for file, split, rows, first in sorted(counts.collect()):
        starts.append((file, split, total - first))
        total += rows
    spark = texts.sparkSession
    offsets = spark.createDataFrame(starts or [("", 0, 0)], "file string, split bigint, start bigint")
    line = fn.col("start") + fn.col("id") + 1
    return ids.join(fn.broadcast(offsets), ["file", "split"]).select(line.alias("line"), "room")


def read_rooms(spark: SparkSession, path: str, room_column: str = "room") -> DataFrame:
    """Rooms from JSON lines (``line`` = the line's number from 1, as the CLI counts: lines end at a
    newline only, a carriage return before it is the line's) or from Parquet with a JSON text column (its
    own ``line`` column, or one numbered the same way)."""
    is_parquet = path.endswith(".parquet") or (
        os.path.isdir(path) and any(f.endswith(".parquet") for f in os.listdir(path))
    )
    if is_parquet:
        frame = spark.read.parquet(path)
        if "line" in frame.columns:
            return frame.selectExpr("cast(line as bigint) as line", f"`{room_column}` as room")
        return numbered(frame.select(frame[room_column].alias("room")))
    lines = spark.read.options(lineSep="\n", recursiveFileLookup="true")  # a k=v folder is no partition
    return numbered(lines.text(path).withColumnRenamed("value", "room"))


def audit(
    spark: SparkSession,
    path: str,
    out: str,
    operation: str = "score",
    language: Language = "en",
    candidate: Candidate | None = None,
    room_column: str = "room",
) -> dict[str, int]:
    """Score, verify or replay (under ``candidate``) the rooms at ``path`` and write each table to
    ``out/<table>/`` as Parquet. Returns the row count of each table and, for verify, how many rooms
    disagree and how many were refused (:data:`VERIFY_COUNTS`), which its exit status reads."""
    from pyspark import StorageLevel

    rooms = capped(read_rooms(spark, path, room_column))
    partitions = max(spark.sparkContext.defaultParallelism, -(-rooms.count() // ROOMS_PER_PARTITION))
    rooms = rooms.repartition(partitions)
    scored = score_rooms(rooms, operation, language, candidate).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        for table, frame in tables(scored, operation).items():
            frame.write.mode("overwrite").parquet(f"{out.rstrip('/')}/{table}")
        counted = {table: f"size({table})" for table in tables_for(operation)}
        counted |= VERIFY_COUNTS if operation == "verify" else {}
        sums = scored.selectExpr(*(f"sum({expression}) as {name}" for name, expression in counted.items()))
        (sizes,) = sums.collect()  # one row: an aggregate over the cached rows
        return {name: int(sizes[name] or 0) for name in counted}
    finally:
        scored.unpersist()


VERIFY_COUNTS = {
    "disagree": "size(filter(rooms, room -> room.agrees = false))",
    "refused": "size(filter(rooms, room -> room.refused is not null))",
}
"""What a verify job's rooms came to beside its tables' sizes (a room refused has no ``agrees``)."""


def exit_status(operation: str, counts: dict[str, int], language: Language) -> int:
    """The job's exit status, as the command line's for the same rooms: verify 1 when a room disagrees
    or every room was refused (not one claim checked is no clean month), else 0; score and replay 0."""
    if operation != "verify":
        return 0
    if counts["rooms"] and counts["refused"] == counts["rooms"]:
        from service.texts import Text

        print(f"maubinh-spark: {Text('cli.verify_none_checked').render(language)}", file=sys.stderr)
        return 1
    return 1 if counts["disagree"] else 0


@dataclass(frozen=True)
class Job:
    """What the command line asked of :func:`audit`: every argument it takes, checked."""

    operation: str
    input: str
    output: str
    room_column: str
    language: Language
    candidate: Candidate | None
    keys: str | None = None
    """receipts: the JWK Set file the receipts are checked with."""


def read_job(argv: Sequence[str] | None = None) -> Job:
    """The job the words ask for; a usage error exits 2 saying why, before any Spark starts."""
    parser = argparse.ArgumentParser(
        prog="maubinh-spark",
        description="Score, verify or replay rooms on Spark into the tables of maubinh --format parquet.",
    )
    parser.add_argument("operation", choices=("score", "verify", "replay", "receipts"))
    parser.add_argument("input", help="JSON lines (one request per line), or Parquet with a column of request JSON")
    parser.add_argument("-o", "--output", required=True, help="directory: one Parquet directory per table")
    parser.add_argument("--room-column", default="room", help="with Parquet input: the column holding each request")
    parser.add_argument("--lang", choices=LANGUAGES, default=DEFAULT_LANGUAGE)
    parser.add_argument(
        "--ruleset", metavar="CANDIDATE", help="replay: the candidate (id, id@version, or a patch file)"
    )
    parser.add_argument("--only", metavar="ID", help="replay: only the rounds recorded under this ruleset id")
    parser.add_argument("--keys", metavar="JWKS", help="receipts: the published keys, a JWK Set file")
    args = parser.parse_args(argv)
    if (args.operation == "receipts") != (args.keys is not None):
        parser.error("--keys JWKS goes with receipts, and receipts needs it")
    if (args.operation == "replay") != (args.ruleset is not None):
        parser.error("--ruleset CANDIDATE goes with replay, and replay needs it")
    if args.only is not None and args.ruleset is None:
        parser.error("--only ID goes with replay")
    candidate = None
    if args.ruleset is not None:
        from service.bulk.replay import read_candidate
        from service.rulesets import RulesetError
        from service.rulesets.catalogue import RULESETS_DIR_ENV
        from service.rulesets.operator_folder import catalogue_for
        from service.support.strict_json import BadDocument

        try:
            candidate = read_candidate(args.ruleset, catalogue_for(os.environ.get(RULESETS_DIR_ENV) or None), args.only)
        except (OSError, BadDocument, RulesetError) as error:
            print(f"maubinh-spark: cannot replay under {args.ruleset}: {error}", file=sys.stderr)
            raise SystemExit(2) from None
    return Job(args.operation, args.input, args.output, args.room_column, args.lang, candidate, args.keys)


def main(argv: Sequence[str] | None = None, receipts: Any = None) -> int:
    """The job's entry point; ``receipts`` is what makes the check of one receipt (the trust side's,
    which the bulk side may not import: ``deploy/spark/audit.py`` hands it in)."""
    try:
        job = read_job(argv)
    except SystemExit as stopped:
        return int(stopped.code or 0)
    absent = missing("The Spark job needs", SPARK)
    if absent:
        print(f"maubinh-spark: {absent}", file=sys.stderr)
        return 2
    if job.operation == "receipts":
        assert receipts is not None
        try:
            jwks, files = receipts_inputs(job, receipts)
        except SystemExit as stopped:
            return int(stopped.code or 0)
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # local[N]: workers run this Python, which has the package
    spark = SparkSession.builder.appName(f"maubinh {job.operation}").config(*LOCAL_FILES).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")  # the tables' counts, not Spark's INFO, are what an auditor reads
    try:
        if job.operation == "receipts":
            from service.bulk.spark_receipts import verify_receipts

            try:
                counts = verify_receipts(spark, files, job.output, jwks, receipts, job.language)
            except OSError as error:  # a file gone or changed while the job read it: no table, as the CLI
                from service.texts import Text, os_error

                said = Text("cli.cannot_open", file=error.filename, error=os_error(error))
                print(f"maubinh-spark: {said.render(job.language)}", file=sys.stderr)
                return 2
        else:
            counts = audit(spark, job.input, job.output, job.operation, job.language, job.candidate, job.room_column)
    finally:
        spark.stop()
    print(" ".join(f"{table}={count}" for table, count in counts.items()), file=sys.stderr)
    if job.operation == "receipts":
        return 2 if counts["receipts"] == 0 else 1 if counts["receipts"] != counts.get("verified", 0) else 0
    return exit_status(job.operation, counts, job.language)


def receipts_inputs(job: Job, receipts: Any) -> tuple[Any, list[str]]:
    """The job's key set, read and taken by the check (``receipts`` makes it), and the files of its
    folder, as ``receipts verify`` finds them: what that command refuses as a usage error (a key set
    that cannot be read or is none, a path that is no file or folder, a folder without receipts) exits
    2 here too, saying why, before Spark starts. What the folder holds and the run will not read is said."""
    from service.bulk.receipt_runs import NoReceipts, inputs, not_read
    from service.rulesets.catalogue import RULESETS_DIR_ENV
    from service.rulesets.operator_folder import catalogue_for
    from service.support.key_sets import read_key_set
    from service.support.strict_json import BadDocument
    from service.texts import Text, os_error

    def stop(key: str, **fields: Any) -> SystemExit:
        print(f"maubinh-spark: {Text(key, **fields).render(job.language)}", file=sys.stderr)
        return SystemExit(2)

    assert job.keys is not None
    try:
        jwks = read_key_set(job.keys)
        receipts(jwks, catalogue_for(os.environ.get(RULESETS_DIR_ENV) or None), job.language)
        files = inputs([job.input])
    except OSError as error:
        named = getattr(error, "filename", None) or job.keys
        raise stop("cli.cannot_open", file=named, error=os_error(error)) from None
    except BadDocument as error:
        raise stop("receipts.unreadable", error=error.args[0]) from None
    except NoReceipts as error:
        raise stop("receipts.no_receipts_in", path=error.args[0]) from None
    except Exception as error:  # the check's own refusal of a key set that is no JWK Set (a Text says why)
        if not hasattr(error.args[0] if error.args else None, "render"):
            raise
        print(f"maubinh-spark: {error.args[0].render(job.language)}", file=sys.stderr)
        raise SystemExit(2) from None
    for path, link in not_read([job.input]):
        unread = Text("receipts.not_read_link" if link else "receipts.not_read_special", path=path)
        print(f"maubinh-spark: {unread.render(job.language)}", file=sys.stderr)
    return jwks, files
