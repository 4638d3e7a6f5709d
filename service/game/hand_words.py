"""A hand as players say it, against the hand it met: its name and ranks, and the card that decided.

A chi line's explanation must let a support agent say why one hand beat another: "đôi Già, lá lẻ 9
(K-K-9-5-2) thắng đôi Già, lá lẻ 7 (K-K-7-6-3)". Everything is read off the two strengths
(docs/rules.md §2.2: the category, then the comparison vector as base-14 digits), so the words are
the comparison itself, in its order: the ranks that make the hand, then, where those tie, the first
rank that differs.
"""

from __future__ import annotations

from typing import Final

from service.game.cards import ACE
from service.game.hand_strengths import BASE, CATEGORY_UNIT, DIGITS, STRAIGHT_ORDERS, WHEEL_RANKS, Category, Wheel
from service.game.hands import category_of
from service.texts import Named

RANK_LETTERS: Final = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
"""A rank as a card list shows it (``10`` rather than the API's ``T``: this is read, not parsed)."""
RANK_WORDS_VI: Final = (*RANK_LETTERS[:9], "Bồi", "Đầm", "Già", "Át")
"""A rank as the seeds say it."""
RANK_WORDS_EN: Final = (
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "jack",
    "queen",
    "king",
    "ace",
)
RANK_PLURALS_EN: Final = tuple("sixes" if word == "six" else word + "s" for word in RANK_WORDS_EN)

HEAD_DIGITS: Final[dict[Category, int]] = {
    Category.HIGH_CARD: 1,
    Category.PAIR: 2,
    Category.TWO_PAIR: 4,
    Category.THREE_OF_A_KIND: 3,
    Category.STRAIGHT: DIGITS,
    Category.FLUSH: 1,
    Category.FULL_HOUSE: DIGITS,
    Category.FOUR_OF_A_KIND: 4,
    Category.STRAIGHT_FLUSH: DIGITS,
}
"""How many digits of the comparison vector the hand's name already says (a pair names both its
cards, a flush its top card); a tie on those is decided by a kicker, which is then named too."""


def _digits(strength: int) -> tuple[int, ...]:
    """The comparison vector, most significant first; 0 where a 3-card hand has no card."""
    rest = strength % CATEGORY_UNIT
    return tuple(rest // BASE ** (DIGITS - 1 - k) % BASE for k in range(DIGITS))


def _ranks(category: Category, digits: tuple[int, ...], wheel: Wheel) -> list[int]:
    """The hand's ranks, highest first as §2.2 reads them (a wheel from its five down to its ace); a
    straight's words read them the same way, from its top card down."""
    if category in (Category.STRAIGHT, Category.STRAIGHT_FLUSH):
        run = STRAIGHT_ORDERS[wheel][digits[0] - 1]
        return [3, 2, 1, 0, ACE] if run == WHEEL_RANKS else sorted(run, reverse=True)
    return [d - 1 for d in digits if d]


def _name(category: Category, ranks: list[int], said: int) -> tuple[str, str]:
    """The hand's name with the ranks that make it, in English and Vietnamese. A high card or a
    flush is read from its top card down to its ``said``-th (the card that decided, or just the top)."""
    top, en, pl, vi = ranks[0], RANK_WORDS_EN, RANK_PLURALS_EN, RANK_WORDS_VI
    if category in (Category.STRAIGHT, Category.STRAIGHT_FLUSH):
        low = ranks[-1]
        if category == Category.STRAIGHT_FLUSH:
            if ranks[-1] == ACE:
                return "steel wheel", "thùng phá sảnh hạ"
            if top == ACE:
                return "royal flush", "thùng phá sảnh thượng"
            return f"straight flush, {en[top]} down to {en[low]}", f"thùng phá sảnh {_run_vi(ranks)}"
        return f"straight, {en[top]} down to {en[low]}", f"sảnh {_run_vi(ranks)}"
    if category in (Category.HIGH_CARD, Category.FLUSH):  # Vietnamese names the top card; the cards show the rest
        run_en = "-".join(en[r] for r in ranks[:said])
        if category == Category.HIGH_CARD:
            return f"{run_en} high", f"mậu thầu {vi[top]}"
        return f"flush, {run_en} high", f"thùng {vi[top]}"
    if category == Category.PAIR:
        return f"pair of {pl[top]}", f"đôi {vi[top]}"
    if category == Category.TWO_PAIR:
        return f"two pair, {pl[top]} and {pl[ranks[2]]}", f"thú {vi[top]}-{vi[ranks[2]]}"
    if category == Category.THREE_OF_A_KIND:
        return (f"three {pl[top]}", f"sám {vi[top]}") if top != ACE or len(ranks) > 3 else ("trip aces", "sám Át")
    if category == Category.FULL_HOUSE:
        return f"full house, {pl[top]} full of {pl[ranks[3]]}", f"cù lũ {vi[top]} đôi {vi[ranks[3]]}"
    return f"four {pl[top]}", f"tứ quý {vi[top]}"


def _run_vi(ranks: list[int]) -> str:
    """A straight as players write it, from its lowest card up: "từ 10 đến Át", "từ 8 đến Đầm"; the wheel by
    its cards, "A-2-3-4-5" (from 5 "down to" the ace reads as if the ace were the top)."""
    if ranks[-1] == ACE:
        return "-".join(RANK_LETTERS[r] for r in reversed(ranks))
    return f"từ {RANK_WORDS_VI[ranks[-1]]} đến {RANK_WORDS_VI[ranks[0]]}"


_READ: Final[dict[int, tuple[Category, tuple[int, ...]]]] = {}
"""Each strength's category and comparison vector: a few thousand strengths exist, each read once."""
_SAID: Final[dict[tuple[int, Wheel, int], Named]] = {}
SAID_MOST: Final = 1 << 16
"""Words kept at most: a few thousand strengths × at most six deciding ranks fit; past it, start over."""


def _read(strength: int) -> tuple[Category, tuple[int, ...]]:
    read = _READ.get(strength)
    if read is None:
        read = _READ[strength] = (category_of(strength), _digits(strength))
    return read


def deciding_rank(strength: int, against: int) -> int:
    """Where two hands' comparison was decided: the 1-based rank of the first digit that differs
    between hands of one category, 0 when the categories decided (or the hands tie)."""
    category, digits = _read(strength)
    other_category, other = _read(against)
    if category != other_category:
        return 0
    for k in range(DIGITS):
        if digits[k] != other[k]:
            return k + 1
    return 0


def spoken(strength: int, against: int, wheel: Wheel) -> Named:
    """The hand of ``strength`` as a player names it when it met ``against`` (same chi, either
    result): name and ranks, the kickers down to the deciding one where the name's ranks tie, and
    its cards' ranks."""
    return said(strength, wheel, deciding_rank(strength, against))


def said(strength: int, wheel: Wheel, decided: int) -> Named:
    """The words for a hand whose comparison was decided at its ``decided``-th rank (0: by category);
    at most six per strength, so each is made once."""
    key = (strength, wheel, decided)
    words = _SAID.get(key)
    if words is None:
        if len(_SAID) >= SAID_MOST:
            _SAID.clear()
        words = _SAID[key] = _words(strength, wheel, decided)
    return words


def _words(strength: int, wheel: Wheel, decided: int) -> Named:
    category, digits = _read(strength)
    ranks = _ranks(category, digits, wheel)
    head = HEAD_DIGITS[category]
    if category in (Category.HIGH_CARD, Category.FLUSH):
        en, vi = _name(category, ranks, max(decided, head))
    else:
        en, vi = _name(category, ranks, head)
        if decided > head:  # every card below the name's, down to the one that decided
            kickers = ranks[head:decided]
            en += (", kicker " if len(kickers) == 1 else ", kickers ") + "-".join(RANK_WORDS_EN[r] for r in kickers)
            vi += ", lá lẻ " + "-".join(RANK_WORDS_VI[r] for r in kickers)
    cards = "-".join(RANK_LETTERS[r] for r in ranks)
    if category == Category.STRAIGHT and ranks[-1] == ACE and wheel in WHEEL_NOTES:  # players dispute it: say so
        en_note, vi_note = WHEEL_NOTES[wheel]
        return Named(f"{en} ({cards}, {en_note})", f"{vi} ({vi_note})")  # "sảnh A-2-3-4-5" names its cards
    return Named(_with_cards(en, cards), _with_cards(vi, cards))


WHEEL_NOTES: Final = {
    "second": ("second highest under this ruleset", "theo bộ luật này lớn thứ nhì, chỉ sau sảnh từ 10 đến Át"),
    "lowest": ("lowest under this ruleset", "nhỏ nhất theo bộ luật này"),
}
"""Where A-2-3-4-5 ranks, said beside it: the straight players dispute most."""


def _with_cards(words: str, cards: str) -> str:
    """The hand's words, then its cards in brackets, every hand alike (sixth read, item 26)."""
    return f"{words} ({cards})"


ORDINALS_VI: Final = ("", "nhất", "hai", "ba", "tư", "năm")
NAMED_BY_TOP: Final = (Category.HIGH_CARD, Category.FLUSH)
NO_NOTE: Final = Named("", "")
DECIDED_NOTES: Final = tuple(
    Named("", f", hơn ở lá thứ {ordinal}") if k > 1 else NO_NOTE for k, ordinal in enumerate(ORDINALS_VI)
)
"""After two high cards or flushes that Vietnamese names alike ("mậu thầu Bồi (J-8-7) thắng mậu thầu Bồi
(J-8-6)"), where the comparison was decided: a run of ranks ("mậu thầu Bồi-8-7") is no way players talk."""


def decided_said(strength: int, decided: int) -> Named:
    """Where a chi between two hands of ``strength``'s category was decided, said after them in Vietnamese
    where their names are alike (a high card or a flush named by its top card); nothing in English, whose
    names read down to the deciding card."""
    return DECIDED_NOTES[decided] if _read(strength)[0] in NAMED_BY_TOP else NO_NOTE
