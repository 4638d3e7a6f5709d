"""Quotas: a caller's ``rooms_per_minute``, across every worker and every instance.

The counts live in Redis (``MAUBINH_QUOTA_REDIS_URL``), in ``limits``' Redis storage: a counter a
caller a clock minute (UTC), which a request moves by its rooms in one script, one round trip, and
which tells what is left. A request refused for its quota gives its rooms back (a second round trip,
on that path only). A batch of n rooms counts n; a score, a verify, an evaluate or an arrange one; the
rulesets none, and only read where the caller stands. Over quota is 429 ``/problems/quota-exceeded``
with ``Retry-After``. A caller's answers carry ``RateLimit-Policy`` and ``RateLimit`` as
draft-ietf-httpapi-ratelimit-headers-10 has them, the partition key its name.

Windows are clock minutes, so a caller may use its quota at the end of one and again at the start
of the next; in any one minute of the clock it gets at most its quota. The instances' clocks pick the
window (NTP keeps them within milliseconds).

Callers without a quota never touch Redis. When Redis does not answer (service/api/redis_link.py: its
timeout, and the rest it then takes), scoring goes on without quotas: the fault is logged once and
counted, and no request waits on Redis while it rests. A request
the count found over its quota is refused even when giving its rooms back then fails (they stay counted
until the minute ends): what is known to be over the quota is never let through.
"""

from __future__ import annotations

import base64
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from flask import Flask, Response, g
from werkzeug.exceptions import TooManyRequests

from service.api.redis_link import Rest, client, safe_url
from service.texts import Text
from service.trust.callers import Caller, Callers

if TYPE_CHECKING:
    from limits.storage import RedisStorage

POLICY: Final = "rooms"
"""The policy's name in RateLimit-Policy and RateLimit; its quota unit (``qu``) is rooms too."""
WINDOW_SECONDS: Final = 60
KEY_PREFIX: Final = "maubinh-quota"

log = logging.getLogger("maubinh.quotas")


@dataclass(frozen=True)
class Window:
    """Where a caller stands after a request: admitted or not, what is left, and when more frees."""

    admitted: bool
    quota: int
    remaining: int
    reset_seconds: int


class QuotaExceeded(TooManyRequests):
    """A caller over its ``rooms_per_minute`` (429, ``Retry-After``)."""

    title = Text("problem.quota_exceeded")

    def __init__(self, caller: str, rooms: int, window: Window) -> None:
        super().__init__(
            Text(
                "problem.quota_exceeded_detail",
                caller=caller,
                rooms=rooms,
                quota=window.quota,
                remaining=window.remaining,
                seconds=window.reset_seconds,
            )
        )
        self.retry_after = max(1, window.reset_seconds)


class QuotaStore:
    """The Redis-backed counters, or none (no URL: quotas are not kept, whatever the callers file says)."""

    def __init__(self, url: str | None, on_error: Callable[[], None] = lambda: None) -> None:
        self.url = url
        self._store: RedisStorage | None = None
        self._failure: type[Exception] = Exception
        if url:  # imported only here: redis imports OpenTelemetry, which a service without quotas never loads
            from limits.errors import StorageError
            from limits.storage import RedisStorage

            self._failure = StorageError
            # the rounds' store shares this pool when their URLs are the same and it has no password of its own
            pool = client(url).connection_pool
            self._store = RedisStorage(url, connection_pool=pool, key_prefix=KEY_PREFIX, wrap_exceptions=True)
        self._rest = Rest(
            url,
            log,
            "quota store does not answer, scoring goes on without quotas",
            "quota store answers again: quotas are kept",
            on_error,
        )

    @property
    def failing(self) -> bool:
        return self._rest.failing

    def take(self, caller: Caller, rooms: int) -> Window | None:
        """Count ``rooms`` against the caller's quota; None when it has none or the store is not answering."""
        if caller.rooms_per_minute is None or self._store is None:
            return None
        now = time.monotonic()
        if self._rest.resting(now):
            return None
        quota = caller.rooms_per_minute
        clock = time.time()
        minute = int(clock // WINDOW_SECONDS)
        key = counter_key(caller, minute)
        try:
            used = self._store.get(key) if rooms == 0 else self._store.incr(key, WINDOW_SECONDS * 2, amount=rooms)
        except self._failure as error:  # limits' StorageError, wrapping the client's own
            self._rest.failed(_cause(error), now)
            return None
        self._rest.answered()
        admitted, left = standing(used, quota, rooms)
        if not admitted:
            try:
                self._store.incr(key, WINDOW_SECONDS * 2, amount=-rooms)  # refused: its rooms back
            except self._failure as error:  # the refusal stands: the count said it is over its quota
                self._rest.failed(_cause(error), now)
        reset = max(1, math.ceil((minute + 1) * WINDOW_SECONDS - clock))
        return Window(admitted, quota, left, reset)


def counter_key(caller: Caller, minute: int) -> str:
    """A caller's counter for a clock minute: its name and the minute, never its quota, so that every
    instance moves one count whatever quota it was given (two instances given 50 and 51 admitted 101 a
    minute), and a quota lowered mid-minute applies to what was already used."""
    return f"rooms/{caller.name}/{minute}"


def standing(used: int, quota: int, rooms: int) -> tuple[bool, int]:
    """Where a caller stands once a request moved its count to ``used``: whether the request's ``rooms``
    fit in ``quota`` (exactly the quota does; a request of none, a read, always fits), and how many are
    left, a refused request's rooms not counted.

    >>> standing(600, 600, 1), standing(601, 600, 1), standing(605, 600, 10), standing(700, 600, 0)
    ((True, 0), (False, 0), (False, 5), (True, 0))
    """
    admitted = rooms == 0 or used <= quota
    return admitted, max(0, quota - (used if admitted else used - rooms))


def quota_state(found: Callers, url: str | None) -> tuple[Text, bool]:
    """What the start log (once, in the master) and ``keys check`` say of quotas: which callers have one
    and where they are counted; False when they are not enforced (no Redis), said as a warning."""
    names = sorted(caller.name for caller in found.callers.values() if caller.rooms_per_minute is not None)
    if not names:
        return Text("callers.quotas_none"), True
    listed = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
    if url:
        return Text("callers.quotas_counted", url=safe_url(url), count=len(names), names=listed), True
    return Text("callers.quotas_unenforced", count=len(names), names=listed), False


def _cause(error: Any) -> Exception:
    cause: Exception = getattr(error, "storage_error", error)
    return cause


def partition_key(caller: Caller) -> str:
    """The caller's partition key, a Structured Field Byte Sequence of its name."""
    return ":" + base64.b64encode(caller.name.encode()).decode() + ":"


def rate_limit_fields(caller: Caller, window: Window) -> dict[str, str]:
    """RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-headers-10)."""
    key = partition_key(caller)
    return {
        "RateLimit-Policy": f'"{POLICY}";q={window.quota};w={WINDOW_SECONDS};qu="{POLICY}";pk={key}',
        "RateLimit": f'"{POLICY}";r={window.remaining};t={window.reset_seconds};pk={key}',
    }


def take_rooms(store: QuotaStore, caller: Caller | None, rooms: int) -> None:
    """Count a request's rooms against its caller's quota: 429 over it; the answer carries the fields."""
    if caller is None:
        return
    window = store.take(caller, rooms)
    if window is None:
        return
    g.rate_limit_fields = rate_limit_fields(caller, window)
    if not window.admitted:
        raise QuotaExceeded(caller.name, rooms, window)


def register(app: Flask, store: QuotaStore) -> None:
    app.extensions["maubinh.quotas"] = store

    @app.after_request
    def add_fields(response: Response) -> Response:
        for name, value in (g.get("rate_limit_fields") or {}).items():
            response.headers[name] = value
        return response
