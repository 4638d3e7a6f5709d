"""Redis as the service's stores use it (quotas, rounds scored once): one client a URL in a worker,
with short timeouts and no retries, and a rest after each failure.

A store that does not answer must cost a request little: a command waits at most ``TIMEOUT_SECONDS``
(redis-py would otherwise retry three times with backoff, seconds a request), and after a failure the
store is left alone for ``BACKOFF_SECONDS``, doubling up to ``MOST_BACKOFF_SECONDS``, so that no request
waits on it meanwhile. Two stores given the same URL (and password) share one client, so one connection pool.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from redis import Redis

TIMEOUT_SECONDS: Final = 0.25
"""How long a request waits on Redis for one command."""
BACKOFF_SECONDS: Final = 1.0
MOST_BACKOFF_SECONDS: Final = 30.0

_clients: dict[tuple[str, str | None], Redis] = {}


def client(url: str, password: str | None = None) -> Redis:
    """This worker's client for ``url`` (made on first use; redis-py's pool starts afresh after a fork).
    With ``password``, it authenticates as the ``default`` user (``AUTH default …``), which a Redis with no
    password yet accepts too: pods given the password may roll out before the Redis asks for it."""
    found = _clients.get((url, password))
    if found is None:  # imported only here: redis imports OpenTelemetry, which a service without Redis never loads
        from redis import Redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        found = _clients[(url, password)] = Redis.from_url(
            url,
            username="default" if password is not None else None,
            password=password,
            socket_timeout=TIMEOUT_SECONDS,
            socket_connect_timeout=TIMEOUT_SECONDS,
            retry=Retry(NoBackoff(), 0),
        )
    return found


def safe_url(url: str | None) -> str:
    """The URL without its password, for the log: neither ``user:password@`` nor the query (which may say
    ``?password=``)."""
    if not url:
        return ""
    url, asked, _ = url.partition("?")
    if "@" in url:
        url = f"{url.partition('://')[0]}://…@{url.rsplit('@', 1)[1]}"
    return url + ("?…" if asked else "")


_PIPELINE_COMMAND: Final = re.compile(r"Command # \d+ \(.*\) of pipeline caused error: ", re.S)


def _said(error: BaseException) -> str:
    """What went wrong, without the command a pipeline's error quotes (a caller's round id, a room's digest
    as raw bytes): "OOM command not allowed when used memory > 'maxmemory'" is the part to read."""
    return _PIPELINE_COMMAND.sub("", str(error), count=1)


class Rest:
    """A store's failures: each counted (``on_error``), the first logged (``failing``, with the error
    and the URL) until the store answers again (``answering``, logged too), and the rest it takes."""

    def __init__(
        self, url: str | None, log: logging.Logger, failing: str, answering: str, on_error: Callable[[], None]
    ) -> None:
        self.url, self._log, self._failing, self._answering, self._on_error = url, log, failing, answering, on_error
        self.resting_until = 0.0
        self._backoff = BACKOFF_SECONDS
        self.failing = False

    def resting(self, now: float | None = None) -> float:
        """Seconds this store is still left alone (0: ask it)."""
        return max(0.0, self.resting_until - (time.monotonic() if now is None else now))

    def failed(self, error: BaseException, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        self._on_error()
        if not self.failing:
            self._log.error("%s: %s (%s)", self._failing, _said(error), safe_url(self.url))
        self.failing = True
        self.resting_until = now + self._backoff
        self._backoff = min(self._backoff * 2, MOST_BACKOFF_SECONDS)

    def answered(self) -> None:
        if self.failing:
            self._log.warning("%s (%s)", self._answering, safe_url(self.url))
            self.failing, self._backoff = False, BACKOFF_SECONDS
