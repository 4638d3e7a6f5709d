"""The log's add key: who may add entries (``POST /add``). One secret in one file, named by
:data:`ADD_KEY_FILE_ENV` to both processes: the log refuses an addition that does not carry it, and the
service's feeder sends it (``Authorization: Bearer <key>``). Reading the log stays open to anyone.

Without it the log takes entries from anyone who reaches its port: an entry is no forgery (a statement
binds a signed ruling, and the monitor names what no published key signed), but a stranger could fill
the log with noise, so a log reachable from outside its service's network should have one.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
from typing import Final

from service.support.bearer_token import BEARER_TOKEN, MOST_KEY_CHARS, offered_key
from service.texts import Text

ADD_KEY_FILE_ENV: Final = "MAUBINH_LOG_ADD_KEY_FILE"
SHORTEST: Final = 16
"""Characters at least: ``openssl rand -base64 32`` writes 44."""


class AddKeyError(ValueError):
    """The add key's file cannot be used: ``args[0]`` (a :class:`Text`) says why."""


def read_add_key(path: str) -> str:
    """The key ``path`` holds (its white space around dropped), or :class:`AddKeyError`."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would hold the start until someone writes to it
            raise AddKeyError(Text("tlog.add_key_unreadable", path=path, error="not a regular file"))
        with open(path, "rb") as file:
            held = file.read(4 * MOST_KEY_CHARS)  # a key and white space around it: never a whole device
    except OSError as error:
        raise AddKeyError(Text("tlog.add_key_unreadable", path=path, error=error.strerror or str(error))) from None
    try:
        key = held.decode("ascii").strip()
    except UnicodeDecodeError:
        key = "\x00"  # not ASCII: not a Bearer token
    if not key:
        raise AddKeyError(Text("tlog.add_key_empty", path=path))
    if len(key) > MOST_KEY_CHARS:
        raise AddKeyError(Text("tlog.add_key_long", path=path, longest=MOST_KEY_CHARS))
    if not BEARER_TOKEN.fullmatch(key):
        raise AddKeyError(Text("tlog.add_key_character", path=path))
    if len(key) < SHORTEST:
        raise AddKeyError(Text("tlog.add_key_short", path=path, shortest=SHORTEST))
    return key


def carries(authorization: str | None, key: str) -> bool:
    """Whether an ``Authorization`` header carries ``key`` as its Bearer token (compared in constant
    time, by digest, so that neither the key's bytes nor its length show in the time taken)."""
    offered = offered_key(authorization)
    if offered is None:
        return False
    given = hashlib.sha256(offered.encode("utf-8", "surrogateescape")).digest()
    return hmac.compare_digest(given, hashlib.sha256(key.encode()).digest())
