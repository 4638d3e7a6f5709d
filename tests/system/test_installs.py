"""The wheel as users install it: into a fresh venv, with no extra and with ``[audit]``, each used the
way its README section says (``[spark]`` is installed the same way into the Spark image, whose job
tests/system/test_image.py runs); and the audit job on a standalone Spark cluster, a master and a
worker started by PySpark's own launch script, whose executors import maubinh only from the
``--py-files`` wheel.

The wheels come from ``make wheels`` (build/wheelhouse): the package's and every dependency's, so
each venv installs with ``--no-index`` in seconds, and a dependency missing from pyproject.toml is
missing here too.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from server import call, free_port

from service.bulk.tables import VERIFY_TABLES

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from rooms import four_player_rooms

ROOT = Path(__file__).resolve().parents[2]
WHEELHOUSE = ROOT / "build" / "wheelhouse"
MAUBINH = str(Path(sys.executable).with_name("maubinh"))
JAVA = shutil.which("java")
KEYS = {"rooms": ["line"], "players": ["line", "player"], "ledger": ["line", "seq"], "problems": ["line", "pointer"]}


@pytest.fixture(scope="module")
def wheelhouse() -> Path:
    built = subprocess.run(["make", "-C", str(ROOT), "wheels"], capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stdout + built.stderr
    return WHEELHOUSE


def fresh_venv(where: Path, requirement: str) -> Path:
    """A new venv holding ``requirement`` from the wheelhouse alone; its bin directory."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    pip = [
        str(where / "bin" / "python"),
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-index",
        "--find-links",
        str(WHEELHOUSE),
    ]
    subprocess.run([*pip, requirement], check=True)
    return where / "bin"


@pytest.fixture(scope="module")
def rooms(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Rooms of 2–4 players across rulesets, with a line no room can be read from."""
    lines = [json.dumps(room) for room in four_player_rooms(300, seed=21, rulesets=("maubinh-2020", "maubinh-bao"))]
    for k in range(0, 300, 3):
        room = json.loads(lines[k])
        lines[k] = json.dumps({**room, "players": room["players"][: 2 + k % 2]})
    lines.insert(5, "not json")
    path = tmp_path_factory.mktemp("rooms") / "rooms.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def cli_tables(rooms: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout's own command line: the tables every install must reproduce."""
    out = tmp_path_factory.mktemp("cli")
    subprocess.run([MAUBINH, "score", "--jsonl", str(rooms), "--format", "parquet", "-o", str(out)], check=True)
    return out


def assert_same_tables(ours: Path, cli: Path, spark: bool = False) -> None:
    for table, keys in KEYS.items():
        expected = pq.read_table(cli / f"{table}.parquet")
        found = pq.read_table(ours / (table if spark else f"{table}.parquet")).select(expected.column_names)
        order = [(key, "ascending") for key in keys]
        assert found.cast(expected.schema).sort_by(order).equals(expected.sort_by(order)), table
    assert set(KEYS) | {"differences"} == set(VERIFY_TABLES)


def _one_line_naming(done: subprocess.CompletedProcess[str], extra: str) -> None:
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert f"pip install 'maubinh[{extra}]'" in done.stderr


def test_a_plain_install_serves_a_room_and_names_the_extras_it_lacks(
    wheelhouse: Path, rooms: Path, tmp_path: Path
) -> None:
    bin_dir = fresh_venv(tmp_path / "venv", "maubinh")
    room = tmp_path / "room.json"
    room.write_text(json.dumps(four_player_rooms(1, seed=8)[0]))
    port = free_port()
    env = {**os.environ, "MAUBINH_WORKERS": "2", "MAUBINH_PORT": str(port)}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    server = subprocess.Popen([str(bin_dir / "maubinh"), "serve"], env=env, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and server.poll() is None:
            try:
                if call(base, "/readyz")[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)
        assert server.poll() is None, server.stderr.read().decode() if server.stderr else ""
        status, served = call(base, "/v1/score", json.loads(room.read_text()))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(30)
    offline = subprocess.run([str(bin_dir / "maubinh"), "score", str(room)], capture_output=True, check=True)
    assert status == 200 and len(json.loads(served)["players"]) == 4
    assert served.rstrip(b"\n") == offline.stdout.rstrip(b"\n")
    maubinh = str(bin_dir / "maubinh")
    parquet = [maubinh, "score", "--jsonl", str(rooms), "--format", "parquet", "-o", str(tmp_path / "t")]
    _one_line_naming(subprocess.run(parquet, capture_output=True, text=True, check=False), "audit")
    report = [maubinh, "verify", "--jsonl", str(rooms), "--report", str(tmp_path / "r.html")]
    _one_line_naming(subprocess.run(report, capture_output=True, text=True, check=False), "audit")
    job = [str(bin_dir / "python"), str(ROOT / "deploy" / "spark" / "audit.py"), "score", str(rooms), "-o", "x"]
    _one_line_naming(subprocess.run(job, capture_output=True, text=True, check=False), "spark")
    traced = {**env, "OTEL_TRACES_EXPORTER": "otlp", "MAUBINH_PORT": str(free_port())}
    serving = [maubinh, "serve"]
    _one_line_naming(
        subprocess.run(serving, capture_output=True, text=True, env=traced, timeout=60, check=False), "otel"
    )


def test_the_audit_extra_writes_the_tables_and_the_report(
    wheelhouse: Path, rooms: Path, cli_tables: Path, tmp_path: Path
) -> None:
    maubinh = str(fresh_venv(tmp_path / "venv", "maubinh[audit]") / "maubinh")
    subprocess.run(
        [maubinh, "score", "--jsonl", str(rooms), "--format", "parquet", "-o", str(tmp_path / "t")], check=True
    )
    assert_same_tables(tmp_path / "t", cli_tables)
    claims = tmp_path / "claims.jsonl"
    claims.write_text("".join(json.dumps(claim) + "\n" for claim in _claims(20)))
    report = tmp_path / "report.html"
    verified = subprocess.run(
        [maubinh, "verify", "--jsonl", str(claims), "--report", str(report)], capture_output=True, check=False
    )
    assert verified.returncode == 1 and b"Traceback" not in verified.stderr  # half the claims disagree
    assert (
        report.read_text().startswith("<!DOCTYPE html>") and report.read_text().count("<svg") == 2
    )  # matplotlib's charts


def _claims(count: int) -> list[dict[str, object]]:
    """Rooms with the settlement the checkout computes, every other one with 1000 moved between two players."""
    made = []
    for k, room in enumerate(four_player_rooms(count, seed=9)):
        answer = subprocess.run(
            [MAUBINH, "score", "-"], input=json.dumps(room).encode(), capture_output=True, check=True
        )
        amounts = {p["id"]: p["amount"] for p in json.loads(answer.stdout)["players"]}
        if k % 2:
            amounts["p0"], amounts["p1"] = amounts["p0"] - 1000, amounts["p1"] + 1000
        made.append({**room, "claimed": {"amounts": amounts}})
    return made


@pytest.fixture(scope="module")
def spark_venv() -> Path:
    """The checkout's venv, which has the spark extra (the spark image installs the extra from the
    wheelhouse, and tests/system/test_image.py runs a job in it)."""
    if JAVA is None:
        pytest.fail("Spark needs Java 17 (.ci/run installs Debian's openjdk-17-jre-headless)")
    return Path(sys.executable).parent


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def standalone(spark_venv: Path, tmp_path: Path) -> Iterator[str]:
    """A master and a worker, each its own JVM on loopback, started with PySpark's bin/spark-class."""
    spark_class = str(spark_venv / "spark-class")
    master_port, worker_port = free_port(), free_port()
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PATH": f"{spark_venv}:{os.environ['PATH']}"}  # as activated
    master = subprocess.Popen(
        [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(master_port),
         "--webui-port", str(free_port())],
        env=env, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "master.log", "wb"),  # noqa: SIM115
    )  # fmt: skip
    url = f"spark://127.0.0.1:{master_port}"
    worker = subprocess.Popen(
        [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--port", str(worker_port),
         "--webui-port", str(free_port()), "--cores", "2", "--memory", "2g", "--work-dir", str(tmp_path / "work")],
        env=env, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "worker.log", "wb"),  # noqa: SIM115
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (_listening(master_port) and "Successfully registered" in (tmp_path / "worker.log").read_text()):
            assert time.monotonic() < deadline, (tmp_path / "master.log").read_text()[-2000:]
            assert master.poll() is None and worker.poll() is None
            time.sleep(0.25)
        yield url
    finally:
        for process in (worker, master):
            process.terminate()
            process.wait(30)


def test_standalone_cluster_runs_the_audit_from_the_py_files_wheel(
    standalone: str, spark_venv: Path, rooms: Path, cli_tables: Path, tmp_path: Path
) -> None:
    """The README's cluster line: the executors' Python has the dependencies but not maubinh, so the
    pure wheel given to --py-files is what they import."""
    # The executors' venv sees the checkout venv's packages through a .pth line, and not maubinh: its
    # editable install is a .pth of that folder, which Python reads only in a site folder of its own.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "executors")], check=True)
    executors = tmp_path / "executors" / "bin"
    (site_packages,) = (tmp_path / "executors" / "lib").glob("python3*/site-packages")
    (site_packages / "checkout.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    lacking = subprocess.run(
        [str(executors / "python"), "-c", "import service"], capture_output=True, check=False, cwd=tmp_path
    )
    assert lacking.returncode == 1 and b"No module named 'service'" in lacking.stderr
    env = {**os.environ, "MAUBINH_PURE_PYTHON": "1"}
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp_path / "dist"), str(ROOT)],
        env=env,
        check=True,
    )
    (built,) = (tmp_path / "dist").glob("maubinh-*-py3-none-any.whl")
    wheel = shutil.copy(
        built, tmp_path / "dist" / "maubinh.zip"
    )  # Spark puts .zip, .egg and .jar on the path, not .whl
    job = [
        str(spark_venv / "spark-submit"), "--master", standalone, "--py-files", str(wheel),
        "--conf", f"spark.pyspark.python={executors / 'python'}",
        "--conf", f"spark.pyspark.driver.python={spark_venv / 'python'}",
        "--conf", "spark.sql.files.maxPartitionBytes=65536",  # several tasks
        str(ROOT / "deploy" / "spark" / "audit.py"), "score", str(rooms), "-o", str(tmp_path / "s"),
    ]  # fmt: skip
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PATH": f"{spark_venv}:{os.environ['PATH']}"}
    done = subprocess.run(job, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert_same_tables(tmp_path / "s", cli_tables, spark=True)
    assert list((tmp_path / "work").glob("app-*/*/stderr"))  # the worker's executors did the work
