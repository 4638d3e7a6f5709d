"""The transparency log as its own process, end to end: a signing `maubinh serve` posts every ruling to
`maubinh log serve`; receipts are then found in the log (from its folder and its URL), carry tlog-proofs
checked with no network, the monitor finds a round scored twice and a key it was not given, `log check`
holds a later checkpoint to an earlier one; the log killed with SIGKILL under load loses no entry it
acknowledged; the same with the PostgreSQL store; and an independent verifier in Node agrees."""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from helpers import golden_cases
from server import free_port, start
from tlog_server import MAUBINH, new_key, postgres_server, start_log, vkey, wait_integrated

from service.transparency.note import Verifier
from service.transparency.reading import latest, reader
from service.transparency.tiles import TiledTree, bundle, check_tree
from service.transparency.witness import CosignerKey

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
NODE_VERIFIER = ROOT / "tests" / "system" / "interop" / "tlog" / "verify.mjs"
E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]


def receipt_of(base: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    sent = json.dumps(body)
    request = urllib.request.Request(base + path, data=sent.encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            status, headers, text = answer.status, answer.headers, answer.read().decode()
    except urllib.error.HTTPError as error:
        status, headers, text = error.code, error.headers, error.read().decode()
    kept = {
        k.lower(): v
        for k, v in headers.items()
        if k.lower() in ("content-type", "content-digest", "signature-input", "signature")
    }
    return {"receipt": 1, "request": {"method": "POST", "path": path, "body": sent},
            "response": {"status": status, "headers": kept, "body": text}}  # fmt: skip


def maubinh(*words: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MAUBINH, *words], capture_output=True, text=True, check=False, input=stdin, timeout=120)


def test_signed_rulings_are_logged_found_proven_and_monitored(tmp_path: Path) -> None:
    log_key, signing, add_key = new_key(tmp_path), new_key(tmp_path, "signing.pem"), new_add_key(tmp_path)
    verifier = vkey(log_key)
    add_port = free_port()
    log_base, log = start_log(
        log_key, ["--dir", str(tmp_path / "log")], add_key=add_key, add_port=add_port
    )  # as deployed
    base, service = start(
        {
            "MAUBINH_SIGNING_KEY_FILE": str(signing),
            "MAUBINH_LOG_URL": f"http://127.0.0.1:{add_port}",  # the add port; reads on log_base
            "MAUBINH_LOG_ADD_KEY_FILE": str(add_key),
        }
    )
    try:
        keys = tmp_path / "keys.json"
        with urllib.request.urlopen(base + "/.well-known/jwks.json") as answer:
            keys.write_bytes(answer.read())
        (tmp_path / "checkpoint-0").write_bytes(urllib.request.urlopen(log_base + "/checkpoint").read())
        (tmp_path / "none.json").write_text('{"keys": []}')
        receipts = [receipt_of(base, "/v1/score", {**E1, "round_id": f"r-{k}"}) for k in range(3)]
        receipts.append(
            receipt_of(base, "/v1/score/batch", {"rooms": [{**E1, "round_id": "b-1"}, {**E1, "round_id": "b-2"}]})
        )
        rerolled = {**E1, "round_id": "r-0", "stake": 2}  # round r-0 again, another room: the log keeps both
        receipts.append(receipt_of(base, "/v1/score", rerolled))
        wait_integrated(log_base, 6)
        (tmp_path / "one.json").write_text(json.dumps(receipts[0]))
        month = tmp_path / "month.jsonl"
        month.write_text("".join(json.dumps(r) + "\n" for r in receipts))

        found = maubinh(
            "receipts",
            "verify",
            str(tmp_path / "one.json"),
            "--keys",
            str(keys),
            "--log",
            str(tmp_path / "log"),
            "--log-key",
            verifier,
        )
        assert found.returncode == 0, found.stderr
        assert re.search(r"in the log \(entries [0-5] of 6\)", found.stdout), found.stdout
        bulk = maubinh(
            "receipts",
            "verify",
            str(month),
            "--keys",
            str(keys),
            "--log",
            log_base,
            "--log-key",
            verifier,
            "--format",
            "jsonl",
            "--jobs",
            "1",
        )
        verdicts = [json.loads(line) for line in bulk.stdout.splitlines()]
        assert [v["code"] for v in verdicts] == ["round_scored_twice", None, None, None, "round_scored_twice"], (
            bulk.stderr
        )
        assert all("in the log" in v["message"] for v in verdicts if v["code"] is None)

        proven = maubinh("log", "proof", str(tmp_path / "one.json"), "--log", log_base, "--vkey", verifier)
        assert proven.returncode == 0, proven.stderr
        carried = json.loads(proven.stdout)
        assert re.match(r"c2sp.org/tlog-proof@v1\nindex [0-5]\n", carried["log"]["proofs"][0])
        (tmp_path / "proven.json").write_text(proven.stdout)
        offline = maubinh(
            "receipts", "verify", str(tmp_path / "proven.json"), "--keys", str(keys), "--log-key", verifier
        )
        assert offline.returncode == 0 and "by the proofs it carries" in offline.stdout, offline.stderr
        at = int(re.findall(r"index ([0-5])", carried["log"]["proofs"][0])[0])
        carried["log"]["proofs"][0] = carried["log"]["proofs"][0].replace(f"index {at}", f"index {(at + 1) % 6}")
        (tmp_path / "forged.json").write_text(json.dumps(carried))
        forged = maubinh(
            "receipts", "verify", str(tmp_path / "forged.json"), "--keys", str(keys), "--log-key", verifier
        )
        assert forged.returncode == 1 and "proof" in forged.stderr

        monitored = maubinh("log", "monitor", "--log", log_base, "--vkey", verifier, "--keys", str(keys))
        report = json.loads(monitored.stdout)
        assert monitored.returncode == 1 and report["entries"] == 6
        assert list(report["rounds_scored_twice"]) == ["r-0"] and report["unknown_keys"] == {}
        stranger = maubinh(
            "log", "monitor", "--log", log_base, "--vkey", verifier, "--keys", str(tmp_path / "none.json")
        )
        assert stranger.returncode == 1

        (tmp_path / "checkpoint-1").write_bytes(urllib.request.urlopen(log_base + "/checkpoint").read())
        checked = maubinh(
            "log",
            "check",
            str(tmp_path / "checkpoint-0"),
            str(tmp_path / "checkpoint-1"),
            "--log",
            log_base,
            "--vkey",
            verifier,
        )
        assert checked.returncode == 0, checked.stderr
        backwards = maubinh(
            "log",
            "check",
            str(tmp_path / "checkpoint-1"),
            str(tmp_path / "checkpoint-0"),
            "--log",
            log_base,
            "--vkey",
            verifier,
        )
        assert backwards.returncode == 1 and "fewer" in backwards.stderr
        if shutil.which("node"):  # make test needs node (README); a bare pytest without it skips this part
            node_checks(tmp_path, verifier, receipts[0], carried_text=proven.stdout)
    finally:
        for process in (service, log):
            process.send_signal(signal.SIGTERM)
            process.wait(15)


def node_checks(folder: Path, verifier: str, receipt: dict[str, Any], carried_text: str) -> None:
    """The independent verifier (tests/system/interop/tlog/verify.mjs) on the log the server made."""
    from service.trust.ruling_log import receipt_statements

    (entry,), _ = receipt_statements(receipt, json.loads(receipt["request"]["body"]))
    (folder / "entry.bin").write_bytes(entry)
    proof = json.loads(carried_text)["log"]["proofs"][0]
    (folder / "proof.txt").write_text(proof)
    at = int(proof.split("\n")[1].removeprefix("index "))

    def node(*words: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["node", str(NODE_VERIFIER), *words], capture_output=True, text=True, check=False)

    log = str(folder / "log")
    assert node("checkpoint", "--checkpoint", str(folder / "log" / "checkpoint"), "--vkey", verifier).returncode == 0
    assert node("tree", "--log", log, "--vkey", verifier).returncode == 0
    assert (
        node(
            "inclusion", "--log", log, "--vkey", verifier, "--index", str(at), "--entry", str(folder / "entry.bin")
        ).returncode
        == 0
    )
    assert node("consistency", "--log", log, "--vkey", verifier, "--old", str(folder / "checkpoint-0")).returncode == 0
    assert (
        node(
            "proof", "--vkey", verifier, "--proof", str(folder / "proof.txt"), "--entry", str(folder / "entry.bin")
        ).returncode
        == 0
    )
    assert (
        node(
            "inclusion",
            "--log",
            log,
            "--vkey",
            verifier,
            "--index",
            str((at + 1) % 6),
            "--entry",
            str(folder / "entry.bin"),
        ).returncode
        == 1
    )


def test_the_node_verifier_agrees(tmp_path: Path) -> None:
    if not shutil.which("node"):
        pytest.skip("node is needed (make test needs it; README)")
    log_key = new_key(tmp_path)
    verifier = vkey(log_key)
    base, log = start_log(log_key, ["--dir", str(tmp_path / "log")])
    try:
        post(base, [f"entry {k}".encode() for k in range(300)])
        wait_integrated(base, 300)
        tile = tmp_path / "log" / "tile" / "0" / "000"
        assert subprocess.run(["node", str(NODE_VERIFIER), "tree", "--log", str(tmp_path / "log"), "--vkey", verifier],
                              capture_output=True, check=False).returncode == 0  # fmt: skip
        tile.write_bytes(bytes([tile.read_bytes()[0] ^ 1]) + tile.read_bytes()[1:])
        assert subprocess.run(["node", str(NODE_VERIFIER), "tree", "--log", str(tmp_path / "log"), "--vkey", verifier],
                              capture_output=True, check=False).returncode == 1  # fmt: skip
    finally:
        log.send_signal(signal.SIGTERM)
        log.wait(15)


def new_add_key(folder: Path) -> Path:
    key = folder / "add.key"
    key.write_text(
        subprocess.run(["openssl", "rand", "-base64", "32"], capture_output=True, text=True, check=True).stdout
    )
    return key


def test_a_log_with_an_add_key_takes_entries_only_from_who_carries_it(tmp_path: Path) -> None:
    add_key = new_add_key(tmp_path)
    base, log = start_log(new_key(tmp_path), ["--dir", str(tmp_path / "log")], add_key=add_key)
    try:
        for offered in (None, "Bearer " + "A" * 44, "Basic " + add_key.read_text().strip()):
            headers = {} if offered is None else {"Authorization": offered}
            request = urllib.request.Request(base + "/add", data=bundle([b"noise"]), headers=headers, method="POST")
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=10)
            assert refused.value.code == 401
            assert refused.value.headers["WWW-Authenticate"].startswith("Bearer")
            assert "MAUBINH_LOG_ADD_KEY_FILE" in json.loads(refused.value.read())["error"]
        assert post(base, [b"one", b"two"], add_key.read_text().strip()) == (0, 2)  # the file's line break dropped
        wait_integrated(base, 2)
        with urllib.request.urlopen(base + "/checkpoint", timeout=10) as answer:  # reading stays open
            assert answer.read().splitlines()[1] == b"2"
    finally:
        log.terminate()
        log.wait(10)
    (tmp_path / "short.key").write_text("abc\n")
    for unusable, why in ((tmp_path / "short.key", "fewer than 16"), (tmp_path / "absent.key", "cannot read")):
        env = {**os.environ, "MAUBINH_LOG_KEY_FILE": str(new_key(tmp_path)), "MAUBINH_LOG_ADD_KEY_FILE": str(unusable)}
        refused_start = subprocess.run(
            [MAUBINH, "log", "serve", "--dir", str(tmp_path / "log2"), "--port", str(free_port())],
            env=env, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert refused_start.returncode == 2
        assert "MAUBINH_LOG_ADD_KEY_FILE" in refused_start.stderr and why in refused_start.stderr


def post(base: str, entries: list[bytes], add_key: str | None = None) -> tuple[int, int]:
    headers = {} if add_key is None else {"Authorization": f"Bearer {add_key}"}
    request = urllib.request.Request(base + "/add", data=bundle(entries), headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=30) as answer:
        said = json.loads(answer.read())
    return said["first"], said["count"]


def kill_under_load(store: list[str], key: Path) -> None:
    """Writers post batches until the log is killed with SIGKILL; restarted on the same store, every
    entry it acknowledged is in the tree, at the index it was given, with its bytes."""
    base, log = start_log(key, store)
    acknowledged: dict[int, bytes] = {}
    lock, stop = threading.Lock(), threading.Event()

    def writer(name: int) -> None:
        batch = 0
        while not stop.is_set():
            entries = [f'{{"writer":{name},"batch":{batch},"k":{k}}}'.encode() for k in range(50)]
            try:
                first, count = post(base, entries)
            except (OSError, http.client.HTTPException):  # killed mid-answer: IncompleteRead
                return
            with lock:
                acknowledged.update(zip(range(first, first + count), entries, strict=True))
            batch += 1

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    time.sleep(1.5)
    log.send_signal(signal.SIGKILL)
    log.wait(10)
    stop.set()
    for thread in threads:
        thread.join(30)
    assert len(acknowledged) > 500
    base, log = start_log(key, store)
    try:
        wait_integrated(base, max(acknowledged) + 1)
        read = reader(base)
        checkpoint = latest(read, Verifier.parse(vkey(key)))
        tree = dict(check_tree(TiledTree(read, checkpoint.size), checkpoint.root))
        assert {k: tree.get(k) for k in acknowledged} == acknowledged
    finally:
        log.send_signal(signal.SIGTERM)
        log.wait(15)


def test_a_log_killed_under_load_keeps_every_entry_it_acknowledged(tmp_path: Path) -> None:
    kill_under_load(["--dir", str(tmp_path / "log")], new_key(tmp_path))


def test_the_postgresql_store_serves_the_same_log_and_survives_a_kill(tmp_path: Path) -> None:
    pytest.importorskip("psycopg", reason="the log extra (pip install -e '.[log]') brings psycopg")
    with postgres_server(tmp_path) as url:
        kill_under_load(["--database", url], new_key(tmp_path))


def test_the_independent_verifier_passes_the_specifications_vectors_and_refuses_tampering() -> None:
    """tests/system/interop/tlog/selftest.mjs: the signed-note, Merkle and tile vectors of the C2SP
    specifications and their reference code, and each tampering refused."""
    if not shutil.which("node"):
        pytest.skip("node is needed (make test needs it; README)")
    done = subprocess.run(
        ["node", str(NODE_VERIFIER.with_name("selftest.mjs"))], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_a_witness_cosigns_the_log_as_it_grows_and_refuses_a_fork(tmp_path: Path) -> None:
    log_key, witness_key = new_key(tmp_path), new_key(tmp_path, "witness.pem")
    verifier = vkey(log_key)
    cosigner = maubinh("log", "vkey", "--witness", "--key", str(witness_key), "--origin", "witness.test/w1").stdout
    log_base, log = start_log(log_key, ["--dir", str(tmp_path / "log")])
    fork_base, fork = start_log(log_key, ["--dir", str(tmp_path / "fork")])
    port = free_port()
    witness = subprocess.Popen(
        [MAUBINH, "log", "witness", "--dir", str(tmp_path / "w"), "--log-vkey", verifier, "--name", "witness.test/w1",
         "--host", "127.0.0.1", "--port", str(port)],
        env={**os.environ, "MAUBINH_WITNESS_KEY_FILE": str(witness_key)}, stderr=subprocess.PIPE,
    )  # fmt: skip
    witness_base = f"http://127.0.0.1:{port}"

    def add(base: str, entries: list[bytes]) -> None:
        urllib.request.urlopen(urllib.request.Request(base + "/add", data=bundle(entries)), timeout=10).read()

    def cosign(base: str) -> subprocess.CompletedProcess[str]:
        return maubinh("log", "cosign", "--log", base, "--vkey", verifier, "--witness", witness_base,
                       "--witness-key", cosigner.strip())  # fmt: skip

    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(witness_base + "/healthz", timeout=2).read()
                break
            except OSError:
                time.sleep(0.1)
        add(log_base, [b"a", b"b", b"c"])
        wait_integrated(log_base, 3)
        first = cosign(log_base)
        assert first.returncode == 0, first.stderr
        assert abs(CosignerKey.parse(cosigner).timestamp(first.stdout) - time.time()) < 60
        assert first.stdout.startswith("maubinh.test/log\n3\n") and first.stdout.count("\n\u2014 ") == 2
        add(log_base, [b"d", b"e", b"f", b"g", b"h"])
        wait_integrated(log_base, 8)
        second = cosign(log_base)  # the client learns the size the witness holds (409), then proves 3 → 8
        assert second.returncode == 0, second.stderr
        assert second.stdout.startswith("maubinh.test/log\n8\n")
        add(fork_base, [b"a", b"b", b"c", b"d", b"e", b"f", b"g", b"X", b"Y"])  # the same key, another tree
        wait_integrated(fork_base, 9)
        forked = cosign(fork_base)
        assert forked.returncode == 1 and "422" in forked.stderr, forked.stderr
        again = cosign(log_base)
        assert again.returncode == 0 and again.stdout.startswith("maubinh.test/log\n8\n"), again.stderr
    finally:
        for process in (witness, log, fork):
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
