"""The phrasebooks: one per language, the same keys, each used, and Vietnamese answers in Vietnamese.

The checks read the catalogues and the source, not a list kept by hand: a key added to the code but
not to a catalogue, or left in a catalogue after the code stopped using it, fails here.
"""

from __future__ import annotations

import ast
import json
import random
import re
import string
from pathlib import Path
from typing import Any

import pytest
from helpers import DECK_TEXT, golden_cases

from service.documents import OPERATIONS, answer, score_document, verify_document
from service.serialize import dumps
from service.texts import LANGUAGES, Text, localize, phrasebook

SERVICE = Path(__file__).resolve().parents[2] / "service"
KEY = re.compile(
    r"^(advisor|answer|page|ledger|rule|foul_reason|fault|card|ruleset|bad_json|step|verify|problem|cli|report|oserror|setting|callers|keys|receipts|replay|table|tlog)\.[A-Za-z0-9_]+$"
)
TEXT_FIELDS = {"explanation", "rule_text", "title", "detail", "message", "field"}  # field: arrange's model.field
"""The human-readable fields of every answer; everything else is a machine field."""


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _string_constants() -> dict[str, list[str]]:
    """Every string literal in the service's code that looks like a text key, and where it is."""
    found: dict[str, list[str]] = {}
    for path in SERVICE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and KEY.match(node.value):
                found.setdefault(node.value, []).append(f"{path.name}:{node.lineno}")
    return found


def test_both_catalogues_hold_the_same_keys() -> None:
    english, vietnamese = phrasebook("en"), phrasebook("vi")
    assert sorted(set(english) - set(vietnamese)) == [], "missing in vi.json"
    assert sorted(set(vietnamese) - set(english)) == [], "missing in en.json"


def _viewer_keys() -> dict[str, list[str]]:
    """Every quoted ``viewer.*`` key in the viewer's page and script; ``counted(key)`` also uses key_one."""
    found: dict[str, list[str]] = {}
    for path in (SERVICE / "static").glob("viewer.*"):
        text = path.read_text("utf-8")
        for match in re.finditer(r"[\"'](viewer\.[a-z0-9_]+)[\"']", text):
            found.setdefault(match[1], []).append(path.name)
        for match in re.finditer(r"counted\(\"(viewer\.[a-z0-9_]+)\"", text):
            found.setdefault(f"{match[1]}_one", []).append(path.name)
    return found


def test_every_key_the_code_names_exists_and_every_key_is_named() -> None:
    used = _string_constants() | _viewer_keys()
    assert len(_viewer_keys()) > 100 and len(_string_constants()) > 100  # both scans find what they look for
    for language in LANGUAGES:
        keys = set(phrasebook(language))
        assert {k: where for k, where in used.items() if k not in keys} == {}, f"missing in {language}.json"
        assert sorted(keys - set(used)) == [], f"unused in {language}.json"


def _service_texts(language: str) -> dict[str, str]:
    """The texts Python renders (str.format templates); the viewer's own are rendered by its script."""
    return {key: text for key, text in phrasebook(language).items() if not key.startswith("viewer.")}


def test_viewer_templates_ask_only_for_fields_the_english_names() -> None:
    english, vietnamese = phrasebook("en"), phrasebook("vi")
    fields = re.compile(r"\{([a-z_]+)\}")
    for key in english:
        if key.startswith("viewer."):
            assert set(fields.findall(vietnamese[key])) <= set(fields.findall(english[key])), key


MORE_FIELDS = {
    "ruleset.schema_": {"value", "expected"},  # rulesets.schema_text: English quotes jsonschema instead
    # Vietnamese says the sum a support agent reads aloud, who pays, and a fouled loser's scoop as a foul
    # and the bonus inside a lost amount above 3 chi, and a sweep's factor as a product (review 6)
    "ledger.scoop_": {"times", "extra", "units", "won", "gap", "pays", "with_bonus"},
    "ledger.sweep_": {"times", "extra", "units", "gap", "pays", "sweep_by", "sweep_opening", "factor", "with_bonus"},
    "ledger.foul_": {"extra", "units", "winner", "gap", "pays", "with_bonus"},
    "ledger.no_ace": {"units"},
    "cli.summary": {"done"},  # "đã tính 300 ván: 249 xong, 51 bị từ chối", as verify's summary counts
    "ledger.ace_balance": {"payer_owes", "payee_gets"},  # a payer's whole balance, before this line's part
    "ledger.scooped_by_": {"loser"},  # Vietnamese names who was scooped
    # an expected value as "ăn 1,25" or "thua 1,21", never a negative win (review 6, items 5, 7)
    "answer.split": {"gain", "most"},
    "answer.declare": {"declared_gain", "played_gain"},
    "answer.do_not_declare": {"declared_gain", "played_gain"},
    "verify.owes_and_is_owed": {"debtors"},  # each debtor its own clause (review 6, item 9)
    "ledger.chi": {"decided"},  # where two high cards or flushes named alike were decided (review 6, item 27)
}
"""Fields the code gives that the English template does not use."""


def test_vietnamese_templates_ask_only_for_fields_the_code_gives() -> None:
    """A field the English template names is one the code passes, as are MORE_FIELDS."""
    for key, template in _service_texts("vi").items():
        given = _fields(phrasebook("en")[key])
        given |= {field for prefix, more in MORE_FIELDS.items() if key.startswith(prefix) for field in more}
        assert _fields(template) <= given, key


def _vietnamese_rooms() -> list[dict[str, Any]]:
    """Every golden room (each built-in ruleset and the house variants), and random deals per
    built-in ruleset arranged in dealt order: fouls, scoops and bonuses of every kind."""
    rooms = [case["request"] for name in ("public.jsonl", "house-public.jsonl") for case in golden_cases(name)]
    rng = random.Random(11)
    for ruleset in ("maubinh-2020", "maubinh-chi-at", "maubinh-bao"):
        for _ in range(40):
            deck = rng.sample(DECK_TEXT, 52)
            players = [
                {"id": f"p{k}", "back": deck[13 * k : 13 * k + 5], "middle": deck[13 * k + 5 : 13 * k + 10],
                 "front": deck[13 * k + 10 : 13 * k + 13]}
                for k in range(4)
            ]  # fmt: skip
            rooms.append({"ruleset": ruleset, "players": players})
    return rooms


def _english_words() -> set[str]:
    """Words of the English templates, outside their fields (the game's own "chi" is Vietnamese)."""
    words: set[str] = set()
    for template in _service_texts("en").values():
        literal = "".join(text for text, _, _, _ in string.Formatter().parse(template))
        words |= {w.lower() for w in re.findall(r"[A-Za-z]{3,}", _machine_free(literal))}
    return words - {"chi", "mậu", "binh"}  # the game's own words, which the English says too


def _machine_free(text: str) -> str:
    """Without what is a name in any language: ruleset fields with their value (bonuses.mode add), ids
    (four_of_a_kind), rule citations (docs/rules.md §4), and card texts."""
    text = re.sub(r"docs/rules\.md", " ", text)
    text = re.sub(r"\b[a-z_]+\.[a-z_.]+(?: [a-z]+\b)?", " ", text)
    text = re.sub(r"\S*[._/]\S*", " ", text)
    return re.sub(r"\b(?:[2-9TJQKA]|10)[SCDH]\b", " ", text)


def test_vietnamese_explanations_hold_no_english_word() -> None:
    english = _english_words()
    assert {"holds", "beats", "fouled", "scoop", "claim"} <= english  # the check has teeth
    explanations = 0
    for room in _vietnamese_rooms():
        status, body = answer(OPERATIONS["score"], json.dumps(room).encode(), language="vi")
        if status != 200:
            continue
        ids = {p["id"] for p in body["players"]}
        for line in json.loads(dumps(body, "vi"))["ledger"]:
            for said in (line["explanation"], line["rule_text"]):  # rule_text: review 5, item 3
                words = re.findall(r"[A-Za-z]{3,}", _machine_free(said))
                leaked = {w for w in words if w.lower() in english and w not in ids}
                assert not leaked, said
            explanations += 1
    assert explanations > 1000


def test_a_vietnamese_verify_explains_in_vietnamese() -> None:
    room = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]
    claimed = {
        "amounts": {"P": -3000, "Q": 3000},
        "ledger": [{"payer": "P", "payee": "Q", "amount": 3000, "step": "chi"}],
    }
    body = json.loads(dumps(verify_document({**room, "claimed": claimed}, None, "vi"), "vi"))
    assert body["result"]["ledger"][3]["explanation"].startswith("Q thắng cả 3 chi, bắt sập P")
    assert body["players"][0]["explanation"] == [
        "P: game ghi −3.000, theo luật −9.000 → P còn phải trả 6.000 cho Q",
        "sập: theo luật −6.000, game không ghi khoản này",
    ]
    assert body["players"][1]["explanation"] == [
        "Q: game ghi +3.000, theo luật +9.000 → Q còn được nhận 6.000 từ P",
        "sập: theo luật +6.000, game không ghi khoản này",
    ]


def _without_texts(document: Any) -> Any:
    if isinstance(document, dict):
        return {k: _without_texts(v) for k, v in document.items() if k not in TEXT_FIELDS}
    if isinstance(document, list):
        return [_without_texts(v) for v in document]
    return document


@pytest.mark.parametrize("operation", ["score", "evaluate", "arrange", "verify"])
def test_machine_fields_do_not_change_with_the_language(operation: str) -> None:
    e1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]
    bodies = {
        "score": e1,
        "verify": {**e1, "claimed": {"amounts": {"P": 0, "Q": 0}}},
        "evaluate": {"ruleset": "maubinh-2020", **{p: e1["players"][0][p] for p in ("back", "middle", "front")}},
        "arrange": {"ruleset": "maubinh-bao", "cards": DECK_TEXT[:13]},
    }
    for request in (bodies[operation], {**bodies[operation], "stake": "x", "ruleset": "maubinh-1999"}):
        status, body = answer(OPERATIONS[operation], json.dumps(request).encode())
        _, body_vi = answer(OPERATIONS[operation], json.dumps(request).encode(), language="vi")
        english, vietnamese = json.loads(dumps(body, "en")), json.loads(dumps(body_vi, "vi"))
        assert _without_texts(english) == _without_texts(vietnamese)
        if status != 200:
            assert english["type"] == vietnamese["type"] == "/problems/unprocessable-room"
            room = operation in ("score", "verify")  # evaluate and arrange send one player's cards: no room
            titles = (
                ("Unprocessable room", "Ván bài không xử lý được")
                if room
                else ("Unprocessable request", "Yêu cầu không xử lý được")
            )
            assert (english["title"], vietnamese["title"]) == titles


def test_a_text_is_its_english_and_renders_in_vietnamese() -> None:
    text = Text("fault.claim_not_zero_sum", total=5)
    assert text == "the claimed amounts sum to 5, not 0"
    assert text.render("vi") == "tổng các số tiền đã ghi là 5, phải bằng 0"
    assert localize({"a": [text, "plain"]}, "vi") == {"a": ["tổng các số tiền đã ghi là 5, phải bằng 0", "plain"]}


def test_an_arrangement_foul_names_its_chi_by_the_ruleset_s_labels() -> None:
    """Second review, item 1: in maubinh-bao chi 1 is the front, so "chi 2 mạnh hơn chi 1" named a legal order."""
    from helpers import golden_cases

    fouled = {c["name"]: c["request"] for c in golden_cases()}
    doubled = {"base": "maubinh-2020", "patch": {"fouls": {"foul_multiplier": 2}}}  # a foul line of its own
    fouled["maubinh-2020/n2/fouled"] = {**fouled["maubinh-2020/n2/fouled"], "ruleset": doubled}
    said = {}
    for name in ("maubinh-bao/n2/fouled", "maubinh-2020/n2/fouled"):
        body = json.loads(dumps(score_document(fouled[name], None, "vi"), "vi"))
        said[name] = next(line["explanation"] for line in body["ledger"] if line["step"] == "foul")
    assert "(chi giữa mạnh hơn chi cuối)" in said["maubinh-bao/n2/fouled"]
    assert "(chi 2 mạnh hơn chi 1)" in said["maubinh-2020/n2/fouled"]
