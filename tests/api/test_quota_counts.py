"""Quotas' counting, in process and fast: the arithmetic at its edge, the counter's key, and a give-back
that fails. The counts are a dict standing in for limits' Redis storage (the same incr and get), so
that a mutation of the arithmetic is caught without redis-server (tests/system/test_quotas.py runs the
real one across two instances)."""

from __future__ import annotations

from pathlib import Path

import pytest
from limits.errors import StorageError

from service.api import quotas
from service.api.quotas import QuotaStore, Window, standing
from service.cli import main
from service.texts import Text
from service.trust.callers import ROUTES, Caller, Callers

MINUTE = 29_000_000 * 60 + 17.0
"""A clock time well inside a minute: every request of a test falls in one window."""


class Counts:
    """The counters QuotaStore moves, as limits' storage does (``incr`` returns the new count); a
    give-back (a negative amount) fails while ``give_back_fails``."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.give_back_fails = False

    def incr(self, key: str, expiry: float, amount: int = 1) -> int:
        if amount < 0 and self.give_back_fails:
            raise StorageError(ConnectionError("Redis went away"))
        self.counts[key] = self.counts.get(key, 0) + amount
        return self.counts[key]

    def get(self, key: str) -> int:
        return self.counts.get(key, 0)


def over(counts: Counts, errors: list[int] | None = None) -> QuotaStore:
    """An instance's quota store over ``counts`` (the store's Redis storage and its failure, replaced)."""
    store = QuotaStore(None, (lambda: errors.append(1)) if errors is not None else lambda: None)
    store._store, store._failure = counts, StorageError  # type: ignore[assignment]
    return store


def club(quota: int) -> Caller:
    return Caller("club-alpha", ROUTES, (), quota)


@pytest.fixture(autouse=True)
def one_minute(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quotas.time, "time", lambda: MINUTE)


def taken(store: QuotaStore, caller: Caller, rooms: int = 1) -> Window:
    window = store.take(caller, rooms)
    assert window is not None
    return window


def test_the_arithmetic_at_its_edge_a_caller_gets_exactly_its_quota() -> None:
    """Before: ``used <= quota`` turned to ``used < quota`` was caught only by a slow test with redis-server."""
    assert standing(used=50, quota=50, rooms=1) == (True, 0)  # the last room of the quota
    assert standing(used=51, quota=50, rooms=1) == (False, 0)
    assert standing(used=50, quota=50, rooms=50) == (True, 0)  # a batch of the whole quota
    assert standing(used=54, quota=50, rooms=5) == (False, 1)  # 49 used before it: 1 left
    assert standing(used=70, quota=50, rooms=0) == (True, 0)  # a read is never refused
    store, alpha = over(Counts()), club(3)
    assert [taken(store, alpha).admitted for _ in range(4)] == [True, True, True, False]
    assert taken(store, alpha, 0).remaining == 0


def test_two_instances_given_different_quotas_count_one_caller_once() -> None:
    """Before: the counter's key held the quota, so instances given 50 and 51 kept two counts (101 a minute)."""
    counts = Counts()
    first, second = over(counts), over(counts)
    admitted = sum(
        taken(store, club(quota)).admitted for _ in range(60) for store, quota in ((first, 50), (second, 51))
    )
    assert admitted == 51


def test_a_quota_lowered_mid_minute_applies_to_what_was_already_used() -> None:
    """Before: a new quota was a new counter, starting again from 0."""
    store = over(Counts())
    assert all(taken(store, club(50)).admitted for _ in range(40))
    lowered = taken(store, club(30))
    assert not lowered.admitted and lowered.remaining == 0
    assert taken(store, club(45), 5).admitted and not taken(store, club(45)).admitted


def test_a_request_over_its_quota_is_refused_even_when_its_give_back_fails() -> None:
    """Before: the give-back's Redis error was taken as "no quota store" and the request let through."""
    counts, errors = Counts(), []
    store, alpha = over(counts, errors), club(2)
    assert taken(store, alpha).admitted and taken(store, alpha).admitted
    counts.give_back_fails = True
    refused = taken(store, alpha, 5)
    assert not refused.admitted and refused.remaining == 0
    assert errors == [1]  # counted (maubinh_quota_store_errors_total) and logged


def test_what_the_start_log_and_keys_check_say_of_quotas(tmp_path: Path) -> None:
    from service.api.quotas import quota_state
    from service.trust.callers import load

    path = tmp_path / "c.toml"
    path.write_text(QUOTAS)
    found = load(str(path))
    said, enforced = quota_state(found, None)
    assert not enforced
    assert said == "quotas are NOT enforced, MAUBINH_QUOTA_REDIS_URL is not set; callers with rooms_per_minute: 1 (b)"
    assert said.render("vi").startswith("hạn mức KHÔNG được áp dụng vì chưa đặt MAUBINH_QUOTA_REDIS_URL")
    said, enforced = quota_state(found, "redis://:secret@redis.example:6379/0")
    assert enforced and said == (
        "quotas are counted in Redis at redis://…@redis.example:6379/0 (MAUBINH_QUOTA_REDIS_URL); "
        "callers with rooms_per_minute: 1 (b)"
    )
    assert quota_state(Callers({}, {}), None) == (Text("callers.quotas_none"), True)


def test_keys_check_says_that_quotas_without_redis_are_not_enforced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.toml"
    path.write_text(QUOTAS)
    monkeypatch.delenv("MAUBINH_QUOTA_REDIS_URL", raising=False)
    assert main(["keys", "check", str(path), "--lang", "vi"]) == 0  # a warning: the file itself is good
    said = capsys.readouterr()
    assert (
        said.out.splitlines()[1]
        == "b: ok keys=1 routes=arrange,batch,evaluate,rulesets,score,verify rulesets=built-ins rooms_per_minute=600"
    )
    assert said.err.strip() == (
        "maubinh keys check: hạn mức KHÔNG được áp dụng vì chưa đặt MAUBINH_QUOTA_REDIS_URL; "
        "số bên gọi có rooms_per_minute: 1 (b)"
    )
    monkeypatch.setenv("MAUBINH_QUOTA_REDIS_URL", "redis://127.0.0.1:6379/0")
    assert main(["keys", "check", str(path)]) == 0 and capsys.readouterr().err == ""


QUOTAS = """
[callers.a]
keys = [{ sha256 = "%s" }]

[callers.b]
keys = [{ sha256 = "%s" }]
rooms_per_minute = 600
""".replace("%s", "1" * 64, 1).replace("%s", "2" * 64, 1)
