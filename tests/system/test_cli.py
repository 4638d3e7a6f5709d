"""`maubinh` speaks the API's JSON: docs/rules.md §10 E1 through the real console script."""

import json
import subprocess
import sys
from pathlib import Path

from helpers import golden_cases

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
    assert answers[0] == answers[3]
    assert done.returncode == 0


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
