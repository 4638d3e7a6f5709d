"""The image as an operator runs it (`make image`, podman): read-only, non-root, healthy, scoring as the
command line does, loading a mounted operator ruleset, draining on SIGTERM, surviving a killed worker.

The image must exist (`make image`); without it these tests skip, unless MAUBINH_REQUIRE_IMAGE=1 (CI)
makes its absence a failure. Figures go to artifacts/reliability.json.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from loadgen import Outcome, load, post_json, record
from server import call, free_port

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from rooms import four_player_rooms

ROOT = Path(__file__).resolve().parents[2]
IMAGE = os.environ.get("MAUBINH_IMAGE", "localhost/maubinh:latest")
LIMITS = ["--ulimit", "nofile=20000:20000", "--ulimit", "nproc=32768:32768"]
ROOMS = [post_json("/v1/score", room) for room in four_player_rooms(40, seed=11)]
GRACE_SECONDS = 20  # the image's MAUBINH_GRACEFUL_TIMEOUT default


def _podman(*args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["podman", *args], capture_output=True, text=True, check=check, timeout=timeout)


def _wait_for_the_build() -> None:
    """CI builds the images while the tests before these run (.ci/run): wait for that build to end."""
    built = os.environ.get("MAUBINH_IMAGES_BUILT")
    if not built:
        return
    deadline = time.monotonic() + 900
    while not Path(built).exists() and not Path(built + ".failed").exists():
        if time.monotonic() > deadline:
            pytest.fail("the images' build (.ci/run, in the background) did not end within 15 minutes")
        time.sleep(2)
    if Path(built + ".failed").exists():
        pytest.fail("the images' build failed:\n" + Path(built + ".failed").read_text()[-3000:])


@pytest.fixture(scope="module", autouse=True)
def image() -> None:
    _wait_for_the_build()
    required = os.environ.get("MAUBINH_REQUIRE_IMAGE") == "1"
    if shutil.which("podman") is None or _podman("image", "exists", IMAGE, check=False).returncode != 0:
        if required:
            pytest.fail(f"MAUBINH_REQUIRE_IMAGE=1 but there is no image {IMAGE}: run `make image`")
        pytest.skip(f"no image {IMAGE} (make image builds it with podman)")


class Container:
    """One `podman run -d` of the image, as the README's Deployment section runs it."""

    def __init__(self, *extra: str) -> None:
        self.name = f"maubinh-test-{os.getpid()}-{time.monotonic_ns()}"
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        _podman(
            "run", "--detach", "--name", self.name, *LIMITS, "--read-only", "--tmpfs", "/tmp",
            "--health-interval", "disable", "--publish", f"127.0.0.1:{self.port}:8000", *extra, IMAGE,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if call(self.base, "/readyz")[0] == 200 and len(self.workers()) == 2:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        pytest.fail(f"the container never became ready:\n{self.logs()}")

    def exec(self, *command: str) -> str:
        return _podman("exec", self.name, *command).stdout

    def workers(self) -> list[int]:
        """gunicorn's workers: the processes whose parent is the master (pid 1 in the container)."""
        found = self.exec("sh", "-c", "for s in /proc/[0-9]*/stat; do cat $s 2>/dev/null; echo; done")
        return sorted(
            int(line.split()[0]) for line in found.splitlines() if line and line.rsplit(")", 1)[1].split()[1] == "1"
        )

    def logs(self) -> str:
        return _podman("logs", self.name, check=False).stderr

    def remove(self) -> None:
        _podman("rm", "--force", "--time", "0", self.name, check=False)


@pytest.fixture(scope="module")
def container() -> Iterator[Container]:
    rulesets = ROOT / "examples" / "rulesets"
    running = Container(
        "--volume", f"{rulesets}:/etc/maubinh/rulesets:ro", "--env", "MAUBINH_RULESETS_DIR=/etc/maubinh/rulesets"
    )
    yield running
    running.remove()


def test_runs_as_a_non_root_user_on_a_read_only_root(container: Container) -> None:
    assert container.exec("id", "-u").strip() == "10001"
    uids = container.exec("sh", "-c", "for s in /proc/[0-9]*/status; do grep '^Uid:' $s; done")
    assert uids and all(line.split()[1] == "10001" for line in uids.splitlines())  # master and workers alike
    denied = _podman("exec", container.name, "touch", "/opt/maubinh/x", check=False)
    assert denied.returncode != 0 and "Read-only file system" in denied.stderr
    assert "Control server error" not in container.logs()  # gunicorn writes nothing outside /tmp


def test_the_image_can_trace(container: Container) -> None:
    """The otel extra is in: OTEL_TRACES_EXPORTER=otlp needs no install (README, Traces)."""
    probe = "import opentelemetry.sdk.trace, opentelemetry.exporter.otlp.proto.http.trace_exporter; print('ok')"
    assert container.exec("python3", "-c", probe).strip() == "ok"


def test_ready_and_healthy(container: Container) -> None:
    assert call(container.base, "/readyz")[0] == 200
    assert _podman("healthcheck", "run", container.name, check=False).returncode == 0  # the image's HEALTHCHECK


def test_a_four_player_room_scores_as_the_command_line_does(container: Container, tmp_path: Path) -> None:
    room = four_player_rooms(1, seed=5)[0]
    status, served = call(container.base, "/v1/score", room)
    (tmp_path / "room.json").write_text(json.dumps(room))
    cli = subprocess.run(
        [sys.executable, "-m", "service.cli", "score", str(tmp_path / "room.json")], capture_output=True, check=True
    )
    assert status == 200
    assert served.rstrip(b"\n") == cli.stdout.rstrip(b"\n")
    assert len(json.loads(served)["players"]) == 4


def test_a_read_only_operator_ruleset_loads(container: Container) -> None:
    status, body = call(container.base, "/v1/rulesets/go-module")
    assert status == 200 and json.loads(body)["id"] == "go-module"
    room = {**four_player_rooms(1, seed=6)[0], "ruleset": "go-module"}
    status, body = call(container.base, "/v1/score", room)
    assert status == 200 and json.loads(body)["ruleset"]["id"] == "go-module"


class Loaded:
    """8 keep-alive connections posting rooms back to back, in the background, for at most ``seconds``."""

    def __init__(self, port: int, seconds: float) -> None:
        self.outcomes: list[Outcome] = []
        self.stop = threading.Event()
        self._thread = threading.Thread(
            target=lambda: self.outcomes.extend(load(port, ROOMS, threads=8, seconds=seconds, stop=self.stop))
        )
        self._thread.start()

    def done(self) -> list[Outcome]:
        """Every outcome, once the load has run its time (or was stopped)."""
        self._thread.join()
        return self.outcomes

    def finish(self) -> list[Outcome]:
        self.stop.set()
        return self.done()


def _kinds(outcomes: list[Outcome]) -> Counter[str]:
    return Counter(str(o.status) if o.status else str(o.error) for o in outcomes)


def test_sigterm_under_load_answers_every_accepted_request_and_exits_in_time() -> None:
    """A game backend's pool: 8 keep-alive connections posting rooms back to back. After SIGTERM every
    request on a connection a worker has accepted is answered 200, the last with Connection: close.

    The client then opens a new connection. While the listener is open the kernel completes its
    handshake and queues it; gunicorn serves it or, once its workers close the listener, the kernel
    resets it. A worker never read such a request, so the client can resend it, as after a refusal.
    Or the connection is never made: while podman takes the stopped container's network down, a
    connect meets "no route to host" or times out (seen with another container on the bridge), and
    nothing was sent. Kubernetes' preStop pause sends no new connections by then (deploy/k8s/base)."""
    running = Container()
    loaded = Loaded(running.port, 30)
    try:
        time.sleep(3)
        signalled = time.monotonic()
        _podman("kill", "--signal", "TERM", running.name)
        exit_code = int(_podman("wait", running.name, timeout=GRACE_SECONDS + 10).stdout.strip())
        exited = time.monotonic() - signalled
    finally:
        outcomes = loaded.finish()
        running.remove()
    accepted = [o for o in outcomes if o.sent < signalled or not o.fresh]
    queued = [o for o in outcomes if o.sent >= signalled and o.fresh]
    record(
        "image_sigterm",
        {
            "accepted": dict(_kinds(accepted)),
            "new_connections_after_signal": dict(_kinds(queued)),
            "exit_seconds": round(exited, 3),
            "exit_code": exit_code,
        },
    )
    assert accepted and all(o.status == 200 for o in accepted), _kinds(accepted)
    not_served = {"ConnectionRefusedError", "ConnectionResetError", "RemoteDisconnected"}
    assert all(o.status == 200 or o.error in not_served or not o.connected for o in queued), _kinds(queued)
    assert exit_code == 0 and exited < GRACE_SECONDS


def test_a_worker_killed_under_load_loses_only_its_requests() -> None:
    running = Container()
    loaded = Loaded(running.port, 10)
    try:
        time.sleep(2)
        victim = running.workers()[0]
        running.exec("sh", "-c", f"kill -KILL {victim}")
        killed = time.monotonic()
        replaced_after = None
        while time.monotonic() - killed < 10:
            workers = running.workers()
            if victim not in workers and len(workers) == 2:
                replaced_after = time.monotonic() - killed
                break
            time.sleep(0.05)
        outcomes = loaded.done()
        ready = call(running.base, "/readyz")[0]
    finally:
        loaded.finish()
        running.remove()
    failed = [o for o in outcomes if o.status != 200]
    first_answer = min((o.finished - killed for o in outcomes if o.status == 200 and o.sent > killed), default=None)
    record(
        "image_worker_sigkill",
        {
            "requests": len(outcomes),
            "failed": len(failed),
            "kinds": dict(_kinds(outcomes)),
            "replaced_after_s": replaced_after and round(replaced_after, 3),
            "first_answer_after_kill_s": first_answer and round(first_answer, 4),
        },
    )
    assert len(failed) <= 8  # at most the victim's connections, one request in flight on each
    assert all(o.sent <= killed for o in failed)  # only requests in flight when it died
    assert replaced_after is not None and replaced_after < 5
    assert first_answer is not None and first_answer < 5
    assert ready == 200


SPARK_IMAGE = os.environ.get("MAUBINH_SPARK_IMAGE", "localhost/maubinh-spark:latest")


def test_the_spark_image_runs_an_audit_job(tmp_path: Path) -> None:
    """`make spark-image`: the job of deploy/spark/audit.py inside it, on local[2], gives the command line's tables."""
    if _podman("image", "exists", SPARK_IMAGE, check=False).returncode != 0:
        if os.environ.get("MAUBINH_REQUIRE_IMAGE") == "1":
            pytest.fail(f"MAUBINH_REQUIRE_IMAGE=1 but there is no image {SPARK_IMAGE}: run `make spark-image`")
        pytest.skip(f"no image {SPARK_IMAGE} (make spark-image builds it)")
    import pyarrow.parquet as pq

    rooms = tmp_path / "rooms.jsonl"
    rooms.write_text("".join(json.dumps(room) + "\n" for room in four_player_rooms(200, seed=4)) + "not json\n")
    subprocess.run(
        [sys.executable, "-m", "service.cli", "score", "--jsonl", str(rooms), "--format", "parquet", "-o", str(tmp_path / "cli")],
        check=True, capture_output=True,
    )  # fmt: skip
    tmp_path.chmod(0o777)  # the image's user (spark, 185) writes its tables here
    job = _podman(
        "run", "--rm", *LIMITS, "--volume", f"{tmp_path}:/data", SPARK_IMAGE,
        "spark-submit", "--master", "local[2]", "/opt/maubinh/audit.py", "score", "/data/rooms.jsonl", "-o", "/data/spark",
        timeout=300,
    )  # fmt: skip
    assert job.returncode == 0 and pq.read_table(tmp_path / "spark" / "rooms").num_rows == 201
    for table, keys in (("rooms", ["line"]), ("players", ["line", "player"]), ("ledger", ["line", "seq"])):
        cli = pq.read_table(tmp_path / "cli" / f"{table}.parquet")
        ours = pq.read_table(tmp_path / "spark" / table).select(cli.column_names).cast(cli.schema)
        order = [(key, "ascending") for key in keys]
        assert ours.sort_by(order).equals(cli.sort_by(order)), table
