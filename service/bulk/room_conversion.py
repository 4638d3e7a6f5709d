"""Claims and score's tables converted into the table of rooms (``maubinh rooms IN -o rooms.parquet``).

Verify's JSON lines (claims) and the tables of ``maubinh score --format parquet`` (whose amounts become
the claim) each give a row a room the table can hold; every other one is left out and named by line,
for ``verify --jsonl``; tables that are not score's are refused (:class:`NotATable`) before anything is
written.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from service.bulk.engine import Reader
from service.bulk.lines import lines_of
from service.bulk.room_table import (
    MOST_PLAYERS,
    NOT_A_CARD,
    ROW_GROUP_ROOMS,
    NotATable,
    RoomTableWriter,
    in_types,
    reads_as,
)
from service.contract import MAX_EXACT_AMOUNT, STATUSES
from service.game.cards import CARD_TEXT
from service.rulesets.catalogue import Catalogue
from service.support.regular_files import open_regular
from service.support.strict_json import BadDocument, loads
from service.texts import Text
from service.validation.limits import ROUND_ID_MOST, STAKE_DEFAULT, STAKE_LOW
from service.validation.room_arrays import LARGEST_STAKE, TWO_LETTER_CARDS, read_players


@dataclass
class Converted:
    rooms: int = 0
    left_out: list[int] = field(default_factory=list)
    """The input lines the table cannot hold (``verify --jsonl`` checks them), by number."""
    ledgers: int = 0
    """Claims whose ledger lines the table does not carry (their amounts it does)."""


def _card_bytes(texts: bytes) -> bytes | None:
    """The engine's card texts (two letters and a comma each) as card numbers, or None for a card it
    does not spell (the per-room path reads it)."""
    numbers = bytes(int(TWO_LETTER_CARDS[texts[k] << 8 | texts[k + 1]]) & 0xFF for k in range(0, len(texts), 3))
    return None if NOT_A_CARD in numbers else numbers


def from_claims(lines: Iterable[bytes], catalogue: Catalogue, out: RoomTableWriter) -> Converted:
    """Verify's JSON lines → the table: each line the engine reads (a ruleset id, two-letter cards, a
    claim of amounts, with or without ledger lines); every other line is left out, by number."""
    reader = Reader(catalogue.resolve)
    done = Converted()
    for number, text in enumerate(lines_of(lines), start=1):  # a line past the cap is empty: left out
        room = _claim(text, reader)
        if room is None:
            done.left_out.append(number)
            continue
        document, players, amounts = room
        cards = _card_bytes(players.cards)
        if cards is None:
            done.left_out.append(number)
            continue
        players.cards = cards
        out.add(
            number,
            document.get("round_id"),
            document["ruleset"],
            document.get("stake", STAKE_DEFAULT),
            players,
            amounts,
        )
        done.rooms += 1
        done.ledgers += "ledger" in document["claimed"]
    return done


def _claim(text: bytes, reader: Reader) -> tuple[dict[str, Any], Any, list[int]] | None:
    """A verify request the table can hold, read: (the request, its players as the engine reads them,
    the claimed amounts in player order); None for any other line."""
    try:
        document = loads(text.rstrip(b"\r\n"))
    except BadDocument:
        return None
    if type(document) is not dict or not set(document) <= {"ruleset", "stake", "round_id", "players", "claimed"}:
        return None
    reference, stake, round_id = document.get("ruleset"), document.get("stake", STAKE_DEFAULT), document.get("round_id")
    if type(reference) is not str or type(stake) is not int or not STAKE_LOW <= stake <= LARGEST_STAKE:
        return None
    if round_id is not None and (type(round_id) is not str or len(round_id) > ROUND_ID_MOST):
        return None
    ruleset = reader.ruleset_of(reference)
    players, claim = document.get("players"), document.get("claimed")
    if ruleset is None or type(players) is not list or type(claim) is not dict:
        return None
    if not set(claim) <= {"amounts", "ledger"} or type(claim.get("amounts")) is not dict:
        return None
    if not ruleset.min_players <= len(players) <= ruleset.max_players:
        return None
    read = read_players(players, ruleset)
    if read is None or set(claim["amounts"]) != set(read.ids):
        return None
    amounts = [claim["amounts"][who] for who in read.ids]
    if any(type(a) is not int or abs(a) > MAX_EXACT_AMOUNT for a in amounts) or sum(amounts) != 0:
        return None
    return document, read, amounts


@dataclass
class _Scored:
    ids: list[str]
    cards: bytes
    status: list[int]
    declare: list[bool]


SCORED_COLUMNS = {
    "rooms": ("line", "round_id", "ruleset_id", "ruleset_version", "stake", "refused"),
    "players": ("line", "player", "amount", "status", "declared", "back", "middle", "front"),
}
"""The columns of score's tables a room is converted from."""
HANDS = (("back", 5), ("middle", 5), ("front", 3))
CARD_CODES = {text: code for code, text in enumerate(CARD_TEXT)}


def scored_tables(directory: Path) -> None:
    """:class:`NotATable` unless ``directory`` holds score's two tables, each Parquet with the columns
    read, of score's types: one written otherwise is said so before anything is written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from service.bulk.tables import arrow_schema

    for table, names in SCORED_COLUMNS.items():
        path = directory / f"{table}.parquet"
        try:
            with open_regular(path):  # a pipe is never waited on
                pass
            found = pq.ParquetFile(str(path)).schema_arrow
        except (pa.ArrowException, ValueError):
            raise NotATable(Text("table.not_score_table", table=path.name, why=Text("table.bad_footer"))) from None
        wanted = arrow_schema(table)
        for name in names:
            if len(found.get_all_field_indices(name)) > 1:
                why = Text("table.column_twice", column=name)
                raise NotATable(Text("table.not_score_table", table=path.name, why=why))
            given = found.field(name).type if name in found.names else None
            if given is None or not reads_as(given, wanted.field(name).type):
                why = Text("table.no_score_column", column=name, type=str(wanted.field(name).type))
                raise NotATable(Text("table.not_score_table", table=path.name, why=why))


def _seated(seated: list[dict[str, Any]]) -> _Scored | None:
    """A scored room's players as the table holds them, or None for a room the table cannot hold as
    score wrote it: not 2 to 4 players, a hand not of its cards (a leaver scored from bare cards has
    none), a status or declaration not score's (tables written by someone else)."""
    if not 2 <= len(seated) <= MOST_PLAYERS:
        return None
    codes = []
    for player in seated:
        if player["status"] not in STATUSES or type(player["declared"]) is not bool or player["player"] is None:
            return None
        for hand, size in HANDS:
            cards = player[hand].split() if isinstance(player[hand], str) else []
            if len(cards) != size or not all(card in CARD_CODES for card in cards):
                return None
            codes += [CARD_CODES[card] for card in cards]
    if any(type(p["amount"]) is not int for p in seated):
        return None
    statuses = [STATUSES.index(p["status"]) for p in seated]
    return _Scored([p["player"] for p in seated], bytes(codes), statuses, [p["declared"] for p in seated])


def from_scored(directory: Path, out: RoomTableWriter) -> Converted:
    """``maubinh score --format parquet``'s tables → the table, each room's amounts as its claim: the
    scored rooms of a ruleset named by id and version (a request's own variant has no name to find it
    by again, and a refused room no amounts), every other one left out, and so is a room the table
    cannot hold (:func:`_seated`). The two tables are read side by side a batch at a time, in line order
    as the command line writes them (:class:`NotATable` if not, or if a player's line names no room)."""
    scored_tables(directory)
    done = Converted()
    players = _ByLine(directory / "players.parquet")
    for room in _rows(directory / "rooms.parquet"):
        if type(room["line"]) is not int:
            raise NotATable(Text("table.line_null", table="rooms.parquet"))
        seated = players.take(room["line"])
        read = _seated(seated)
        named = isinstance(room["ruleset_id"], str) and "~" not in room["ruleset_id"]
        if room["refused"] is not None or not named or read is None or type(room["stake"]) is not int:
            done.left_out.append(room["line"])
            continue
        reference = f"{room['ruleset_id']}@{room['ruleset_version']}"
        out.add(room["line"], room["round_id"], reference, room["stake"], read, [p["amount"] for p in seated])
        done.rooms += 1
    players.finish()
    return done


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    """Score's table at ``path``, its columns read here (no other) in score's types, a row at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from service.bulk.tables import arrow_schema

    table = path.stem
    wanted = pa.schema([arrow_schema(table).field(name) for name in SCORED_COLUMNS[table]])
    read = pq.ParquetFile(str(path))
    for group in range(read.metadata.num_row_groups):
        batches = read.iter_batches(ROW_GROUP_ROOMS, row_groups=[group], columns=list(wanted.names))
        for batch in in_types(batches, wanted, group):
            yield from batch.to_pylist()


class _ByLine:
    """Score's players table read beside its rooms: each room's player rows, the lines ascending."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows = _rows(path)
        self.pending = self._next()

    def _next(self) -> dict[str, Any] | None:
        row = next(self.rows, None)
        if row is not None and type(row["line"]) is not int:
            raise NotATable(Text("table.line_null", table=self.path.name))
        return row

    def take(self, line: int) -> list[dict[str, Any]]:
        """The player rows of ``line``; :class:`NotATable` for a row of a line passed, out of order or of no room."""
        found = []
        while self.pending is not None and self.pending["line"] <= line:
            if self.pending["line"] < line:
                raise NotATable(Text("table.not_in_order", table=self.path.name, line=self.pending["line"], after=line))
            found.append(self.pending)
            self.pending = self._next()
        return found

    def finish(self) -> None:
        """:class:`NotATable` for player rows left past the last room (a line no room holds)."""
        if self.pending is not None:
            raise NotATable(Text("table.players_without_room", table=self.path.name, line=self.pending["line"]))
