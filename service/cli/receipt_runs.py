"""``maubinh receipts verify`` over many receipts: files, JSON lines and folders, a verdict each.

The command wires the trust side's check of one receipt (``service.trust.receipt_lines``) into the bulk
side's run over files and workers (``service.bulk.receipt_runs``), which know nothing of each other;
it writes each verdict (text or JSON lines, in input order), a summary on stderr, and the report.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import orjson

from service.cli.shared import EXIT_REJECTED, EXIT_USAGE, on_terminal, say, seconds_said
from service.rulesets.catalogue import Catalogue
from service.texts import Language, Text, os_error


def _progress(files: list[str], language: Language) -> Any:
    """A bar (receipts, receipts/s) on stderr when it is a terminal: its total the files' lines."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    from service.bulk.receipt_runs import holds_lines

    total: int | None = 0
    for path in files:
        if path == "-":
            total = None
            break
        if holds_lines(path):
            with open(path, "rb") as counted:
                total += sum(chunk.count(b"\n") for chunk in iter(lambda: counted.read(1 << 20), b""))  # type: ignore[operator]
        else:
            total += 1  # type: ignore[operator]
    unit = " " + Text("receipts.progress_unit").render(language)
    return tqdm(total=total, unit=unit, file=sys.stderr, mininterval=0.5, dynamic_ncols=True)


def verify_many(
    args: argparse.Namespace, catalogue: Catalogue, read_keys: Callable[[str], Any], log: Any = None
) -> int:
    """Exit 0 when every receipt verified, 1 when any did not, 2 for a usage error (a path, the keys,
    the line cap, --jobs)."""
    from service.bulk.lines import LineCapError, max_line_bytes
    from service.bulk.receipt_runs import NoReceipts, inputs, not_read, run
    from service.support.strict_json import BadDocument
    from service.trust.receipt_lines import ReceiptLines
    from service.trust.receipts import skipped_keys
    from service.trust.signing import Unverified

    language: Language = args.lang
    command = "receipts verify"
    if args.jobs < 1:
        say(command, "cli.jobs_at_least_one", language, given=args.jobs)
        return EXIT_USAGE
    try:
        max_line_bytes()
        keys = read_keys(args.keys)
        files = inputs(args.paths)
        checker = ReceiptLines(keys, catalogue, language, log)
    except LineCapError as error:
        print(f"maubinh {command}: {error.args[0].render(language)}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as error:
        say(command, "cli.cannot_open", language, file=getattr(error, "filename", None) or args.keys,
            error=os_error(error))  # fmt: skip
        return EXIT_USAGE
    except BadDocument as error:
        say(command, "receipts.unreadable", language, error=error.args[0])
        return EXIT_USAGE
    except NoReceipts as error:
        say(command, "receipts.no_receipts_in", language, path=error.args[0])
        return EXIT_USAGE
    except Unverified as error:  # a key set that is no JWK Set
        print(f"maubinh {command}: {error.args[0].render(language)}", file=sys.stderr)
        return EXIT_USAGE
    for skipped in skipped_keys(keys):
        print(f"maubinh {command}: {on_terminal(skipped.render(language))}", file=sys.stderr)
    for path, folder in not_read(args.paths):
        say(command, "receipts.not_read_link" if folder else "receipts.not_read_special", language, path=path)
    out = sys.stdout.buffer
    jsonl = args.format == "jsonl"

    def write(file: str, record: dict[str, Any]) -> None:
        if jsonl:
            shown = {"file": file, "line": record["line"], "round_id": record["round_id"]}
            shown |= {"verified": record["verified"], "code": record["code"], "message": record["message"]}
            out.write(orjson.dumps(shown) + b"\n")
        else:
            out.write(f"{on_terminal(file)}:{record['line']}: {on_terminal(record['message'])}\n".encode())

    progress = _progress(files, language)
    try:
        done = run(files, lambda: checker, args.jobs, write, language, progress, hashed=args.report is not None)
    except OSError as error:
        if error.filename is None:
            raise  # a write that failed (a full disk, a reader gone): said as every command says it
        say(command, "cli.cannot_open", language, file=error.filename, error=os_error(error))
        return EXIT_USAGE
    finally:
        if progress is not None:
            progress.close()
        out.flush()
    codes = ", ".join(f"{code} {n}" for code, n in sorted(done.codes.items())) or "–"
    summary = Text(
        "receipts.summary",
        receipts=done.receipts,
        verified=done.verified,
        failed=done.receipts - done.verified,
        codes=codes,
        seconds=seconds_said(done.seconds, language),
    )
    print(f"maubinh {command}: {summary.render(language)}", file=sys.stderr)
    if args.report is not None:
        from service.bulk.receipts_report import write_report

        try:
            write_report(args.report, done, checker.keys.thumbprints, language)
        except OSError as error:
            say(command, "cli.cannot_open", language, file=error.filename or args.report, error=os_error(error))
            return EXIT_USAGE
    if done.receipts == 0:  # an empty file, or one of blank lines: no verdict, and no "every receipt verified"
        say(command, "receipts.none_read", language, paths=", ".join(args.paths))
        return EXIT_USAGE
    return EXIT_REJECTED if done.receipts != done.verified else 0
