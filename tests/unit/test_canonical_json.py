"""The room digest's canonical JSON (service/trust/canonical_json.py) is RFC 8785's, byte for byte: held
against rfc8785, the full implementation, on documents of every JSON type and awkward strings."""

from __future__ import annotations

from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from service.trust.canonical_json import SAFE_INTEGER, canonical

TEXT = st.text(
    st.characters(blacklist_categories=("Cs",))  # no lone surrogate: the strict reader refuses one
    | st.sampled_from(['"', "\\", "\x00", "\x1f", "\x7f", "\u2028", "\ue000", "\uffff", "\U0001f600", "é"])
)
NUMBERS = st.integers(-SAFE_INTEGER, SAFE_INTEGER) | st.floats(allow_nan=False, allow_infinity=False)
DOCUMENTS = st.recursive(
    st.none() | st.booleans() | NUMBERS | TEXT,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(TEXT, inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(DOCUMENTS)
def test_the_canonical_form_is_rfc_8785s(document: Any) -> None:
    assert canonical(document) == rfc8785.dumps(document)


def test_keys_sort_by_utf16_code_units_where_code_points_would_differ() -> None:
    document = {"\U0001f600": 1, "\ue000": 2}  # U+1F600 is D83D DE00 in UTF-16: before U+E000
    assert canonical(document) == '{"\U0001f600":1,"\ue000":2}'.encode()


def test_a_whole_number_past_2_to_the_53_is_written_as_the_nearest_double() -> None:
    assert canonical({"stake": 2**60 + 1}) == b'{"stake":1152921504606847000}'
    assert canonical([SAFE_INTEGER, -SAFE_INTEGER]) == b"[9007199254740991,-9007199254740991]"


def test_a_whole_number_past_every_double_has_no_canonical_form() -> None:
    """JCS writes every number as the nearest double: one past the largest (the strict reader takes up to
    4,300 digits) has none, said as NotCanonical, where float() raised OverflowError through every caller."""
    import sys

    from service.trust.canonical_json import NotCanonical

    largest = int(sys.float_info.max)  # the reference refuses any past 2**53; ECMAScript writes this one so
    assert canonical({"n": largest}) == b'{"n":1.7976931348623157e+308}'
    for past in (10**400, -(10**400), 2**1024):
        with pytest.raises(NotCanonical):
            canonical({"n": [past]})
