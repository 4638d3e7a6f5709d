"""Did you mean: the known word a near-miss was meant to be (a ruleset id, a field name)."""

from __future__ import annotations

from collections.abc import Iterable

LONGEST = 64
"""Words are compared on their first 64 characters: a near-miss costs at most 64 × 64 steps a candidate."""


def distance(a: str, b: str, most: int) -> int:
    """Edits (insert, delete, replace) from ``a`` to ``b``, or ``most + 1`` once it must be more."""
    if abs(len(a) - len(b)) > most:
        return most + 1
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, y in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        if min(current) > most:
            return most + 1
        previous = current
    return previous[-1]


def near(word: str, known: Iterable[str], most: int = 2) -> str | None:
    """The known word within ``most`` edits of ``word``, its case aside (the nearest, then the first);
    None when none is, or when ``word`` is one of them. Fewer edits than ``word`` has characters: an
    empty or one-letter word is near everything short.

    >>> near("midle", ["back", "middle", "front"]), near("Maubinh-2020", ["maubinh-2020"]), near("x", ["back"])
    ('middle', 'maubinh-2020', None)
    >>> near("x", ["id"]), near("", ["id"]), near("ix", ["id"])
    (None, None, 'id')
    """
    said = word[:LONGEST].lower()
    most = min(most, len(said) - 1)
    best: tuple[int, str] | None = None
    for candidate in known:
        if candidate == word:
            return None
        found = distance(said, candidate[:LONGEST].lower(), most)
        if found <= most and (best is None or found < best[0]):
            best = (found, candidate)
    return best[1] if best else None
