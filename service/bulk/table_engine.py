"""The bulk engine reading the table of rooms (:mod:`service.bulk.room_table`): a batch of rows settled a
column at a time, every value checked as the per-room path checks it, so a table written by anyone is
safe to read; what it does not settle is the per-room path's (:mod:`service.bulk.table_runs`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from service.bulk.room_table import MOST_PLAYERS, NOT_A_CARD
from service.contract import MAX_EXACT_AMOUNT, STATUSES, Rooms
from service.rulesets import Ruleset, RulesetError
from service.rulesets.catalogue import Catalogue
from service.scoring import settle_many
from service.validation.limits import LONGEST_PLAYER_ID, PLAYER_ID_CHARACTERS, ROUND_ID_MOST, STAKE_LOW
from service.validation.room_arrays import LARGEST_STAKE, all_cards_once

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
    from numpy.typing import NDArray


def resolved(batch: pa.RecordBatch, catalogue: Catalogue, known: dict[str, Ruleset | None]) -> None:
    """Each ruleset the batch names, resolved into ``known`` once (None where none is found)."""
    import pyarrow.compute as pc

    for reference in pc.unique(batch.column("ruleset")).to_pylist():
        if reference is not None and reference not in known:
            try:
                known[reference] = catalogue.resolve(reference)
            except RulesetError:
                known[reference] = None


def agreeing(batch: pa.RecordBatch, rulesets: dict[str, Ruleset | None]) -> NDArray[np.bool_]:
    """Which rows of a batch of the table the engine finds agreeing: settled by it, and claiming, in
    bounds and summing to zero, what the rules give. ``rulesets``: each reference resolved (None where
    it names none)."""
    import numpy as np

    units, done = settled(batch, rulesets)
    claimed, whole = _fixed_list(batch.column("claimed"), MOST_PLAYERS)
    stake = batch.column("stake").fill_null(0).to_numpy()
    agrees: NDArray[np.bool_] = (
        done
        & whole
        & (claimed.sum(axis=-1) == 0)
        & np.logical_and.reduce(np.abs(claimed) <= MAX_EXACT_AMOUNT, axis=-1)
        & np.logical_and.reduce(units * stake[:, None] == claimed, axis=-1)
    )
    return agrees


def settled(batch: pa.RecordBatch, rulesets: dict[str, Ruleset | None]) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """Each row's units by player (rows, 4; 0 past its players), and which rows the engine settled: the
    whole batch at once, grouped by ruleset and size, every value checked as the per-room path checks
    it before it settles a room (a row not settled is the per-room path's, refusal or not)."""
    import numpy as np

    columns = _Columns(batch)
    units = np.zeros((batch.num_rows, MOST_PLAYERS), dtype=np.int64)
    done = np.zeros(batch.num_rows, dtype=bool)
    for ruleset, players, chosen in columns.groups(rulesets):
        cards = columns.cards[chosen, : 13 * players]
        status, declare = columns.status[chosen, :players], columns.declare[chosen, :players]
        readable = columns.seated(chosen, players, ruleset) & all_cards_once(cards)
        rooms = Rooms(
            ruleset,
            np.where(readable[:, None], cards, np.arange(13 * players, dtype=np.int8)).reshape(-1, players, 13),
            np.where(readable[:, None], status, 0).astype(np.int8),
            np.where(readable[:, None], declare, 0).astype(bool),
        )
        found, refused = settle_many(rooms)
        units[chosen, :players] = found
        done[chosen] = readable & ~refused
    return units, done


class _Columns:
    """A batch's columns as arrays, and which rows hold what the per-room path accepts row by row (the
    line, ids, stake and round id), before their seats are read by ruleset and size."""

    def __init__(self, batch: pa.RecordBatch) -> None:
        import numpy as np
        import pyarrow.compute as pc

        count = batch.num_rows
        self.size = batch.column("players").fill_null(0).to_numpy().astype(np.int64)
        stake = batch.column("stake").fill_null(0).to_numpy()
        self.cards = _fixed(batch.column("cards"), 13 * MOST_PLAYERS).astype(np.int8)
        self.status = _fixed(batch.column("status"), MOST_PLAYERS).astype(np.int8)
        self.declare = _fixed(batch.column("declare"), MOST_PLAYERS)
        ids = batch.column("ids")
        valid = ~np.asarray(batch.column("line").is_null()) & ~np.asarray(ids.is_null())
        valid &= np.asarray(pc.list_value_length(ids).fill_null(-1)) == self.size
        valid &= (stake >= STAKE_LOW) & (stake <= LARGEST_STAKE)
        valid &= np.asarray(pc.fill_null(pc.less_equal(pc.utf8_length(batch.column("round_id")), ROUND_ID_MOST), True))
        offsets = np.asarray(ids.offsets)
        self.starts = offsets[:-1] - offsets[0]
        flat = pc.list_flatten(ids)
        pattern = f"^[{_regex_class(PLAYER_ID_CHARACTERS)}]{{1,{LONGEST_PLAYER_ID}}}$"
        good = np.asarray(pc.fill_null(pc.match_substring_regex(flat, pattern), False))
        valid &= np.bincount(np.asarray(pc.list_parent_indices(ids))[~good], minlength=count) == 0
        self.id_codes = np.asarray(pc.dictionary_encode(flat).indices)
        self.references = pc.dictionary_encode(batch.column("ruleset"))
        self.reference_codes = np.asarray(self.references.indices.fill_null(-1))
        self.valid = valid

    def groups(self, rulesets: dict[str, Ruleset | None]) -> Iterator[tuple[Ruleset, int, NDArray[np.int64]]]:
        """(ruleset, players, the rows) of each group of valid rows, the rulesets that name none left out."""
        import numpy as np

        for code in np.unique(self.reference_codes[self.valid]).tolist():
            ruleset = rulesets.get(self.references.dictionary[code].as_py())
            if ruleset is None:
                continue
            for players in range(ruleset.min_players, ruleset.max_players + 1):
                chosen = np.flatnonzero(self.valid & (self.reference_codes == code) & (self.size == players))
                if chosen.size:
                    yield ruleset, players, chosen

    def seated(self, chosen: NDArray[np.int64], players: int, ruleset: Ruleset) -> NDArray[np.bool_]:
        """Which of these rows' seats the per-room path accepts: known statuses, declarations only where
        the ruleset takes them and from a player who arranged, every id different."""
        import numpy as np

        status, declare = self.status[chosen, :players], self.declare[chosen, :players]
        fine: NDArray[np.bool_] = np.logical_and.reduce(
            (status >= 0) & (status < len(STATUSES)) & (declare <= 1), axis=-1
        )
        declaring = (declare == 1) if ruleset.instant_mode != "declared" else (declare == 1) & (status != 0)
        fine &= ~np.logical_or.reduce(declaring, axis=-1)
        fine &= _ids_differ(self.id_codes, self.starts[chosen], players)
        return fine


def _fixed(column: pa.Array, width: int) -> NDArray[np.uint8]:
    """A fixed-size binary column as bytes (rows, width), zero-copy; a null row is all 0xFF."""
    import numpy as np

    data = column.buffers()[1]
    start = column.offset * width
    found = np.frombuffer(data, dtype=np.uint8)[start : start + len(column) * width].reshape(len(column), width)
    if column.null_count:
        found = np.where(np.asarray(column.is_null())[:, None], NOT_A_CARD, found).astype(np.uint8)
    return found


def _fixed_list(column: pa.Array, width: int) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """A fixed-size list column of integers as (rows, width), and which rows hold ``width`` of them (a
    null list or a null inside is not; it reads as 0)."""
    import numpy as np
    import pyarrow.compute as pc

    start = column.offset * width
    values = column.values.slice(start, len(column) * width)
    found = np.asarray(values.fill_null(0)).reshape(len(column), width)
    whole = ~np.asarray(column.is_null()) & ~np.logical_or.reduce(
        np.asarray(pc.is_null(values)).reshape(len(column), width), axis=-1
    )
    return found, whole


def _ids_differ(codes: NDArray[np.int64], starts: NDArray[np.int64], players: int) -> NDArray[np.bool_]:
    """For rooms of ``players`` whose ids begin at ``starts`` in ``codes`` (each distinct id a number):
    whether all their ids differ."""
    import numpy as np

    seated = np.sort(codes[starts[:, None] + np.arange(players)], axis=-1)
    differ: NDArray[np.bool_] = np.logical_and.reduce(seated[:, 1:] != seated[:, :-1], axis=-1)
    return differ


def _regex_class(characters: str) -> str:
    return "".join("\\" + c if c in "\\]^-" else c for c in characters)
