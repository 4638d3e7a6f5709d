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
swaps its files) and by every worker as it starts (gunicorn's SIGHUP starts new ones); a file that
does not load keeps the last good callers, and says so once (:class:`CallersSource`).
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import logging
import os
import re
import secrets
import tomllib
import zlib
from collections.abc import Callable, Iterable, Mapping
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


def _fault(key: str, **fields: Any) -> CallersFileError:
    return CallersFileError(Text(key, **fields))


def parse(text: bytes, where: str) -> Callers:
    """A callers file's bytes, checked whole: the first fault raises, naming its place."""
    if len(text) > MOST_FILE_BYTES:
        raise _fault("callers.too_large", file=where, most=MOST_FILE_BYTES)
    try:
        document = tomllib.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise _fault("callers.unreadable", file=where, error=str(error)[:200]) from None
    except RecursionError:  # tomllib reads nested arrays and tables by recursion: ~500 levels exhaust it
        raise _fault("callers.too_deep", file=where) from None
    unknown = sorted(set(document) - {"callers"})
    if unknown:
        raise _fault("callers.unknown_table", file=where, name=unknown[0][:64])
    tables = document.get("callers", {})
    if not isinstance(tables, dict):
        raise _fault("callers.not_tables", file=where)
    if len(tables) > MOST_CALLERS:
        raise _fault("callers.too_many", file=where, most=MOST_CALLERS, count=len(tables))
    callers: dict[str, Caller] = {}
    keys: dict[bytes, Key] = {}
    for name, table in tables.items():
        callers[name] = _caller(name, table, where, keys)
    return Callers(callers, keys)


def _caller(name: str, table: Any, where: str, keys: dict[bytes, Key]) -> Caller:
    at = f"{where}: callers.{name[:64]}"
    if not NAME.fullmatch(name) or name in RESERVED:
        raise _fault("callers.bad_name", at=at)
    if not isinstance(table, dict):
        raise _fault("callers.not_table", at=at)
    unknown = sorted(set(table) - {"keys", "routes", "rulesets", "rooms_per_minute"})
    if unknown:
        raise _fault("callers.unknown_field", at=at, field=unknown[0][:64])
    entries = table.get("keys")
    if not isinstance(entries, list) or not entries or len(entries) > MOST_KEYS:
        raise _fault("callers.keys", at=at, most=MOST_KEYS)
    for k, entry in enumerate(entries):
        key = _key(name, entry, f"{at}.keys[{k}]")
        if key.digest in keys:
            raise _fault("callers.key_twice", at=f"{at}.keys[{k}]", other=keys[key.digest].caller)
        keys[key.digest] = key
    routes = table.get("routes", list(ROUTES))
    if not isinstance(routes, list) or not routes or any(route not in ROUTES for route in routes):
        raise _fault("callers.routes", at=at, known=", ".join(ROUTES))
    rulesets = table.get("rulesets", [])
    if not isinstance(rulesets, list) or any(not isinstance(r, str) or len(r) > 64 for r in rulesets):
        raise _fault("callers.rulesets", at=at)
    quota = table.get("rooms_per_minute")
    if quota is not None and (type(quota) is not int or not 1 <= quota <= 10_000_000):
        raise _fault("callers.quota", at=at)
    return Caller(name, tuple(sorted(set(routes))), tuple(sorted(set(rulesets))), quota)


def _key(name: str, entry: Any, at: str) -> Key:
    if not isinstance(entry, dict) or set(entry) - {"sha256", "expires"} or "sha256" not in entry:
        raise _fault("callers.key_entry", at=at)
    digest, expires = entry["sha256"], entry.get("expires")
    if not isinstance(digest, str) or not HEX_DIGEST.fullmatch(digest):
        raise _fault("callers.key_digest", at=at)
    if expires is not None and (not isinstance(expires, datetime.datetime) or expires.tzinfo is None):
        raise _fault("callers.key_expires", at=at)
    return Key(name, bytes.fromhex(digest), expires)


def load(path: str) -> Callers:
    """A callers file from disk (a regular file, read at most MOST_FILE_BYTES + 1)."""
    try:
        with open(path, "rb") as file:
            return parse(file.read(MOST_FILE_BYTES + 1), path)
    except OSError as error:
        raise _fault("callers.cannot_read", file=path, error=os_error(error)) from None


def _unexpected(path: str, error: Exception) -> Text:
    """A reload that failed in this code, not on the file: said as a fault, so that the alert fires and
    the watcher goes on (an exception there ended it silently)."""
    return Text("callers.unexpected", file=path, error=type(error).__name__)


Stamp = tuple[int, int, int, int, int, int]


def _stamp(path: str) -> Stamp | None:
    """What changes when a file is replaced, rewritten or made unreadable: a Secret's update swaps a
    symlink (a new inode), an edit moves the time or the size, ``chmod``/``chown`` the status change time
    (``chmod 000`` went unnoticed while only inode, time and size were looked at)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_dev, found.st_ino, found.st_mtime_ns, found.st_size, found.st_mode, found.st_ctime_ns)


class CallersSource:
    """The callers in force: the file's last good reading plus ``MAUBINH_API_KEYS``'s default caller,
    checked for a change at most every ``CHECK_SECONDS``."""

    CHECK_SECONDS: Final = 1.0

    def __init__(self, path: str | None, keys: tuple[str, ...]) -> None:
        self.path, self._keys = path, from_keys(keys)
        self.fault: Text | None = None
        self.on_fault: Callable[[bool], None] = lambda failed: None
        """Told when the file starts or stops failing to load (a metric pages on it)."""
        self._stamp: Stamp | None = None
        self._checked = 0.0
        self.callers = self._keys
        if path:
            self._stamp = _stamp(path)
            self.callers = self._merged(load(path))  # a bad file at start: the caller refuses to start

    def _merged(self, loaded: Callers) -> Callers:
        if DEFAULT in loaded.callers and self._keys.any:
            raise _fault("callers.default_taken", file=self.path or "")
        return Callers({**self._keys.callers, **loaded.callers}, {**self._keys.keys, **loaded.keys})

    def current(self, now: float) -> Callers:
        """The callers now, re-read first if the file changed since it was last read."""
        if self.path and now - self._checked >= self.CHECK_SECONDS:
            self._checked = now
            self.reload_if_changed()
        return self.callers

    def reload_if_changed(self, force: bool = False) -> bool:
        """Read the file again if it changed (or ``force``); a bad one keeps the last good callers."""
        if not self.path:
            return False
        stamp = _stamp(self.path)
        if stamp == self._stamp and not force:
            return False
        self._stamp = stamp
        try:
            self.callers = self._merged(load(self.path))
        except Exception as error:  # a fault of this code too: the last good callers stay, and it is said
            fault = error.args[0] if isinstance(error, CallersFileError) else _unexpected(self.path, error)
            if fault != self.fault:
                log.error("callers file not reloaded, the last good callers stay: %s", fault)
                if self.fault is None:
                    self.on_fault(True)
            self.fault = fault
            return False
        log.info("callers file read: %d callers", len(self.callers.callers))
        if self.fault is not None:
            self.on_fault(False)
        self.fault = None
        return True

    @property
    def keyed(self) -> bool:
        """Whether /v1 needs a key: callers are configured, from the file or MAUBINH_API_KEYS."""
        return bool(self.path) or self._keys.any


KEY_PREFIX: Final = "mbk_"
"""A maubinh key starts so, as GitHub's start with ``ghp_``: a secret scanner can find a leaked one."""
BASE62: Final = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
RANDOM_CHARS: Final = 30
"""178 bits of randomness."""
CHECK_CHARS: Final = 6


def _base62(number: int, width: int) -> str:
    digits = []
    for _ in range(width):
        number, digit = divmod(number, 62)
        digits.append(BASE62[digit])
    return "".join(reversed(digits))


def _checksum(body: str) -> str:
    """The CRC-32 of the random part, in base62: a scanner tells a real key from random text offline."""
    return _base62(zlib.crc32(body.encode()), CHECK_CHARS)


def new_key() -> str:
    """A new key: the prefix, 30 random base62 characters, and their checksum."""
    body = "".join(secrets.choice(BASE62) for _ in range(RANDOM_CHARS))
    return KEY_PREFIX + body + _checksum(body)


def well_formed(key: str) -> bool:
    """Whether ``key`` is a maubinh key whose checksum holds (keys of MAUBINH_API_KEYS need not be)."""
    body, check = key[len(KEY_PREFIX) : -CHECK_CHARS], key[-CHECK_CHARS:]
    return (
        key.startswith(KEY_PREFIX)
        and len(body) == RANDOM_CHARS
        and all(c in BASE62 for c in body)
        and hmac.compare_digest(_checksum(body), check)
    )


def digest_of(key: str) -> str:
    """The hex SHA-256 a callers file keeps of a key."""
    return hashlib.sha256(key.encode()).hexdigest()
