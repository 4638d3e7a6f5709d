"""The operations (``score``, ``verify``, ``evaluate``, ``arrange``): one document, JSON lines, the
audit tables and report, and the table of rooms (``rooms``, ``--rooms``)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from service.bulk import VIEWER, spreadsheet
from service.bulk.lines import Overlong, max_line_bytes
from service.cli.shared import (
    EXIT_REJECTED,
    EXIT_USAGE,
    Helped,
    language_option,
    open_input,
    progress_bar,
    request_defaults,
    say,
    seconds_said,
)
from service.contract import OPPONENTS
from service.documents import OPERATIONS, answer
from service.rulesets.catalogue import Catalogue
from service.serialize import dumps
from service.support.cores import available_cores
from service.support.extras import AUDIT, missing
from service.support.regular_files import remove_half_written
from service.texts import Language, Text, os_error

if TYPE_CHECKING:  # loaded where used: one room's `maubinh score` starts without them (numpy, the engine)
    from service.bulk import jsonl


def _summed_up(name: str, done: jsonl.Summary, language: Language) -> int:
    """The summary line on stderr, and the exit status it gives."""
    if name == "verify":
        disagree = done.lines - done.refused - done.agreed
        summary = Text(
            "cli.verify_summary",
            lines=done.lines,
            agreed=done.agreed,
            disagreed=disagree,
            refused=done.refused,
            seconds=seconds_said(done.seconds, language),
        )
        print(f"maubinh verify: {summary.render(language)}", file=sys.stderr)
        if done.lines and done.refused == done.lines:  # not one claim checked: no clean month
            say(name, "cli.verify_none_checked", language)
            return EXIT_REJECTED
        return EXIT_REJECTED if disagree else 0
    seconds = seconds_said(done.seconds, language)
    counts = {"lines": done.lines, "done": done.lines - done.refused, "refused": done.refused}
    summary = Text("cli.summary", **counts, seconds=seconds)
    print(f"maubinh {name}: {summary.render(language)}", file=sys.stderr)
    return 0


def _run_tables(name: str, args: argparse.Namespace, parquet: bool, report_path: str | None) -> int:
    """--jsonl with the tables: Parquet files in a directory, an audit report, or both."""
    for wanted, needs in ((parquet, "cli.tables_need"), (report_path, "cli.report_needs")):
        absent = missing(Text(needs).render(args.lang), AUDIT, args.lang) if wanted else None
        if absent:
            print(f"maubinh {name}: {absent}", file=sys.stderr)
            return EXIT_USAGE
    from service.bulk import jsonl
    from service.bulk.audit_report import Report
    from service.bulk.report_page import HashedLines
    from service.bulk.table_files import ParquetTables

    if parquet and Path(args.output).exists() and not Path(args.output).is_dir():
        say(name, "cli.output_is_a_file", args.lang, path=args.output)
        return EXIT_USAGE
    try:
        source = open_input(args.file)
        out = None if parquet else (open(args.output, "wb") if args.output else sys.stdout.buffer)  # noqa: SIM115
        files = ParquetTables(args.output, name) if parquet else None
    except OSError as error:
        say(name, "cli.cannot_open", args.lang, file=error.filename, error=os_error(error))
        return EXIT_USAGE
    report = Report(args.lang, args.viewer) if report_path else None

    def take(chunk: jsonl.Chunk) -> None:
        if files is not None:
            files.add(chunk.tables)
        if report is not None:
            report.add(chunk)

    lines = HashedLines(source, args.file)
    with source:
        try:
            progress = progress_bar(args.file, args.lang)
            done = jsonl.run(name, lines, out, args.jobs, progress, None, args.lang, request_defaults(args), take)
            if progress is not None:
                progress.close()
        finally:
            if files is not None:
                files.close()
            if out is not None and out is not sys.stdout.buffer:
                out.close()
    if report is not None and report_path:
        figures, beside = report.figures(done, lines), Path(report_path).with_suffix(".json")
        Path(report_path).write_text(report.html(figures), encoding="utf-8")
        beside.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        say(name, "cli.report_written", args.lang, page=report_path, figures=str(beside))
    return _summed_up(name, done, args.lang)


def _writes_over(output: str | None, *read: str | Path) -> str | None:
    """Which of ``read`` the file ``output`` names is (by another name too), if any: opening it to write
    would empty what is about to be read (a table given as its own ``-o`` was truncated, then said empty)."""
    for source in read:
        try:
            if not output:
                return None
            if str(source) == "-":  # standard input: the file behind it, if any (rooms - -o F < F)
                given, written = os.fstat(sys.stdin.fileno()), os.stat(output)
                if (given.st_dev, given.st_ino) == (written.st_dev, written.st_ino):
                    return str(source)
            elif os.path.samefile(output, source):
                return str(source)
        except (OSError, ValueError):  # one of them not there yet, or no standard input: not the same file
            continue
    return None


def run_rooms(args: argparse.Namespace, catalogue: Catalogue) -> int:
    """``rooms``: claims (JSON lines) or score's tables (a directory) → the table of rooms."""
    language: Language = args.lang
    if absent := missing(Text("cli.rooms_need").render(language), AUDIT, language):
        print(f"maubinh rooms: {absent}", file=sys.stderr)
        return EXIT_USAGE
    from service.bulk import room_conversion, room_table

    source = Path(args.input)
    if source.is_dir() and not (source / "rooms.parquet").is_file():
        say("rooms", "cli.rooms_not_scored", language, path=args.input)
        return EXIT_USAGE
    if over := _writes_over(args.output, source, source / "rooms.parquet", source / "players.parquet"):
        say("rooms", "cli.output_is_input", language, output=args.output, input=over)
        return EXIT_USAGE
    written = False
    try:
        with ExitStack() as inputs:
            if source.is_dir():
                room_conversion.scored_tables(source)  # what is wrong with the input said before -o is opened
                convert = partial(room_conversion.from_scored, source)
            else:
                convert = partial(room_conversion.from_claims, inputs.enter_context(open_input(args.input)), catalogue)
            out = room_table.RoomTableWriter(args.output)
            written = True
            try:
                done = convert(out)
            finally:
                out.close()
    except (OSError, room_table.NotATable) as error:
        if written:
            remove_half_written(args.output)  # half a table is not one
        if isinstance(error, OSError):
            say("rooms", "cli.cannot_open", language, file=error.filename, error=os_error(error))
        else:
            say("rooms", "cli.not_a_table", language, path=args.input, why=error.args[0])
        return EXIT_USAGE
    first = ", ".join(map(str, done.left_out[:10])) + (", …" if len(done.left_out) > 10 else "")
    if done.left_out:
        say("rooms", "cli.rooms_written", language, rooms=done.rooms, path=args.output, left=len(done.left_out),
            lines=first)  # fmt: skip
    else:
        say("rooms", "cli.rooms_all_written", language, rooms=done.rooms, path=args.output)
    if done.ledgers:
        say("rooms", "cli.rooms_ledgers", language, count=done.ledgers)
    return 0


def _rooms_operation(name: str, args: argparse.Namespace, catalogue: Catalogue) -> int:
    """``verify --rooms``: answers as verify --jsonl's; ``score --rooms -o FILE``: amounts as a table."""
    if absent := missing(Text("cli.rooms_need").render(args.lang), AUDIT, args.lang):
        print(f"maubinh {name}: {absent}", file=sys.stderr)
        return EXIT_USAGE
    from service.bulk import table_runs
    from service.bulk.room_table import NotATable, checked

    if getattr(args, "report", None) or (name == "verify" and getattr(args, "format", "json") == "parquet"):
        say(name, "cli.tables_read_jsonl", args.lang)  # the table's answers are JSON lines: never dropped unsaid
        return EXIT_USAGE
    if getattr(args, "jsonl", False) or getattr(args, "file", "-") != "-":
        say(name, "cli.rooms_one_input", args.lang)  # a second input, never read unsaid
        return EXIT_USAGE
    if over := _writes_over(args.output, args.rooms):
        say(name, "cli.output_is_input", args.lang, output=args.output, input=over)
        return EXIT_USAGE

    if name == "score":
        if not args.output:
            say(name, "cli.rooms_need_output", args.lang)
            return EXIT_USAGE
        try:
            started = time.perf_counter()
            rooms, refused = table_runs.score(args.rooms, catalogue, args.output, args.lang, args.jobs)
        except OSError as error:
            say(name, "cli.cannot_open", args.lang, file=error.filename or args.rooms, error=os_error(error))
            return EXIT_USAGE
        except NotATable as error:
            say(name, "cli.not_a_table", args.lang, path=args.rooms, why=error.args[0])
            return EXIT_USAGE
        seconds = seconds_said(time.perf_counter() - started, args.lang)
        summary = Text("cli.summary", lines=rooms, done=rooms - refused, refused=refused, seconds=seconds)
        print(f"maubinh score: {summary.render(args.lang)}", file=sys.stderr)
        return 0
    try:
        checked(args.rooms)  # before -o is opened, and emptied, for a table that is not there
        out = open(args.output, "wb") if args.output else sys.stdout.buffer  # noqa: SIM115 - closed below
        try:
            done = table_runs.verify(args.rooms, catalogue, out, args.lang, args.jobs)
        except BaseException:  # a row group found bad, a worker lost or the run stopped, after others were answered
            if out is not sys.stdout.buffer:
                out.close()
                remove_half_written(args.output)
            raise
        finally:
            if out is not sys.stdout.buffer:
                out.close()
    except OSError as error:
        if error.filename is None:
            raise  # a write that failed (a full disk, a reader gone): said as every command says it
        say("verify", "cli.cannot_open", args.lang, file=error.filename, error=os_error(error))
        return EXIT_USAGE
    except NotATable as error:
        say("verify", "cli.not_a_table", args.lang, path=args.rooms, why=error.args[0])
        return EXIT_USAGE
    return _summed_up("verify", done, args.lang)


def _capped(source: Any) -> bytes:
    """One request document, or an :class:`Overlong` past ``MAUBINH_MAX_LINE_BYTES`` (a line's cap, 1 MiB
    by default, some hundreds of times a room): the rest is not read (an input may never end)."""
    limit = max_line_bytes()
    text: bytes = source.read(limit + 1)
    return text if len(text) <= limit else Overlong(len(text), limit)


def run_operation(name: str, args: argparse.Namespace, catalogue: Catalogue) -> int:
    if getattr(args, "rooms", None) is not None:
        return _rooms_operation(name, args, catalogue)
    parquet = getattr(args, "format", "json") == "parquet"
    report = getattr(args, "report", None)
    if (parquet or report) and not args.jsonl:
        say(name, "cli.tables_read_jsonl", args.lang)
        return EXIT_USAGE
    if parquet and not args.output:
        say(name, "cli.tables_need_output", args.lang)
        return EXIT_USAGE
    if parquet or report:
        return _run_tables(name, args, parquet, report)
    try:
        source = open_input(args.file)
        out = open(args.output, "wb") if args.output else sys.stdout.buffer  # noqa: SIM115 - closed below
    except OSError as error:
        say(name, "cli.cannot_open", args.lang, file=error.filename, error=os_error(error))
        return EXIT_USAGE
    with source:
        try:
            csv = getattr(args, "format", "json") == "csv"
            if csv and args.jsonl:
                out.write(spreadsheet.header())
            if not args.jsonl:
                text = _capped(source)
                if isinstance(text, Overlong):  # a line's cap for one document too: memory bounded by it
                    status, body = 413, text.problem("problem.document_too_large_detail")
                else:
                    status, body = answer(OPERATIONS[name], text, catalogue, request_defaults(args), args.lang)
                if csv and status == 200:  # a refused room writes nothing to stdout, not even a header
                    out.write(spreadsheet.header() + spreadsheet.ledger_rows(body))
                elif csv:
                    sys.stderr.buffer.write(dumps(body, args.lang) + b"\n")
                else:
                    out.write(dumps(body, args.lang) + b"\n")
                return 0 if status == 200 and body.get("agrees", True) else EXIT_REJECTED
            from service.bulk import jsonl
            from service.bulk.spans import SpanMoved

            progress = progress_bar(args.file, args.lang)
            aside = sys.stderr.buffer if csv else None
            try:
                done = jsonl.run(name, source, out, args.jobs, progress, aside, args.lang, request_defaults(args))
            except SpanMoved as error:  # the workers read the file themselves
                say(name, "cli.cannot_open", args.lang, file=args.file, error=os_error(error))
                return EXIT_USAGE
            if progress is not None:
                progress.close()
            return _summed_up(name, done, args.lang)
        finally:
            if out is not sys.stdout.buffer:
                out.close()


def operation_arguments(name: str) -> Callable[[argparse.ArgumentParser, Helped, Language], None]:
    def add(sub: argparse.ArgumentParser, helped: Helped, language: Language) -> None:
        sub.add_argument(
            "file", nargs="?", default="-", metavar=helped("cli.metavar_file_argument"), help=helped("cli.help_file")
        )
        sub.add_argument("--jsonl", action="store_true", help=helped("cli.help_jsonl"))
        sub.add_argument(
            "--jobs",
            type=int,
            default=available_cores(),
            metavar=helped("cli.metavar_jobs"),
            help=helped("cli.help_jobs"),
        )
        sub.add_argument("-o", "--output", metavar=helped("cli.metavar_file"), help=helped("cli.help_output"))
        language_option(sub, language)
        if name == "arrange":
            sub.add_argument("--opponents", choices=OPPONENTS, help=helped("cli.help_opponents"))
        if name in ("score", "verify"):
            sub.add_argument(
                "--format",
                choices=("json", "csv", "parquet") if name == "score" else ("json", "parquet"),
                default="json",
                help=helped("cli.help_format_score" if name == "score" else "cli.help_format_verify"),
            )
        if name == "verify":
            sub.add_argument("--report", metavar=helped("cli.metavar_html"), help=helped("cli.help_report"))
        if name in ("score", "verify"):
            rooms_help = "cli.help_verify_rooms" if name == "verify" else "cli.help_score_rooms"
            sub.add_argument("--rooms", metavar=helped("cli.metavar_table"), help=helped(rooms_help))
            sub.add_argument(
                "--viewer", metavar=helped("cli.metavar_url"), default=VIEWER, help=helped("cli.help_viewer")
            )

    return add


def rooms_arguments(rooms: argparse.ArgumentParser, helped: Helped, language: Language) -> None:
    rooms.add_argument("input", metavar=helped("cli.metavar_in"), help=helped("cli.help_rooms_input"))
    rooms.add_argument(
        "-o", "--output", required=True, metavar=helped("cli.metavar_table"), help=helped("cli.help_rooms_output")
    )
    language_option(rooms, language)
