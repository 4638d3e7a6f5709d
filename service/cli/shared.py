"""What the commands share: the language a command speaks, its exit codes, its files in and out, the
operators' rulesets, a progress bar, and argparse's usage errors said in the command's language."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO, NoReturn

from service.rulesets.catalogue import RULESETS_DIR_ENV, Catalogue
from service.rulesets.operator_folder import catalogue_for
from service.serialize import dumps
from service.support.printable import escaped
from service.texts import DEFAULT_LANGUAGE, LANGUAGES, Language, Text

EXIT_REJECTED = 1


EXIT_USAGE = 2


def on_terminal(text: str) -> str:
    """``text`` with its control characters written as escapes (``\\n``, ``\\x1b``, ``\\u202e``): what a
    file says (a round id, a key's kid, a file's name) then cannot start a line of its own, move the
    cursor, hide what follows or turn the text around on a terminal."""
    return escaped(text)


def say(command: str, key: str, language: Language, **fields: Any) -> None:
    """One line on stderr, ``maubinh <command>: <the text in the language asked>``."""
    print(f"maubinh {command}: {on_terminal(Text(key, **fields).render(language))}", file=sys.stderr)


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


def open_input(path: str) -> BinaryIO:
    return sys.stdin.buffer if path == "-" else open(path, "rb")


def write_document(document: object, language: Language = "en") -> None:
    sys.stdout.buffer.write(dumps(document, language) + b"\n")


def service_catalogue() -> Catalogue:
    """The built-ins plus MAUBINH_RULESETS_DIR, as the service loads them."""
    return catalogue_for(os.environ.get(RULESETS_DIR_ENV) or None)


def progress_bar(path: str, language: Language) -> Any:
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


def request_defaults(args: argparse.Namespace) -> dict[str, Any]:
    """Request fields the command line fills in where a request leaves them out."""
    opponents = getattr(args, "opponents", None)
    return {"opponents": opponents} if opponents else {}


def seconds_said(value: float, language: Language) -> str:
    """Seconds to two places, with the language's decimal mark (0.58; 0,58)."""
    text = f"{value:.2f}"
    return text.replace(".", ",") if language == "vi" else text


class Parser(argparse.ArgumentParser):
    """argparse, its usage errors said in the command's language. argparse words them in English through
    gettext, which has no Vietnamese catalogue for them: ``error`` (its documented hook) says each of the
    messages it gives here, matched whole, in the phrasebook's words."""

    language: Language = DEFAULT_LANGUAGE

    def format_usage(self) -> str:
        return _headings_said(super().format_usage(), self.language)

    def format_help(self) -> str:
        return _headings_said(super().format_help(), self.language)

    def print_help(self, file: Any = None) -> None:
        """As argparse's, but a help that cannot be written is said as any output is (argparse drops the
        error: ``--help > /dev/full`` said nothing and exited 0)."""
        out = file if file is not None else sys.stdout
        out.write(self.format_help())
        out.flush()

    def error(self, message: str) -> NoReturn:
        said = message
        for pattern, key in USAGE_ERRORS:
            if found := pattern.fullmatch(message):
                fields = found.groupdict()
                chosen = key
                if key == "cli.command_choice" and fields["given"].strip("'") in LANGUAGES:
                    chosen = "cli.command_choice_lang"  # `maubinh --lang vi score`: the option went first
                if "names" in fields:  # the subcommands' dest (command, keys_command…) is the code's name for them
                    the_command = Text("cli.the_command").render(self.language)
                    fields["names"] = re.sub(r"\b(?:\w+_)?command\b", the_command, fields["names"])
                said = Text(chosen, **fields).render(self.language)
                break
        usage = argparse.ArgumentParser.format_usage(self).removeprefix("usage: ")
        print(f"{Text('cli.usage').render(self.language)} {usage}", end="", file=sys.stderr)
        print(f"{self.prog}: {Text('cli.error').render(self.language)}: {said}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


HEADINGS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\Ausage: "), "cli.usage"),
    (re.compile(r"^positional arguments:(?=\n|\Z)", re.MULTILINE), "cli.help_positionals"),
    (re.compile(r"^options:(?=\n|\Z)", re.MULTILINE), "cli.help_options"),
    (re.compile(r"show this help message and exit"), "cli.help_help"),
)
"""argparse's own words in ``--help`` (gettext has no Vietnamese for them), and their keys."""


def _headings_said(text: str, language: Language) -> str:
    """argparse's headings of a help or usage text in ``language``; English as argparse writes them."""
    if language == "en":
        return text
    for pattern, key in HEADINGS:
        said = Text(key).render(language) + (" " if pattern.pattern.endswith(" ") else "")
        text = pattern.sub(said.replace("\\", "\\\\"), text)
    return text


USAGE_ERRORS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"the following arguments are required: (?P<names>.+)"), "cli.arguments_required"),
    (
        re.compile(r"argument (?:\w+_)?command: invalid choice: (?P<given>.+) \(choose from (?P<choices>.+)\)"),
        "cli.command_choice",
    ),
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


def language_option(parser: argparse.ArgumentParser, language: Language) -> None:
    parser.add_argument(
        "--lang",
        choices=LANGUAGES,
        default=language,
        help=Text("cli.help_lang").render(language),
    )
