"""`maubinh` speaks the API's JSON: docs/rules.md §10 E1 through the real console script."""

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import DECK_TEXT, golden_cases

from service.cli import main

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("maubinh")
    return subprocess.run([str(script), *args], input=stdin, capture_output=True, text=True, check=False)


def test_score_e1_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "e1.json"
    path.write_text(json.dumps(E1))
    done = run("score", str(path))
    assert done.returncode == 0
    result = json.loads(done.stdout)
    assert [(p["id"], p["amount"]) for p in result["players"]] == [("P", -9000), ("Q", 9000)]


def test_score_from_stdin_in_any_notation_prints_canonical_cards() -> None:
    other = json.loads(json.dumps(E1))
    for player in other["players"]:
        for position in ("back", "middle", "front"):
            player[position] = [c.lower() for c in player[position]]
    other["players"][1]["middle"][4] = "10♠"
    done = run("score", "-", stdin=json.dumps(other, ensure_ascii=False))
    assert done.returncode == 0
    assert json.loads(done.stdout)["players"][1]["hands"]["middle"]["cards"] == ["8S", "8H", "6C", "6D", "TS"]


def test_a_rejected_room_exits_non_zero_with_the_problem() -> None:
    bad = json.loads(json.dumps(E1))
    bad["players"][0]["back"][0] = "1S"
    done = run("score", "-", stdin=json.dumps(bad))
    assert done.returncode == 1
    problem = json.loads(done.stdout)
    assert problem["status"] == 422 and problem["errors"][0]["pointer"] == "/players/0/back/0"


def test_jsonl_answers_every_line_and_goes_on_after_a_bad_one() -> None:
    bad = {**E1, "ruleset": "nope"}
    stdin = "\n".join([json.dumps(E1), "{not json", json.dumps(bad), json.dumps(E1)]) + "\n"
    done = run("score", "--jsonl", "-", stdin=stdin)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a.get("status", 200) for a in answers] == [200, 400, 422, 200]
    assert answers[0] == answers[3] and "line" not in answers[0]  # a scored line keeps its bytes
    assert [(a["line"], a["round_id"]) for a in answers[1:3]] == [(2, None), (3, None)]
    assert done.returncode == 0


def test_a_blank_line_is_refused_as_empty_and_a_fault_is_placed_on_its_own_line() -> None:
    """Before: a blank line was "Expecting value at line 2, column 1", the line's end counted as a second line."""
    stdin = "\n".join([json.dumps(E1), "", '{"stake":', "  \t", json.dumps(E1)]) + "\r\n"
    answers = [json.loads(line) for line in run("score", "--jsonl", "-", stdin=stdin).stdout.splitlines()]
    assert [a.get("line") for a in answers] == [None, 2, 3, 4, None]
    details = [a["detail"] for a in answers[1:4]]
    assert details[0] == details[2] and details[0].startswith("no JSON value: the body is empty")
    assert details[1] == "not JSON: Expecting value at column 10 of this line"  # its line: the record's "line", 3


def test_a_refusal_names_its_input_line_and_round_across_chunks(tmp_path: Path) -> None:
    """300 lines go to two workers in chunks of 256: the refusal at line 290 still says 290."""
    lines = [json.dumps({**E1, "round_id": f"r{k}"}) for k in range(1, 301)]
    lines[289] = json.dumps({**E1, "round_id": "r290", "stake": 0})
    path = tmp_path / "rooms.jsonl"
    path.write_text("\n".join(lines) + "\n")
    answers = [json.loads(line) for line in run("score", "--jsonl", str(path), "--jobs", "2").stdout.splitlines()]
    refused = [a for a in answers if "status" in a]
    assert [(a["line"], a["round_id"], a["status"]) for a in refused] == [(290, "r290", 422)]


def test_same_request_same_bytes() -> None:
    first, second = run("score", "-", stdin=json.dumps(E1)), run("score", "-", stdin=json.dumps(E1))
    assert first.stdout == second.stdout


def test_rulesets_listing_and_one_whole(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["rulesets"]) == 0
    listed = json.loads(capsys.readouterr().out)["rulesets"]
    assert [r["id"] for r in listed] == ["maubinh-2020", "maubinh-bao", "maubinh-chi-at"]
    assert main(["rulesets", "maubinh-chi-at"]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert whole["scoop"]["table"][2] == {"room_size": 4, "by_scoopers": [2, 2, 4]}
    assert whole["digest"] == listed[2]["digest"]
    assert main(["rulesets", "nope"]) == 1


def test_evaluate_names_hands_and_fouls(capsys) -> None:  # type: ignore[no-untyped-def]
    request = {
        "ruleset": "maubinh-2020",
        "back": ["KD", "KC", "QS", "3C", "2C"],
        "middle": ["KS", "KH", "QD", "3D", "2D"],
        "front": ["AS", "AH", "AD"],
    }
    done = run("evaluate", "-", stdin=json.dumps(request))
    body = json.loads(done.stdout)
    assert body["fouled"] and body["foul_reason"] == "front_beats_middle"
    assert body["hands"]["front"]["kind"] == "trip_aces"


def test_unreadable_file() -> None:
    assert run("score", "/nonexistent/room.json").returncode == 2


def test_arrange_jsonl_answers_every_line() -> None:
    cards = [c for p in E1["players"][:1] for pos in ("back", "middle", "front") for c in p[pos]]
    good = json.dumps({"ruleset": "maubinh-2020", "cards": cards, "alternatives": 1})
    bad = json.dumps({"ruleset": "maubinh-2020", "cards": cards[:12]})
    done = run("arrange", "--jsonl", "-", stdin="\n".join([good, bad, good]) + "\n")
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a.get("status", 200) for a in answers] == [200, 422, 200]
    assert answers[0] == answers[2] and len(answers[0]["alternatives"]) == 1
    assert answers[1]["errors"][0]["pointer"] == "/cards"
    placed = sorted(c for p in ("back", "middle", "front") for c in answers[0]["arrangement"][p])
    assert placed == sorted(cards)


def test_arrange_opponents_fills_requests_that_do_not_say() -> None:
    cards = [c for p in E1["players"][:1] for pos in ("back", "middle", "front") for c in p[pos]]
    plain = json.dumps({"ruleset": "maubinh-2020", "cards": cards})
    says = json.dumps({"ruleset": "maubinh-2020", "cards": cards, "opponents": "strong"})
    done = run("arrange", "--jsonl", "-", "--opponents", "weak", "--jobs", "2", stdin=f"{plain}\n{says}\n")
    assert [json.loads(line)["model"]["opponents_field"] for line in done.stdout.splitlines()] == ["weak", "strong"]
    assert json.loads(run("arrange", "-", stdin=plain).stdout)["model"]["opponents_field"] == "strong"


def test_arrange_jobs_answer_in_input_order_exactly_as_one_process_does(tmp_path: Path) -> None:
    """Advice goes to the workers in small chunks: 40 hands (and a bad line) span three of them."""
    rng = random.Random(8)
    rulesets = ("maubinh-2020", "maubinh-chi-at", "maubinh-bao")
    lines = [json.dumps({"ruleset": rulesets[k % 3], "cards": rng.sample(DECK_TEXT, 13)}) for k in range(40)]
    lines[20:20] = ['{"ruleset": "maubinh-2020", "cards": []}']
    path = tmp_path / "hands.jsonl"
    path.write_text("\n".join(lines) + "\n")
    one = run("arrange", "--jsonl", str(path), "--jobs", "1")
    two = run("arrange", "--jsonl", str(path), "--jobs", "2")
    assert one.stdout == two.stdout
    answers = [json.loads(line) for line in one.stdout.splitlines()]
    assert len(answers) == 41 and answers[20]["status"] == 422
    assert [a["ruleset"]["id"] for a in answers[:20]] == [rulesets[k % 3] for k in range(20)]


def _rooms_file(tmp_path: Path, count: int = 600) -> Path:
    """Golden rooms (good and refused) repeated, plus a line that is not JSON and a blank line."""
    rooms = [json.dumps(c["request"]) for c in golden_cases() + golden_cases("house-public.jsonl")]
    lines = [rooms[k % len(rooms)] for k in range(count)]
    lines[100:100] = ["{not json", ""]
    path = tmp_path / "rooms.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_jobs_answer_in_input_order_exactly_as_one_process_does(tmp_path: Path) -> None:
    rooms = _rooms_file(tmp_path)
    one = run("score", "--jsonl", str(rooms), "--jobs", "1")
    two = run("score", "--jsonl", str(rooms), "--jobs", "2")
    assert one.returncode == two.returncode == 0
    assert one.stdout == two.stdout
    answers = [json.loads(line) for line in one.stdout.splitlines()]
    assert len(answers) == 602
    assert answers[100]["status"] == 400 and answers[101]["status"] == 400
    refused = sum(1 for a in answers if "status" in a)
    for done in (one, two):
        assert done.stderr.strip().startswith(f"maubinh score: 602 lines, {refused} refused, ")


def test_output_to_a_file(tmp_path: Path) -> None:
    rooms = _rooms_file(tmp_path, 50)
    out = tmp_path / "out.jsonl"
    done = run("score", "--jsonl", str(rooms), "-o", str(out))
    assert done.returncode == 0 and done.stdout == ""
    assert len(out.read_text().splitlines()) == 52
    single = tmp_path / "e1.json"
    single.write_text(json.dumps(E1))
    assert run("score", str(single), "-o", str(tmp_path / "e1.out")).returncode == 0
    assert json.loads((tmp_path / "e1.out").read_text())["players"][0]["amount"] == -9000


def test_a_progress_bar_only_on_a_terminal(tmp_path: Path) -> None:
    """stderr on a pty: a tqdm bar (lines, rate); otherwise only the summary line."""
    import os
    import pty

    rooms = _rooms_file(tmp_path, 300)
    quiet = run("score", "--jsonl", str(rooms), "-o", str(tmp_path / "a.jsonl"))
    assert quiet.stderr.count("\n") == 1
    import fcntl
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # a terminal has a size
    script = Path(sys.executable).with_name("maubinh")
    process = subprocess.Popen(
        [str(script), "score", "--jsonl", str(rooms), "-o", str(tmp_path / "b.jsonl")],
        stderr=follower,
        stdout=subprocess.DEVNULL,
    )
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    assert process.wait(timeout=60) == 0
    os.close(leader)
    text = seen.decode(errors="replace")
    assert "302/302" in text and "lines/s" in text
    assert "maubinh score: 302 lines" in text


def test_scoring_a_room_imports_nothing_it_does_not_use(tmp_path: Path) -> None:
    """Not numpy, the advisor, Flask, jsonschema, claims or importlib.resources; nor marshmallow and the
    schemas, which only say why a body is refused (a valid room loads through validation/plain_rooms.py)."""
    path = tmp_path / "e1.json"
    path.write_text(json.dumps(E1))
    code = (
        "import sys\n"
        "from service.cli import main\n"
        f"assert main(['score', {str(path)!r}, '-o', {str(tmp_path / 'out.json')!r}]) == 0\n"
        "print(sorted(m for m in ('numpy', 'service.advisor', 'flask', 'jsonschema', 'service.scoring.claims', 'importlib.resources', 'zipfile', 'marshmallow', 'service.validation.schemas') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_only_the_named_commands_parser_is_made_yet_a_usage_error_lists_every_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[str] = []
    add_parser = argparse._SubParsersAction.add_parser

    def counted(self: Any, name: str, **fields: Any) -> argparse.ArgumentParser:
        made.append(name)
        return add_parser(self, name, **fields)

    monkeypatch.setattr(argparse._SubParsersAction, "add_parser", counted)
    with pytest.raises(SystemExit):
        main(["score", "--bogus"])
    assert made == ["score"]
    made.clear()
    with pytest.raises(SystemExit):
        main([])
    assert {"score", "verify", "replay", "rulesets", "keys", "receipts", "serve"} <= set(made)

    after_a_command, without_one = run("score", "--bogus"), run()
    assert after_a_command.returncode == without_one.returncode == 2
    usage = without_one.stderr.splitlines()[:-1]
    assert all(name in " ".join(usage) for name in ("arrange", "score", "verify", "replay", "keys", "serve"))
    assert after_a_command.stderr.splitlines()[:-1] == usage
    assert after_a_command.stderr.splitlines()[-1] == "maubinh: error: unrecognized arguments: --bogus"


def _claim(amounts: dict[str, int]) -> str:
    return json.dumps({**E1, "claimed": {"amounts": amounts}})


def test_verify_one_room_exits_1_unless_the_claim_agrees(tmp_path: Path) -> None:
    agree = run("verify", "-", stdin=_claim({"P": -9000, "Q": 9000}))
    assert agree.returncode == 0 and json.loads(agree.stdout)["agrees"] is True
    disagree = run("verify", "-", stdin=_claim({"P": -3000, "Q": 3000}))
    assert disagree.returncode == 1 and json.loads(disagree.stdout)["players"][0]["difference"] == 6000


def test_verify_jsonl_writes_only_disagreements_and_refusals_with_a_summary(tmp_path: Path) -> None:
    bad_room = json.loads(_claim({"P": -9000, "Q": 9000}))
    bad_room["players"][1]["back"][0] = "AS"
    lines = [_claim({"P": -9000, "Q": 9000})] * 5 + [_claim({"P": -3000, "Q": 3000}), json.dumps(bad_room), "{oops"]
    path = tmp_path / "claims.jsonl"
    path.write_text("\n".join(lines) + "\n")
    one = run("verify", "--jsonl", str(path), "--jobs", "1")
    two = run("verify", "--jsonl", str(path), "--jobs", "2")
    assert one.returncode == two.returncode == 1
    assert one.stdout == two.stdout
    written = [json.loads(line) for line in one.stdout.splitlines()]
    assert [w.get("agrees", w.get("status")) for w in written] == [False, 422, 400]
    assert [w["line"] for w in written] == [6, 7, 8]
    assert one.stderr.strip().startswith("maubinh verify: 8 rooms checked, 5 agree, 1 disagree, 2 refused, ")
    agreeing = tmp_path / "ok.jsonl"
    agreeing.write_text(_claim({"P": -9000, "Q": 9000}) + "\n")
    quiet = run("verify", "--jsonl", str(agreeing))
    assert quiet.returncode == 0 and quiet.stdout == ""


def test_verify_in_vietnamese_explains_and_sums_up_in_vietnamese(tmp_path: Path) -> None:
    one = run("verify", "-", "--lang", "vi", stdin=_claim({"P": -3000, "Q": 3000}))
    assert one.returncode == 1
    assert json.loads(one.stdout)["players"][0]["explanation"] == [
        "P: game ghi −3.000, theo luật −9.000 → P còn phải trả 6.000 cho Q",
        "so chi: theo luật −3.000 (game không ghi theo từng bước)",
        "sập: theo luật −6.000 (game không ghi theo từng bước)",
    ]
    path = tmp_path / "claims.jsonl"
    path.write_text("\n".join([_claim({"P": -9000, "Q": 9000}), _claim({"P": -3000, "Q": 3000})]) + "\n")
    many = run("verify", "--jsonl", str(path), "--jobs", "2", "--lang", "vi")
    assert many.returncode == 1
    assert (
        json.loads(many.stdout)["players"][1]["explanation"][2]
        == "sập: theo luật +6.000 (game không ghi theo từng bước)"
    )
    assert many.stderr.startswith("maubinh verify: đã kiểm tra 2 ván: 1 khớp, 1 lệch, 0 bị từ chối, ")


def test_score_as_a_spreadsheet_one_row_per_ledger_line(tmp_path: Path) -> None:
    """RFC 4180: CRLF line ends, a header, fields quoted where they hold a comma or a quote, UTF-8."""
    import csv
    import io

    room = {**E1, "round_id": 'bàn 7, "ván" 12'}
    one = subprocess.run([str(Path(sys.executable).with_name("maubinh")), "score", "-", "--format", "csv"],
                         input=json.dumps(room).encode(), capture_output=True, check=False)  # fmt: skip
    assert one.returncode == 0
    assert one.stdout.count(b"\r\n") == 5 and b"\n" not in one.stdout.replace(b"\r\n", b"")
    rows = list(csv.reader(io.StringIO(one.stdout.decode("utf-8"), newline="")))
    assert rows[0] == [
        "round_id",
        "seq",
        "step",
        "payer",
        "payee",
        "position",
        "units",
        "amount",
        "rule",
        "explanation",
        "rule_text",  # added last (docs/contract.md): a column read by position keeps its place
    ]
    assert rows[1] == [
        'bàn 7, "ván" 12',
        "1",
        "chi",
        "P",
        "Q",
        "back",
        "1",
        "1000",
        "docs/rules.md §5: one unit per chi won",
        "back: full house, nines full of fours (9-9-9-4-4) beats two pair, aces and sevens (A-A-7-7-2)",
        "docs/rules.md §5: one unit per chi won",
    ]
    assert rows[4][2:8] == ["scoop", "P", "Q", "", "6", "6000"]
    assert '"bàn 7, ""ván"" 12"' in one.stdout.decode("utf-8")


def test_a_refused_room_writes_no_spreadsheet(tmp_path: Path) -> None:
    """Exit 1, the problem on stderr, and nothing on stdout (not even the header): a script that keeps
    stdout as the room's spreadsheet keeps no empty one."""
    refused = subprocess.run([str(Path(sys.executable).with_name("maubinh")), "score", "-", "--format", "csv"],
                             input=b'{"ruleset": "maubinh-2020"}', capture_output=True, check=False)  # fmt: skip
    assert refused.returncode == 1 and refused.stdout == b""
    assert json.loads(refused.stderr)["errors"][0]["pointer"] == "/players"


def test_a_jsonl_spreadsheet_has_one_header_and_sets_problems_aside(tmp_path: Path) -> None:
    rooms = _rooms_file(tmp_path, 40)
    one = run("score", "--jsonl", str(rooms), "--format", "csv", "--jobs", "1")
    two = run("score", "--jsonl", str(rooms), "--format", "csv", "--jobs", "2")
    assert one.returncode == two.returncode == 0 and one.stdout == two.stdout
    assert one.stdout.count('"round_id","seq"') == 1
    refused = [line for line in one.stderr.splitlines() if line.startswith("{")]
    assert refused and all(json.loads(line)["status"] in (400, 422) for line in refused)
    scored = [json.loads(line) for line in run("score", "--jsonl", str(rooms)).stdout.splitlines()]
    assert len(one.stdout.splitlines()) == 1 + sum(len(s["ledger"]) for s in scored if "ledger" in s)


ARRANGE = '{"ruleset":"maubinh-2020","cards":["AS","KD","QS","JC","9S","9H","8H","7C","6H","5H","4D","3D","2D"]}\n'


@pytest.mark.parametrize(
    ("shell", "why"),
    [
        ("{m} arrange {a} -o /dev/full", "no space left on device"),
        ("{m} arrange {a} > /dev/full", "no space left on device"),
        ("{m} arrange --jsonl {many} -o /dev/full", "no space left on device"),
        ("{m} arrange {a} >&-", "the output is closed"),
        ("{m} arrange --jsonl {many} | head -c 10 > /dev/null", "broken pipe"),
        ("{m} score --jsonl {many} --jobs 2 | head -c 10 > /dev/null", "broken pipe"),
        ("{m} score --help > /dev/full", "no space left on device"),
        ("{m} --help >&-", "the output is closed"),
    ],
)
def test_a_write_that_fails_is_said_in_one_line_exit_2(tmp_path: Path, shell: str, why: str) -> None:
    """A full disk, a reader gone or a closed standard output ended in a traceback, exit 1 (a refused
    room's status), found by an attack on the command line; an -o that cannot be opened was said already."""
    one, many = tmp_path / "a.json", tmp_path / "a.jsonl"
    one.write_text(ARRANGE)
    many.write_text(ARRANGE * 3000)
    script = Path(sys.executable).with_name("maubinh")
    command = shell.format(m=script, a=one, many=many)
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1
    assert why in done.stderr and "not the whole answer" in done.stderr


@pytest.mark.parametrize(
    ("shell", "status", "lines"),
    [
        ("{m} arrange --jsonl {many} > {out} 2>/dev/full", 0, 3000),
        ("{m} arrange --jsonl {many} > {out} 2>&-", 0, 3000),
        ("{m} arrange {many}.missing > {out} 2>/dev/full", 2, 0),
        ("{m} arrange --jsonl {many} > /dev/full 2>&-", 2, 0),
        ("{m} arrange - < /dev/null > {out} 2>&-", 1, 1),
        ("{m} arrange {a} > {out} <&- 2>&-", 0, 1),
    ],
)
def test_a_standard_error_that_cannot_be_written_costs_what_it_would_have_said_only(
    tmp_path: Path, shell: str, status: int, lines: int
) -> None:
    """With 2>/dev/full a finished run exited 1 (a failed message was taken for a failed output), and with
    2>&- the summary went to standard output, after the answers (found by an attack)."""
    one, many, out = tmp_path / "a.json", tmp_path / "a.jsonl", tmp_path / "out"
    one.write_text(ARRANGE)
    many.write_text(ARRANGE * 3000)
    script = Path(sys.executable).with_name("maubinh")
    command = shell.format(m=script, a=one, many=many, out=out)
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=False)
    assert done.returncode == status
    written = out.read_text().splitlines() if out.exists() else []
    assert len(written) == lines and all(line.startswith("{") for line in written)
