"""Rounds scored once across two `maubinh serve` (gunicorn, gevent) sharing Debian's redis-server: two rooms
raced for one round through both, exactly one scores; then Redis stopped, and the instances fail closed."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from helpers import golden_cases
from redis_server import redis_command, redis_server
from server import post_json as post
from server import start

from service.trust.signing import room_digest

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]


@pytest.fixture(scope="module")
def redis_port() -> Iterator[int]:
    with redis_server() as port:
        yield port


@pytest.fixture(scope="module")
def two_instances(redis_port: int) -> Iterator[list[str]]:
    started = [start({"MAUBINH_ROUNDS_REDIS_URL": f"redis://127.0.0.1:{redis_port}/0"}) for _ in range(2)]
    yield [base for base, _ in started]
    for _, process in started:
        process.terminate()
        process.wait(timeout=20)


def test_two_rooms_raced_through_two_instances_one_round_exactly_one_scores(two_instances: list[str]) -> None:
    outcomes = []
    for n in range(20):
        statuses = [0, 0]
        barrier = threading.Barrier(2)

        def send(k: int, n: int = n, statuses: list[int] = statuses, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            statuses[k] = post(two_instances[k], "/v1/score", {**E1, "round_id": f"race-{n}", "stake": k + 1})[0]

        threads = [threading.Thread(target=send, args=(k,)) for k in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        outcomes.append(sorted(statuses))
    assert all(statuses[0] == 200 and statuses[1] in (409, 422) for statuses in outcomes), outcomes
    first, second = two_instances
    scored = {**E1, "round_id": "t-1"}
    assert post(first, "/v1/score", scored)[0] == 200
    assert post(second, "/v1/score", scored)[0] == 200  # the same room, scored again
    status, _, problem = post(second, "/v1/score", {**scored, "stake": 7})
    assert status == 422 and problem["first_room_digest"] == room_digest(scored)
    status, _, batch = post(first, "/v1/score/batch", {"rooms": [{**scored, "stake": 7}, {**E1, "round_id": "t-2"}]})
    assert status == 200 and [r.get("status", 200) for r in batch["results"]] == [422, 200]


def test_redis_stopped_the_instances_fail_closed_with_retry_after(redis_port: int, two_instances: list[str]) -> None:
    redis_command(redis_port, "SHUTDOWN", "NOSAVE")
    for base in two_instances:
        status, headers, problem = post(base, "/v1/score", {**E1, "round_id": "after"})
        assert status == 503 and int(headers["Retry-After"]) >= 1
        assert problem["type"] == "/problems/service-unavailable"
        assert post(base, "/v1/score", E1)[0] == 200  # no round id: never asks the store
