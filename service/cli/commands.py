"""The parser of every command, made for the one named, and the dispatch to its module."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from importlib import import_module
from typing import Any

from service.bulk.lines import LineCapError, max_line_bytes
from service.bulk.workers import WorkerLost
from service.cli import operations, standard_streams
from service.cli.shared import EXIT_USAGE, Helped, Parser, chosen_language, service_catalogue
from service.documents import OPERATIONS
from service.rulesets.operator_folder import OperatorFileError
from service.texts import DEFAULT_LANGUAGE, LANGUAGES, Language, Text, os_error


def _serve_arguments(serve: argparse.ArgumentParser, helped: Helped, language: Language) -> None:
    serve.add_argument("--host", default=None, metavar=helped("cli.metavar_host"), help=helped("cli.help_host"))
    serve.add_argument(
        "--port", type=int, default=None, metavar=helped("cli.metavar_port"), help=helped("cli.help_port")
    )
    serve.add_argument("--lang", choices=LANGUAGES, default=language, help=helped("cli.help_serve_lang"))


AddArguments = Callable[[argparse.ArgumentParser, Helped, Language], None]


def _arguments_in(module: str) -> AddArguments:
    """The ``arguments`` of a command group's module, imported only when its parser is made: a one-room
    ``maubinh score`` imports none of the other groups (bench/cli.py)."""

    def add(parser: argparse.ArgumentParser, helped: Helped, language: Language) -> None:
        import_module(f"service.cli.{module}").arguments(parser, helped, language)

    return add


def _commands(helped: Helped) -> dict[str, tuple[str, AddArguments]]:
    """Each command, in the order ``maubinh --help`` lists them: its help and what adds its arguments."""
    each_operation = {
        name: (helped("cli.help_operation", name=name), operations.operation_arguments(name))
        for name in sorted(OPERATIONS)
    }
    return {
        **each_operation,
        "rooms": (helped("cli.help_rooms"), operations.rooms_arguments),
        "replay": (helped("cli.help_replay"), _arguments_in("replay")),
        "rulesets": (helped("cli.help_rulesets"), _arguments_in("rulesets")),
        "keys": (helped("cli.help_keys"), _arguments_in("keys")),
        "receipts": (helped("cli.help_receipts"), _arguments_in("receipts")),
        "log": (helped("cli.help_log"), _arguments_in("log")),
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


class Terminated(BaseException):
    """SIGTERM, as a command takes it: the run stops as Ctrl-C stops it, and a half-written table is
    removed (it ended at once, its workers writing tracebacks after it, its table without a footer)."""


def _terminated(signum: int, frame: Any) -> None:
    raise Terminated


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    language = chosen_language(words)
    command = words[0] if words and not words[0].startswith("-") else ""
    standard_streams.stand_in()
    at_home = threading.current_thread() is threading.main_thread()  # a handler is set from there only
    before = signal.signal(signal.SIGTERM, _terminated) if at_home else None
    try:
        args = _parser(language, words).parse_args(words)
        command, language = args.command, getattr(args, "lang", language)
        return _run(args)
    except WorkerLost:  # whichever bulk command it was: a run with a share missing is said, never waited on
        return _stopped(command, Text("cli.worker_lost"), language, EXIT_USAGE)
    except KeyboardInterrupt:
        return _stopped(command, Text("cli.interrupted", signal="Ctrl-C (SIGINT)"), language, 128 + signal.SIGINT)
    except Terminated:
        return _stopped(command, Text("cli.interrupted", signal="SIGTERM"), language, 128 + signal.SIGTERM)
    except OSError as error:  # a write that failed mid-run (a full disk, a reader gone): said, never a traceback
        standard_streams.let_go()
        return _stopped(command, Text("cli.stopped_on_os_error", error=os_error(error)), language, EXIT_USAGE)
    finally:
        if at_home and before is not None:
            signal.signal(signal.SIGTERM, before)


def _stopped(command: str, said: Text, language: Language, status: int) -> int:
    """A run that stopped, said in one line; ``status`` is its exit status."""
    print(f"maubinh {command}: {said.render(language)}".replace("maubinh :", "maubinh:"), file=sys.stderr)
    return status


def _run(args: argparse.Namespace) -> int:
    if args.command == "serve":
        from service.server.serve import serve

        return serve(args.host, args.port, args.lang)
    if args.command == "receipts":
        from service.cli import receipts

        return receipts.run(args, receipts.catalogue_for_receipts())
    if args.command == "log":
        from service.cli import log

        return log.run(args)
    if args.command == "keys":
        from service.cli import keys

        return keys.run(args)
    try:
        catalogue = service_catalogue()
        max_line_bytes()  # the bulk commands' cap on a line, if set, must be one
    except OperatorFileError as error:
        print(f"maubinh: {Text('cli.bad_rulesets_dir', faults=error.said()).render(args.lang)}", file=sys.stderr)
        return EXIT_USAGE
    except LineCapError as error:
        print(f"maubinh: {error.args[0].render(args.lang)}", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "rulesets":
        from service.cli import rulesets

        return rulesets.run(args.words, catalogue, args.lang)
    if args.command == "replay":
        from service.cli import replay

        return replay.run(args, catalogue)
    if args.command == "rooms":
        return operations.run_rooms(args, catalogue)
    return operations.run_operation(args.command, args, catalogue)
