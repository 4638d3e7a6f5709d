"""Where rounds scored once are recorded: in Redis (``MAUBINH_ROUNDS_REDIS_URL``), one key a caller's
round, holding the digest of the room it was scored with and whether that scoring is still in flight.

Nothing stops a backend from scoring a round twice with different cards and keeping the answer it
likes. A round's first room therefore claims it, atomically (``SET … NX GET``: of two rooms racing for
one round exactly one wins, whichever instance each reaches), and when it is answered the claim is
settled (a Lua script: still ours, then kept ``retention`` seconds) or, refused for its content,
released. What a claim finds is decided in :func:`decide`, the one place that rule lives.

A claim left by a worker that died expires after ``IN_FLIGHT_SECONDS``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from service.api.redis_link import Rest, client

if TYPE_CHECKING:
    from redis.commands.core import Script

KEY_PREFIX: Final = "maubinh-round"
IN_FLIGHT_SECONDS: Final = 60
"""How long a claim stays in flight unsettled: longer than any request scores (MAUBINH_TIMEOUT, 30 s, ends a
worker that stalls), so that only a claim whose worker died ever expires."""
PENDING: Final = b"p"
SCORED: Final = b"s"
LEAST_REDIS: Final = (7, 0)
"""A claim's ``SET … NX GET`` came with Redis 7.0: an older server refuses every claim as a syntax error."""

log = logging.getLogger("maubinh.rounds")


class Found(NamedTuple):
    """What a room's claim on its round found: ``new`` (the round was free, and is now this room's),
    ``again`` (claimed by this very room before: it is scored again), ``in_flight`` or ``scored`` (by
    another room, ``first``, whose scoring is still under way or answered)."""

    outcome: str
    first: str | None = None


def round_key(caller: str, round_id: str) -> str:
    """A round's key: round ids are the caller's own, so two callers' round "1" are two rounds. A caller's
    name holds no ``/`` (service/trust/callers.py), so no round id can make another caller's key."""
    return f"{KEY_PREFIX}/{caller}/{round_id}"


def digest_bytes(room_digest: str) -> bytes:
    """A room digest (``sha256:`` and 64 hex digits) as the 32 bytes a record keeps."""
    return bytes.fromhex(room_digest.removeprefix("sha256:"))


def decide(held: bytes | None, mine: bytes) -> Found:
    """What a room whose digest is ``mine`` finds in its round's record, ``held`` (None: there was none,
    and the claim just made it this room's).

    >>> decide(None, b"A"), decide(b"pA", b"A"), decide(b"sA", b"A")
    (Found(outcome='new', first=None), Found(outcome='again', first=None), Found(outcome='again', first=None))
    >>> decide(b"p" + bytes(32), b"B").outcome, decide(b"s" + bytes(32), b"B").outcome
    ('in_flight', 'scored')
    >>> decide(b"s" + bytes.fromhex("ab" * 32), b"B").first == "sha256:" + "ab" * 32
    True
    """
    if held is None:
        return Found("new")
    if held[1:] == mine:
        return Found("again")
    return Found("in_flight" if held[:1] == PENDING else "scored", "sha256:" + held[1:].hex())


SETTLE: Final = """
-- KEYS: the rounds a request claimed. ARGV[1]: the seconds a scored round is kept. ARGV[i + 1]: for KEYS[i],
-- a mode and the room's digest. Modes: s (scored), S (scored, and claimed new by this request), r (claimed new,
-- not scored: released). A scored round another room now holds (its claim expired, or was released and taken)
-- is a conflict: then nothing is settled, this request's new claims are released, and each conflict is returned.
local conflicts, any = {}, false
for i, key in ipairs(KEYS) do
  local mode, digest = string.sub(ARGV[i + 1], 1, 1), string.sub(ARGV[i + 1], 2)
  local held = redis.call('GET', key)
  conflicts[i] = false
  if mode ~= 'r' and held and string.sub(held, 2) ~= digest then
    conflicts[i], any = held, true
  end
end
for i, key in ipairs(KEYS) do
  local mode, digest = string.sub(ARGV[i + 1], 1, 1), string.sub(ARGV[i + 1], 2)
  local held = redis.call('GET', key)
  if not any and mode ~= 'r' and (not held or held == 'p' .. digest) then
    redis.call('SET', key, 's' .. digest, 'EX', ARGV[1])
  elseif (mode == 'r' or (any and mode == 'S')) and held == 'p' .. digest then
    redis.call('DEL', key)
  end
end
return conflicts
"""


class StoreTooOld(Exception):
    """The store's Redis predates :data:`LEAST_REDIS`: what the operator must change, said where it is logged."""

    def __init__(self, version: str) -> None:
        least = ".".join(map(str, LEAST_REDIS))
        super().__init__(
            f"its Redis is {version}, and rounds need {least} or later (a claim is SET … NX GET): upgrade it, "
            "or unset MAUBINH_ROUNDS_REDIS_URL"
        )


def redis_version(text: str) -> tuple[int, ...]:
    """``redis_version`` of INFO as numbers (``"6.2.14"`` → (6, 2, 14)); what is not a number counts as 0.

    >>> redis_version("6.2.14") < LEAST_REDIS <= redis_version("7.0.15")
    True
    """
    return tuple(int(part) if part.isdigit() else 0 for part in text.split("."))


class StoreDown(Exception):
    """The store did not answer, or rests after failing: ``seconds`` until it is asked again."""

    def __init__(self, seconds: float) -> None:
        super().__init__(seconds)
        self.seconds = seconds


class Settled(NamedTuple):
    """One claimed round as a request settles it: its key, the room's digest, whether the room was
    scored, and whether this request's claim made the round (``new``: only such a claim is released)."""

    key: str
    digest: bytes
    scored: bool
    new: bool


class RoundStore:
    """The records, in Redis; ``retention_days`` how long a scored round is kept."""

    def __init__(
        self, url: str, retention_days: int, on_error: Callable[[], None] = lambda: None, password: str | None = None
    ) -> None:
        self.url, self._password = url, password
        self.retention_seconds = retention_days * 86_400
        self._rest = Rest(
            url, log, "rounds' store does not answer", "rounds' store answers again: rounds are checked", on_error
        )
        self._settle: Script | None = None
        self._version_known = False

    def claim(self, rounds: Sequence[tuple[str, bytes]]) -> list[Found]:
        """Claim each (key, digest) in order, in one round trip; what each found. :class:`StoreDown`."""
        self._available()
        from redis.exceptions import RedisError

        try:
            self._known_recent_enough()
            pipe = client(self.url, self._password).pipeline(transaction=False)
            for key, digest in rounds:
                pipe.set(key, PENDING + digest, nx=True, get=True, ex=IN_FLIGHT_SECONDS)
            held = pipe.execute()
        except (RedisError, OSError, StoreTooOld) as error:
            raise self._failed(error) from None
        self._rest.answered()
        return [decide(found, digest) for found, (_, digest) in zip(held, rounds, strict=True)]

    def _known_recent_enough(self) -> None:
        """Once a process, the server's version (one more round trip, on the first claim only)."""
        if not self._version_known:
            info: dict[str, Any] = client(self.url, self._password).info("server")  # type: ignore[assignment]  # sync client
            version = str(info.get("redis_version", "0"))
            if redis_version(version) < LEAST_REDIS:
                raise StoreTooOld(version)
            self._version_known = True

    def settle(self, rounds: Sequence[Settled]) -> list[Found | None]:
        """Record each scored room as its round's (or release a new claim left unscored), in one round
        trip; for each, None or the conflict that kept anything from being recorded. :class:`StoreDown`."""
        if not rounds:
            return []
        self._available()
        from redis.exceptions import RedisError

        modes = [("r" if not r.scored else "S" if r.new else "s").encode() + r.digest for r in rounds]
        try:
            if self._settle is None:
                self._settle = client(self.url, self._password).register_script(SETTLE)
            held = self._settle(keys=[r.key for r in rounds], args=[self.retention_seconds, *modes])
        except (RedisError, OSError) as error:
            raise self._failed(error) from None
        self._rest.answered()
        return [None if found is None else decide(found, r.digest) for found, r in zip(held, rounds, strict=True)]

    def _available(self) -> None:
        if resting := self._rest.resting():
            raise StoreDown(resting)

    def _failed(self, error: BaseException) -> StoreDown:
        self._rest.failed(error)
        return StoreDown(self._rest.resting())
