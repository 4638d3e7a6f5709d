"""A re-rolled round's places, as each of its receipts names the others (service/support/rerolls.py)."""

from __future__ import annotations

from service.support.rerolls import NAMED_MOST, Others


def test_each_receipt_names_the_first_places_of_the_other_rooms_once_each_and_how_many_more() -> None:
    # place (1, 1) is a batch holding three rooms of the round: a, b and b again (the same room twice)
    held = [("a", (1, 1)), ("b", (1, 1)), ("b", (1, 1)), ("a", (0, 4)), *[("b", (2, n)) for n in range(10)]]
    held += [(f"room-{k}", (3, k)) for k in range(1000)]
    others = Others.of(held)
    assert others.places == 1 + 1 + 10 + 1000  # the batch is one place, whatever it holds
    places, more = others.of_room("a")
    assert places == [(1, 1), (2, 0), (2, 1), (2, 2), (2, 3)] and more == 1011 - len(places)
    places, more = others.of_room("b")
    assert places == [(0, 4), (1, 1), (3, 0), (3, 1), (3, 2)] and more == 1002 - len(places)
    places, more = others.of_room("room-7")
    assert places == [(0, 4), (1, 1), (2, 0), (2, 1), (2, 2)] and len(places) == NAMED_MOST
    assert more == others.places - 1 - NAMED_MOST


def test_a_batch_holding_many_rooms_of_the_round_is_one_place_and_hides_no_later_one() -> None:
    """Before, one batch of six rooms of the round filled the rooms the places were kept for: room D's
    verdict named the batch "and 6 more" (there was one more place), and never the place of room G."""
    held = [("D", (0, 1)), *[(f"batch-{k}", (0, 2)) for k in range(6)], ("G", (0, 3))]
    others = Others.of(held)
    assert others.of_room("D") == ([(0, 2), (0, 3)], 0)
    assert others.of_room("G") == ([(0, 1), (0, 2)], 0)
    assert others.of_room("batch-3") == ([(0, 1), (0, 2), (0, 3)], 0)  # its own batch holds other rooms too
