"""A body the strict reader refuses for a rule of its own is refused with where (found by an attack on
the API: a key twice in one of four players, or a lone surrogate, was said without a place, where a
syntax error says its line and column)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.support import json_rules
from service.support.json_places import first_fault, pointer
from service.support.strict_json import BadDocument, strictly
from service.texts import Text

ROOM = {
    "ruleset": {"base": "maubinh-2020", "patch": {"scoop": {"multiplier": 2}}},
    "stake": 1000,
    "players": [{"id": "P", "back": ["AS"]}, {"id": "Q", "back": ["KS"]}],
}


def _said(text: str) -> str:
    with pytest.raises(BadDocument) as refused:
        strictly(text)
    said: str = refused.value.args[0].render("en")
    return said


@pytest.mark.parametrize(
    ("text", "place"),
    [
        (json.dumps(ROOM).replace('"id": "Q"', '"id": "Q", "id": "R"'), "/players/1/id"),
        (
            json.dumps(ROOM).replace('"multiplier": 2', '"multiplier": 2, "multiplier": 3'),
            "/ruleset/patch/scoop/multiplier",
        ),
        (json.dumps(ROOM).replace('"id": "Q"', '"id": "\\ud800"'), "/players/1/id"),
        (json.dumps(ROOM).replace('"back": ["KS"]', '"b\\udc00ck": ["KS"]'), "/players/1/b\\udc00ck"),
        (json.dumps(ROOM).replace("1000", "NaN"), "/stake"),
        (json.dumps(ROOM).replace("1000", "1e400"), "/stake"),
        (json.dumps(ROOM).replace("1000", "10.000000000000000001"), "/stake"),
        (json.dumps(ROOM).replace("1000", "9" * 5000), "/stake"),
        (json.dumps(ROOM).replace("1000", "1.5e-99999999999999999999999"), "/stake"),
        (json.dumps({"a/b~c": {"k": 1}}).replace('"k": 1', '"k": 1, "k": 2'), "/a~1b~0c/k"),
        (json.dumps({**ROOM, "round_id": 0}).replace("0}", "[" * 3000 + "]" * 3000 + "}"), "/round_id/0/0/0/0/0/0/0/…"),
        (json.dumps({"k" * 300: 1}), "/" + "k" * 64 + "…"),
    ],
)
def test_a_refusal_of_the_reader_s_own_says_where(text: str, place: str) -> None:
    said = _said(text)
    assert said.endswith(f", at {place}"), said


@pytest.mark.parametrize("text", ["NaN", "[1, 2", '{"a": 1} x', '"\\ud800"'])
def test_a_fault_with_no_place_inside_is_said_as_before(text: str) -> None:
    """The document itself (a bare NaN, a lone string) or a syntax error (line and column): no pointer."""
    assert ", at /" not in _said(text)


def test_the_first_place_in_the_text_s_order_is_named_or_none_where_the_text_cannot_be_read_again() -> None:
    twice = Text("bad_json.duplicate_key", key="a")
    assert first_fault('{"a": 1, "a": 2, "b": {"a": 1, "a": 2}}', twice).render("en").endswith(", at /a")
    assert first_fault('{"b": {"a": 1, "a": 2}, "c": [1, {"a": 1, "a": 2}]}', twice).render("en").endswith(", at /b/a")
    nan = Text("bad_json.constant", name="NaN")
    assert first_fault('{"b": {"a": 1, "a": 2}, "c": NaN}', nan).render("en").endswith("NaN is not JSON, at /c")
    assert first_fault('{"s": NaN, "p": [], "p": []}', nan).render("en").endswith(", at /s")  # the fault it raised
    assert first_fault('{"a": 1, "a": 2, "b": }', twice) is twice  # a syntax error after it: as it was
    assert pointer(()) == "/" and pointer(("", 0)) == "//0"


@settings(max_examples=2000)
@given(
    st.integers(0, 10**12),
    st.text("0123456789", max_size=6),
    st.one_of(st.none(), st.integers(-30, 30)),
)
def test_a_whole_number_is_told_from_its_digits_as_decimal_tells_it(
    whole: int, fraction: str, exponent: int | None
) -> None:
    """strict_json reads whether a literal is whole from its digits (decimal's arithmetic raised past its
    context's exponents): the same verdict as Decimal's wherever Decimal can give one."""
    literal = str(whole) + (f".{fraction}" if fraction else "") + (f"e{exponent}" if exponent is not None else "")
    assert json_rules.whole(literal) == (Decimal(literal) == Decimal(literal).to_integral_value())
