"""``maubinh``: the same JSON as the HTTP API, without a server.

maubinh score room.json          one room; exit 1 with the problem if rejected
maubinh score --jsonl - < rooms  one result (or problem) per input line
maubinh evaluate hand.json       name the hands of one arrangement
maubinh arrange cards.json       suggest an arrangement (gợi ý)
maubinh rulesets [ID]            list the rulesets, or print one whole
maubinh serve                    run the HTTP API under gunicorn
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO

from service.documents import OPERATIONS, BadDocument, loads
from service.rulesets import all_rulesets, get_ruleset
from service.scoring import RoomRejected
from service.serialize import dumps, problem_json, rejected_json, ruleset_json

EXIT_REJECTED = 1
EXIT_USAGE = 2


def answer(operation: Callable[[Any], dict[str, Any]], body: bytes) -> tuple[int, dict[str, Any]]:
    """(HTTP-like status, body) for one request document."""
    try:
        raw = loads(body)
    except BadDocument as error:
        return 400, problem_json(400, "Bad JSON", str(error))
    try:
        return 200, operation(raw)
    except RoomRejected as rejected:
        return 422, rejected_json(rejected.faults)


def _open(path: str) -> BinaryIO:
    return sys.stdin.buffer if path == "-" else open(path, "rb")


def _write(document: object) -> None:
    sys.stdout.buffer.write(dumps(document) + b"\n")


def _run_operation(name: str, path: str, jsonl: bool) -> int:
    operation = OPERATIONS[name]
    try:
        source = _open(path)
    except OSError as error:
        print(f"maubinh {name}: cannot read {path}: {error.strerror}", file=sys.stderr)
        return EXIT_USAGE
    with source:
        if not jsonl:
            status, body = answer(operation, source.read())
            _write(body)
            return 0 if status == 200 else EXIT_REJECTED
        for line in source:
            _write(answer(operation, line)[1])
            sys.stdout.flush()
    return 0


def _rulesets(ruleset_id: str | None) -> int:
    if ruleset_id is None:
        _write({"rulesets": [r.summary() for r in all_rulesets().values()]})
        return 0
    ruleset = get_ruleset(ruleset_id)
    if ruleset is None:
        _write(problem_json(404, "Not found", f"no ruleset {ruleset_id!r}; known: {', '.join(all_rulesets())}"))
        return EXIT_REJECTED
    _write(ruleset_json(ruleset))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="maubinh", description="Mậu Binh scoring: the HTTP API's JSON, offline.")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in sorted(OPERATIONS):
        sub = commands.add_parser(name, help=f"the POST /v1/{name} operation")
        sub.add_argument("file", nargs="?", default="-", help="request JSON file, or - for standard input")
        sub.add_argument("--jsonl", action="store_true", help="one request per line, one answer per line")
    rulesets = commands.add_parser("rulesets", help="list the rulesets, or print one whole")
    rulesets.add_argument("id", nargs="?")
    serve = commands.add_parser("serve", help="run the HTTP API under gunicorn")
    serve.add_argument("--host", default=None, help="bind address (default: MAUBINH_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, help="port (default: MAUBINH_PORT or 8000)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "rulesets":
        return _rulesets(args.id)
    if args.command == "serve":
        from service.serve import serve

        return serve(args.host, args.port)
    return _run_operation(args.command, args.file, args.jsonl)


if __name__ == "__main__":
    sys.exit(main())
