import pytest

from service.game.cards import DECK, CardError, format_cards, parse_card


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("AS", "AS"),
        ("as", "AS"),
        ("aS", "AS"),
        ("As", "AS"),
        ("TD", "TD"),
        ("td", "TD"),
        ("10H", "TH"),
        ("10h", "TH"),
        ("T♥", "TH"),
        ("10♥", "TH"),
        ("A♠", "AS"),
        ("7♣", "7C"),
        ("2♦", "2D"),
        ("kc", "KC"),
    ],
)
def test_every_accepted_notation_reads_to_the_canonical_card(text: str, canonical: str) -> None:
    assert str(parse_card(text)) == canonical


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("1S", "unknown rank '1'"),
        ("11H", "unknown rank '11'"),
        ("AX", "unknown suit 'X'"),
        ("", "empty"),
        ("A", "a rank then a suit"),
        ("A S", "no spaces"),
        ("AS ", "no spaces"),
        ("10HH", "no spaces"),
        (12, "must be a string"),
        (None, "must be a string"),
    ],
)
def test_a_bad_card_says_exactly_what_is_wrong(text: object, says: str) -> None:
    with pytest.raises(CardError, match=says):
        parse_card(text)


def test_the_deck_has_52_distinct_cards_that_print_back_to_themselves() -> None:
    texts = format_cards(DECK)
    assert len(set(texts)) == 52
    assert [parse_card(t) for t in texts] == list(DECK)


def test_card_properties() -> None:
    card = parse_card("QH")
    assert (card.rank, card.suit) == (10, 3)  # queen = rank 10 from 2 = 0; hearts = suit 3 of S C D H
