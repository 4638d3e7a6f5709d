"""Every 422 kind of openapi.yaml, each naming the field by JSON pointer; every fault, not the first."""

import json
from typing import Any

import pytest
from helpers import room, seat
from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import ValidationError

from service.contract import Fault, RoomRejected
from service.documents import BadDocument, loads, score_document
from service.serialize import rejected_json
from service.support.strict_json import strictly
from service.validation.schemas import ROOM_SCHEMA, PlayerSchema

P = "AS AD 7C 7D 2H | KS KH 9H 5D 3S | QH JD 4C"
Q = "9S 9D 9C 4S 4D | 8S 8H 6C 6D TS | AH 3D 2C"


def faults(request: Any) -> list[tuple[str, str]]:
    with pytest.raises(RoomRejected) as rejected:
        score_document(request)
    return [(f.pointer, f.message) for f in rejected.value.faults]


def pointers(request: Any) -> list[str]:
    return [pointer for pointer, _ in faults(request)]


def test_bad_card_text_names_the_card() -> None:
    bad = seat("P", P.replace("7C", "1S"))
    assert faults(room("maubinh-2020", bad, seat("Q", Q))) == [
        ("/players/0/back/2", "'1S': unknown rank '1' (use 2-9, T or 10, J, Q, K, A)")
    ]


def test_unicode_and_junk_in_card_strings() -> None:
    bad = seat("P", P)
    bad["back"][0] = "A💥"
    bad["middle"][1] = 7
    bad["front"][2] = "4 C"
    assert pointers(room("maubinh-2020", bad, seat("Q", Q))) == [
        "/players/0/back/0",
        "/players/0/middle/1",
        "/players/0/front/2",
    ]


def test_wrong_chi_sizes() -> None:
    player = seat("P", P)
    player["front"].append(player["back"].pop())
    assert faults(room("maubinh-bao", player, seat("Q", Q))) == [
        ("/players/0/back", "back needs 5 cards; it has 4"),
        ("/players/0/front", "front needs 3 cards; it has 4"),
    ]


def test_bare_cards_must_be_13() -> None:
    assert pointers(room("maubinh-chi-at", seat("P", P), seat("Q", "9S 9D 9C 4S", status="left"))) == [
        "/players/1/cards"
    ]


def test_duplicate_card_reported_at_every_later_occurrence_in_request_order() -> None:
    q = Q.replace("9S", "AS").replace("TS", "KS")  # AS and KS also in P
    r = "2S 2D 3C 3H 4H | 5S 5C 6H 6S 7S | AS 8C 8D"
    assert faults(room("maubinh-2020", seat("P", P), seat("Q", q), seat("R", r))) == [
        ("/players/1/back/0", "AS appears twice in the room (first at /players/0/back/0)"),
        ("/players/1/middle/4", "KS appears twice in the room (first at /players/0/middle/0)"),
        ("/players/2/front/0", "AS appears twice in the room (first at /players/0/back/0)"),
    ]


def test_duplicate_inside_one_hand() -> None:
    assert pointers(room("maubinh-2020", seat("P", P.replace("2H", "AS")), seat("Q", Q))) == ["/players/0/back/4"]


def test_unknown_ruleset() -> None:
    assert faults(room("maubinh-1999", seat("P", P), seat("Q", Q))) == [
        ("/ruleset", "unknown ruleset 'maubinh-1999'; this service knows maubinh-2020, maubinh-bao, maubinh-chi-at")
    ]


@pytest.mark.parametrize("count", [0, 1, 5])
def test_player_count_outside_the_rulesets_range(count: int) -> None:
    deck = [f"{r}{s}" for r in "23456789TJQKA" for s in "SCDH"]
    players = [{"id": f"p{k}", "status": "left", "cards": deck[k * 10 : k * 10 + 13]} for k in range(count)]
    reported = faults(room("maubinh-2020", *players))
    assert ("/players", f"maubinh-2020 seats 2 to 4 players; this room has {count}") in reported


def test_duplicate_player_id() -> None:
    assert faults(room("maubinh-2020", seat("P", P), seat("P", Q))) == [
        ("/players/1/id", "duplicate player id 'P' (first at /players/0)")
    ]


@pytest.mark.parametrize("player_id", ["", "a b", "người", "x" * 65, "p/1"])
def test_player_id_shape(player_id: str) -> None:
    assert pointers(room("maubinh-2020", seat(player_id, P), seat("Q", Q))) == ["/players/0/id"]


@pytest.mark.parametrize("declare", [True, False])
def test_declare_in_an_automatic_ruleset_is_refused_even_false(declare: bool) -> None:
    assert pointers(room("maubinh-chi-at", seat("P", P, declare=declare), seat("Q", Q))) == ["/players/0/declare"]


def test_declare_from_a_timed_out_player_is_refused() -> None:
    reported = faults(room("maubinh-bao", seat("P", P), seat("Q", Q, status="timed_out", declare=True)))
    assert reported == [
        (
            "/players/1/declare",
            "only an arranged player may declare (BÁO), not a player who timed out (status 'timed_out')",
        )
    ]


def test_false_declaration_is_checked_once_the_rest_is_well_formed() -> None:
    assert pointers(room("maubinh-bao", seat("P", P, declare=True), seat("Q", Q))) == ["/players/0/declare"]
    both = room("maubinh-bao", seat("P", P, declare=True), seat("Q", Q.replace("AH", "ZZ")))
    assert pointers(both) == ["/players/1/front/0"]


@pytest.mark.parametrize("stake", [0, -5, 1.5, "1000", True, None, 10**12 + 1, [1000]])
def test_bad_stakes(stake: object) -> None:
    assert pointers(room("maubinh-2020", seat("P", P), seat("Q", Q), stake=stake)) == ["/stake"]  # type: ignore[arg-type]


@pytest.mark.parametrize(("stake", "read"), [(1000.0, 1000), (10**12, 10**12), (1, 1)])
def test_integral_stakes(stake: float, read: int) -> None:
    result = score_document(room("maubinh-2020", seat("P", P), seat("Q", Q), stake=stake))  # type: ignore[arg-type]
    assert result["stake"] == read and isinstance(result["stake"], int)
    assert result["players"][0]["amount"] == -9 * read


def test_round_id_is_echoed_and_bounded() -> None:
    assert score_document(room("maubinh-2020", seat("P", P), seat("Q", Q), round_id="t7/r1"))["round_id"] == "t7/r1"
    assert pointers(room("maubinh-2020", seat("P", P), seat("Q", Q), round_id="x" * 129)) == ["/round_id"]


def test_one_form_only() -> None:
    player = seat("P", P)
    player["cards"] = P.replace("|", " ").split()
    reported = faults(room("maubinh-chi-at", player, seat("Q", Q)))
    assert ("/players/0/cards", "send either back, middle and front, or cards, never both") in reported


def test_an_arranged_player_needs_all_three_hands() -> None:
    player = seat("P", P)
    del player["front"]
    assert pointers(room("maubinh-2020", player, seat("Q", Q))) == ["/players/0/front"]


def test_a_leaver_needs_some_cards() -> None:
    assert faults(room("maubinh-2020", {"id": "P", "status": "left"}, seat("Q", Q))) == [
        ("/players/0", "give the arrangement (back, middle, front) or the 13 cards")
    ]


def test_unknown_fields_and_bad_status() -> None:
    player = seat("P", P, colour="red", status="sleeping")
    assert pointers({**room("maubinh-2020", player, seat("Q", Q)), "table": 7}) == [
        "/players/0/status",
        "/players/0/colour",
        "/table",
    ]


@pytest.mark.parametrize("body", [[], "room", 7, None, True])
def test_a_body_that_is_not_an_object(body: object) -> None:
    assert pointers(body) == [""]


def test_wrong_types_everywhere_are_all_reported() -> None:
    request = {"ruleset": 2020, "stake": "x", "round_id": 5, "players": [7, {"id": 1, "back": "AS"}]}
    assert pointers(request) == [
        "/ruleset",
        "/stake",
        "/round_id",
        "/players/0",
        "/players/1/id",
        "/players/1/back",
        "/players/1/middle",
        "/players/1/front",
    ]


@pytest.mark.parametrize("players", [7, "P", {"id": "P"}])
def test_players_that_are_not_an_array(players: object) -> None:
    assert faults({"ruleset": "maubinh-2020", "players": players}) == [("/players", "must be an array")]


def test_missing_required_fields() -> None:
    assert pointers({}) == ["/ruleset", "/players"]


@pytest.mark.parametrize(
    "body",
    [
        b"{",
        b"",
        b"\xff\xfe",
        b'{"a": NaN}',
        b'{"a": Infinity}',
        b'{"a": 1, "a": 2}',
        b"[" * 100000,
        b'{"stake": ' + b"9" * 5000 + b"}",
    ],
)
def test_documents_that_are_not_json(body: bytes) -> None:
    with pytest.raises(BadDocument):
        loads(body)


@pytest.mark.parametrize(
    "compact",
    [
        b'{"a":1,"a":2}',
        b'{"a":{"b":1,"b":1}}',
        b'{"' + b"k" * 257 + b'":1}',
        b'{"a":"\\ud800"}',
        b'{"a":10.000000000000000001}',
        b'{"a":1.5,"b":[1,"\\u001f","\xc3\xa9"],"c":null}',
        b'{"a":' + b"[" * 40 + b"]" * 40 + b"}",
        b'{"a":' + b"9" * 30 + b"}",
    ],
)
def test_a_compact_text_reads_as_the_same_text_with_white_space(compact: bytes) -> None:
    """A compact text (as orjson writes it: strict_json's fast path) gets the verdict the strict reader
    gives the same text spaced out: the same document, or the same refusal."""

    def verdict(body: bytes) -> Any:
        try:
            return loads(body)
        except BadDocument as refused:
            return str(refused)

    spaced = compact.replace(b'":', b'": ').replace(b",", b", ")
    assert verdict(compact) == verdict(spaced) == verdict(compact.decode("utf-8"))
    assert verdict(b'{"a":1,"a":2}') == "the key 'a' appears twice in one object, at /a"


def _verdict(read: Any, body: bytes) -> Any:
    try:
        return ("read", read(body))
    except BadDocument as refused:
        return ("refused", str(refused))


@pytest.mark.parametrize(
    "body",
    [
        b'{"a": 1, "a": 2}',
        b'{"a": "x y", "a": "z"}',  # the dropped value holds a space, the kept one none
        b'{"a": "z", "a": "x y"}',
        b'{"a b": 1, "a b": 2}',
        b'{"a":{"b": 1},\n "a":{"b": 1}}',
        b'{"a": "\\u0020", "b": [1, 2]}',  # an escaped space: read as a space, written raw
        b'{"a": "\\t\\n", "b" :\t[ 1 ,2 ] }\n',
        b'{"players": [{"id": "Nguy\xe1\xbb\x85n V\xc4\x83n A", "back": ["AS"]}]}',
        b'{"a": 1.0, "b": 2}',
        b'{"a": 01}',
        b'{"a": 1}  x',
        b'[1, 2, {"k": [true, false, null]}]',
    ],
)
def test_the_fast_path_gives_the_strict_readers_verdict_on_spaced_texts(body: bytes) -> None:
    """strict_json reads a spaced text with orjson when, white space between tokens dropped, it is
    orjson's compact writing: never where a key is written twice, or a string holds a space."""
    assert _verdict(loads, body) == _verdict(strictly, body)


_KEYS = st.sampled_from(["a", "b", "a b", " ", "k:"])
_SCALARS = st.one_of(st.integers(-(2**70), 2**70), st.sampled_from(["x", "x y", " ", "\t", "é"]), st.none())


def _spaced(draw: Any, value: Any, depth: int = 0) -> str:
    """``value`` written with white space drawn between tokens, and maybe a member written twice."""
    gap = lambda: draw(st.sampled_from(["", " ", "\n", "\t ", "\r\n"]))  # noqa: E731
    if isinstance(value, dict):
        members = [
            f"{gap()}{json.dumps(k)}{gap()}:{gap()}{_spaced(draw, v, depth + 1)}{gap()}" for k, v in value.items()
        ]
        if members and draw(st.booleans()):
            members.append(members[draw(st.integers(0, len(members) - 1))])
        return "{" + ",".join(members) + "}"
    if isinstance(value, list):
        return "[" + ",".join(f"{gap()}{_spaced(draw, v, depth + 1)}{gap()}" for v in value) + "]"
    return json.dumps(value, ensure_ascii=draw(st.booleans()))


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_the_fast_path_gives_the_strict_readers_verdict_on_random_spaced_texts(data: st.DataObject) -> None:
    document = data.draw(
        st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3))
    )
    body = _spaced(data.draw, {"d": document}).encode()
    assert _verdict(loads, body) == _verdict(strictly, body)


def test_json_pointer_escapes_unknown_keys() -> None:
    assert pointers({"ruleset": "maubinh-2020", "players": [], "a/b~c": 1})[-1] == "/a~1b~0c"


def test_a_huge_players_array_is_refused_on_its_length_alone() -> None:
    reported = faults({"ruleset": "maubinh-2020", "players": [0] * 20_000})
    assert reported == [("/players", "a room seats 2 to 4 players; this one has 20,000, too many to check one by one")]


def test_a_long_list_of_faults_is_cut_at_120_with_the_total_in_the_detail() -> None:
    body = rejected_json([Fault(f"/x/{k}", "m", "required") for k in range(600)])
    assert len(body["errors"]) == 120
    assert "600 places" in body["detail"] and "first 120" in body["detail"]


def test_every_fault_of_the_worst_real_room_is_listed() -> None:
    """Four players, every card of both forms bad: 4 × (5 + 5 + 3 + 13) card faults, plus each form
    sent twice; every one is listed, none cut."""
    bad = {"id": "p", "back": ["1S"] * 5, "middle": ["1S"] * 5, "front": ["1S"] * 3, "cards": ["1S"] * 13}
    reported = faults({"ruleset": "maubinh-2020", "players": [{**bad, "id": f"p{k}"} for k in range(4)]})
    assert 4 * 26 <= len(reported) <= 120


def test_a_card_list_longer_than_any_hand_is_refused_on_its_length_alone() -> None:
    room = {"ruleset": "maubinh-2020", "players": [{"id": "p", "back": ["x"] * 100_000}, {"id": "q"}]}
    reported = [f for f in faults(room) if f[0].startswith("/players/0/back")]
    assert reported == [("/players/0/back", "back needs 5 cards; it has 100,000, too many to check one by one")]


@pytest.mark.parametrize("key", ["³", "²⁵", "٣", "①"])
def test_a_key_made_of_non_ascii_digits_is_a_fault_not_a_crash(key: str) -> None:
    """Found by fuzzing /v1/verify: "³".isdigit() is true but int("³") raises, and the fault sort crashed."""
    with pytest.raises(RoomRejected) as refused:
        score_document({"ruleset": "maubinh-2020", "players": [], key: 1})
    assert ("/" + key, "unknown_field") in [(f.pointer, f.code) for f in refused.value.faults]
    from service.documents import verify_document

    claim = {"ruleset": "maubinh-2020", "players": [{"id": "P"}, {"id": "Q"}], "claimed": {"amounts": {key: 0}}}
    with pytest.raises(RoomRejected):
        verify_document(claim)


_CARD_TEXTS = st.sampled_from(["AS", "KH", "10d", "T♥", "2c", "1S", "A💥", "", "QQ"])
_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["P1", "bad id!", "arranged", "timed_out", "left", "gone", "x" * 70]),
    st.lists(st.one_of(_CARD_TEXTS, st.integers(0, 2), st.none()), max_size=15),
    st.dictionaries(st.sampled_from(["a", "id"]), st.integers(), max_size=2),
)
_KEYS = st.sampled_from(["id", "status", "declare", "back", "middle", "front", "cards", "hand", "ID", ""])
_PLAYERS = st.lists(st.one_of(st.dictionaries(_KEYS, _VALUES, max_size=8), _VALUES), max_size=5)


def _loaded(load: Any, value: Any) -> tuple[str, Any]:
    try:
        return "data", load(value)
    except ValidationError as error:
        return "errors", error.messages


@settings(max_examples=600, deadline=None)
@given(_PLAYERS)
def test_players_load_as_a_player_schema_load_of_many_would(players: list[Any]) -> None:
    """The ``players`` field runs PlayerSchema's fields itself: for any list, the same data, or the same
    faults (by index, field and text) as marshmallow's own ``PlayerSchema(many=True).load``."""
    reference = PlayerSchema(many=True)
    assert _loaded(ROOM_SCHEMA.fields["players"].deserialize, players) == _loaded(reference.load, players)


def test_marshmallow_s_e_mail_patterns_compile_at_first_use_and_still_work() -> None:
    """The schemas import marshmallow with its e-mail patterns left to their first use (most of a one-room
    CLI's start-up otherwise); re.compile is the standard one again, and the validator works. In a fresh
    interpreter: here, another test module may have imported marshmallow first."""
    import subprocess
    import sys

    code = """if True:
        import re
        import service.validation.schemas
        import marshmallow.validate
        assert re.compile.__module__ == "re"
        assert not isinstance(marshmallow.validate.Email.DOMAIN_REGEX, re.Pattern)
        email = marshmallow.validate.Email()
        assert email("player@example.vn") == "player@example.vn"
        try:
            email("not an address")
            raise SystemExit("an address that is none was taken")
        except marshmallow.ValidationError:
            pass
        assert isinstance(marshmallow.validate.Email.DOMAIN_REGEX.match("example.vn"), re.Match)
        print("ok")
    """
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert done.stdout.strip() == "ok", done.stderr
