"""What-if replays: recorded rounds re-scored under a candidate ruleset, and the money that would move.

The input is what ``maubinh verify`` reads: each round's request and the settlement recorded for it
(``claimed``). A round is replayed when its claimed amounts are what its own ruleset gives: the
recorded settlement is then the rules' own, step by step, and the candidate's differs from it only by
the rules that changed. A round whose claim disagrees is verify's to explain, not a rule change's
effect: it is counted and left out, as are refused rounds and those the candidate cannot settle (too
many players for it, a declaration it refuses).

The candidate's request is the recorded one with the candidate as its ruleset: without ``claimed``
and ``ruleset_digest`` (they are the recorded round's), and without ``declare`` where the candidate
takes no declarations (its instant wins are found, not declared). Each round gives rows of three
tables (:mod:`service.bulk.tables`), the same on the command line and on Spark.
"""

from __future__ import annotations

import heapq
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from service.bulk.jsonl import numbered_chunks
from service.bulk.lines import Overlong, lines_of
from service.bulk.tables import Rows, problem_code, round_id_of
from service.bulk.workers import mapped
from service.contract import RoomRejected
from service.documents import OPERATIONS, problem_for
from service.rulesets import Ruleset
from service.rulesets.catalogue import Catalogue
from service.scoring.results import STEPS
from service.serialize import problem_json
from service.support.strict_json import BadDocument, loads
from service.texts import Language, Text

OUTCOMES = ("replayed", "disagrees", "refused", "not_replayable", "skipped")
"""What became of each input line: replayed; its claimed amounts disagree with its own ruleset; refused
as a verify request; refused under the candidate (``code`` says why); recorded under another ruleset
than ``--only`` names."""
CHUNK = 256
"""Lines per message to a worker, as for verify's per-room path."""
LARGEST = 20
"""How many rounds that move the most money a report lists (a chunk sends back their requests only)."""


@dataclass(frozen=True)
class Candidate:
    """The ruleset replayed under, as a request names it (an id, a pinned id, or ``{"base", "patch"}``),
    and resolved; ``only``: replay only the rounds recorded under this ruleset id (any version)."""

    reference: str | dict[str, Any]
    ruleset: Ruleset
    only: str | None = None

    @property
    def name(self) -> str:
        return f"{self.ruleset.id}@{self.ruleset.version}"


def read_candidate(given: str, catalogue: Catalogue, only: str | None = None) -> Candidate:
    """``given`` is a patch file (``{"base": …, "patch": …}``) if a file of that name exists or it reads
    as a path (a ``/``, or ``.json`` at its end; no ruleset id has either), else an id or pinned id.
    Raises OSError, BadDocument or RulesetError, each naming what is wrong."""
    from service.rulesets.operator_folder import MAX_OPERATOR_FILE_BYTES
    from service.support.regular_files import open_regular

    reference: str | dict[str, Any] = given
    if Path(given).is_file() or given.endswith(".json") or "/" in given:  # meant as a file: open it, or say why not
        with open_regular(given) as file:  # a pipe is refused, never waited on
            text = file.read(MAX_OPERATOR_FILE_BYTES + 1)
        if len(text) > MAX_OPERATOR_FILE_BYTES:  # one patch, as an operator's file or a request holds
            raise BadDocument(Text("ruleset.operator_too_large", most=MAX_OPERATOR_FILE_BYTES))
        reference = loads(text)
    return Candidate(reference, catalogue.resolve(reference), only)


def candidate_request(request: dict[str, Any], candidate: Candidate) -> dict[str, Any]:
    """The recorded round's request, for scoring under the candidate."""
    changed = {key: value for key, value in request.items() if key not in ("claimed", "ruleset_digest")}
    changed["ruleset"] = candidate.reference
    if candidate.ruleset.instant_mode != "declared" and isinstance(request.get("players"), list):
        changed["players"] = [
            {key: value for key, value in player.items() if key != "declare"} if isinstance(player, dict) else player
            for player in request["players"]
        ]
    return changed


def answered(operation: str, raw: Any, catalogue: Catalogue, language: Language) -> tuple[int, dict[str, Any]]:
    """(status, body) as the CLI answers, a defect included (a 500 for this round, printed): one round's
    failure must not cost the rest of the run."""
    try:
        return 200, OPERATIONS[operation](raw, catalogue, language)
    except (BadDocument, RoomRejected) as error:
        problem = problem_for(error)
        assert problem is not None
        return problem
    except Exception:
        traceback.print_exc(file=sys.stderr)
        return 500, problem_json(500, Text("problem.internal"), Text("problem.internal_line"))


def refusal_code(body: dict[str, Any]) -> str:
    """A refusal's most precise code: its first fault's, else its problem type's."""
    errors = body.get("errors")
    if isinstance(errors, list) and errors and isinstance(errors[0], dict) and "code" in errors[0]:
        return str(errors[0]["code"])
    return problem_code(body)


def _by_step(ledger: list[dict[str, Any]]) -> Counter[tuple[str, str]]:
    """What each (player, step) of a settlement netted, in amount units."""
    net: Counter[tuple[str, str]] = Counter()
    for line in ledger:
        net[line["payee"], line["step"]] += line["amount"]
        net[line["payer"], line["step"]] -= line["amount"]
    return net


def _named(ruleset: dict[str, Any]) -> str:
    return f"{ruleset['id']}@{ruleset['version']}"


class ReplayRows(Rows):
    """The replay's table rows, round after round."""

    def __init__(self) -> None:
        super().__init__("replay")

    def _round(self, line: int, round_id: str | None, outcome: str, **known: Any) -> None:
        columns = {name: [known.get(name)] for name in self.columns["replayed"] if name not in ("line", "round_id")}
        self.extend("replayed", 1, line=[line], round_id=[round_id], **columns | {"outcome": [outcome]})

    def replay(self, line: int, text: bytes, catalogue: Catalogue, candidate: Candidate, language: Language) -> int:
        """One input line's rows; the money it moves (0 unless replayed)."""
        moved = self._replay(line, text if isinstance(text, Overlong) else text.rstrip(b"\r\n"), catalogue, candidate,
                             language)  # fmt: skip
        self.ended()
        return moved

    def _replay(self, line: int, text: bytes, catalogue: Catalogue, candidate: Candidate, language: Language) -> int:
        theirs = {"candidate": candidate.name, "candidate_digest": candidate.ruleset.digest}
        if isinstance(text, Overlong):
            self._round(line, None, "refused", code=refusal_code(text.problem()), **theirs)
            return 0
        try:
            request = loads(text)
        except BadDocument as error:
            problem = problem_for(error)
            assert problem is not None
            status, body = problem
        else:
            status, body = answered("verify", request, catalogue, language)
        if status != 200:
            self._round(line, round_id_of(text), "refused", code=refusal_code(body), **theirs)
            return 0
        recorded, round_id = body["result"], body["result"]["round_id"]
        ours = {
            "recorded": _named(recorded["ruleset"]),
            "recorded_digest": recorded["ruleset"]["digest"],
            "stake": recorded["stake"],
            "players": len(recorded["players"]),
            **theirs,
        }
        if candidate.only is not None and recorded["ruleset"]["id"] != candidate.only:
            self._round(line, round_id, "skipped", **ours)
            return 0
        if any(player["difference"] for player in body["players"]):
            self._round(line, round_id, "disagrees", **ours)
            return 0
        status, replayed = answered("score", candidate_request(request, candidate), catalogue, language)
        if status != 200:
            self._round(line, round_id, "not_replayable", code=refusal_code(replayed), **ours)
            return 0
        return self._moved(line, round_id, recorded, replayed, ours)

    def _moved(
        self, line: int, round_id: str | None, recorded: dict[str, Any], replayed: dict[str, Any], ours: dict[str, Any]
    ) -> int:
        players = [player["id"] for player in recorded["players"]]
        before = [player["amount"] for player in recorded["players"]]
        after = [player["amount"] for player in replayed["players"]]
        differences = [b - a for a, b in zip(before, after, strict=True)]
        moved: int = sum(d for d in differences if d > 0)
        self._round(line, round_id, "replayed", moved=moved, **ours)
        n = len(players)
        self.extend(
            "replayed_players", n, line=[line] * n, round_id=[round_id] * n, player=players,
            recorded=before, candidate=after, difference=differences,
        )  # fmt: skip
        was, now = _by_step(recorded["ledger"]), _by_step(replayed["ledger"])
        steps = [(p, s, was[p, s], now[p, s]) for p in players for s in STEPS if was[p, s] or now[p, s]]
        n = len(steps)
        self.extend(
            "replayed_steps", n, line=[line] * n, round_id=[round_id] * n, player=[s[0] for s in steps],
            step=[s[1] for s in steps], recorded=[s[2] for s in steps], candidate=[s[3] for s in steps],
            difference=[s[3] - s[2] for s in steps],
        )  # fmt: skip
        return moved


@dataclass(frozen=True)
class Chunk:
    """A worker's answer for a chunk of lines: its table rows (Arrow IPC, :meth:`Rows.encode`), and the
    requests of the rounds in it that move the most (for the report's links)."""

    tables: bytes
    lines: int
    largest: tuple[tuple[int, int, bytes], ...] = ()
    """(money moved, line, request) of the chunk's rounds that move the most, at most LARGEST."""


@dataclass
class _Worker:
    catalogue: Catalogue
    candidate: Candidate
    language: Language


_worker: _Worker | None = None


def _start_worker(catalogue: Catalogue, candidate: Candidate, language: Language) -> None:
    global _worker  # noqa: PLW0603 - one per worker process
    _worker = _Worker(catalogue, candidate, language)


def _replay_chunk(numbered: tuple[int, list[bytes]]) -> Chunk:
    assert _worker is not None
    first, lines = numbered
    rows = ReplayRows()
    largest: list[tuple[int, int, bytes]] = []
    for number, line in enumerate(lines, start=first):
        moved = rows.replay(number, line, _worker.catalogue, _worker.candidate, _worker.language)
        if moved:
            entry = (moved, -number, line.rstrip(b"\r\n"))
            if len(largest) < LARGEST:
                heapq.heappush(largest, entry)
            elif entry[:2] > largest[0][:2]:
                heapq.heapreplace(largest, entry)
    return Chunk(rows.encode(), len(lines), tuple((m, -n, text) for m, n, text in largest))


@dataclass
class Summary:
    lines: int = 0
    seconds: float = 0.0


def run(
    source: Iterable[bytes],
    catalogue: Catalogue,
    candidate: Candidate,
    jobs: int,
    take: Callable[[Chunk], None],
    progress: object = None,
    language: Language = "en",
) -> Summary:
    """Replay every line of ``source``, in chunks over ``jobs`` worker processes; each chunk, in input
    order, goes to ``take``."""
    started = time.perf_counter()
    summary = Summary()
    chunks = numbered_chunks(lines_of(source), CHUNK)
    with mapped(_replay_chunk, chunks, jobs, _start_worker, (catalogue, candidate, language)) as results:
        for chunk in results:
            take(chunk)
            summary.lines += chunk.lines
            if progress is not None:
                progress.update(chunk.lines)  # type: ignore[attr-defined]
    summary.seconds = time.perf_counter() - started
    return summary
