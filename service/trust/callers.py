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
a new worker (gunicorn's SIGHUP starts new ones) starts from them too (:class:`CallersSource`).
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import shutil
import tempfile
import time
import tomllib
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from service.texts import Named, Text, os_error

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


Stamp = tuple[int, int, int, int, int, int]
"""A file's device, inode, modification time, size, mode and status change time (see :func:`_stamp`)."""
STAMP_FIELDS: Final = 6
SIZE: Final = 3
MTIME: Final = 2


def _of(found: os.stat_result) -> Stamp:
    return (found.st_dev, found.st_ino, found.st_mtime_ns, found.st_size, found.st_mode, found.st_ctime_ns)


def _stamp(path: str) -> Stamp | None:
    """What changes when a file is replaced, rewritten or made unreadable: a Secret's update swaps a
    symlink (a new inode), an edit moves the time or the size, ``chmod``/``chown`` the status change time
    (``chmod 000`` went unnoticed while only inode, time and size were looked at)."""
    try:
        return _of(os.stat(path))
    except OSError:
        return None


class Unsettled(Exception):
    """A file that changed while it was read: read it again later, and keep what is in force meanwhile."""


def _read(path: str) -> tuple[bytes, Stamp]:
    """A file's bytes and stamp, read whole and unchanged across the read: the same stamp before it is
    opened, as opened and after the read, and as many bytes as its size (:class:`Unsettled` otherwise;
    a file rewritten in place, ``cat > file``, is read half-written or empty)."""
    before = _stamp(path)
    try:
        with open(path, "rb") as file:
            opened = _of(os.fstat(file.fileno()))
            text = file.read(MOST_FILE_BYTES + 1)
            after = _of(os.fstat(file.fileno()))
    except OSError as error:
        raise _fault("callers.cannot_read", file=path, error=os_error(error)) from None
    if before != opened or opened != after or (len(text) != after[SIZE] and len(text) <= MOST_FILE_BYTES):
        raise Unsettled
    return text, after


def _load(path: str, tries: int = 3) -> tuple[Callers, Stamp]:
    """A callers file and the stamp of what was read, once a read finds it unchanged throughout."""
    for _ in range(tries - 1):
        try:
            text, stamp = _read(path)
            break
        except Unsettled:
            time.sleep(0.1)
    else:
        try:
            text, stamp = _read(path)
        except Unsettled:
            raise _fault("callers.changing", file=path) from None
    return parse(text, path), stamp


def load(path: str) -> Callers:
    """A callers file from disk (read at most MOST_FILE_BYTES + 1, unchanged across the read)."""
    return _load(path)[0]


def _unexpected(path: str, error: Exception) -> Text:
    """A reload that failed in this code, not on the file: said as a fault, so that the alert fires and
    the watcher goes on (an exception there ended it silently)."""
    return Text("callers.unexpected", file=path, error=type(error).__name__)


LAST_GOOD: Final = "last-good.json"
"""In the shared folder: the last good callers any worker read, which a new worker starts from."""
LOCK: Final = "lock"
"""In the shared folder: held by the one worker that reads the file after a change."""
UNSHARED: Final = "/dev/null/maubinh-callers"
"""The shared folder when none could be made: a path no one can create, so that a new worker finds no
last good callers there and waits for the file (never the master's, which may be older)."""


def _encode(found: Callers, stamp: Stamp, generation: int) -> bytes:
    """The last good callers as the shared folder keeps them: a line saying which reading this is (its
    generation and the file's stamp), then the callers, with the keys' digests (no key)."""
    head = json.dumps({"generation": generation, "stamp": list(stamp)})
    body = {
        "callers": [list(caller) for caller in found.callers.values()],
        "keys": [
            [key.caller, key.digest.hex(), None if key.expires is None else key.expires.isoformat()]
            for key in found.keys.values()
        ],
    }
    return f"{head}\n{json.dumps(body, separators=(',', ':'))}".encode()


def _head(text: bytes) -> tuple[int, Stamp]:
    head = json.loads(text.partition(b"\n")[0])
    generation, stamp = head["generation"], tuple(head["stamp"])
    if type(generation) is not int or len(stamp) != STAMP_FIELDS:
        raise ValueError("not a last-good file")
    return generation, stamp


def _decode(text: bytes) -> tuple[int, Stamp, Callers]:
    generation, stamp = _head(text)
    body = json.loads(text.partition(b"\n")[2])
    callers = {
        name: Caller(name, tuple(routes), None if rulesets is None else tuple(rulesets), quota)
        for name, routes, rulesets, quota in body["callers"]
    }
    keys = {}
    for caller, digest, expires in body["keys"]:
        key = Key(caller, bytes.fromhex(digest), None if expires is None else datetime.datetime.fromisoformat(expires))
        keys[key.digest] = key
    return generation, stamp, Callers(callers, keys)


def _here(work: Callable[[], Any]) -> Any:
    return work()


class CallersSource:
    """The callers in force: the file's last good reading plus ``MAUBINH_API_KEYS``'s default caller.

    In a worker (:meth:`started`), a watcher looks at the file every ``CHECK_SECONDS`` and a request
    never reads it; in process (tests, another WSGI server), a request looks at most that often. A
    change is read once the file has settled (``SETTLE_SECONDS`` since it was last written) and only
    if it stays unchanged across the read: a file rewritten in place is never read half-written.

    Under gunicorn the master :meth:`share`\\ s a folder: the last good callers any worker read are kept
    there, and a new worker (SIGHUP, a recycle, a crash) starts from them, never from the older ones
    the master read at start; without them it accepts none of the file's callers until the file loads.
    One worker at a time reads a changed file (a lock there), off the request path (``offload``: a
    thread of gevent's pool), and the others take its reading from the folder instead of parsing it.
    """

    CHECK_SECONDS: Final = 1.0
    SETTLE_SECONDS: Final = 1.0

    def __init__(self, path: str | None, keys: tuple[str, ...]) -> None:
        self.path, self._keys = path, from_keys(keys)
        self.fault: Text | None = None
        self.on_fault: Callable[[bool], None] = lambda failed: None
        """Told when the file starts or stops failing to load (a metric pages on it)."""
        self.offload: Callable[[Callable[[], Any]], Any] = _here
        """Runs a reading of the file (or of the shared folder) and returns its result: in a worker, in a
        thread, so that requests go on while it parses."""
        self.watched = False
        self.shared: str | None = None
        self._owner = 0
        self._generation = 0
        self._stamp: Stamp | None = None
        self._seen: tuple[Stamp | None, float] = (None, 0.0)
        self._shared_seen: Stamp | None = None
        self._checked = 0.0
        self._file = NONE
        self.callers = self._keys
        if path:
            self._file, self._stamp = _load(path)  # a bad file at start: the caller refuses to start
            self.callers = self._merged(self._file)

    def _merged(self, loaded: Callers) -> Callers:
        """The file's callers and MAUBINH_API_KEYS's default caller; a key in both is a fault (it took the
        file's narrower scope, silently): at start the service does not start, later the file does not load."""
        if DEFAULT in loaded.callers and self._keys.any:
            raise _fault("callers.default_taken", file=self.path or "")
        if both := self._keys.keys.keys() & loaded.keys.keys():
            raise _fault("callers.api_key_in_file", at=f"{self.path}: callers.{loaded.keys[min(both)].caller}")
        return Callers({**self._keys.callers, **loaded.callers}, {**self._keys.keys, **loaded.keys})

    def current(self, now: float) -> Callers:
        """The callers now; without a watcher, re-read first if the file changed since it was last read."""
        if self.path and not self.watched and now - self._checked >= self.CHECK_SECONDS:
            self._checked = now
            self.reload_if_changed()
        return self.callers

    def share(self, folder: str | None = None) -> None:
        """Keep the last good callers where every worker reads them (the gunicorn master, before the
        first fork): a fresh private folder, unless ``folder`` is given."""
        if not self.path:
            return
        self._owner = os.getpid()
        try:
            self.shared = folder or tempfile.mkdtemp(prefix="maubinh-callers-")  # 0700: this user's alone
            self._generation = 1
            self._keep(self._file, self._stamp, self._generation)
        except OSError as error:  # a new worker then accepts none of the file's callers until it loads
            log.error("callers: no folder to keep the last good callers in, new workers wait for the file: %s", error)
            self.shared = self.shared or UNSHARED

    def unshare(self) -> None:
        """The shared folder removed, by the process that made it (the master, as it exits)."""
        if self.shared and self._owner == os.getpid():
            shutil.rmtree(self.shared, ignore_errors=True)

    def started(self, offload: Callable[[Callable[[], Any]], Any] | None = None) -> None:
        """A new worker: its callers the last good ones any worker read, then the file if it changed since;
        from now on a watcher calls :meth:`reload_if_changed` and requests only read :attr:`callers`."""
        self.watched = True
        self.offload = offload or self.offload
        if self.path and self.shared:
            try:
                self._take_shared(self._read_shared(), at_start=True)
            except Exception as error:  # none kept, or unreadable: none of the file's callers
                self.callers, self._file, self._stamp = self._keys, NONE, None
                self._failed(Text("callers.no_last_good", file=self.path, error=_reason(error)))
        self.reload_if_changed()

    def reload_if_changed(self, force: bool = False) -> bool:
        """Read the file again if it changed and has settled (or ``force``: even unchanged); a bad one keeps
        the last good callers. Never raises: the watcher that calls it must go on."""
        if not self.path:
            return False
        try:
            return self._reload(self.path, force)
        except Exception as error:  # a fault of this code too: the last good callers stay, and it is said
            self._failed(_unexpected(self.path, error))
            return False

    def _reload(self, path: str, force: bool) -> bool:
        taken = bool(self.shared) and self._take_newer_shared()
        stamp = _stamp(path)
        if stamp == self._stamp and not force:
            return taken
        if stamp is not None and not self._settled(stamp):
            return taken
        with self._turn() as mine:
            if not mine:  # another worker reads it: its reading arrives through the shared folder
                return taken
            if self.shared and self._take_newer_shared() and self._stamp == stamp and not force:
                return True
            try:
                loaded, merged, read = self._off(lambda: self._read_merged(path))
            except Unsettled:
                return taken
            except CallersFileError as error:
                self._stamp = stamp
                self._failed(error.args[0])
                return False
            self._generation += 1
            if self.shared:
                self._keep(loaded, read, self._generation)
        self._file, self.callers, self._stamp = loaded, merged, read
        self._succeeded()
        return True

    def _off(self, work: Callable[[], Any]) -> Any:
        """``work`` run by :attr:`offload`, its exception raised here: in gevent's pool it would print a
        traceback for a file that merely does not load."""

        def caught() -> tuple[Any, Exception | None]:
            try:
                return work(), None
            except Exception as error:  # raised again below, in the caller's greenlet
                return None, error

        done, error = self.offload(caught)
        if error is not None:
            raise error
        return done

    def _read_merged(self, path: str) -> tuple[Callers, Callers, Stamp]:
        text, read = _read(path)
        loaded = parse(text, path)
        return loaded, self._merged(loaded), read

    def _settled(self, stamp: Stamp) -> bool:
        """Whether the file was last written ``SETTLE_SECONDS`` ago, or has looked the same that long (a
        time in the future)."""
        if time.time() - stamp[MTIME] / 1e9 >= self.SETTLE_SECONDS:
            return True
        seen, since = self._seen
        if seen != stamp:
            self._seen = (stamp, time.monotonic())
            return False
        return time.monotonic() - since >= self.SETTLE_SECONDS

    @contextlib.contextmanager
    def _turn(self) -> Iterator[bool]:
        """Whether this process is the one to read the file now: it holds the shared folder's lock (or
        shares nothing)."""
        if not self.shared:
            yield True
            return
        try:
            handle = os.open(os.path.join(self.shared, LOCK), os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            yield True  # no lock to take: this worker reads it alone
            return
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            yield True
        finally:
            os.close(handle)  # the lock goes with it

    def _keep(self, found: Callers, stamp: Stamp | None, generation: int) -> None:
        """The last good callers into the shared folder, whole or not at all (a rename); if they cannot be
        kept, the older ones are removed, so that no new worker starts from them."""
        assert self.shared and stamp is not None
        target = os.path.join(self.shared, LAST_GOOD)
        try:
            fresh = f"{target}.{os.getpid()}"
            fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as file:
                file.write(self._off(lambda: _encode(found, stamp, generation)))
            os.replace(fresh, target)
            self._shared_seen = _stamp(target)
        except OSError as error:
            log.error("callers: the last good callers could not be kept for new workers: %s", error)
            with contextlib.suppress(OSError):
                os.unlink(target)

    def _read_shared(self) -> bytes:
        assert self.shared
        with open(os.path.join(self.shared, LAST_GOOD), "rb") as file:
            return file.read()

    def _take_newer_shared(self) -> bool:
        """Another worker's reading of the file, if it is newer than this one's (looked at only when the
        shared file changed; unreadable, it is passed over: this worker reads the file itself)."""
        assert self.shared
        now = _stamp(os.path.join(self.shared, LAST_GOOD))
        if now is None or now == self._shared_seen:
            return False
        try:
            text = self._read_shared()
            self._shared_seen = now
            return _head(text)[0] > self._generation and self._take_shared(text)
        except (OSError, ValueError, KeyError, TypeError) as error:
            log.warning("callers: the last good callers kept by another worker are unreadable: %s", error)
            return False

    def _take_shared(self, text: bytes, at_start: bool = False) -> bool:
        """The callers of a last-good file, if newer than this worker's (at start, unless the very ones it
        has: the master's own reading)."""
        generation, stamp = _head(text)
        if generation == self._generation if at_start else generation <= self._generation:
            return False
        _, _, found = self._off(lambda: _decode(text))
        self._file, self.callers = found, self._merged(found)
        self._generation, self._stamp = generation, stamp
        self._succeeded(shared=True)
        return True

    def _failed(self, fault: Text) -> None:
        if fault != self.fault:
            log.error("callers file not reloaded, the last good callers stay: %s", fault)
            if self.fault is None:
                self.on_fault(True)
        self.fault = fault

    def _succeeded(self, shared: bool = False) -> None:
        how = "taken from another worker's reading" if shared else "read"
        log.info("callers file %s: %d callers", how, len(self._file.callers))
        if self.fault is not None:
            self.on_fault(False)
        self.fault = None

    @property
    def keyed(self) -> bool:
        """Whether /v1 needs a key: callers are configured, from the file or MAUBINH_API_KEYS."""
        return bool(self.path) or self._keys.any


def _reason(error: Exception) -> Named:
    """Why a new worker found no last good callers, in each language."""
    if isinstance(error, FileNotFoundError):
        return Named("none was kept", "không có bản nào được lưu")
    return Named(type(error).__name__, type(error).__name__)


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
