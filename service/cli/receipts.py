"""``maubinh receipts``: ``verify`` a saved answer offline, ``make`` one from a request and an answer."""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
from typing import Any

from service.cli.shared import (
    EXIT_REJECTED,
    EXIT_USAGE,
    Helped,
    language_option,
    on_terminal,
    say,
    service_catalogue,
)
from service.rulesets.catalogue import Catalogue, builtin_catalogue
from service.rulesets.operator_folder import OperatorFileError
from service.support.cores import available_cores
from service.texts import Language, Text, os_error


def catalogue_for_receipts() -> Catalogue:
    """The rulesets a receipt is re-scored under: the built-ins and MAUBINH_RULESETS_DIR's, if set."""
    try:
        return service_catalogue()
    except OperatorFileError:
        return builtin_catalogue()


KEY_SET_SECONDS = 60.0
"""The longest a key set fetched from a URL may take to come, whole."""


def _read_keys(where: str) -> Any:
    """A JWK Set from a file, or from the service's URL (its /.well-known/jwks.json)."""
    from service.support.key_sets import KEY_SET_BYTES, key_set, read_key_set

    if where.startswith(("http://", "https://")):
        import urllib.request
        from http.client import HTTPException

        from service.support.deadline import within

        url = where if where.endswith(".json") else where.rstrip("/") + "/.well-known/jwks.json"

        def fetch() -> bytes:
            with urllib.request.urlopen(url, timeout=10) as answer:
                return bytes(answer.read(KEY_SET_BYTES + 1))

        try:
            read = within(KEY_SET_SECONDS, fetch)
        except TimeoutError as error:  # a server that sends a byte now and then
            raise OSError(errno.ETIMEDOUT, str(error), where) from None
        except (HTTPException, ValueError) as error:  # a server that breaks HTTP, a URL that is none
            raise OSError(errno.EPROTO, f"{type(error).__name__}: {error}"[:200], where) from None
        return key_set(read)
    return read_key_set(where)


def verifier_of(given: str, option: str = "--vkey") -> Any:
    """A verifier key given as text, or as a file holding it; malformed, a NoteError saying so in our
    words (the parser's English reached a Vietnamese line, under a fault of the log's own)."""
    from service.transparency.note import NoteError, Verifier

    if os.path.isfile(given):
        with open(given, encoding="utf-8") as file:
            given = file.read(4096)
    try:
        return Verifier.parse(given)
    except NoteError:
        raise NoteError(Text("tlog.bad_vkey", option=option)) from None


def say_log_fault(command: str, key: str, language: Language, error: Exception) -> None:
    """A log's fault said under ``key``; a malformed verifier key said alone, as the option's fault it is
    (under "không nhất quán" it read as the log's), and a Text in the language asked, never str()'d."""
    why = error.args[-1]
    if isinstance(why, Text) and why.key == "tlog.bad_vkey":
        say(command, why.key, language, **why.fields)
    else:
        say(command, key, language, why=why)


def for_receipts(where: str | None, vkey: str | None, language: Language) -> tuple[Any, Any] | int | None:
    """``receipts verify --log WHERE --log-key VKEY``: the log's tree read whole and checked, as an index,
    and its verifier key (the index None with ``--log-key`` alone: the proofs receipts carry are checked,
    with no network); None without either; an exit status after saying why it cannot be read."""
    if where is None and vkey is None:
        return None  # before the imports: the log's reader brings urllib and ssl, 20 ms of a run's start
    from service.transparency.note import NoteError
    from service.transparency.reading import latest, reader
    from service.transparency.tiles import TiledTree, TreeFault
    from service.trust.ruling_log import LogIndex

    if vkey is None:
        say("receipts verify", "tlog.needs_log_key", language)
        return EXIT_USAGE
    try:
        verifier = verifier_of(vkey, "--log-key")
        if where is None:
            return None, verifier
        read = reader(where)
        checkpoint = latest(read, verifier)
        return LogIndex.of(TiledTree(read, checkpoint.size, keep_all=False), checkpoint.root), verifier
    except (NoteError, TreeFault, OSError, ValueError) as error:
        say_log_fault("receipts verify", "tlog.unreadable", language, error)
        return EXIT_USAGE


def run(args: argparse.Namespace, catalogue: Catalogue) -> int:
    """``receipts verify``: exit 0 only when every check holds, else 1 naming the first that failed;
    ``receipts make``: a receipt on stdout."""
    from service.support.strict_json import BadDocument
    from service.trust import receipts
    from service.trust.signing import SigningKeyError

    language: Language = args.lang
    command = f"receipts {args.receipts_command}"
    if args.receipts_command == "make":
        try:
            with open(args.request, "rb") as request, open(args.answer, "rb") as answer:
                made = receipts.from_exchange("POST", args.path, request.read(), answer.read())
        except OSError as error:
            say(command, "cli.cannot_open", language, file=error.filename, error=os_error(error))
            return EXIT_USAGE
        except UnicodeDecodeError as error:  # making checks nothing: "không xác minh được" was the verifier's words
            say(command, "receipts.not_made", language, why=Text("bad_json.not_utf8", byte=error.start))
            return EXIT_REJECTED
        except receipts.ReceiptFault as fault:
            say(command, "receipts.not_made", language, why=fault.why)
            return EXIT_REJECTED
        print(json.dumps(made, ensure_ascii=False, indent=1))
        return 0
    if args.receipts_command == "publish":  # rotation's first step: publish a key before signing with it
        try:
            published, said = receipts.publish(_read_keys(args.keys), args.key)
        except OSError as error:
            say(command, "cli.cannot_open", language, file=error.filename or args.keys, error=os_error(error))
            return EXIT_REJECTED
        except (BadDocument, SigningKeyError) as error:
            say(command, "receipts.unreadable", language, error=error.args[0])
            return EXIT_REJECTED
        for line in said:
            print(f"maubinh {command}: {line.render(language)}", file=sys.stderr)
        sys.stdout.write(published)
        return 0
    log = for_receipts(args.log, args.log_key, language)
    if isinstance(log, int):
        return log
    if len(args.paths) == 1 and args.format == "text" and args.report is None and _one_receipt(args.paths[0]):
        return _verify_one(args.paths[0], args.keys, catalogue, language, log)
    from service.cli.receipt_runs import verify_many

    return verify_many(args, catalogue, _read_keys, log)


def _one_receipt(path: str) -> bool:
    """A path that names one receipt file: checked and said as ``receipts verify FILE`` always was. Any
    other (a pipe, a device) is refused with the many files' words, never opened and waited on."""
    from service.bulk.receipt_runs import holds_lines

    return not holds_lines(path) and os.path.isfile(path)


def _verify_one(path: str, where: str, catalogue: Catalogue, language: Language, log: Any = None) -> int:
    """One receipt file: its verdict on stdout and exit 0, or the first failed check on stderr and 1."""
    from service.support.strict_json import BadDocument, loads
    from service.trust import receipts, rescoring
    from service.trust.receipt_reading import read_receipt

    command = "receipts verify"
    try:  # keys that cannot be read, or a receipt file that cannot be opened: usage errors, as for many files
        keys = _read_keys(where)
        with open(path, "rb") as file:
            text = file.read(64 * 1024 * 1024)
    except OSError as error:
        shown = getattr(error, "filename", None) or where
        say(command, "cli.cannot_open", language, file=shown, error=os_error(error))
        return EXIT_USAGE
    except BadDocument as error:
        say(command, "receipts.unreadable", language, error=error.args[0])
        return EXIT_USAGE
    try:
        receipt = read_receipt(text)
    except BadDocument as error:  # the receipt's fault: a verdict
        say(command, "receipts.unreadable", language, error=error.args[0])
        return EXIT_REJECTED
    from service.trust.signing import KeySet, Unverified

    try:
        usable = KeySet.read(keys)
    except Unverified as error:  # no JWK Set at all: a usage error, as with several files, not a verdict
        print(f"maubinh {command}: {on_terminal(error.args[0].render(language))}", file=sys.stderr)
        return EXIT_USAGE
    for skipped in usable.skipped:
        print(f"maubinh {command}: {on_terminal(skipped.render(language))}", file=sys.stderr)
    try:
        checked = receipts.check(receipt, keys, rescoring.rescorer(catalogue))
    except receipts.ReceiptFault as fault:
        print(f"maubinh {command}: {on_terminal(fault.says().render(language))}", file=sys.stderr)
        return EXIT_REJECTED
    verdict = checked.verdict().render(language)
    if log is not None:
        from service.trust.ruling_log import in_log

        logged = in_log(receipt, loads(receipt["request"]["body"]), *log)
        if logged.code is not None and logged.said is not None:
            print(f"maubinh {command}: {on_terminal(logged.said.render(language))}", file=sys.stderr)
            return EXIT_REJECTED
        verdict += logged.said.render(language) if logged.said is not None else ""
    print(on_terminal(verdict))
    return 0


def arguments(receipts: argparse.ArgumentParser, helped: Helped, language: Language) -> None:
    language_option(receipts, language)
    receipt_commands = receipts.add_subparsers(dest="receipts_command", required=True)
    verify_receipt = receipt_commands.add_parser("verify", help=helped("cli.help_receipts_verify"))
    verify_receipt.add_argument(
        "paths", nargs="+", metavar=helped("cli.metavar_path"), help=helped("cli.help_receipts_file")
    )
    verify_receipt.add_argument(
        "--keys", required=True, metavar=helped("cli.metavar_jwks"), help=helped("cli.help_receipts_keys")
    )
    verify_receipt.add_argument(
        "--jobs",
        type=int,
        default=available_cores(),
        metavar=helped("cli.metavar_jobs"),
        help=helped("cli.help_receipts_jobs"),
    )
    verify_receipt.add_argument(
        "--format", choices=("text", "jsonl"), default="text", help=helped("cli.help_receipts_format")
    )
    verify_receipt.add_argument("--report", metavar=helped("cli.metavar_dir"), help=helped("cli.help_receipts_report"))
    verify_receipt.add_argument("--log", metavar=helped("cli.metavar_url_or_dir"), help=helped("cli.help_receipts_log"))
    verify_receipt.add_argument(
        "--log-key", metavar=helped("cli.metavar_vkey"), help=helped("cli.help_receipts_log_key")
    )
    language_option(verify_receipt, language)
    make_receipt = receipt_commands.add_parser("make", help=helped("cli.help_receipts_make"))
    make_receipt.add_argument(
        "--request", required=True, metavar=helped("cli.metavar_request"), help=helped("cli.help_receipts_request")
    )
    make_receipt.add_argument(
        "--answer", required=True, metavar=helped("cli.metavar_saved"), help=helped("cli.help_receipts_answer")
    )
    make_receipt.add_argument(
        "--path", default="/v1/score", metavar=helped("cli.metavar_path"), help=helped("cli.help_receipts_path")
    )
    language_option(make_receipt, language)
    publish_key = receipt_commands.add_parser("publish", help=helped("cli.help_receipts_publish"))
    publish_key.add_argument("key", metavar=helped("cli.metavar_key"), help=helped("cli.help_receipts_new_key"))
    publish_key.add_argument(
        "--keys", required=True, metavar=helped("cli.metavar_jwks"), help=helped("cli.help_receipts_keys")
    )
    language_option(publish_key, language)
