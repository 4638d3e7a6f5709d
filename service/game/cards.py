"""Cards: parsing every accepted notation, canonical printing (docs/rules.md §1).

A card is an ``int`` 0..51 (``rank * 4 + suit``) so that the evaluator can index
tables with it directly; :class:`Card` only adds names and printing.

>>> parse_card("10♥")
Card('TH')
>>> str(parse_card("as"))
'AS'
>>> parse_card("1S")
Traceback (most recent call last):
...
service.game.cards.CardError: '1S': unknown rank '1' (use 2-9, T or 10, J, Q, K, A)
"""

from __future__ import annotations

from collections.abc import Sequence

from service.texts import Named, Text

RANKS = "23456789TJQKA"
SUITS = "SCDH"
SUIT_SYMBOLS = "♠♣♦♥"
ACE = RANKS.index("A")
RED_SUITS = frozenset({SUITS.index("D"), SUITS.index("H")})

_RANK_ALIASES = {r: i for i, r in enumerate(RANKS)} | {"10": RANKS.index("T")}
PRESENTATION_SELECTORS = ("\ufe0f", "\ufe0e")
"""What an emoji keyboard or a chat app appends to a suit symbol (♥️ is ♥ and U+FE0F): it draws, it means nothing."""
_SUIT_ALIASES = (
    {s: i for i, s in enumerate(SUITS)}
    | {s: i for i, s in enumerate(SUIT_SYMBOLS)}
    | {s + selector: i for i, s in enumerate(SUIT_SYMBOLS) for selector in PRESENTATION_SELECTORS}
)


class CardError(ValueError):
    """A card text that names no card; the message (a :class:`Text`) says exactly why."""

    def __init__(self, message: Text) -> None:
        super().__init__(message)
        self.message = message


class Card(int):
    """One of the 52 cards; compares and hashes as its index."""

    __slots__ = ()

    @property
    def rank(self) -> int:
        return self >> 2

    @property
    def suit(self) -> int:
        return self & 3

    def __str__(self) -> str:
        return RANKS[self >> 2] + SUITS[self & 3]

    def __repr__(self) -> str:
        return f"Card({str(self)!r})"


DECK: tuple[Card, ...] = tuple(Card(i) for i in range(52))
CARD_TEXT: tuple[str, ...] = tuple(RANKS[i >> 2] + SUITS[i & 3] for i in range(52))


def _spellings() -> dict[str, Card]:
    ranks = {alias: i for alias, i in _RANK_ALIASES.items()} | {r.lower(): i for r, i in _RANK_ALIASES.items()}
    suits = {alias: i for alias, i in _SUIT_ALIASES.items()} | {s.lower(): i for s, i in _SUIT_ALIASES.items()}
    return {r + s: DECK[rank * 4 + suit] for r, rank in ranks.items() for s, suit in suits.items()}


JSON_KINDS: dict[type, Named] = {
    type(None): Named("null", "null"),
    bool: Named("true or false", "true hoặc false"),
    int: Named("a number", "một số"),
    float: Named("a number", "một số"),
    list: Named("an array", "một mảng"),
    dict: Named("an object", "một đối tượng JSON"),
}
"""What a JSON value that is not a card's string is, as a fault says it (never a Python type's name)."""

SPELLINGS: dict[str, Card] = _spellings()
"""Every accepted way to write every card (452 strings): reading a good card is one lookup."""


def parse_card(text: object) -> Card:
    """Read one card in any accepted notation: ``AS``, ``as``, ``10H``, ``T♥``.

    >>> [str(parse_card(t)) for t in ("AS", "as", "10h", "T♥", "a♠", "J♥\ufe0f")]
    ['AS', 'AS', 'TH', 'TH', 'AS', 'JH']
    """
    found = SPELLINGS.get(text) if type(text) is str else None
    if found is not None:
        return found
    if not isinstance(text, str):
        raise CardError(Text("card.not_text", kind=JSON_KINDS.get(type(text), JSON_KINDS[dict])))
    if not text:
        raise CardError(Text("card.empty"))
    if len(text) > 3 or any(c.isspace() for c in text):
        raise CardError(Text("card.too_long", text=text))
    if len(text) < 2:
        raise CardError(Text("card.too_short", text=text))
    rank_text, suit_text = text[:-1].upper(), text[-1].upper()
    rank = _RANK_ALIASES.get(rank_text)
    suit = _SUIT_ALIASES.get(suit_text)
    if rank is None:
        raise CardError(Text("card.unknown_rank", text=text, rank=text[:-1]))
    if suit is None:
        raise CardError(Text("card.unknown_suit", text=text, suit=text[-1]))
    return DECK[rank * 4 + suit]


def format_cards(cards: Sequence[int]) -> list[str]:
    return [CARD_TEXT[c] for c in cards]
