"""A bulk command's lines, read with a cap (issue 52, second round): a line longer than the cap is read
past in blocks (memory bounded whatever the input), refused by its number, and the run goes on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from audit_lines import FIRST, MONTH, RULES, sample, with_round_id

from service.cli import main


@pytest.fixture(autouse=True)
def club_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAUBINH_RULESETS_DIR", str(RULES))


def test_a_line_past_the_cap_is_refused_by_its_number_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: a line was read whole, whatever its length, and refused (if at all) only once parsed."""
    monkeypatch.setenv("MAUBINH_MAX_LINE_BYTES", "65536")
    long = with_round_id("x" * 100).replace(b'"stake":', b'"padding":"' + b" " * 70_000 + b'","stake":')
    claims, count = sample(tmp_path, long)
    assert main(["verify", "--jsonl", str(claims), "--jobs", "1"]) == 1
    said = capsys.readouterr()
    answers = {json.loads(line)["line"]: json.loads(line) for line in said.out.splitlines()}
    refused = answers[FIRST + 1]
    assert refused["type"] == "/problems/payload-too-large" and refused["status"] == 413
    assert "65,536 bytes" in refused["detail"] and "MAUBINH_MAX_LINE_BYTES" in refused["detail"]
    assert refused["round_id"] is None
    assert f"{count:,} rooms checked" in said.err
    figures = tmp_path / "figures.json"
    assert (
        main(["replay", "--jsonl", str(claims), "--ruleset", "club-saigon@2", "-o", str(figures), "--jobs", "1"]) == 0
    )
    assert json.loads(figures.read_text())["rounds"]["refused_by_code"].get("payload-too-large") == 1
    assert main(["rooms", str(claims), "-o", str(tmp_path / "rooms.parquet")]) == 0
    assert f"{FIRST + 1}" in capsys.readouterr().err.split("left out", 1)[-1]


def test_the_cap_setting_is_checked(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for wrong in ("0", "1MB", "-5"):
        monkeypatch.setenv("MAUBINH_MAX_LINE_BYTES", wrong)
        assert main(["score", "--jsonl", "-"]) == 2
        assert "MAUBINH_MAX_LINE_BYTES" in capsys.readouterr().err
    monkeypatch.setenv("MAUBINH_MAX_LINE_BYTES", "0")
    assert main(["score", "--jsonl", "-", "--lang", "vi"]) == 2
    assert "không phải một số byte" in capsys.readouterr().err


class Endless:
    """A stream of ``size`` bytes of one line with no end, made as it is read."""

    def __init__(self, size: int) -> None:
        self.left = size

    def read1(self, n: int) -> bytes:
        n = min(n, self.left)
        self.left -= n
        return b"x" * n


@pytest.mark.parametrize("block", [1, 7, 64, 65536])
def test_lines_are_cut_as_a_file_s_lines_are_whatever_the_blocks(block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from service.bulk import lines

    monkeypatch.setattr(lines, "BLOCK", block)
    text = b"a\n\nbb\r\n" + b"c" * 10 + b"\n" + b"d" * 11 + b"\n" + b"e" * 30 + b"\nlast"
    got = list(lines.capped(io.BytesIO(text), limit=10))
    assert [bytes(g) for g in got] == [b"a\n", b"\n", b"bb\r\n", b"c" * 10 + b"\n", b"", b"", b"last"]
    assert [(type(g).__name__, getattr(g, "length", None)) for g in got][4:6] == [("Overlong", 11), ("Overlong", 30)]
    assert next(iter(lines.capped(io.BytesIO(b"x" * 25), limit=10))).length == 25  # type: ignore[attr-defined]


def test_a_line_of_no_end_is_read_in_bounded_memory() -> None:
    import tracemalloc

    from service.bulk.lines import Overlong, capped

    tracemalloc.start()
    got = list(capped(Endless(64 << 20), limit=1 << 20))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(got) == 1 and isinstance(got[0], Overlong) and got[0].length == 64 << 20
    assert peak < 3 << 20, f"{peak / 2**20:.1f} MiB held for a 64 MiB line"


def test_a_file_of_one_huge_line_costs_the_cap_not_the_line(tmp_path: Path) -> None:
    """A real process, its peak RSS (VmHWM: ru_maxrss would count the forking pytest's own): 128 MB with
    no newline, then a round. Before: the whole line was held, several times over (a 298 MB line took
    4.0 GB and 81 s)."""
    big = tmp_path / "big.jsonl"
    with big.open("wb") as out:
        for _ in range(128):
            out.write(b"x" * (1 << 20))
        out.write(b"\n" + MONTH.read_bytes().splitlines(keepends=True)[0])
    code = (
        "import re, sys\nfrom pathlib import Path\nfrom service.cli import main\n"
        f"status = main(['verify', '--jsonl', {str(big)!r}, '--jobs', '1'])\n"
        "peak = re.search(r'VmHWM:\\s+(\\d+) kB', Path('/proc/self/status').read_text())[1]\n"
        "print(peak, status, file=sys.stderr)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "MAUBINH_RULESETS_DIR": str(RULES)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    peak_kib, status = done.stderr.split()[-2:]
    assert status == "0" and '"line":1,' in done.stdout.replace(" ", "") and "payload-too-large" in done.stdout
    assert "2 rooms checked, 1 agree" in done.stderr
    assert int(peak_kib) < 96 * 1024, f"peak RSS {int(peak_kib) // 1024} MB for a 128 MB line"


@pytest.mark.parametrize("command", ["score", "verify", "evaluate", "arrange"])
def test_one_document_past_the_cap_is_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """Before, `maubinh score FILE` read the file whole, whatever its size, into the JSON reader; and an
    input that never ends (/dev/zero) is refused once past the cap, not read to its end."""
    monkeypatch.setenv("MAUBINH_MAX_LINE_BYTES", "65536")
    (tmp_path / "big.json").write_bytes(b" " * 100_000 + b"{}")
    assert main([command, str(tmp_path / "big.json")]) == 1
    refused = json.loads(capsys.readouterr().out)
    assert refused["status"] == 413 and "65,536 bytes" in refused["detail"] and "document" in refused["detail"]
    room = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "room.json"
    assert main([command, "/dev/zero"]) == 1 and json.loads(capsys.readouterr().out)["status"] == 413
    (tmp_path / "room.json").write_bytes(b" " * 60_000 + room.read_bytes())
    assert main(["score", str(tmp_path / "room.json")]) == 0  # under the cap, white space and all
    assert json.loads(capsys.readouterr().out)["ledger"]
