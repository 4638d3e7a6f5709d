"""No English in a Vietnamese answer (fifth review of the texts): every route of the app, asked with
``Accept-Language: vi``, and every command of the CLI, run with ``--lang vi`` (its ``--help`` too),
answers a person in Vietnamese.

How a word is found English: it is a word of the English phrasebook (en.json: every sentence the
service can say in English), less the names a Vietnamese sentence uses as they are (API members, codes,
options: test_vietnamese_paths.ALLOWED), found outside quotes, paths, options and identifiers
(test_vietnamese_paths.english_in). A dictionary of English would flag the game's own words and
names; the phrasebook is exactly the English this service could leak. What is read: the members a
person reads (TEXT_MEMBERS), never codes, ids, cards or the English members kept beside the
Vietnamese on purpose (``name_en``, a ruleset document's own ``decision``/``reason``, which its digest
covers). Each route is walked or said why not (ROUTES): a new route fails here until it is.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from helpers import golden_cases
from test_vietnamese_paths import english_in

from service.cli import main
from service.cli.commands import _parser
from service.problem_types import PROBLEM_TYPES

CASES = {c["name"]: c["request"] for c in golden_cases()}
E1 = CASES["worked-example/E1"]
SIX_PAIRS = ["2S", "2H", "3S", "3H", "4S", "4H", "5S", "5H", "6S", "6H", "7S", "7H", "9D"]
VI = {"Accept-Language": "vi"}
TEXT_MEMBERS = {"explanation", "rule_text", "title", "detail", "message", "field", "decision_vi", "reason_vi", "name"}
"""The members of an answer a person reads; each holds a sentence, a list of them, or a name."""


def _fouled_room() -> dict[str, Any]:
    room = CASES["maubinh-2020/n2/fouled"]
    players = [{**p, "back": p["front"] + p["back"][:2], "front": p["back"][2:]} for p in room["players"]]
    return {**room, "players": players}


def _verify(claimed: dict[str, Any]) -> dict[str, Any]:
    return {**E1, "claimed": claimed}


RELABELLED = [
    {"payer": "P", "payee": "Q", "amount": 1000, "step": "chi"},
    {"payer": "P", "payee": "Q", "amount": 1000, "step": "chi"},
    {"payer": "P", "payee": "Q", "amount": 1000, "step": "chi"},
    {"payer": "P", "payee": "Q", "amount": 6000, "step": "foul"},
]
ROUTES: dict[str, Any] = {
    "/v1/score": [E1, _fouled_room(), CASES["maubinh-chi-at/n4/scoop-by-foul-k2"], {**E1, "stake": "x"}],
    "/v1/score/batch": [{"rooms": [E1, CASES["maubinh-bao/n2/fouled"], {**E1, "ruleset": "maubinh-1999"}]}],
    "/v1/verify": [_verify({"amounts": {"P": -3000, "Q": 3000}}), _verify({"amounts": {"P": -9000, "Q": 9000}}),
                   _verify({"amounts": {"P": -9000, "Q": 9000}, "ledger": RELABELLED})],
    "/v1/evaluate": [{"ruleset": "maubinh-bao", **{p: E1["players"][0][p] for p in ("middle", "back", "front")}},
                     {"ruleset": "maubinh-2020", "back": E1["players"][0]["middle"],
                      "middle": E1["players"][0]["back"], "front": E1["players"][0]["front"]}],
    "/v1/arrange": [{"ruleset": "maubinh-bao", "cards": SIX_PAIRS}, {"ruleset": "maubinh-2020", "cards": SIX_PAIRS}],
    "/v1/rulesets": None,
    "/v1/rulesets/<ruleset_id>": ["maubinh-2020", "maubinh-chi-at@4", "maubinh-bao@1", "maubinh-1999"],
    "/problems/<slug>": sorted(PROBLEM_TYPES),
    "/viewer": None,
    "/docs/rules": None,
    "/viewer/texts/<language>.json": ["vi"],
    "/readyz": None,
    "/healthz": None,
    # Not walked, and why:
    "/viewer/<asset>": "the script, its style sheet and example rooms: code and data; the page's words are /viewer's",
    "/openapi.yaml": "the API's specification, for programs",
    "/metrics": "Prometheus' exposition, for programs",
    "/.well-known/jwks.json": "the public signing keys, for programs",
}  # fmt: skip


def _texts(document: Any, member: str = "") -> Iterator[str]:
    """Every string of a TEXT_MEMBERS member, however deep."""
    if isinstance(document, dict):
        for key, value in document.items():
            yield from _texts(value, key)
    elif isinstance(document, list):
        for value in document:
            yield from _texts(value, member)
    elif isinstance(document, str) and member in TEXT_MEMBERS:
        yield document


CODES = re.compile(r"\b[a-z_]+ = [a-z_]+\b|\([a-z_]+\)")
"""Codes a Vietnamese sentence names as they are sent: a field with its value (``both_fouled = compare``),
a knob's value in parentheses after its Vietnamese words ("cộng thêm vào (add)")."""
NAMES = re.compile(r"JWK\s+Set|signed-note|tlog-proof|checkpoint|tile|origin|PostgreSQL")
"""Standard names: RFC 7517's key set (argparse may wrap a line between its two words; "JSON lines" is
said "JSONL", sixth read); the C2SP specifications' names and terms for a transparency log (its checkpoint,
tiles and origin line), and a database's name."""
LOANWORDS = {
    "game",
    "rooms",
    "replay",
    "publish",
    "differences",
    "gunicorn",
    "curl",
    "log",
    "vkey",
    "monitor",
    "proof",
    "witness",
    "cosign",
}
"""English words a Vietnamese sentence says as names: "game", which Vietnamese has taken in (the glossary's
"kết quả game đã ghi"); the commands and audit tables named as they are typed; programs."""


def english(sentence: str) -> list[str]:
    plain = NAMES.sub(" ", CODES.sub(" ", sentence))
    return [word for word in english_in(plain) if word.lower() not in LOANWORDS]


def _page_words(html: str) -> str:
    """A page's words, without its scripts, and without what it marks as English (``lang="en"``: the
    rules' full text after their Vietnamese, a language's own name in the language menu)."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.DOTALL)
    html = re.sub(r'<(\w+)\b[^>]*\blang="en"[^>]*>.*?</\1>', " ", html, flags=re.DOTALL)
    return unescape(re.sub(r"<[^>]+>", " ", html))


def _answers(client: FlaskClient) -> Iterator[tuple[str, str]]:
    for route, walked in ROUTES.items():
        if isinstance(walked, str):
            continue
        if route.startswith("/v1/") and route[4:] in ("score", "score/batch", "verify", "evaluate", "arrange"):
            for body in walked:
                answer = client.post(route, json=body, headers=VI)
                yield route, answer.get_data(as_text=True)
            continue
        for value in walked or [None]:
            path = route if value is None else re.sub(r"<[^>]+>", value, route)
            answer = client.get(path, headers=VI)
            yield path, answer.get_data(as_text=True)


def test_every_route_is_walked_or_said_why_not(app: Flask) -> None:
    routes = {rule.rule for rule in app.url_map.iter_rules() if rule.endpoint != "static"}
    assert routes == set(ROUTES)


def test_no_route_answers_a_vietnamese_reader_in_english(client: FlaskClient) -> None:
    found: dict[str, list[str]] = {}
    read = 0
    for where, text in _answers(client):
        if where == "/docs/rules":  # the rulesets in Vietnamese first, then the full text marked English
            assert '<html lang="vi">' in text and "Luật chơi dịch vụ này dùng để tính điểm" in text
        if text.lstrip().startswith(("{", "[")):
            said = list(_texts(json.loads(text)))
            if where.startswith("/viewer/texts/"):
                said = list(json.loads(text).values())
        else:
            said = [_page_words(text)]
        read += len(said)
        for sentence in said:
            if english(sentence):
                found.setdefault(where, []).append(sentence)
    assert read > 300  # the walk reads what it says it does
    assert found == {}


def _cli(capsys: pytest.CaptureFixture[str], *words: str) -> str:
    with contextlib.suppress(SystemExit):
        main(list(words))
    out = capsys.readouterr()
    return out.out + out.err


COMMANDS = ["arrange", "evaluate", "score", "verify", "rooms", "replay", "rulesets", "keys", "receipts", "log", "serve"]


def test_every_command_s_help_is_vietnamese(capsys: pytest.CaptureFixture[str]) -> None:
    helps = {"maubinh": _cli(capsys, "--help", "--lang", "vi")}
    for command in COMMANDS:
        helps[command] = _cli(capsys, command, "--help", "--lang", "vi")
    for group, subcommands in (
        ("rulesets", ()),
        ("keys", ("new", "check")),
        ("receipts", ("verify", "make")),
        ("log", ("serve", "vkey", "check", "monitor", "proof", "witness", "cosign")),
    ):
        for sub in subcommands:
            helps[f"{group} {sub}"] = _cli(capsys, group, sub, "--help", "--lang", "vi")
    assert all(text.startswith("cách dùng: ") for text in helps.values()), helps
    assert {name: english(text) for name, text in helps.items() if english(text)} == {}


def test_every_operation_s_answer_on_the_command_line_is_vietnamese(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    bodies = {
        "score": _fouled_room(),
        "verify": _verify({"amounts": {"P": -9000, "Q": 9000}, "ledger": RELABELLED}),
        "evaluate": ROUTES["/v1/evaluate"][1],
        "arrange": ROUTES["/v1/arrange"][0],
    }
    found = {}
    for command, body in bodies.items():
        path = tmp_path / f"{command}.json"
        path.write_text(json.dumps(body))
        said = list(_texts(json.loads(_cli(capsys, command, str(path), "--lang", "vi").splitlines()[0])))
        assert said, command
        found[command] = [s for s in said if english(s)]
    shown = _cli(capsys, "rulesets", "maubinh-chi-at", "--lang", "vi")
    found["rulesets"] = [s for s in _texts(json.loads(shown)) if english(s)]
    assert {command: leaked for command, leaked in found.items() if leaked} == {}


def test_every_built_in_choice_is_said_in_vietnamese_beside_its_english(client: FlaskClient) -> None:
    """A ruleset's choices stay English in its document (its digest covers them); each has its
    Vietnamese beside it, in every answer whatever the language (one representation per ETag)."""
    listed = client.get("/v1/rulesets").get_json()["rulesets"]
    choices = 0
    for ruleset in listed:
        for version in ruleset["versions"]:
            english = client.get(f"/v1/rulesets/{ruleset['id']}@{version}").get_json()
            vietnamese = client.get(f"/v1/rulesets/{ruleset['id']}@{version}", headers=VI).get_json()
            assert english == vietnamese
            for choice in english["choices"]:
                assert choice["decision_vi"] and choice["reason_vi"], choice["id"]
                choices += 1
    assert choices > 100


def test_a_choice_names_each_hand_by_its_ruleset_s_label_not_its_field(client: FlaskClient) -> None:
    """Review 6, items 22-24: "front (chi 3 lá) mạnh hơn middle" put the fields' English in a rule
    sentence (the detector allows the names, since errors quote them as fields); each ruleset's own label
    says the hand, maubinh-bao's counting from the 3-card hand, and no placeholder is left."""
    said = {}
    for ruleset in ("maubinh-2020", "maubinh-bao", "maubinh-chi-at"):
        for choice in client.get(f"/v1/rulesets/{ruleset}").get_json()["choices"]:
            for member in ("decision_vi", "reason_vi"):
                assert not re.search(r"\b(front|middle|back|automatic)\b|[{}]", choice[member]), choice[member]
                words = re.sub(r"^[a-z_.]+ = [^:]*(: )?", "", choice[member])  # review 7: "timeout = as_arranged."
                assert re.search("[^\x00-\x7f]", words), choice[member]  # in words, not only the config
                said[ruleset, choice["id"], member] = choice[member]
    fouls = {ruleset: text for (ruleset, _, _), text in said.items() if text.startswith("Bài chỉ binh lủng khi")}
    assert fouls["maubinh-2020"].startswith(
        "Bài chỉ binh lủng khi chi 3 (3 lá) mạnh hơn chi 2, hoặc chi 2 mạnh hơn chi 1"
    )
    assert fouls["maubinh-bao"].startswith("Bài chỉ binh lủng khi chi đầu (3 lá) mạnh hơn chi giữa, hoặc chi giữa")
    page = _page_words(client.get("/docs/rules", headers=VI).get_data(as_text=True))
    assert "chi 3 (3 lá) mạnh hơn chi 2" in page and "cùng các byte" not in page and "automatic" not in page
    # review 7, item 3: "chi sau mạnh hơn chi trước" said the opposite under labels counting from the front
    assert "chi cuối phải mạnh hơn hoặc bằng chi giữa, chi giữa phải mạnh hơn hoặc bằng chi đầu" in page
    assert "chi sau mạnh hơn chi trước là" not in page
    html = client.get("/docs/rules", headers=VI).get_data(as_text=True)
    knobs = re.findall(r"<li><code>[a-z_]+\.[a-z_]+ = [^<]*</code>([^<]*)</li>", html)
    assert len(knobs) > 20 and all(words.startswith(": ") for words in knobs)  # each knob says what it decides
    # review 7, item 9: "= false : không tính chi Át khi …" read as the rule in force, the opposite of false
    assert "aces.skip_when_instant_win = false</code>: có bỏ chi Át khi có người thắng trắng không</li>" in html


def _placeholders(parser: argparse.ArgumentParser) -> Iterator[str]:
    """Every metavar a help page shows, through every subcommand's parser."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _placeholders(sub)
        elif action.option_strings or action.dest != "help":
            shown = (
                action.metavar
                if action.metavar is not None
                else action.dest.upper()
                if action.option_strings
                else action.dest
            )
            if not action.choices and action.nargs != 0:
                yield str(shown)


def test_every_placeholder_of_the_help_is_vietnamese() -> None:
    """Review 6, item 30: "-o FILE", "--keys JWKS", "thiếu đối số bắt buộc: PATH" in a Vietnamese help
    page that elsewhere says "check TỆP…|THƯ MỤC"; argparse names an option's value by its metavar."""
    shown = set(_placeholders(_parser("vi")))
    assert "TỆP" in shown and "ĐƯỜNG DẪN" in shown
    assert {word for word in shown if re.fullmatch(r"[A-Za-z_|. …]+", word)} == set()
    english = set(_placeholders(_parser("en")))
    assert {"FILE", "file", "JWKS", "PATH", "JOBS"} <= english  # English as it was


def test_the_phrasebook_says_no_english_the_walk_cannot_reach() -> None:
    """Review 6: "header", "worker" and "JSON lines" were in texts no route or command triggered."""
    from service.texts import phrasebook

    said = {key: re.sub(r"\{\w+\}", "", text) for key, text in phrasebook("vi").items()}  # a {field} is no word
    leaked = {key: text for key, text in said.items() if re.search(r"\b(header|worker|JSON lines)\b", text)}
    assert leaked == {}


def _positionals(parser: argparse.ArgumentParser, name: str = "maubinh") -> Iterator[tuple[str, argparse.Action]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, sub in action.choices.items():
                yield from _positionals(sub, f"{name} {command}")
        elif not action.option_strings:
            yield name, action


def test_every_positional_argument_says_what_it_takes() -> None:
    """Review 7: `maubinh rulesets --help` listed "MÃ | check TỆP…" with nothing beside it, and no lock."""
    for language in ("vi", "en"):
        bare = [f"{name} {action.dest}" for name, action in _positionals(_parser(language)) if not action.help]
        assert bare == [], language
    said = dict((name, action) for name, action in _positionals(_parser("vi")))["maubinh rulesets"]
    assert "lock THƯ MỤC" in str(said.metavar) and "lock THƯ MỤC: ghi THƯ MỤC/rulesets.lock" in str(said.help)


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.said: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.said.append(record.getMessage())


def test_serve_s_start_up_lines_are_in_the_language_asked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Review 7: under `serve --lang vi` only a refused start was Vietnamese; "answers are unsigned: …",
    "rounds are not recorded: …", "/v1 routes are open to anyone: …" and the unready log were English."""
    from service.api import create_app
    from service.api.config import Settings, key_requirement, rounds_state, signing_state, start_language
    from service.server import serve
    from service.support import metrics_store

    class Started(Exception):
        pass

    def execve(path: str, argv: list[str], env: dict[str, str]) -> None:
        raise Started(env)

    monkeypatch.setenv(metrics_store.ENV, str(tmp_path))  # serve pops it; put back after
    monkeypatch.setattr(serve.os, "execve", execve)
    with pytest.raises(Started) as started:
        serve.serve(None, None, "vi")
    monkeypatch.setenv("MAUBINH_START_LANG", started.value.args[0]["MAUBINH_START_LANG"])
    said = [state(Settings()).render(start_language()) for state in (key_requirement, signing_state, rounds_state)]
    assert said == [
        "các đường dẫn /v1 mở cho mọi người: chưa đặt MAUBINH_CALLERS_FILE lẫn MAUBINH_API_KEYS",
        "phản hồi không được ký: chưa đặt MAUBINH_SIGNING_KEY_FILE",
        "không ghi nhớ các ván: chưa đặt MAUBINH_ROUNDS_REDIS_URL (một round_id có thể được tính với bất kỳ bài nào)",
    ]
    lines = _Lines()
    logging.getLogger("maubinh").addHandler(lines)
    try:
        create_app({"log_requests": False, "rulesets_dir": str(tmp_path / "missing")})
    finally:
        logging.getLogger("maubinh").removeHandler(lines)
    assert lines.said and lines.said[0].startswith("MAUBINH_RULESETS_DIR có một tệp bộ luật hỏng; dịch vụ khởi động")
    assert [english_in(line) for line in [*said, *lines.said]] == [[]] * 4, lines.said
