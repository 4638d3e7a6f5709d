"""The callers in force in a running service: the callers file reloaded when it changes, and the last good
reading shared between gunicorn's workers so that a new one never starts from an older file."""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any, Final

from service.texts import Named, Text
from service.trust.callers import (
    DEFAULT,
    MTIME,
    NONE,
    STAMP_FIELDS,
    Caller,
    Callers,
    CallersFileError,
    Key,
    Stamp,
    Unsettled,
    file_fault,
    file_stamp,
    from_keys,
    load_stamped,
    parse,
    read_whole,
)

log = logging.getLogger("maubinh.callers")


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


def encode_last_good(found: Callers, stamp: Stamp, generation: int) -> bytes:
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


def head_of_last_good(text: bytes) -> tuple[int, Stamp]:
    head = json.loads(text.partition(b"\n")[0])
    generation, stamp = head["generation"], tuple(head["stamp"])
    if type(generation) is not int or len(stamp) != STAMP_FIELDS:
        raise ValueError("not a last-good file")
    return generation, stamp


def decode_last_good(text: bytes) -> tuple[int, Stamp, Callers]:
    generation, stamp = head_of_last_good(text)
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
            self._file, self._stamp = load_stamped(path)  # a bad file at start: the caller refuses to start
            self.callers = self._merged(self._file)

    def _merged(self, loaded: Callers) -> Callers:
        """The file's callers and MAUBINH_API_KEYS's default caller; a key in both is a fault (it took the
        file's narrower scope, silently): at start the service does not start, later the file does not load."""
        if DEFAULT in loaded.callers and self._keys.any:
            raise file_fault("callers.default_taken", file=self.path or "")
        if both := self._keys.keys.keys() & loaded.keys.keys():
            raise file_fault("callers.api_key_in_file", at=f"{self.path}: callers.{loaded.keys[min(both)].caller}")
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
        stamp = file_stamp(path)
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
        text, read = read_whole(path)
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
                file.write(self._off(lambda: encode_last_good(found, stamp, generation)))
            os.replace(fresh, target)
            self._shared_seen = file_stamp(target)
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
        now = file_stamp(os.path.join(self.shared, LAST_GOOD))
        if now is None or now == self._shared_seen:
            return False
        try:
            text = self._read_shared()
            self._shared_seen = now
            return head_of_last_good(text)[0] > self._generation and self._take_shared(text)
        except (OSError, ValueError, KeyError, TypeError) as error:
            log.warning("callers: the last good callers kept by another worker are unreadable: %s", error)
            return False

    def _take_shared(self, text: bytes, at_start: bool = False) -> bool:
        """The callers of a last-good file, if newer than this worker's (at start, unless the very ones it
        has: the master's own reading)."""
        generation, stamp = head_of_last_good(text)
        if generation == self._generation if at_start else generation <= self._generation:
            return False
        _, _, found = self._off(lambda: decode_last_good(text))
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
        count = (self._generation, len(self._file.callers), len(self._file.keys))
        log.info("callers file %s (reading %d): %d callers, %d keys", how, *count)
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
