"""Rounds scored once, decided without Redis: what a claim finds, what each finding answers, which rooms are
recorded, and what a store that does not answer leads to, closed and open. A dict stands in for Redis
(``SET NX GET`` and the settle script's rule); tests/api/test_rounds_once.py runs the real redis-server."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from service.api.config import SettingError, Settings, rounds_state
from service.api.round_store import PENDING, SCORED, Found, Settled, StoreDown, decide, digest_bytes, round_key
from service.api.rounds import Rounds, RoundsUnchecked, refusal, round_of
from service.trust.callers import NAME

A, B = "sha256:" + "aa" * 32, "sha256:" + "bb" * 32


class Records:
    """The records as Redis keeps them, in a dict; ``down`` makes every call fail as an unanswered store."""

    def __init__(self) -> None:
        self.held: dict[str, bytes] = {}
        self.down = False

    def claim(self, rounds: Sequence[tuple[str, bytes]]) -> list[Found]:
        if self.down:
            raise StoreDown(2.5)
        found = []
        for key, digest in rounds:
            before = self.held.get(key)
            self.held.setdefault(key, PENDING + digest)
            found.append(decide(before, digest))
        return found

    def settle(self, rounds: Sequence[Settled]) -> list[Found | None]:
        if self.down:
            raise StoreDown(2.5)
        conflicts = [
            decide(self.held[r.key], r.digest)
            if r.scored and self.held.get(r.key, b"?" + r.digest)[1:] != r.digest
            else None
            for r in rounds
        ]
        for r in rounds:
            held = self.held.get(r.key)
            if not any(conflicts) and r.scored and held in (None, PENDING + r.digest):
                self.held[r.key] = SCORED + r.digest
            elif (not r.scored or (any(conflicts) and r.new)) and held == PENDING + r.digest:
                del self.held[r.key]
        return conflicts


def kept(fail_open: bool = False) -> tuple[Rounds, Records, list[str]]:
    records, unchecked = Records(), list[str]()
    return Rounds(records, fail_open, unchecked.append), records, unchecked  # type: ignore[arg-type]


def room(round_id: object = "r-1", stake: int = 1) -> dict[str, object]:
    return {"round_id": round_id, "stake": stake, "players": []}


def test_a_claim_finds_the_round_free_its_own_room_or_another_rooms_in_flight_or_scored() -> None:
    mine, theirs = digest_bytes(A), digest_bytes(B)
    assert decide(None, mine) == Found("new")
    assert decide(PENDING + mine, mine) == Found("again")  # the same room, its first request still in flight
    assert decide(SCORED + mine, mine) == Found("again")
    assert decide(PENDING + theirs, mine) == Found("in_flight", B)
    assert decide(SCORED + theirs, mine) == Found("scored", B)


def test_a_round_is_the_callers_own_and_its_id_cannot_reach_another_callers() -> None:
    assert round_key("club-alpha", "1") != round_key("club-beta", "1")
    assert not NAME.fullmatch("club-alpha/beta")  # so "club-alpha" + "beta/1" is the only way to that key
    assert round_key("club-a", "x/y") == "maubinh-round/club-a/x/y"


def test_only_a_round_id_the_room_may_state_is_recorded() -> None:
    assert round_of(room("r-1")) == "r-1"
    assert round_of(room("x" * 128)) == "x" * 128
    for refused in ("", "x" * 129, 7, None, ["r-1"]):  # validation refuses these: the room is never scored
        assert round_of(room(refused)) is None
    assert round_of({"stake": 1}) is None and round_of([room()]) is None


def test_another_room_is_refused_409_in_flight_and_422_once_scored_both_naming_the_first() -> None:
    status, problem = refusal(Found("scored", A), "r-1")
    assert status == 422 and problem["type"] == "/problems/unprocessable-room"
    assert [(f["pointer"], f["code"]) for f in problem["errors"]] == [("/round_id", "round_already_scored")]
    assert problem["first_room_digest"] == A
    status, problem = refusal(Found("in_flight", A), "r-1", "/rooms/3/round_id")
    assert status == 409 and problem["type"] == "/problems/round-in-flight"
    assert [(f["pointer"], f["code"]) for f in problem["errors"]] == [("/rooms/3/round_id", "round_in_flight")]
    assert problem["first_room_digest"] == A


def test_the_same_room_scores_again_and_another_is_refused_once_the_first_is_recorded() -> None:
    rounds, records, _ = kept()
    first = rounds.claim([room()], "club")
    assert first.refused == {} and [h.found.outcome for h in first.held] == ["new"]
    assert rounds.claim([room(stake=2)], "club").refused[0][0] == 409  # the first still in flight
    rounds.settle(first, lambda slot: True, lambda slot: "/round_id")
    assert records.held[round_key("club", "r-1")][:1] == SCORED
    again = rounds.claim([room()], "club")
    assert again.refused == {} and [h.found.outcome for h in again.held] == ["again"]
    status, problem = rounds.claim([room(stake=2)], "club").refused[0]
    assert status == 422 and problem["errors"][0]["code"] == "round_already_scored"
    assert rounds.claim([room(stake=2)], "other-club").refused == {}  # another caller's round


def test_a_room_refused_for_its_content_records_nothing_and_only_its_own_claim_is_released() -> None:
    rounds, records, _ = kept()
    first = rounds.claim([room()], "club")
    second = rounds.claim([room()], "club")  # the same room, while the first is in flight
    rounds.settle(second, lambda slot: False, lambda slot: "/round_id")  # refused: it made no claim, releases none
    assert records.held[round_key("club", "r-1")][:1] == PENDING
    rounds.release(first)
    assert records.held == {}
    assert rounds.claim([room(stake=2)], "club").refused == {}  # so another room may have the round


def test_a_batch_claims_each_room_and_refuses_a_second_room_of_one_round_in_its_slot() -> None:
    rounds, records, _ = kept()
    claim = rounds.claim([room("a"), room("b"), room("a", stake=2), room("a"), {"players": []}], "club")
    assert sorted(claim.refused) == [2] and claim.refused[2][0] == 409
    assert [(h.slot, h.found.outcome) for h in claim.held] == [(0, "new"), (1, "new"), (3, "again")]
    rounds.settle(claim, lambda slot: slot != 1, lambda slot: f"/rooms/{slot}/round_id")  # room 1 refused
    assert sorted(records.held) == [round_key("club", "a")]


def test_a_round_taken_while_its_claim_had_lapsed_refuses_the_answer_and_records_nothing() -> None:
    rounds, records, _ = kept()
    claim = rounds.claim([room("a"), room("b")], "club")
    records.held[round_key("club", "b")] = PENDING + digest_bytes(B)  # b's claim lapsed, another room took it
    with pytest.raises(Exception) as refused:
        rounds.settle(claim, lambda slot: True, lambda slot: f"/rooms/{slot}/round_id")
    assert refused.value.status == 409  # type: ignore[attr-defined]
    assert refused.value.problem["errors"][0]["pointer"] == "/rooms/1/round_id"  # type: ignore[attr-defined]
    assert round_key("club", "a") not in records.held  # nothing recorded, a's new claim released


def test_a_store_that_does_not_answer_refuses_503_closed_and_scores_unchecked_open_counted_both_ways() -> None:
    closed, records, unchecked = kept(fail_open=False)
    records.down = True
    with pytest.raises(RoundsUnchecked) as refused:
        closed.claim([room()], "club")
    assert refused.value.code == 503 and refused.value.retry_after == 3
    assert closed.claim([{"players": []}], "club").held == []  # a room without a round never asks the store
    assert unchecked == ["refused"]
    opened, records, unchecked = kept(fail_open=True)
    records.down = True
    claim = opened.claim([room()], "club")
    assert claim.held == [] and claim.refused == {}
    opened.settle(claim, lambda slot: True, lambda slot: "/round_id")
    assert unchecked == ["scored"]


def test_the_start_log_says_whether_rounds_are_scored_once_without_the_password() -> None:
    assert "rounds are not recorded" in rounds_state(Settings())
    said = rounds_state(Settings.from_env({"MAUBINH_ROUNDS_REDIS_URL": "redis://:secret@redis:6379/1"}))
    assert "secret" not in said and "redis://…@redis:6379/1 for 7 days" in said and "failing closed" in said
    with pytest.raises(SettingError):
        Settings.from_env({"MAUBINH_ROUNDS_UNREACHABLE": "ajar"})
    assert Settings.from_env({"MAUBINH_ROUNDS_UNREACHABLE": " Open"}).rounds_unreachable == "open"
