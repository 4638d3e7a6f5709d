"""Who calls: each caller's name, keys, routes, operator rulesets and quota, from a callers file.

``MAUBINH_CALLERS_FILE`` names a TOML file (``tomllib``), one table per caller::

    [callers.club-alpha]
    keys = [{ sha256 = "9f86d0…", expires = 2027-06-01T00:00:00Z }, { sha256 = "60303a…" }]
    routes = ["score", "batch", "verify"]    # default: every /v1 route
    rulesets = ["club-alpha"]                # operator rulesets it may use besides the built-ins
    rooms_per_minute = 600                   # default: no quota

Keys are kept only as the SHA-256 of the whole key: an offered key is hashed and looked up, and
the entry found is compared again in constant time. ``MAUBINH_API_KEYS`` keeps working as one caller
named ``default`` with every scope. The file is re-read when it changes (a Kubernetes Secret's update
swaps its files), once whole; a file that does not load keeps the last good callers, says so once, and
a new worker (gunicorn's SIGHUP starts new ones) starts from them too (``callers_source``). How
keys are made and written: ``caller_keys``.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import logging
import os
import re
import time
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from service.texts import Text, os_error

ROUTES: Final = ("score", "batch", "verify", "evaluate", "arrange", "rulesets")
"""The scopes a caller's ``routes`` names: each /v1 operation's, as openapi.yaml's ``x-scope`` says."""
NAME: Final = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
"""A caller's name: a label of every metric, log line and trace it makes."""
HEX_DIGEST: Final = re.compile(r"[0-9a-f]{64}")
MOST_CALLERS: Final = 10_000
MOST_KEYS: Final = 16
"""Keys a caller may hold at once: a few, while one is rotated."""
MOST_FILE_BYTES: Final = 4 * 1024 * 1024
DEFAULT: Final = "default"
"""The caller ``MAUBINH_API_KEYS`` stands for."""
UNKNOWN: Final = "unknown"
"""Who sent a key no caller holds, or an expired one."""
ANONYMOUS: Final = "anonymous"
"""Who sent no key where none is needed."""
RESERVED: Final = frozenset({UNKNOWN, ANONYMOUS})

log = logging.getLogger("maubinh.callers")


class Caller(NamedTuple):
    """Tuples of strings, not sets: a worker's garbage collector lets such tuples be, however many
    callers the file holds (10,000 frozen dataclasses cost each full collection a walk)."""

    name: str
    routes: tuple[str, ...]
    rulesets: tuple[str, ...] | None
    """The operator rulesets it may use besides the built-ins, sorted; None: every one (the default caller)."""
    rooms_per_minute: int | None


class Key(NamedTuple):
    caller: str
    digest: bytes
    expires: datetime.datetime | None


class CallersFileError(ValueError):
    """A callers file that does not load: ``args[0]``, a Text, names the place and the fault."""


@dataclass(frozen=True)
class Callers:
    """Every caller and its keys, by the SHA-256 of a key."""

    callers: Mapping[str, Caller]
    keys: Mapping[bytes, Key]

    def identify(self, offered: str | None, now: datetime.datetime | None = None) -> Caller | None:
        """The caller an offered key belongs to, if it is one of its unexpired keys."""
        if not offered:
            return None
        digest = hashlib.sha256(offered.encode()).digest()
        key = self.keys.get(digest)
        if key is None or not hmac.compare_digest(key.digest, digest):
            return None
        if key.expires is not None and (now or datetime.datetime.now(datetime.UTC)) >= key.expires:
            return None
        return self.callers[key.caller]

    def expired(self, offered: str, now: datetime.datetime | None = None) -> datetime.datetime | None:
        """When an offered key that is one of a caller's expired, if it has: a 401 says so, rather than
        ask for the header the caller sent."""
        digest = hashlib.sha256(offered.encode()).digest()
        key = self.keys.get(digest)
        if key is None or key.expires is None or not hmac.compare_digest(key.digest, digest):
            return None
        return key.expires if (now or datetime.datetime.now(datetime.UTC)) >= key.expires else None

    @property
    def any(self) -> bool:
        return bool(self.callers)


NONE: Final = Callers({}, {})


def from_keys(keys: Iterable[str]) -> Callers:
    """``MAUBINH_API_KEYS`` as one caller, ``default``, with every scope."""
    hashed = {hashlib.sha256(key.encode()).digest() for key in keys}
    if not hashed:
        return NONE
    caller = Caller(DEFAULT, ROUTES, None, None)
    return Callers({DEFAULT: caller}, {digest: Key(DEFAULT, digest, None) for digest in hashed})


def file_fault(key: str, **fields: Any) -> CallersFileError:
    return CallersFileError(Text(key, **fields))


TOML_AT: Final = re.compile(r"\(at line (\d+), column (\d+)\)\Z")


def _toml_fault(said: str) -> Text:
    """tomllib's fault in our words: its place (line and column, or the end) is what helps; its English
    wording of the kind ("Invalid value") reached Vietnamese lines as it was."""
    if found := TOML_AT.search(said):
        return Text("callers.toml_at", line=int(found[1]), column=int(found[2]))
    return Text("callers.toml_end" if said.endswith("(at end of document)") else "callers.toml_syntax")


def parse(text: bytes, where: str) -> Callers:
    """A callers file's bytes, checked whole: the first fault raises, naming its place."""
    if len(text) > MOST_FILE_BYTES:
        raise file_fault("callers.too_large", file=where, most=MOST_FILE_BYTES)
    try:
        document = tomllib.loads(text.decode("utf-8"))
    except UnicodeDecodeError:
        raise file_fault("callers.unreadable", file=where, why=Text("callers.not_utf8")) from None
    except tomllib.TOMLDecodeError as error:
        raise file_fault("callers.unreadable", file=where, why=_toml_fault(str(error))) from None
    except RecursionError:  # tomllib reads nested arrays and tables by recursion: ~500 levels exhaust it
        raise file_fault("callers.too_deep", file=where) from None
    unknown = sorted(set(document) - {"callers"})
    if unknown:
        raise file_fault("callers.unknown_table", file=where, name=unknown[0][:64])
    tables = document.get("callers", {})
    if not isinstance(tables, dict):
        raise file_fault("callers.not_tables", file=where)
    if len(tables) > MOST_CALLERS:
        raise file_fault("callers.too_many", file=where, most=MOST_CALLERS, count=len(tables))
    callers: dict[str, Caller] = {}
    keys: dict[bytes, Key] = {}
    for name, table in tables.items():
        callers[name] = _caller(name, table, where, keys)
    return Callers(callers, keys)


def _caller(name: str, table: Any, where: str, keys: dict[bytes, Key]) -> Caller:
    at = f"{where}: callers.{name[:64]}"
    if not NAME.fullmatch(name) or name in RESERVED:
        raise file_fault("callers.bad_name", at=at)
    if not isinstance(table, dict):
        raise file_fault("callers.not_table", at=at)
    unknown = sorted(set(table) - {"keys", "routes", "rulesets", "rooms_per_minute"})
    if unknown:
        raise file_fault("callers.unknown_field", at=at, field=unknown[0][:64])
    entries = table.get("keys")
    if not isinstance(entries, list) or not entries or len(entries) > MOST_KEYS:
        raise file_fault("callers.keys", at=at, most=MOST_KEYS)
    for k, entry in enumerate(entries):
        key = _key(name, entry, f"{at}.keys[{k}]")
        if key.digest in keys:
            raise file_fault("callers.key_twice", at=f"{at}.keys[{k}]", other=keys[key.digest].caller)
        keys[key.digest] = key
    routes = table.get("routes", list(ROUTES))
    if not isinstance(routes, list) or not routes or any(route not in ROUTES for route in routes):
        raise file_fault("callers.routes", at=at, known=", ".join(ROUTES))
    rulesets = table.get("rulesets", [])
    if not isinstance(rulesets, list) or any(not isinstance(r, str) or len(r) > 64 for r in rulesets):
        raise file_fault("callers.rulesets", at=at)
    quota = table.get("rooms_per_minute")
    if quota is not None and (type(quota) is not int or not 1 <= quota <= 10_000_000):
        raise file_fault("callers.quota", at=at)
    return Caller(name, tuple(sorted(set(routes))), tuple(sorted(set(rulesets))), quota)


def _key(name: str, entry: Any, at: str) -> Key:
    if not isinstance(entry, dict) or set(entry) - {"sha256", "expires"} or "sha256" not in entry:
        raise file_fault("callers.key_entry", at=at)
    digest, expires = entry["sha256"], entry.get("expires")
    if not isinstance(digest, str) or not HEX_DIGEST.fullmatch(digest):
        raise file_fault("callers.key_digest", at=at)
    if expires is not None and (not isinstance(expires, datetime.datetime) or expires.tzinfo is None):
        raise file_fault("callers.key_expires", at=at)
    return Key(name, bytes.fromhex(digest), expires)


Stamp = tuple[int, int, int, int, int, int]
"""A file's device, inode, modification time, size, mode and status change time (see :func:`file_stamp`)."""
STAMP_FIELDS: Final = 6
SIZE: Final = 3
MTIME: Final = 2


def _of(found: os.stat_result) -> Stamp:
    return (found.st_dev, found.st_ino, found.st_mtime_ns, found.st_size, found.st_mode, found.st_ctime_ns)


def file_stamp(path: str) -> Stamp | None:
    """What changes when a file is replaced, rewritten or made unreadable: a Secret's update swaps a
    symlink (a new inode), an edit moves the time or the size, ``chmod``/``chown`` the status change time
    (``chmod 000`` went unnoticed while only inode, time and size were looked at)."""
    try:
        return _of(os.stat(path))
    except OSError:
        return None


class Unsettled(Exception):
    """A file that changed while it was read: read it again later, and keep what is in force meanwhile."""


def read_whole(path: str) -> tuple[bytes, Stamp]:
    """A file's bytes and stamp, read whole and unchanged across the read: the same stamp before it is
    opened, as opened and after the read, and as many bytes as its size (:class:`Unsettled` otherwise;
    a file rewritten in place, ``cat > file``, is read half-written or empty)."""
    before = file_stamp(path)
    try:
        with open(path, "rb") as file:
            opened = _of(os.fstat(file.fileno()))
            text = file.read(MOST_FILE_BYTES + 1)
            after = _of(os.fstat(file.fileno()))
    except OSError as error:
        raise file_fault("callers.cannot_read", file=path, error=os_error(error)) from None
    if before != opened or opened != after or (len(text) != after[SIZE] and len(text) <= MOST_FILE_BYTES):
        raise Unsettled
    return text, after


def load_stamped(path: str, tries: int = 3) -> tuple[Callers, Stamp]:
    """A callers file and the stamp of what was read, once a read finds it unchanged throughout."""
    for _ in range(tries - 1):
        try:
            text, stamp = read_whole(path)
            break
        except Unsettled:
            time.sleep(0.1)
    else:
        try:
            text, stamp = read_whole(path)
        except Unsettled:
            raise file_fault("callers.changing", file=path) from None
    return parse(text, path), stamp


def load(path: str) -> Callers:
    """A callers file from disk (read at most MOST_FILE_BYTES + 1, unchanged across the read)."""
    return load_stamped(path)[0]
