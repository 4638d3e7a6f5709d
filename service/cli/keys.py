"""``maubinh keys``: ``new`` makes a caller's key, ``check`` reads a callers file as the service would."""

from __future__ import annotations

import argparse
import datetime
import os
import sys

from service.cli.shared import EXIT_REJECTED, EXIT_USAGE, Helped, language_option, say
from service.texts import Language, Text, os_error


def _new_key(caller: str, expires: str | None, key_file: str | None, language: Language) -> int:
    """A new key, shown once, and what the callers file keeps of it: its SHA-256 (service/trust/caller_keys.py)."""
    from service.trust import caller_keys, callers

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
        said = moment.isoformat().replace("+00:00", "Z")
        if moment <= datetime.datetime.now(datetime.UTC):
            say("keys new", "keys.past_expires", language, moment=said)
            return EXIT_USAGE
        until = f", expires = {said}"
    key = caller_keys.new_key()
    entry = f'{{ sha256 = "{caller_keys.digest_of(key)}"{until} }}'
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
    """A callers file read as the service reads it: each caller, its keys, routes and quota, or the fault;
    quotas that this environment would not enforce (no MAUBINH_QUOTA_REDIS_URL), on stderr."""
    from service.api.quotas import quota_state
    from service.trust import callers

    try:
        found = callers.load(path)
    except callers.CallersFileError as error:
        print(f"maubinh keys check: {error.args[0].render(language)}", file=sys.stderr)
        return EXIT_REJECTED
    for caller in found.callers.values():
        keys = sum(1 for key in found.keys.values() if key.caller == caller.name)
        quota = caller.rooms_per_minute if caller.rooms_per_minute is not None else "-"
        rulesets = "all" if caller.rulesets is None else ",".join(("built-ins", *caller.rulesets))  # operators' by id
        routes = ",".join(sorted(caller.routes))
        print(f"{caller.name}: ok keys={keys} routes={routes} rulesets={rulesets} rooms_per_minute={quota}")
    said, enforced = quota_state(found, os.environ.get("MAUBINH_QUOTA_REDIS_URL"))
    if not enforced:  # a warning, not a fault of the file
        print(f"maubinh keys check: {said.render(language)}", file=sys.stderr)
    return 0


def arguments(keys: argparse.ArgumentParser, helped: Helped, language: Language) -> None:
    language_option(keys, language)
    key_commands = keys.add_subparsers(dest="keys_command", required=True)
    new = key_commands.add_parser("new", help=helped("cli.help_keys_new"))
    new.add_argument("caller", metavar=helped("cli.metavar_caller"), help=helped("cli.help_keys_caller"))
    new.add_argument("--expires", metavar=helped("cli.metavar_datetime"), help=helped("cli.help_keys_expires"))
    new.add_argument("--key-file", metavar=helped("cli.metavar_file"), help=helped("cli.help_keys_key_file"))
    language_option(new, language)
    check = key_commands.add_parser("check", help=helped("cli.help_keys_check"))
    check.add_argument("file", metavar=helped("cli.metavar_file_argument"), help=helped("cli.help_keys_file"))
    language_option(check, language)


def run(args: argparse.Namespace) -> int:
    if args.keys_command == "new":
        return _new_key(args.caller, args.expires, args.key_file, args.lang)
    return _check_callers(args.file, args.lang)
