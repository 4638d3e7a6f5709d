"""The README's quick starts, run as written against a real `maubinh serve`: curl on a four-player
room and on a bad one, the generated Python and TypeScript clients, and the auditors' first month."""

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import shell_lines
from server import start

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text("utf-8")
SERVICE = "http://127.0.0.1:8000"
"""Where the README's commands find the service (make run's); the test's server is elsewhere."""

pytestmark = pytest.mark.slow


def section(title: str) -> str:
    return README.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    base, process = start({})
    yield base
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=15)


def workspace(tmp_path: Path) -> Path:
    """A folder where the README's paths resolve: the checkout's tools, its examples copied (the
    commands write into them)."""
    for name in ("openapi.yaml", "tests", "deploy"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parents[1])
    if (ROOT / ".tools").exists():
        (tmp_path / ".tools").symlink_to(ROOT / ".tools")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    return tmp_path


def run(command: str, work: Path, base: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["bash", "-c", command.replace(SERVICE, base)], cwd=work, capture_output=True, text=True, timeout=600,
        env={**env, "MAUBINH_URL": base}, check=False,
    )  # fmt: skip
    return done


def test_the_integrators_quick_start_runs_as_written(served: str, tmp_path: Path) -> None:
    if not (ROOT / ".tools" / "node_modules" / ".bin" / "tsc").exists() or shutil.which("node") is None:
        pytest.fail("the TypeScript quick start needs node and `make tools`")
    work = workspace(tmp_path)
    lines = shell_lines(section("Integrators: score rooms from your backend"))
    assert [line.split()[0] for line in lines] == ["curl", "curl", "PATH=\"$PWD/.venv/bin:$PATH\"", ".venv/bin/python",
                                                    ".tools/node_modules/.bin/openapi-typescript",
                                                    ".tools/node_modules/.bin/tsc"]  # fmt: skip
    env = dict(os.environ)
    outputs = []
    for command in lines:
        done = run(command, work, served, env)
        assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        outputs.append(done.stdout)
    scored = json.loads(outputs[0])
    assert [(p["id"], p["amount"]) for p in scored["players"]] == [("P", 30), ("Q", -10), ("R", -10), ("S", -10)]
    assert scored["ruleset"]["id"] == "maubinh-chi-at" and scored["ruleset"]["version"] == "3"
    first = scored["ledger"][0]
    assert first["explanation"] in section("Integrators: score rooms from your backend")  # the README shows it
    refused = json.loads(outputs[1])
    assert refused["status"] == 422 and refused["type"] == "/problems/unprocessable-room"
    codes = {(f["pointer"], f["code"]) for f in refused["errors"]}
    assert {
        ("/ruleset", "unknown_ruleset"),
        ("/players/0/midle", "unknown_field"),
        ("/players/1/back/0", "duplicate_card"),
    } <= codes
    assert "did you mean 'maubinh-chi-at@3'?" in refused["errors"][0]["message"]
    assert outputs[3].splitlines()[0] == "maubinh-chi-at@3: P +30, Q -10, R -10, S -10"
    assert any("dealt twice" in line for line in outputs[3].splitlines())
    node = run("node examples/quickstart/score.js", work, served, env)
    assert node.returncode == 0, node.stderr
    assert node.stdout.splitlines()[0] == "maubinh-chi-at@3: P 30, Q -10, R -10, S -10"
    assert "/players/0/midle: a typo: " in node.stdout and "/players/1/back/0: dealt twice: " in node.stdout


def test_the_auditors_quick_start_runs_as_written(tmp_path: Path) -> None:
    work = workspace(tmp_path)
    lines = shell_lines(section("Auditors: settle a dispute, then a month"))
    assert len(lines) == 2 and lines[0].startswith("export ")
    done = run(" && ".join(lines[:1]) + " ; " + lines[1], work, SERVICE, dict(os.environ))
    assert done.returncode == 1, done.stderr  # the sample month disagrees, as planted
    figures = json.loads((work / "report.json").read_text())
    plants = json.loads((ROOT / "examples" / "audit" / "plants.json").read_text())
    assert figures["in_dispute"] == plants["in_dispute"]


def curl_blocks() -> list[tuple[str, str]]:
    """(page, command) for every `curl` block of the README and docs/: the indented lines from `curl`
    to the block's end, a JSON body spanning them inside its quotes (docs/callers.md's need callers,
    and run in its own test)."""
    found = []
    for page in [
        ROOT / "README.md",
        *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name not in ("callers.md", "receipts.md")),
    ]:
        block: list[str] = []
        for raw in [*page.read_text("utf-8").splitlines(), ""]:
            if raw.startswith("    curl "):
                block = [raw[4:]]
            elif block and raw.startswith("    "):
                block.append(raw[4:])
            elif block:
                found.append((page.name, "\n".join(block)))
                block = []
    return found


def test_every_curl_of_the_readme_and_docs_is_answered(served: str, tmp_path: Path) -> None:
    """Each as written (the service's address aside): 200, or the 422 it shows, never another status."""
    work = workspace(tmp_path)
    blocks = curl_blocks()
    assert len(blocks) >= 4
    for page, command in blocks:
        done = run(
            command.replace("curl -s ", "curl -s -o answer.json -w '%{http_code}' ", 1), work, served, dict(os.environ)
        )
        answer = json.loads((work / "answer.json").read_text())
        expected = "422" if "bad-room" in command else "200"
        assert done.stdout == expected, f"{page}: {command}\n{answer}"


def test_the_operators_callers_quick_start_runs_as_written(tmp_path: Path) -> None:
    """docs/callers.md: two callers made, one refused a route, a key rotated with no restart, usage per
    caller read; each line as written, against a server started on the callers file it writes (empty
    at first: no caller, no key works)."""
    work = workspace(tmp_path)
    page = (ROOT / "docs" / "callers.md").read_text("utf-8")
    lines = shell_lines(page.split("## Operator quick start\n", 1)[1])
    assert len(lines) == 10
    make, check, score_alpha, score_beta, new_key, add, remove, usage = (
        lines[:3], lines[3], lines[4], lines[5], lines[6], lines[7], lines[8], lines[9],
    )  # fmt: skip
    (work / "callers.toml").write_text("")
    base, process = start({"MAUBINH_CALLERS_FILE": str(work / "callers.toml")})
    settle = "sleep 3.5"  # each worker looks at the file every second, and reads it a second after a write

    def status(key: str) -> str:
        return (
            f"curl -s -o /dev/null -w '%{{http_code}} ' {SERVICE}/v1/score -H \"Authorization: Bearer $(cat {key})\" "
            "-H 'Content-Type: application/json' -d @examples/quickstart/room.json"
        )

    script = [
        *make, f"{check} > check.txt", settle,
        f"{score_alpha} > alpha.json", f"{score_beta} > beta.json",
        new_key, add, settle, f"{status('alpha.key')} > both.txt", f"{status('alpha-2.key')} >> both.txt",
        remove, settle, f"{status('alpha.key')} > after.txt", f"{status('alpha-2.key')} >> after.txt",
        f"{usage} > usage.txt",
    ]  # fmt: skip
    try:
        done = run("set -e; " + " && ".join(script), work, base, dict(os.environ))
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=15)
    assert done.returncode == 0, done.stderr
    assert (work / "check.txt").read_text().splitlines() == [
        "club-alpha: ok keys=1 routes=arrange,batch,evaluate,rulesets,score,verify rulesets=built-ins rooms_per_minute=-",
        "club-beta: ok keys=1 routes=verify rulesets=built-ins rooms_per_minute=600",
    ]
    assert json.loads((work / "alpha.json").read_text())["players"][0]["amount"] == 30
    refused = json.loads((work / "beta.json").read_text())
    assert refused["type"] == "/problems/forbidden" and "club-beta" in refused["detail"]
    assert (work / "both.txt").read_text().split() == ["200", "200"]  # while club-alpha switches
    assert (work / "after.txt").read_text().split() == ["401", "200"]  # the old key stopped, no restart
    assert (
        'maubinh_rooms_scored_total{caller="club-alpha",players="4",ruleset="maubinh-chi-at"} 4.0'
        in (work / "usage.txt").read_text()
    )
    assert 'caller="club-beta"' not in (work / "usage.txt").read_text()
