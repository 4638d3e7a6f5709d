"""``maubinh``: the same JSON as the HTTP API, without a server.

maubinh score room.json          one room; exit 1 with the problem if rejected
maubinh score --jsonl - < rooms  one result (or problem) per input line
maubinh score --format csv ...   the ledger as a spreadsheet: one row per line
maubinh score|verify --jsonl IN --format parquet -o DIR
                                 the ledger as tables (Parquet): rooms, players, ledger, problems[, differences]
maubinh verify --jsonl IN --report report.html
                                 and an audit report: one offline HTML page
maubinh verify claim.json        a room and the settlement a backend claims; exit 1 unless they agree
maubinh verify --jsonl claims    one line per disagreement (or refusal), a summary; exit 1 if any disagree
maubinh evaluate hand.json       name the hands of one arrangement
maubinh arrange cards.json       suggest an arrangement (gợi ý)
maubinh rulesets [ID]            list the rulesets, or print one whole (ID may be pinned: id@1)
maubinh rulesets check FILE…|DIR check operators' ruleset files or folder; exit 1 on any fault
maubinh rulesets lock DIR        write DIR/rulesets.lock: each version's digest
maubinh serve                    run the HTTP API under gunicorn

MAUBINH_RULESETS_DIR adds an operator's ruleset files, as it does for the service.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO

from service import jsonl, spreadsheet
from service.contract import OPPONENTS
from service.cores import available_cores
from service.documents import OPERATIONS, answer
from service.extras import AUDIT, missing
from service.rulesets.catalogue import RULESETS_DIR_ENV, Catalogue, builtin_catalogue, catalogue_for
from service.rulesets.operator_folder import (
    LOCK_FILE,
    OperatorFileError,
    load_folder,
    load_operator_file,
    lock_text,
    version_of,
    write_lock,
)
from service.serialize import dumps, problem_json, ruleset_json, rulesets_json
from service.texts import DEFAULT_LANGUAGE, LANGUAGES, Language, Text

EXIT_REJECTED = 1
EXIT_USAGE = 2


def _open(path: str) -> BinaryIO:
    return sys.stdin.buffer if path == "-" else open(path, "rb")


def _write(document: object, language: Language = "en") -> None:
    sys.stdout.buffer.write(dumps(document, language) + b"\n")


def _catalogue() -> Catalogue:
    """The built-ins plus MAUBINH_RULESETS_DIR, as the service loads them."""
    return catalogue_for(os.environ.get(RULESETS_DIR_ENV) or None)


def _progress_bar(path: str) -> Any:
    """A bar (lines, lines/s, ETA) on stderr when it is a terminal; None when it is not."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    total = None
    if path != "-":
        with open(path, "rb") as counted:
            total = sum(chunk.count(b"\n") for chunk in iter(lambda: counted.read(1 << 20), b""))
    return tqdm(total=total, unit=" lines", file=sys.stderr, mininterval=0.5, dynamic_ncols=True)


def _defaults(args: argparse.Namespace) -> dict[str, Any]:
    """Request fields the command line fills in where a request leaves them out."""
    opponents = getattr(args, "opponents", None)
    return {"opponents": opponents} if opponents else {}


def _seconds(value: float, language: Language) -> str:
    """Seconds to two places, with the language's decimal mark (0.58; 0,58)."""
    text = f"{value:.2f}"
    return text.replace(".", ",") if language == "vi" else text


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
            seconds=_seconds(done.seconds, language),
        )
        print(f"maubinh verify: {summary.render(language)}", file=sys.stderr)
        return EXIT_REJECTED if disagree else 0
    summary = Text("cli.summary", lines=done.lines, refused=done.refused, seconds=_seconds(done.seconds, language))
    print(f"maubinh {name}: {summary.render(language)}", file=sys.stderr)
    return 0


def _run_tables(name: str, args: argparse.Namespace, parquet: bool, report_path: str | None) -> int:
    """--jsonl with the tables: Parquet files in a directory, an audit report, or both."""
    for wanted, needs in ((parquet, "Parquet tables need"), (report_path, "The audit report needs")):
        absent = missing(needs, AUDIT) if wanted else None
        if absent:
            print(f"maubinh {name}: {absent}", file=sys.stderr)
            return EXIT_USAGE
    from service.audit_report import HashedLines, Report
    from service.table_files import ParquetTables

    if parquet and Path(args.output).exists() and not Path(args.output).is_dir():
        print(f"maubinh {name}: -o must name a directory for the tables; {args.output} is a file", file=sys.stderr)
        return EXIT_USAGE
    try:
        source = _open(args.file)
        out = None if parquet else (open(args.output, "wb") if args.output else sys.stdout.buffer)  # noqa: SIM115
        files = ParquetTables(args.output, name) if parquet else None
    except OSError as error:
        said = Text("cli.cannot_open", file=error.filename, error=error.strerror).render(args.lang)
        print(f"maubinh {name}: {said}", file=sys.stderr)
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
            progress = _progress_bar(args.file)
            done = jsonl.run(name, lines, out, args.jobs, progress, None, args.lang, _defaults(args), take)
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
        said = Text("cli.report_written", page=report_path, figures=str(beside)).render(args.lang)
        print(f"maubinh {name}: {said}", file=sys.stderr)
    return _summed_up(name, done, args.lang)


def _run_operation(name: str, args: argparse.Namespace, catalogue: Catalogue) -> int:
    parquet = getattr(args, "format", "json") == "parquet"
    report = getattr(args, "report", None)
    if (parquet or report) and not args.jsonl:
        print(f"maubinh {name}: --format parquet and --report read --jsonl input", file=sys.stderr)
        return EXIT_USAGE
    if parquet and not args.output:
        print(f"maubinh {name}: --format parquet writes its tables into the directory -o names", file=sys.stderr)
        return EXIT_USAGE
    if parquet or report:
        return _run_tables(name, args, parquet, report)
    try:
        source = _open(args.file)
        out = open(args.output, "wb") if args.output else sys.stdout.buffer  # noqa: SIM115 - closed below
    except OSError as error:
        print(f"maubinh {name}: cannot open {error.filename}: {error.strerror}", file=sys.stderr)
        return EXIT_USAGE
    with source:
        try:
            csv = getattr(args, "format", "json") == "csv"
            if csv and args.jsonl:
                out.write(spreadsheet.header())
            if not args.jsonl:
                status, body = answer(OPERATIONS[name], source.read(), catalogue, _defaults(args), args.lang)
                if csv and status == 200:  # a refused room writes nothing to stdout, not even a header
                    out.write(spreadsheet.header() + spreadsheet.ledger_rows(body))
                elif csv:
                    sys.stderr.buffer.write(dumps(body, args.lang) + b"\n")
                else:
                    out.write(dumps(body, args.lang) + b"\n")
                return 0 if status == 200 and body.get("agrees", True) else EXIT_REJECTED
            progress = _progress_bar(args.file)
            aside = sys.stderr.buffer if csv else None
            done = jsonl.run(name, source, out, args.jobs, progress, aside, args.lang, _defaults(args))
            if progress is not None:
                progress.close()
            return _summed_up(name, done, args.lang)
        finally:
            if out is not sys.stdout.buffer:
                out.close()


def _rulesets(words: list[str], catalogue: Catalogue, language: Language) -> int:
    if not words:
        _write(rulesets_json(catalogue))
        return 0
    if words[0] == "check":
        return _check(words[1:])
    if words[0] == "lock":
        return _lock(words[1:])
    if len(words) > 1:
        print("maubinh rulesets: give one ID, or check FILE…|DIR, or lock DIR", file=sys.stderr)
        return EXIT_USAGE
    ruleset = catalogue.get(words[0])
    if ruleset is None:
        _write(problem_json(404, Text("problem.not_found"), catalogue.unknown(words[0])), language)
        return EXIT_REJECTED
    _write(ruleset_json(ruleset))
    return 0


def _check(paths: list[str]) -> int:
    """For an operator's CI: each file resolved as the service would (``<id>/n.json`` as version n),
    or a whole folder with its lock; each version's id, digest and whether it is locked, or the faults."""
    if not paths:
        print("maubinh rulesets check: name ruleset files, or one folder", file=sys.stderr)
        return EXIT_USAGE
    if len(paths) == 1 and Path(paths[0]).is_dir():
        try:
            folder = load_folder(paths[0], builtin_catalogue())
        except OperatorFileError as error:
            print(error, file=sys.stderr)
            return EXIT_REJECTED
        unlocked = {file for file, _ in folder.unlocked()}
        for file, ruleset in folder.rulesets:
            state = "unlocked" if file in unlocked else "locked"
            print(f"{file}: ok {ruleset.id}@{ruleset.version} {ruleset.digest} {state}")
        return 0
    bad = 0
    for path in paths:
        try:
            _, ruleset = load_operator_file(Path(path), builtin_catalogue(), version_of(Path(path)))
        except OperatorFileError as error:
            bad += 1
            print(error, file=sys.stderr)
            continue
        print(f"{path}: ok {ruleset.id}@{ruleset.version} {ruleset.digest}")
    return EXIT_REJECTED if bad else 0


def _lock(paths: list[str]) -> int:
    """Write DIR/rulesets.lock: every version's digest, the locked ones as they were."""
    if len(paths) != 1 or not Path(paths[0]).is_dir():
        print("maubinh rulesets lock: name one folder of ruleset files", file=sys.stderr)
        return EXIT_USAGE
    try:
        folder = load_folder(paths[0], builtin_catalogue())
    except OperatorFileError as error:
        print(f"maubinh rulesets lock: not locking, the folder does not load:\n{error}", file=sys.stderr)
        return EXIT_REJECTED
    try:
        write_lock(Path(paths[0]), lock_text(folder))
    except OSError as error:
        print(f"maubinh rulesets lock: cannot write {Path(paths[0]) / LOCK_FILE}: {error.strerror}", file=sys.stderr)
        return EXIT_USAGE
    for _, ruleset in folder.unlocked():
        print(f"locked {ruleset.id}@{ruleset.version} {ruleset.digest}")
    return 0


def _language_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--lang",
        choices=LANGUAGES,
        default=DEFAULT_LANGUAGE,
        help="the language of explanations and messages (codes, steps and rules never change)",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="maubinh", description="Mậu Binh scoring: the HTTP API's JSON, offline.")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in sorted(OPERATIONS):
        sub = commands.add_parser(name, help=f"the POST /v1/{name} operation")
        sub.add_argument("file", nargs="?", default="-", help="request JSON file, or - for standard input")
        sub.add_argument("--jsonl", action="store_true", help="one request per line, one answer per line")
        sub.add_argument(
            "--jobs",
            type=int,
            default=available_cores(),
            help="with --jsonl: worker processes (default: the cores available); answers stay in input order",
        )
        sub.add_argument("-o", "--output", metavar="FILE", help="write the answers to FILE instead of standard output")
        _language_option(sub)
        if name == "arrange":
            sub.add_argument(
                "--opponents",
                choices=OPPONENTS,
                help="the field a request that does not say plays against: strong (the service's default), weak",
            )
        if name in ("score", "verify"):
            sub.add_argument(
                "--format",
                choices=("json", "csv", "parquet") if name == "score" else ("json", "parquet"),
                default="json",
                help=(
                    "csv: one row per ledger line (RFC 4180, UTF-8); a refused room's problem goes to stderr. "
                    if name == "score"
                    else ""
                )
                + "parquet (with --jsonl): the tables rooms, players, ledger, problems"
                + (", differences" if name == "verify" else "")
                + " in the directory -o names",
            )
        if name == "verify":
            sub.add_argument(
                "--report",
                metavar="HTML",
                help="with --jsonl: also write an audit report, one offline HTML page, to HTML",
            )
            sub.add_argument(
                "--viewer",
                metavar="URL",
                default="http://127.0.0.1:8000/viewer",
                help="the report's links open this viewer (the service's /viewer) in verify mode on each round "
                "(default: http://127.0.0.1:8000/viewer)",
            )
    rulesets = commands.add_parser(
        "rulesets", help="list the rulesets, print one whole (ID or ID@VERSION), or: check FILE…|DIR, lock DIR"
    )
    rulesets.add_argument("words", nargs="*", metavar="ID | check FILE…")
    _language_option(rulesets)
    serve = commands.add_parser("serve", help="run the HTTP API under gunicorn")
    serve.add_argument("--host", default=None, help="bind address (default: MAUBINH_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, help="port (default: MAUBINH_PORT or 8000)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        from service.serve import serve

        return serve(args.host, args.port)
    try:
        catalogue = _catalogue()
    except OperatorFileError as error:
        print(f"maubinh: MAUBINH_RULESETS_DIR holds a bad ruleset file:\n{error}", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "rulesets":
        return _rulesets(args.words, catalogue, args.lang)
    return _run_operation(args.command, args, catalogue)


if __name__ == "__main__":
    sys.exit(main())
