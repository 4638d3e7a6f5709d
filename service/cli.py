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
maubinh rooms claims.jsonl|scored/ -o rooms.parquet
                                 the table of rooms (Parquet) the bulk engine reads, from claims or score's tables
maubinh verify --rooms rooms.parquet
                                 the table checked, as verify --jsonl checks lines
maubinh score --rooms rooms.parquet -o amounts.parquet
                                 every room of the table scored without explanations: amounts only
maubinh replay --jsonl claims --ruleset CANDIDATE [--only ID] [--report page.html] [--format parquet -o DIR]
                                 the money the candidate ruleset would have moved, round by round
maubinh evaluate hand.json       name the hands of one arrangement
maubinh arrange cards.json       suggest an arrangement (gợi ý)
maubinh rulesets [ID]            list the rulesets, or print one whole (ID may be pinned: id@1)
maubinh rulesets check FILE…|DIR check operators' ruleset files or folder; exit 1 on any fault
maubinh rulesets lock DIR        write DIR/rulesets.lock: each version's digest
maubinh keys new CALLER          print a new key once, and the callers file line that holds its SHA-256
maubinh keys check FILE          check a callers file as the service would; exit 1 on its fault
maubinh receipts verify FILE --keys JWKS
                                 check a receipt offline: signature, digests, the rules applied again
maubinh receipts make --request REQ --answer SAVED [--path P]
                                 a receipt from a request body and an answer `curl -i` saved
maubinh serve                    run the HTTP API under gunicorn

MAUBINH_RULESETS_DIR adds an operator's ruleset files, as it does for the service.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn

from service.bulk import VIEWER, spreadsheet
from service.contract import OPPONENTS
from service.cores import available_cores
from service.documents import OPERATIONS, answer
from service.extras import AUDIT, missing
from service.rulesets.catalogue import RULESETS_DIR_ENV, Catalogue, builtin_catalogue
from service.rulesets.operator_folder import (
    LOCK_FILE,
    OperatorFileError,
    catalogue_for,
    load_folder,
    load_operator_file,
    lock_text,
    version_of,
    write_lock,
)
from service.serialize import dumps, problem_json, ruleset_json, rulesets_json
from service.texts import DEFAULT_LANGUAGE, LANGUAGES, Language, Named, Text, os_error

if TYPE_CHECKING:  # loaded where used: one room's `maubinh score` starts without them (numpy, the engine)
    from service.bulk import jsonl

EXIT_REJECTED = 1
EXIT_USAGE = 2


def say(command: str, key: str, language: Language, **fields: Any) -> None:
    """One line on stderr, ``maubinh <command>: <the text in the language asked>``."""
    print(f"maubinh {command}: {Text(key, **fields).render(language)}", file=sys.stderr)


def chosen_language(argv: Sequence[str], env: dict[str, str] | os._Environ[str] = os.environ) -> Language:
    """``--lang`` when given, else the environment's locale (``LANG=vi_VN.UTF-8`` is Vietnamese), as
    POSIX orders it: LC_ALL, then LC_MESSAGES, then LANG. Read before the arguments are parsed, so that
    a usage error is said in it too."""
    for k, word in enumerate(argv):
        given = word.partition("=")[2] if word.startswith("--lang=") else None
        if word == "--lang" and k + 1 < len(argv):
            given = argv[k + 1]
        if given in LANGUAGES:
            return "vi" if given == "vi" else "en"
    locale = env.get("LC_ALL") or env.get("LC_MESSAGES") or env.get("LANG") or ""
    return "vi" if locale.lower().startswith("vi") else DEFAULT_LANGUAGE


def _open(path: str) -> BinaryIO:
    return sys.stdin.buffer if path == "-" else open(path, "rb")


def _write(document: object, language: Language = "en") -> None:
    sys.stdout.buffer.write(dumps(document, language) + b"\n")


def _catalogue() -> Catalogue:
    """The built-ins plus MAUBINH_RULESETS_DIR, as the service loads them."""
    return catalogue_for(os.environ.get(RULESETS_DIR_ENV) or None)


def _progress_bar(path: str, language: Language) -> Any:
    """A bar (lines, lines/s, ETA) on stderr when it is a terminal; None when it is not."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    total = None
    if path != "-":
        with open(path, "rb") as counted:
            total = sum(chunk.count(b"\n") for chunk in iter(lambda: counted.read(1 << 20), b""))
    unit = " " + Text("cli.progress_unit").render(language)
    return tqdm(total=total, unit=unit, file=sys.stderr, mininterval=0.5, dynamic_ncols=True)


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
    for wanted, needs in ((parquet, "cli.tables_need"), (report_path, "cli.report_needs")):
        absent = missing(Text(needs).render(args.lang), AUDIT, args.lang) if wanted else None
        if absent:
            print(f"maubinh {name}: {absent}", file=sys.stderr)
            return EXIT_USAGE
    from service.bulk import jsonl
    from service.bulk.audit_report import HashedLines, Report
    from service.bulk.table_files import ParquetTables

    if parquet and Path(args.output).exists() and not Path(args.output).is_dir():
        say(name, "cli.output_is_a_file", args.lang, path=args.output)
        return EXIT_USAGE
    try:
        source = _open(args.file)
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
            progress = _progress_bar(args.file, args.lang)
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
        say(name, "cli.report_written", args.lang, page=report_path, figures=str(beside))
    return _summed_up(name, done, args.lang)


def _rooms(args: argparse.Namespace, catalogue: Catalogue) -> int:
    """``rooms``: claims (JSON lines) or score's tables (a directory) → the table of rooms."""
    language: Language = args.lang
    if absent := missing(Text("cli.rooms_need").render(language), AUDIT, language):
        print(f"maubinh rooms: {absent}", file=sys.stderr)
        return EXIT_USAGE
    from service.bulk import room_table

    source = Path(args.input)
    if source.is_dir() and not (source / "rooms.parquet").is_file():
        say("rooms", "cli.rooms_not_scored", language, path=args.input)
        return EXIT_USAGE
    try:
        out = room_table.RoomTableWriter(args.output)
        try:
            if source.is_dir():
                done = room_table.from_scored(source, out)
            else:
                with _open(args.input) as lines:
                    done = room_table.from_claims(lines, catalogue, out)
        finally:
            out.close()
    except OSError as error:
        say("rooms", "cli.cannot_open", language, file=error.filename, error=os_error(error))
        return EXIT_USAGE
    except room_table.NotATable as error:
        Path(args.output).unlink(missing_ok=True)  # half a table is not one
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
    from service.bulk.room_table import NotATable

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
        summary = Text(
            "cli.summary", lines=rooms, refused=refused, seconds=_seconds(time.perf_counter() - started, args.lang)
        )
        print(f"maubinh score: {summary.render(args.lang)}", file=sys.stderr)
        return 0
    try:
        out = open(args.output, "wb") if args.output else sys.stdout.buffer  # noqa: SIM115 - closed below
        try:
            done = table_runs.verify(args.rooms, catalogue, out, args.lang, args.jobs)
        finally:
            if out is not sys.stdout.buffer:
                out.close()
    except OSError as error:
        say("verify", "cli.cannot_open", args.lang, file=error.filename or args.rooms, error=os_error(error))
        return EXIT_USAGE
    except NotATable as error:
        say("verify", "cli.not_a_table", args.lang, path=args.rooms, why=error.args[0])
        return EXIT_USAGE
    return _summed_up("verify", done, args.lang)


def _run_operation(name: str, args: argparse.Namespace, catalogue: Catalogue) -> int:
    if getattr(args, "rooms", None):
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
        source = _open(args.file)
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
                status, body = answer(OPERATIONS[name], source.read(), catalogue, _defaults(args), args.lang)
                if csv and status == 200:  # a refused room writes nothing to stdout, not even a header
                    out.write(spreadsheet.header() + spreadsheet.ledger_rows(body))
                elif csv:
                    sys.stderr.buffer.write(dumps(body, args.lang) + b"\n")
                else:
                    out.write(dumps(body, args.lang) + b"\n")
                return 0 if status == 200 and body.get("agrees", True) else EXIT_REJECTED
            from service.bulk import jsonl

            progress = _progress_bar(args.file, args.lang)
            aside = sys.stderr.buffer if csv else None
            done = jsonl.run(name, source, out, args.jobs, progress, aside, args.lang, _defaults(args))
            if progress is not None:
                progress.close()
            return _summed_up(name, done, args.lang)
        finally:
            if out is not sys.stdout.buffer:
                out.close()


def _replay(args: argparse.Namespace, catalogue: Catalogue) -> int:
    """``replay``: the figures on stdout (or -o FILE), or as Parquet tables in -o DIR; the page beside."""
    from service.rulesets import RulesetError
    from service.strict_json import BadDocument

    language: Language = args.lang
    parquet = args.format == "parquet"
    if parquet and not args.output:
        say("replay", "cli.tables_need_output", language)
        return EXIT_USAGE
    needs = "cli.report_needs" if args.report else "cli.replay_needs"
    if absent := missing(Text(needs).render(language), AUDIT, language):
        print(f"maubinh replay: {absent}", file=sys.stderr)
        return EXIT_USAGE
    from service.bulk import replay
    from service.bulk.audit_report import HashedLines
    from service.bulk.replay_report import ReplayReport
    from service.bulk.table_files import ParquetTables

    if args.only is not None and catalogue.get(args.only) is None:
        say("replay", "cli.bad_only", language, why=catalogue.unknown(args.only).render(language))
        return EXIT_USAGE
    try:
        candidate = replay.read_candidate(args.ruleset, catalogue, args.only)
    except OSError as error:
        say("replay", "cli.cannot_open", language, file=error.filename, error=os_error(error))
        return EXIT_USAGE
    except (BadDocument, RulesetError) as error:
        why = error.args[0] if isinstance(error, BadDocument) else "; ".join(
            ("/".join(map(str, fault.path)) + ": " if fault.path else "") + fault.message.render(language)
            for fault in error.faults
        )  # fmt: skip
        say("replay", "cli.bad_candidate", language, given=args.ruleset, why=why)
        return EXIT_USAGE
    if parquet and Path(args.output).exists() and not Path(args.output).is_dir():
        say("replay", "cli.output_is_a_file", language, path=args.output)
        return EXIT_USAGE
    try:
        source = _open(args.jsonl)
        files = ParquetTables(args.output, "replay") if parquet else None
    except OSError as error:
        say("replay", "cli.cannot_open", language, file=error.filename, error=os_error(error))
        return EXIT_USAGE
    report = ReplayReport(candidate, language, args.viewer)

    def take(chunk: replay.Chunk) -> None:
        if files is not None:
            files.add(chunk.tables)
        report.add(chunk)

    lines = HashedLines(source, args.jsonl)
    with source:
        try:
            progress = _progress_bar(args.jsonl, language)
            done = replay.run(lines, catalogue, candidate, args.jobs, take, progress, language)
            if progress is not None:
                progress.close()
        finally:
            if files is not None:
                files.close()
    figures = report.figures(done, lines)
    written = json.dumps(figures, indent=2, ensure_ascii=False) + "\n"
    if args.report:
        beside = Path(args.report).with_suffix(".json")
        Path(args.report).write_text(report.html(figures), encoding="utf-8")
        beside.write_text(written, encoding="utf-8")
        say("replay", "cli.report_written", language, page=args.report, figures=str(beside))
    elif not parquet:
        with open(args.output, "w", encoding="utf-8") if args.output else sys.stdout as out:
            out.write(written)
    rounds = figures["rounds"]
    summary = Text(
        "cli.replay_summary", lines=rounds["lines"], replayed=rounds["replayed"], changed=rounds["changed"],
        disagrees=rounds["disagrees"], refused=rounds["refused"], not_replayable=rounds["not_replayable"],
        skipped=rounds["skipped"], moved=figures["moved"]["total"], seconds=_seconds(done.seconds, language),
    )  # fmt: skip
    print(f"maubinh replay: {summary.render(language)}", file=sys.stderr)
    return 0


def _rulesets(words: list[str], catalogue: Catalogue, language: Language) -> int:
    if not words:
        _write(rulesets_json(catalogue))
        return 0
    if words[0] == "check":
        return _check(words[1:], language)
    if words[0] == "lock":
        return _lock(words[1:], language)
    if len(words) > 1:
        say("rulesets", "cli.rulesets_usage", language)
        return EXIT_USAGE
    ruleset = catalogue.get(words[0])
    if ruleset is None:
        _write(problem_json(404, Text("problem.not_found"), catalogue.unknown(words[0])), language)
        return EXIT_REJECTED
    _write(ruleset_json(ruleset))
    return 0


def catalogue_for_receipts() -> Catalogue:
    """The rulesets a receipt is re-scored under: the built-ins and MAUBINH_RULESETS_DIR's, if set."""
    try:
        return _catalogue()
    except OperatorFileError:
        return builtin_catalogue()


def _read_keys(where: str) -> Any:
    """A JWK Set from a file, or from the service's URL (its /.well-known/jwks.json)."""
    from service.strict_json import loads

    if where.startswith(("http://", "https://")):
        import urllib.request

        url = where if where.endswith(".json") else where.rstrip("/") + "/.well-known/jwks.json"
        with urllib.request.urlopen(url, timeout=10) as answer:
            return loads(answer.read(1024 * 1024))
    with open(where, "rb") as file:
        return loads(file.read(1024 * 1024))


def _receipts(args: argparse.Namespace, catalogue: Catalogue) -> int:
    """``receipts verify``: exit 0 only when every check holds, else 1 naming the first that failed;
    ``receipts make``: a receipt on stdout."""
    from service import receipts
    from service.strict_json import BadDocument, loads

    language: Language = args.lang
    command = f"receipts {args.receipts_command}"
    if args.receipts_command == "make":
        try:
            with open(args.request, "rb") as request, open(args.answer, "rb") as answer:
                made = receipts.from_exchange("POST", args.path, request.read(), answer.read())
        except OSError as error:
            say(command, "cli.cannot_open", language, file=error.filename, error=os_error(error))
            return EXIT_USAGE
        except UnicodeDecodeError as error:
            say(command, "receipts.fault", language, check=Text(receipts.CHECK_NAMES["shape"]),
                why=Text("bad_json.not_utf8", byte=error.start))  # fmt: skip
            return EXIT_REJECTED
        except receipts.ReceiptFault as fault:
            print(f"maubinh {command}: {fault.says().render(language)}", file=sys.stderr)
            return EXIT_REJECTED
        print(json.dumps(made, ensure_ascii=False, indent=1))
        return 0
    try:
        keys = _read_keys(args.keys)
        with open(args.file, "rb") as file:
            receipt = loads(file.read(64 * 1024 * 1024))
    except OSError as error:
        where = getattr(error, "filename", None) or args.keys
        say(command, "cli.cannot_open", language, file=where, error=os_error(error))
        return EXIT_REJECTED
    except BadDocument as error:
        say(command, "receipts.unreadable", language, error=error.args[0])
        return EXIT_REJECTED
    try:
        checked = receipts.check(receipt, keys, receipts.rescorer(catalogue))
    except receipts.ReceiptFault as fault:
        print(f"maubinh {command}: {fault.says().render(language)}", file=sys.stderr)
        return EXIT_REJECTED
    key = "receipts.ok_rescored" if checked.rescored else "receipts.ok_unknown_rules"
    print(Text(key, key_id=checked.key_id).render(language))
    return 0


def _new_key(caller: str, expires: str | None, key_file: str | None, language: Language) -> int:
    """A new key, shown once, and what the callers file keeps of it: its SHA-256 (service/callers.py)."""
    from service import callers

    if not callers.NAME.fullmatch(caller) or caller in callers.RESERVED:
        say("keys new", "keys.new_caller_name", language, name=caller[:64])
        return EXIT_USAGE
    until = ""
    if expires is not None:
        try:
            moment = datetime.datetime.fromisoformat(expires)
        except ValueError:
            moment = None
        if moment is None or moment.tzinfo is None:
            say("keys new", "keys.bad_expires", language, raw=expires[:64])
            return EXIT_USAGE
        until = f", expires = {moment.isoformat().replace('+00:00', 'Z')}"
    key = callers.new_key()
    entry = f'{{ sha256 = "{callers.digest_of(key)}"{until} }}'
    if key_file is not None:  # for scripts: the key into a file only its owner reads, the entry alone out
        try:
            descriptor = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError as error:
            say("keys new", "cli.cannot_write", language, file=key_file, error=os_error(error))
            return EXIT_USAGE
        with os.fdopen(descriptor, "w") as file:
            file.write(key + "\n")
        print(entry)
        return 0
    print(f"# {Text('keys.new_key', caller=caller).render(language)}")
    print(key)
    print(f"# {Text('keys.new_line', caller=caller).render(language)}")
    print(f"  {entry},")
    print(f"# {Text('keys.new_table').render(language)}")
    print(f"[callers.{caller}]\nkeys = [{entry}]")
    return 0


def _check_callers(path: str, language: Language) -> int:
    """A callers file read as the service reads it: each caller, its keys, routes and quota, or the fault."""
    from service import callers

    try:
        found = callers.load(path)
    except callers.CallersFileError as error:
        print(f"maubinh keys check: {error.args[0].render(language)}", file=sys.stderr)
        return EXIT_REJECTED
    for caller in found.callers.values():
        keys = sum(1 for key in found.keys.values() if key.caller == caller.name)
        quota = caller.rooms_per_minute if caller.rooms_per_minute is not None else "-"
        print(f"{caller.name}: ok keys={keys} routes={','.join(sorted(caller.routes))} rooms_per_minute={quota}")
    return 0


def _check(paths: list[str], language: Language) -> int:
    """For an operator's CI: each file resolved as the service would (``<id>/n.json`` as version n),
    or a whole folder with its lock; each version's id, digest and whether it is locked, or the faults."""
    if not paths:
        say("rulesets check", "cli.check_usage", language)
        return EXIT_USAGE
    if len(paths) == 1 and Path(paths[0]).is_dir():
        try:
            folder = load_folder(paths[0], builtin_catalogue())
        except OperatorFileError as error:
            print(_said(error.said(), language), file=sys.stderr)
            return EXIT_REJECTED
        unlocked = {file for file, _ in folder.unlocked()}
        for file, ruleset in folder.rulesets:
            state = Text("cli.unlocked" if file in unlocked else "cli.locked").render(language)
            print(f"{file}: ok {ruleset.id}@{ruleset.version} {ruleset.digest} {state}")
        return 0
    bad = 0
    for path in paths:
        try:
            _, ruleset = load_operator_file(Path(path), builtin_catalogue(), version_of(Path(path)))
        except OperatorFileError as error:
            bad += 1
            print(_said(error.said(), language), file=sys.stderr)
            continue
        print(f"{path}: ok {ruleset.id}@{ruleset.version} {ruleset.digest}")
    return EXIT_REJECTED if bad else 0


def _said(named: Named, language: Language) -> str:
    return named.vi if language == "vi" else named.en


def _lock(paths: list[str], language: Language) -> int:
    """Write DIR/rulesets.lock: every version's digest, the locked ones as they were."""
    if len(paths) != 1 or not Path(paths[0]).is_dir():
        say("rulesets lock", "cli.lock_usage", language)
        return EXIT_USAGE
    try:
        folder = load_folder(paths[0], builtin_catalogue())
    except OperatorFileError as error:
        say("rulesets lock", "cli.not_locking", language, faults=error.said())
        return EXIT_REJECTED
    try:
        write_lock(Path(paths[0]), lock_text(folder))
    except OSError as error:
        say("rulesets lock", "cli.cannot_write", language, file=Path(paths[0]) / LOCK_FILE, error=os_error(error))
        return EXIT_USAGE
    for _, ruleset in folder.unlocked():
        print(f"{Text('cli.locked').render(language)} {ruleset.id}@{ruleset.version} {ruleset.digest}")
    return 0


class Parser(argparse.ArgumentParser):
    """argparse, its usage errors said in the command's language. argparse words them in English through
    gettext, which has no Vietnamese catalogue for them: ``error`` (its documented hook) says each of the
    messages it gives here, matched whole, in the phrasebook's words."""

    language: Language = DEFAULT_LANGUAGE

    def error(self, message: str) -> NoReturn:
        said = message
        for pattern, key in USAGE_ERRORS:
            if found := pattern.fullmatch(message):
                said = Text(key, **found.groupdict()).render(self.language)
                break
        usage = self.format_usage().removeprefix("usage: ")
        print(f"{Text('cli.usage').render(self.language)} {usage}", end="", file=sys.stderr)
        print(f"{self.prog}: {Text('cli.error').render(self.language)}: {said}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


USAGE_ERRORS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"the following arguments are required: (?P<names>.+)"), "cli.arguments_required"),
    (re.compile(r"unrecognized arguments: (?P<words>.+)"), "cli.arguments_unknown"),
    (
        re.compile(r"argument (?P<name>\S+): invalid choice: (?P<given>.+) \(choose from (?P<choices>.+)\)"),
        "cli.argument_choice",
    ),
    (re.compile(r"argument (?P<name>\S+): invalid int value: (?P<given>.+)"), "cli.argument_int"),
    (re.compile(r"argument (?P<name>\S+): expected one argument"), "cli.argument_value"),
)
"""argparse's messages for the mistakes a caller can make with these commands, and their keys."""


Helped = Callable[..., str]
"""A help text by key and fields, in the command's language."""


def _language_option(parser: argparse.ArgumentParser, language: Language) -> None:
    parser.add_argument(
        "--lang",
        choices=LANGUAGES,
        default=language,
        help=Text("cli.help_lang").render(language),
    )


def _operation_arguments(name: str) -> Callable[[argparse.ArgumentParser, Helped, Language], None]:
    def add(sub: argparse.ArgumentParser, helped: Helped, language: Language) -> None:
        sub.add_argument("file", nargs="?", default="-", help=helped("cli.help_file"))
        sub.add_argument("--jsonl", action="store_true", help=helped("cli.help_jsonl"))
        sub.add_argument("--jobs", type=int, default=available_cores(), help=helped("cli.help_jobs"))
        sub.add_argument("-o", "--output", metavar="FILE", help=helped("cli.help_output"))
        _language_option(sub, language)
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
            sub.add_argument("--report", metavar="HTML", help=helped("cli.help_report"))
        if name in ("score", "verify"):
            rooms_help = "cli.help_verify_rooms" if name == "verify" else "cli.help_score_rooms"
            sub.add_argument("--rooms", metavar="TABLE", help=helped(rooms_help))
            sub.add_argument("--viewer", metavar="URL", default=VIEWER, help=helped("cli.help_viewer"))

    return add


def _rooms_arguments(rooms: argparse.ArgumentParser, helped: Helped, language: Language) -> None:
    rooms.add_argument("input", metavar="IN", help=helped("cli.help_rooms_input"))
    rooms.add_argument("-o", "--output", required=True, metavar="TABLE", help=helped("cli.help_rooms_output"))
    _language_option(rooms, language)


def _replay_arguments(replay: argparse.ArgumentParser, helped: Helped, language: Language) -> None:
    replay.add_argument("--jsonl", required=True, metavar="ROUNDS", help=helped("cli.help_replay_jsonl"))
    replay.add_argument("--ruleset", required=True, metavar="CANDIDATE", help=helped("cli.help_replay_ruleset"))
    replay.add_argument("--only", metavar="ID", help=helped("cli.help_replay_only"))
    replay.add_argument("--format", choices=("json", "parquet"), default="json", help=helped("cli.help_replay_format"))
    replay.add_argument("-o", "--output", metavar="FILE|DIR", help=helped("cli.help_replay_output"))
    replay.add_argument("--report", metavar="HTML", help=helped("cli.help_replay_report"))
    replay.add_argument("--viewer", metavar="URL", default=VIEWER, help=helped("cli.help_viewer"))
    replay.add_argument("--jobs", type=int, default=available_cores(), help=helped("cli.help_jobs"))
    _language_option(replay, language)


def _rulesets_arguments(rulesets: argparse.ArgumentParser, helped: Helped, language: Language) -> None:
    rulesets.add_argument("words", nargs="*", metavar="ID | check FILE…")
    _language_option(rulesets, language)


def _keys_arguments(keys: argparse.ArgumentParser, helped: Helped, language: Language) -> None:
    _language_option(keys, language)
    key_commands = keys.add_subparsers(dest="keys_command", required=True)
    new = key_commands.add_parser("new", help=helped("cli.help_keys_new"))
    new.add_argument("caller", help=helped("cli.help_keys_caller"))
    new.add_argument("--expires", metavar="DATETIME", help=helped("cli.help_keys_expires"))
    new.add_argument("--key-file", metavar="FILE", help=helped("cli.help_keys_key_file"))
    _language_option(new, language)
    check = key_commands.add_parser("check", help=helped("cli.help_keys_check"))
    check.add_argument("file", help=helped("cli.help_keys_file"))
    _language_option(check, language)


def _receipts_arguments(receipts: argparse.ArgumentParser, helped: Helped, language: Language) -> None:
    _language_option(receipts, language)
    receipt_commands = receipts.add_subparsers(dest="receipts_command", required=True)
    verify_receipt = receipt_commands.add_parser("verify", help=helped("cli.help_receipts_verify"))
    verify_receipt.add_argument("file", help=helped("cli.help_receipts_file"))
    verify_receipt.add_argument("--keys", required=True, metavar="JWKS", help=helped("cli.help_receipts_keys"))
    _language_option(verify_receipt, language)
    make_receipt = receipt_commands.add_parser("make", help=helped("cli.help_receipts_make"))
    make_receipt.add_argument("--request", required=True, metavar="REQ", help=helped("cli.help_receipts_request"))
    make_receipt.add_argument("--answer", required=True, metavar="SAVED", help=helped("cli.help_receipts_answer"))
    make_receipt.add_argument("--path", default="/v1/score", help=helped("cli.help_receipts_path"))
    _language_option(make_receipt, language)


def _serve_arguments(serve: argparse.ArgumentParser, helped: Helped, language: Language) -> None:
    serve.add_argument("--host", default=None, help=helped("cli.help_host"))
    serve.add_argument("--port", type=int, default=None, help=helped("cli.help_port"))
    serve.add_argument("--lang", choices=LANGUAGES, default=language, help=helped("cli.help_serve_lang"))


def _commands(helped: Helped) -> dict[str, tuple[str, Callable[[argparse.ArgumentParser, Helped, Language], None]]]:
    """Each command, in the order ``maubinh --help`` lists them: its help and what adds its arguments."""
    operations = {
        name: (helped("cli.help_operation", name=name), _operation_arguments(name)) for name in sorted(OPERATIONS)
    }
    return {
        **operations,
        "rooms": (helped("cli.help_rooms"), _rooms_arguments),
        "replay": (helped("cli.help_replay"), _replay_arguments),
        "rulesets": (helped("cli.help_rulesets"), _rulesets_arguments),
        "keys": (helped("cli.help_keys"), _keys_arguments),
        "receipts": (helped("cli.help_receipts"), _receipts_arguments),
        "serve": (helped("cli.help_serve"), _serve_arguments),
    }


def _parser(language: Language = DEFAULT_LANGUAGE, words: Sequence[str] = ()) -> Parser:
    """The commands, their help in ``language``, and their usage errors too. When ``words`` begin with
    a command, only its parser is made, and argparse's usage lists the others through the metavar: each
    command's parser and arguments were a start-up cost (bench/cli.py)."""

    def helped(key: str, **fields: Any) -> str:
        return Text(key, **fields).render(language)

    Parser.language = language
    parser = Parser(prog="maubinh", description=helped("cli.help_maubinh"))
    commands = _commands(helped)
    named = words[0] if words and words[0] in commands else None
    listed = "{" + ",".join(commands) + "}" if named else None
    subparsers = parser.add_subparsers(dest="command", required=True, metavar=listed)
    for name, (help_text, add_arguments) in commands.items():
        if named in (None, name):
            add_arguments(subparsers.add_parser(name, help=help_text), helped, language)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    args = _parser(chosen_language(words), words).parse_args(words)
    if args.command == "serve":
        from service.serve import serve

        return serve(args.host, args.port, args.lang)
    if args.command == "receipts":
        return _receipts(args, catalogue_for_receipts())
    if args.command == "keys":
        return (
            _new_key(args.caller, args.expires, args.key_file, args.lang)
            if args.keys_command == "new"
            else _check_callers(args.file, args.lang)
        )
    try:
        catalogue = _catalogue()
    except OperatorFileError as error:
        print(f"maubinh: {Text('cli.bad_rulesets_dir', faults=error.said()).render(args.lang)}", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "rulesets":
        return _rulesets(args.words, catalogue, args.lang)
    if args.command == "replay":
        return _replay(args, catalogue)
    if args.command == "rooms":
        return _rooms(args, catalogue)
    return _run_operation(args.command, args, catalogue)


if __name__ == "__main__":
    sys.exit(main())
