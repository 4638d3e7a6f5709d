"""The bulk engine's array form of each rule against the per-room path, over random rulesets that set
every knob (§9, §11, §12) and random rooms of 2–4 players: instant wins planted, fouls, leavers,
time-outs, declarations true and false, sweeps and chi Át. Zero differences, in each player's units and
in every ledger line (summed by step, position, payer and payee)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np
from rooms_at_random import RandomRoom, random_room, random_rulesets

from service.bulk.engine import agreeing_lines
from service.contract import STATUSES, RoomRejected, Rooms
from service.documents import OPERATIONS, answer
from service.rulesets import Ruleset
from service.rulesets.operator_folder import catalogue_for
from service.scoring import score, settle_many, settle_many_by_line
from service.scoring.claims import settles

ROOMS = int(os.environ.get("MAUBINH_DIFFERENTIAL_ROOMS", "100000"))
RULESETS = 200


def rooms_as_arrays(ruleset: Ruleset, rooms: list[RandomRoom]) -> Rooms:
    cards = np.array([[cards for _, cards, _, _ in room.players] for room in rooms], dtype=np.int8)
    status = np.array([[STATUSES.index(s) for _, _, s, _ in room.players] for room in rooms], dtype=np.int8)
    declare = np.array([[d for _, _, _, d in room.players] for room in rooms], dtype=bool)
    return Rooms(ruleset, cards, status, declare)


Lines = dict[tuple[str, str | None, int, int], int]


def per_room(
    ruleset: Ruleset, random_room: RandomRoom, seen: Counter[str], lines: Lines | None = None
) -> list[int] | None:
    """Each player's units by the per-room path (None: refused), counting what the room exercised; and
    into ``lines``, its ledger's units by (step, position, payer, payee)."""
    try:
        result = score(random_room.room(ruleset))
    except RoomRejected:
        seen["refused"] += 1
        return None
    index = {who: k for k, (who, _, _, _) in enumerate(random_room.players)}
    for line in result.ledger:
        key = (line.step, line.position, index[line.payer], index[line.payee])
        if lines is not None:
            lines[key] = lines.get(key, 0) + line.units
    left = {who for who, _, status, _ in random_room.players if status == "left"}
    seen.update({f"step {line.step}" for line in result.ledger})
    seen.update({f"pair {pair.settled_by}" for pair in result.showdown})
    seen.update({"sweep" for line in result.ledger if "sweep" in line.rule})
    seen.update({"both fouled compared" for line in result.ledger if "fouls.both_fouled" in line.rule})
    seen.update({"left scooped" for line in result.ledger if line.step == "scoop" and line.payer in left})
    return [p.units for p in result.players]


def _lines_by_room(flows: dict[tuple[str, str | None], Any], refused: Any) -> list[Lines | None]:
    """Each room's (step, position, payer, payee) → units from the array form, as the per-room ledger's."""
    found: list[Lines | None] = [{} for _ in refused]
    for (step, position), paid in flows.items():
        for room, payer, payee in zip(*np.nonzero(paid), strict=True):
            lines = found[room]
            assert lines is not None
            lines[step, position, int(payer), int(payee)] = int(paid[room, payer, payee])
    return found


EXERCISED = (
    {"refused", "sweep", "both fouled compared", "left scooped"}
    | {f"step {step}" for step in ("instant_win", "chi", "bonus", "scoop", "foul", "ace")}
    | {f"pair {how}" for how in ("instant_win", "comparison", "foul", "fixed_foul", "both_fouled", "round_ended")}
)
"""What the random rooms must have reached for the test to mean something."""


def test_the_array_form_settles_every_room_as_the_per_room_path_does() -> None:
    rng = random.Random(20261203)
    rulesets = list(random_rulesets(rng, catalogue_for(None), RULESETS))
    groups: dict[tuple[int, int], list[RandomRoom]] = defaultdict(list)
    decks = np.random.default_rng(20261203).permuted(np.tile(np.arange(52), (ROOMS, 1)), axis=1).tolist()
    for deck in decks:
        k = rng.randrange(len(rulesets))
        room = random_room(rng, rulesets[k][1], rulesets[k][0], deck)
        groups[k, len(room.players)].append(room)
    differences, seen = [], Counter[str]()
    for (k, _), rooms in groups.items():
        ruleset = rulesets[k][1]
        units, refused = settle_many(rooms_as_arrays(ruleset, rooms))
        by_line = _lines_by_room(*settle_many_by_line(rooms_as_arrays(ruleset, rooms)))
        for room, row, no, flows in zip(rooms, units.tolist(), refused.tolist(), by_line, strict=True):
            lines: Lines = {}
            expected = per_room(ruleset, room, seen, lines)
            got = None if no else row
            if got != expected or (expected is not None and flows != lines):
                differences.append((room.request(), expected, got, lines, flows))
    assert not differences, f"{len(differences)} rooms differ; the first: {differences[0]}"
    assert set(seen) >= EXERCISED, f"never exercised: {EXERCISED - set(seen)}"


BUILT_INS = ("maubinh-2020", "maubinh-chi-at", "maubinh-bao@2", "maubinh-2020@1")


def claims(count: int, seed: int) -> list[dict[str, Any]]:
    """Verify requests under the built-ins whose claims agree (amounts from the per-room path)."""
    rng = random.Random(seed)
    catalogue = catalogue_for(None)
    made = []
    while len(made) < count:
        reference = rng.choice(BUILT_INS)
        ruleset = catalogue.resolve(reference)
        room = random_room(rng, ruleset, reference)
        expected = per_room(ruleset, room, Counter())
        request = room.request()
        if expected is not None:
            amounts = {p["id"]: u * request["stake"] for p, u in zip(request["players"], expected, strict=True)}
            made.append({**request, "round_id": f"r{len(made)}", "claimed": {"amounts": amounts}})
    return made


def _mutations(request: dict[str, Any], rng: random.Random) -> list[Any]:
    """Ways to break a request, or change it within what the per-room path accepts."""
    player = rng.randrange(len(request["players"]))
    who = request["players"][player]["id"]

    def changed(edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        copy = json.loads(json.dumps(request))
        edit(copy)
        return copy

    def at_player(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
        return lambda r: r["players"][player].__setitem__(key, value)

    def dropped(*path: Any) -> Callable[[dict[str, Any]], None]:
        def edit(r: dict[str, Any]) -> None:
            for key in path[:-1]:
                r = r[key]
            del r[path[-1]]

        return edit

    edits: list[Callable[[dict[str, Any]], None]] = [
        dropped("stake"), dropped("round_id"), dropped("players"), dropped("claimed"), dropped("ruleset"),
        dropped("players", player, "id"), dropped("players", player, "front"), dropped("claimed", "amounts", who),
        lambda r: r.__setitem__("extra", 1), at_player("extra", 1),
        lambda r: r["claimed"].__setitem__("ledger", []), lambda r: r["claimed"].__setitem__("extra", 1),
        lambda r: r.__setitem__("stake", "1"), lambda r: r.__setitem__("stake", 1.0),
        lambda r: r.__setitem__("stake", True), lambda r: r.__setitem__("stake", 0),
        lambda r: r.__setitem__("stake", 10**12), lambda r: r.__setitem__("stake", 10**12 + 1),
        lambda r: r.__setitem__("round_id", "x" * 129), lambda r: r.__setitem__("round_id", 7),
        lambda r: r.__setitem__("round_id", None), lambda r: r.__setitem__("ruleset", "no-such-rules"),
        lambda r: r.__setitem__("ruleset", {"base": "maubinh-2020", "patch": {}}),
        lambda r: r.__setitem__("ruleset_digest", "sha256:" + "0" * 64),
        at_player("id", "a b"), at_player("id", "x" * 65), at_player("id", request["players"][player - 1]["id"]),
        at_player("back", ["ZZ", *request["players"][player]["back"][1:]]),
        at_player("back", [request["players"][player - 1]["front"][0], *request["players"][player]["back"][1:]]),
        at_player("back", request["players"][player]["back"][:4]), at_player("back", "AS KS QS JS TS"),
        at_player("back", [1, 2, 3, 4, 5]),
        at_player("cards", request["players"][player]["back"]), at_player("status", "gone"),
        at_player("status", None), at_player("status", "left"), at_player("status", "timed_out"),
        at_player("declare", True), at_player("declare", False), at_player("declare", 1), at_player("declare", None),
        lambda r: r["claimed"]["amounts"].__setitem__(who, r["claimed"]["amounts"][who] + 1),
        lambda r: r["claimed"]["amounts"].__setitem__(who, float(r["claimed"]["amounts"][who])),
        lambda r: r["claimed"]["amounts"].__setitem__("nobody", 0),
        lambda r: r["claimed"]["amounts"].__setitem__(who, 2**53),
        lambda r: r.__setitem__("players", r["players"][:1]),
        lambda r: r.__setitem__("players", [*r["players"], *r["players"]][:5]),
        lambda r: r["players"].reverse(),
        lambda r: r.__setitem__("claimed", {p["id"]: 0 for p in r["players"]}),
    ]  # fmt: skip
    mutated: list[Any] = [changed(edit) for edit in edits]
    text = json.dumps(request)
    mutated += [
        text.replace('"stake": ', '"stake": 1, "stake": ', 1),
        text.replace(f'"{who}"', '"\\ud800"', 1),
        text.replace('"stake": ', '"stake": NaN, "x": ', 1),
        text[:-1],
        "[]",
        "",
    ]
    return mutated


def test_a_claim_the_engine_finds_agreeing_is_one_the_per_room_path_finds_agreeing() -> None:
    """The engine reads only what the per-room path accepts as it stands: of a few thousand requests,
    each changed in one of fifty ways, none the engine passes is refused or disagrees by the per-room
    path; and it passes every agreeing claim it is given as made."""
    rng = random.Random(7)
    catalogue = catalogue_for(None)
    made = claims(300, seed=11)
    lines = [json.dumps(r).encode() for r in made]
    assert agreeing_lines(lines, 1, catalogue) == set(range(1, len(lines) + 1))
    mutated: list[bytes] = []
    for request in made:
        mutated += [m if isinstance(m, str) else json.dumps(m) for m in _mutations(request, rng)]  # type: ignore[misc]
    encoded = [m.encode() if isinstance(m, str) else m for m in mutated]
    passed = agreeing_lines(encoded, 0, catalogue)
    wrong = []
    for number in passed:
        status, body = answer(OPERATIONS["verify"], encoded[number], catalogue)
        if not settles(status, body):
            wrong.append((encoded[number], status, body.get("agrees")))
    assert not wrong, f"{len(wrong)} lines passed that the per-room path does not: {wrong[:2]}"
    assert 0 < len(passed) < len(encoded) / 2


def test_verify_jsonl_writes_the_same_bytes_and_counts_with_and_without_the_engine(
    monkeypatch: Any, tmp_path: Any
) -> None:
    """The engine only spares the per-room path the agreeing claims: over a file of agreeing,
    disagreeing, refused and unreadable lines, `verify --jsonl` writes the same answers, in the same
    order, and counts the same, with --jobs 1 and 2."""
    from service.bulk import jsonl

    rng = random.Random(3)
    lines = []
    for request in claims(400, seed=5):
        draw = rng.random()
        if draw < 0.1:
            who = next(iter(request["claimed"]["amounts"]))
            request["claimed"]["amounts"][who] += 1
            other = list(request["claimed"]["amounts"])[1]
            request["claimed"]["amounts"][other] -= 1
        elif draw < 0.15:
            request["players"][0]["back"][0] = "1X"
        lines.append(json.dumps(request).encode() + b"\n")
    lines[7] = b"{not json\n"
    written = {}
    for engine in ("1", "0"):
        monkeypatch.setenv("MAUBINH_BULK_ENGINE", engine)
        for jobs in (1, 2):
            out = tmp_path / f"{engine}-{jobs}.jsonl"
            with out.open("wb") as sink:
                done = jsonl.run("verify", iter(lines), sink, jobs)
            written[engine, jobs] = (out.read_bytes(), done.lines, done.agreed, done.refused)
    assert len(set(written.values())) == 1
    text, count, agreed, refused = written["1", 1]
    assert count == 400 and 0 < agreed < count - refused and refused > 0
    assert text.count(b"\n") == count - agreed


def test_numpy_loaded_after_the_package_starts_no_blas_threads() -> None:
    """A --jobs worker loads numpy itself: an OpenBLAS thread of its own would spin on the other worker's core."""
    count = "import os, service, numpy; print(len(os.listdir('/proc/self/task')))"
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    threads = subprocess.run([sys.executable, "-c", count], env=env, capture_output=True, text=True, check=True)
    assert threads.stdout.strip() == "1"
