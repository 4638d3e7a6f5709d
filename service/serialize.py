"""The one serializer: domain results → JSON-ready dicts → bytes.

The command line and the HTTP API both print through here, so they agree byte
for byte. Plain dict building keeps it fast (it is on the hot path of every
score); schemathesis checks every answer against openapi.yaml (tests/api/test_schemathesis.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

import orjson

from service.contract import Fault
from service.game.cards import CARD_TEXT, Card, format_cards
from service.game.hands import POSITIONS, HandTable, HandValue, Position
from service.game.patterns import PATTERN_NAMES, Split
from service.problem_types import problem_type
from service.rulesets import Ruleset, RulesetRef
from service.rulesets.catalogue import Catalogue
from service.scoring import InstantWin, LedgerLine, PairShowdown, PlayerResult, Result
from service.scoring.room_words import nothing_paid, pair_paid_nothing
from service.scoring.rule_words import rule_said
from service.scoring.settlement import foul_reasons, pattern_names, position_names
from service.texts import (
    Language,
    Named,
    Template,
    Text,
    choice_in_vietnamese,
    in_language,
    ledger_templates,
    listed,
    localize,
)

if TYPE_CHECKING:  # the advisor imports numpy: only its answers need it
    from service.advisor import Advice


def dumps(document: object, language: Language = "en") -> bytes:
    """Compact, UTF-8, key order as built: the same result always gives the same bytes. Texts are in
    English as built, or rendered again in ``language``."""
    document = localize(document, language)
    try:
        return orjson.dumps(document)
    except orjson.JSONEncodeError:  # a lone surrogate echoed from the request: escape it rather than fail
        return json.dumps(document, separators=(",", ":")).encode()


def dumps_results(results: Iterable[object], language: Language = "en") -> bytes:
    """``{"results": [...]}``, each result encoded as it comes: the same bytes as :func:`dumps` of the
    whole, without holding every result's tree at once (a batch that did was slower a room than
    single rooms, its trees outgrowing the CPU's caches: docs/benchmarks.md)."""
    return b'{"results":[' + b",".join([dumps(result, language) for result in results]) + b"]}"


def hand_json(hand: HandValue, label: str | None = None) -> dict[str, Any]:
    info = hand.info
    out: dict[str, Any] = {
        "cards": [CARD_TEXT[c] for c in hand.cards],
        "category": info.bonus_keys[-1],
        "kind": info.kind.value if info.kind else None,
        "name": info.name_vi,
        "name_en": info.name_en,
        "strength": hand.strength,
    }
    if label is not None:
        out["label"] = label
    return out


def hands_json(hands: Mapping[Position, HandValue], ruleset: Ruleset) -> dict[str, Any]:
    return {p: hand_json(hands[p], ruleset.labels[p]) for p in POSITIONS}


def split_json(split: Split | None) -> dict[str, list[str]] | None:
    if split is None:
        return None
    return {"back": format_cards(split.back), "middle": format_cards(split.middle), "front": format_cards(split.front)}


def pattern_json(pattern: str, units: int, strength: int, split: Split | None, ruleset: Ruleset) -> dict[str, Any]:
    """An instant-win pattern as every response shows it (score, evaluate, arrange); its Vietnamese name
    the one the ruleset's ledger lines say ("Sám chi đầu (chi 3 lá)" in maubinh-bao)."""
    name_en, _ = PATTERN_NAMES[pattern]
    said = pattern_names(ruleset)[pattern].vi
    name_vi = said[:1].upper() + said[1:]
    return {
        "pattern": pattern,
        "units": units,
        "strength": strength,
        "name": name_vi,
        "name_en": name_en,
        "split": split_json(split),
    }


def instant_win_json(win: InstantWin | None, ruleset: Ruleset) -> dict[str, Any] | None:
    return None if win is None else pattern_json(win.pattern, win.units, win.strength, win.split, ruleset)


def _player_json(player: PlayerResult, ruleset: Ruleset, stake: int) -> dict[str, Any]:
    return {
        "id": player.id,
        "status": player.status,
        "fouled": player.fouled,
        "foul_reason": player.foul_reason,
        "declared": player.declared,
        "instant_win": instant_win_json(player.instant_win, ruleset),
        "aces": player.aces,
        "hands": hands_json(player.hands, ruleset) if player.hands is not None else None,
        "units": player.units,
        "amount": player.units * stake,
    }


def _filled(template: Template, fields: dict[str, Any]) -> str:
    """A ledger template with its fields, each as ``str()`` writes it (a Named or Text as its words)."""
    pieces: list[str] = []
    for text, name in template:
        pieces.append(text)
        if name is not None:
            value = fields[name]
            pieces.append(value if isinstance(value, str) else str(value))
    return "".join(pieces)


def _line_json(
    seq: int, line: LedgerLine, stake: int, templates: dict[str, Template], language: Language, ruleset: Ruleset
) -> dict[str, Any]:
    key, fields = line.explanation
    out: dict[str, Any] = {
        "seq": seq,
        "step": line.step,
        "payer": line.payer,
        "payee": line.payee,
        "units": line.units,
        "amount": line.units * stake,
        "position": line.position,
        "rule": line.rule,
        "rule_text": line.rule if language == "en" else rule_said(line.rule, ruleset, language),
        "explanation": _filled(templates[key], fields if language == "en" else in_language(fields, language)),
    }
    if line.hands is not None:
        out["hands"] = dict(line.hands)
    return out


def _pair_json(pair: PairShowdown, stake: int, ledger: list[LedgerLine]) -> dict[str, Any]:
    """A pair's showdown; where no ledger line passed between the two, why (review 5: two winners paid
    by a third were shown owing each other 0 with no word of why)."""
    out: dict[str, Any] = {
        "players": list(pair.players),
        "settled_by": pair.settled_by,
        "chi": [{"position": c.position, "winner": c.winner, "units": c.units} for c in pair.chi],
        "scooped_by": pair.scooped_by,
        "units": dict(pair.units),
        "amounts": {k: v * stake for k, v in pair.units.items()},
    }
    first, second = pair.players
    if pair.units[first] == 0 and not _passed_between(first, second, ledger):
        out["explanation"] = pair_paid_nothing(pair)
    return out


def _passed_between(first: str, second: str, ledger: list[LedgerLine]) -> bool:
    """Whether a ledger line passed between the two, either way (lines that cancel out included)."""
    for line in ledger:
        if (line.payer == first and line.payee == second) or (line.payer == second and line.payee == first):
            return True
    return False


def result_json(result: Result, language: Language = "en") -> dict[str, Any]:
    """The ``POST /v1/score`` response body, its explanations in ``language``."""
    room = result.room
    ruleset = room.ruleset
    templates = ledger_templates(language)
    return {
        "round_id": room.round_id,
        "ruleset": ruleset_block(ruleset),
        "stake": room.stake,
        "players": [_player_json(p, ruleset, room.stake) for p in result.players],
        "ledger": [
            _line_json(seq, line, room.stake, templates, language, ruleset)
            for seq, line in enumerate(result.ledger, start=1)
        ],
        "showdown": [_pair_json(pair, room.stake, result.ledger) for pair in result.showdown],
        **({} if result.ledger else {"explanation": nothing_paid(result)}),
    }


def _lower(name: str) -> str:
    return name[:1].lower() + name[1:]


def _where(ruleset: Ruleset) -> dict[str, Named]:
    """The three positions as a sentence names them: the field in English, the ruleset's label in Vietnamese,
    its size said only where the label does not number it ("chi cuối (5 lá)"); a sentence that names all
    three in order needs no more (a ledger line, read alone, always says it)."""
    return {
        p: Named(p, _lower(ruleset.labels[p]) if any(c.isdigit() for c in ruleset.labels[p]) else _lower(named.vi))
        for p, named in position_names(ruleset).items()
    }


def _names(named: list[Named]) -> Named:
    return Named(listed([n.en for n in named]).en, listed([n.vi for n in named]).vi)


def _decimal(value: float) -> Named:
    """An expected value to two places, as each language writes it (1.25; 1,25, and 6 rather than 6,00),
    the minus a real one."""
    text = f"{abs(value):.2f}"
    sign = "\u2212" if value < 0 else ""
    return Named(sign + text, sign + text.replace(".", ",").removesuffix(",00"))


def _gain(value: float) -> Named:
    """An expected value as a player says it in Vietnamese: "ăn 1,25" or "thua 1,21", never a negative
    win ("ăn −1,21"); its English, the signed number."""
    said = _decimal(abs(value)).vi
    return Named(_decimal(value).en, f"thua {said}" if value < 0 else f"ăn {said}")


def evaluation_said(ruleset: Ruleset, reason: str | None, patterns: list[str]) -> list[Text]:
    """``POST /v1/evaluate`` in words: fouled or not and why, then the instant wins the cards qualify for."""
    where = _where(ruleset)
    said = [
        Text("answer.fouled", reason=foul_reasons(ruleset)[reason], **where)
        if reason
        else Text("answer.legal", **where)
    ]
    if patterns:
        named = _names([pattern_names(ruleset)[p] for p in patterns])
        said.append(Text("answer.patterns", patterns=named, ruleset=ruleset.id))
    return said


def problem_json(
    status: int, title: Text, detail: Text, faults: list[Fault] | None = None, **extra: object
) -> dict[str, Any]:
    """An RFC 9457 problem document; 422s carry every fault with its pointer. The ``type`` comes from
    the title's key (service/problem_types.py), whatever the language of the answer."""
    out: dict[str, Any] = {"type": problem_type(title.key), "title": title, "status": status, "detail": detail}
    if faults is not None:
        out["errors"] = [{"pointer": f.pointer, "message": f.message, "code": f.code} for f in faults]
    out.update(extra)
    return out


MAX_FAULTS_LISTED: Final = 120
"""A request can hold tens of thousands of faults (a 60 KB array of junk); past this many the
list is cut, so that a small request cannot ask for a huge answer (nor a batch of 500 such rooms a
25 MB one). No room of 2 to 4 players can have more: 4 × (13 + 5 + 5 + 3) cards and a few fields
each. The detail gives the total."""


def rejected_json(faults: list[Fault], of_room: bool = True) -> dict[str, Any]:
    count = len(faults)
    if count > MAX_FAULTS_LISTED:
        detail = Text("problem.unprocessable_cut", count=count, listed=MAX_FAULTS_LISTED)
    else:
        detail = Text("problem.unprocessable_one" if count == 1 else "problem.unprocessable", count=count)
    title = Text("problem.unprocessable_title" if of_room else "problem.unprocessable_request_title")
    return problem_json(422, title, detail, faults[:MAX_FAULTS_LISTED])


def _ref_json(ref: RulesetRef) -> dict[str, Any]:
    return {"id": ref.id, "version": ref.version, "digest": ref.digest}


def ruleset_block(ruleset: Ruleset) -> dict[str, Any]:
    """The rules a result was reached under, as every answer names them: id, version, digest and, for
    a variant, its base and every value it changed."""
    out = _ref_json(ruleset.ref)
    if ruleset.base is not None:
        out["base"] = _ref_json(ruleset.base)
        out["changes"] = [{"field": c.field, "base": c.base, "value": c.value} for c in ruleset.changes]
    return out


def ruleset_json(ruleset: Ruleset) -> dict[str, Any]:
    """The whole ruleset as data, with its digest (``GET /v1/rulesets/{id}``) and, for an operator's
    variant, the ruleset it patched."""
    out = {**json.loads(json.dumps(dict(ruleset.data))), "digest": ruleset.digest}
    if ruleset.base is not None:
        out["base"] = _ref_json(ruleset.base)
    for choice in out.get("choices", []):  # Vietnamese beside the English: one answer whatever the language (ETag)
        for member in ("decision", "reason"):
            said = choice_in_vietnamese(choice.get(member, ""), ruleset.labels)
            if said is not None:
                choice[f"{member}_vi"] = said
    return out


def rulesets_json(catalogue: Catalogue) -> dict[str, Any]:
    """``GET /v1/rulesets``: each ruleset's latest version, every version it has, and its base."""
    listed = []
    for ruleset in catalogue.latest.values():
        line: dict[str, Any] = {"id": ruleset.id, "title": ruleset.title, "version": ruleset.version}
        line["digest"] = ruleset.digest
        line["versions"] = [r.version for r in catalogue.versions(ruleset.id)]
        if ruleset.base is not None:
            line["base"] = _ref_json(ruleset.base)
        listed.append(line)
    return {"rulesets": listed}


def _arrangement_json(hands: dict[Position, tuple[Card, ...]], table: HandTable, ruleset: Ruleset) -> dict[str, Any]:
    described = table.describe_all(hands)
    return {
        "arrangement": {p: [CARD_TEXT[c] for c in described[p].cards] for p in POSITIONS},
        "hands": hands_json(described, ruleset),
    }


def _advice_said(advice: Advice, ruleset: Ruleset, declare: dict[str, Any] | None) -> list[Text]:
    """The advice in words: the split and why (its expected units, the best of the legal splits), the
    instant win it takes, and whether to declare (BÁO) and why, by the two expected values."""
    described = ruleset.hand_table.describe_all(advice.chosen.arrangement)
    hands = {
        f"{p}_hand": Named(_lower(described[p].info.name_en), _lower(described[p].info.name_vi)) for p in POSITIONS
    }
    names = pattern_names(ruleset)
    automatic = advice.instant_win is not None and ruleset.instant_mode != "declared"
    if advice.chosen.split != advice.play.split and advice.instant_win:  # a pattern's split, not the best to play
        said = [Text("answer.split_pattern", **_where(ruleset), **hands, pattern=names[advice.instant_win])]
    else:
        value = advice.chosen.expected_units
        expected = {"expected": _decimal(value), "gain": _gain(value), "legal": advice.legal_splits}
        most = Named("", "ít thua nhất" if value < 0 else "cao nhất")
        # An instant win that settles every pair compares no chi: the split's value is said as only that.
        key = "answer.split_if_compared" if automatic and ruleset.settles_pair else "answer.split"
        said = [Text(key, **_where(ruleset), **hands, **expected, most=most)]
    if automatic:
        assert advice.instant_win is not None
        units = ruleset.instant_win_row(advice.instant_win).units
        said.insert(
            0 if ruleset.settles_pair else 1, Text("answer.instant_win", pattern=names[advice.instant_win], units=units)
        )
    if declare is not None:
        key = "answer.declare" if declare["recommended"] else "answer.do_not_declare"
        declared, played = declare["declare_expected_units"], declare["play_expected_units"]
        worth = {"declared": _decimal(declared), "played": _decimal(played)}
        worth |= {"declared_gain": _gain(declared), "played_gain": _gain(played)}
        said.append(Text(key, pattern=names[declare["pattern"]], **worth))
    return said


def arrange_json(advice: Advice, ruleset: Ruleset, alternatives: int) -> dict[str, Any]:
    """The ``POST /v1/arrange`` response: the advisor's decision for 13 cards."""
    from service.advisor.opponents import field_said

    table = ruleset.hand_table
    rows = {row.pattern: row for row in ruleset.instant_wins}
    patterns = [pattern_json(p, rows[p].units, rows[p].strength, split, ruleset) for p, split in advice.patterns]
    by_id = {p["pattern"]: p for p in patterns}
    declare = None
    if ruleset.instant_mode == "declared" and advice.strongest is not None:
        declare = {
            "recommended": advice.declare,
            "pattern": advice.strongest,
            "declare_units": ruleset.instant_win_row(advice.strongest).units,
            "declare_expected_units": round(advice.instant_win_worth or 0.0, 4),
            "play_expected_units": round(advice.play.expected_units, 4),
        }
    return {
        "ruleset": ruleset_block(ruleset),
        "explanation": _advice_said(advice, ruleset, declare),
        **_arrangement_json(advice.chosen.arrangement, table, ruleset),
        "expected_units": round(advice.chosen.expected_units, 4),
        "instant_win": by_id[advice.instant_win] if advice.instant_win else None,
        "declare": declare,
        "patterns": patterns,
        "alternatives": [
            {**_arrangement_json(s.arrangement, table, ruleset), "expected_units": round(s.expected_units, 4)}
            for s in advice.ranked
            if s.split != advice.chosen.split
        ][:alternatives],
        "model": {
            "opponents": 1,
            "opponents_field": advice.opponents,
            "field_table": advice.field_table,
            "field": field_said(advice.field.description),
            "field_samples": advice.field.samples,
            "legal_splits": advice.legal_splits,
        },
    }
