"""A what-if replay's figures (page.json, or stdout) and its offline HTML page, gathered chunk by chunk
from the replay's table rows: sums, each player's net change, and the few rounds that move the most.

Money moved is, over the replayed rounds, the sum of each player's positive difference (candidate −
recorded): what the candidate would move from one player to another, counted once. By step, a round's
differences are netted per player and step and each positive part counted, as verify's report does.
"""

from __future__ import annotations

import heapq
import html
import json
from collections import Counter
from typing import Any

from service.bulk import VIEWER
from service.bulk.replay import LARGEST, OUTCOMES, Candidate, Chunk, Summary, candidate_request
from service.bulk.report_page import (
    PAGE_HEAD,
    REFUSED_LISTED,
    STYLE,
    UNIT,
    HashedLines,
    Page,
    bar_chart,
    base64url,
    provenance,
    provenance_rows,
    signed,
    viewer_link,
)
from service.bulk.tables import decode_rows
from service.scoring.claims import STEP_TEXTS
from service.texts import Language

NOT_REPLAYED = {
    "disagrees": "replay.outcome_disagrees",
    "refused": "replay.outcome_refused",
    "not_replayable": "replay.outcome_not_replayable",
    "skipped": "replay.outcome_skipped",
}
"""The outcomes of the rounds not replayed, and the key of each one's words."""
LISTED = ("disagrees", "refused", "not_replayable")
"""The outcomes whose rounds page.json lists one by one (a skipped round is only not the club's)."""


class ReplayReport(Page):
    """The figures of a replay run, gathered chunk by chunk."""

    def __init__(self, candidate: Candidate, language: Language = "en", viewer: str = VIEWER) -> None:
        self.candidate = candidate
        self.language = language
        self.viewer = viewer
        self.rulesets: dict[str, str] = {candidate.name: candidate.ruleset.digest}
        self.outcomes: Counter[str] = Counter()
        self.codes: dict[str, Counter[str]] = {"refused": Counter(), "not_replayable": Counter()}
        self.changed = 0
        self.total = 0
        self.by_step: Counter[str] = Counter()
        self.by_ruleset: Counter[str] = Counter()
        self.by_player: Counter[str] = Counter()
        self._largest: list[tuple[int, int, dict[str, Any]]] = []  # a min-heap of (moved, -line, round)
        self.not_replayed: list[dict[str, Any]] = []

    def add(self, chunk: Chunk) -> None:
        tables = {name: batch.to_pylist() for name, batch in decode_rows("replay", chunk.tables).items()}
        rounds = {row["line"]: row for row in tables["replayed"]}
        for row in rounds.values():
            self.outcomes[row["outcome"]] += 1
            if row["recorded"] is not None:
                self.rulesets[row["recorded"]] = row["recorded_digest"]
            if row["outcome"] in self.codes:
                self.codes[row["outcome"]][row["code"]] += 1
            if row["outcome"] in LISTED and len(self.not_replayed) < REFUSED_LISTED:
                self.not_replayed.append({key: row[key] for key in ("line", "round_id", "outcome", "code")})
            if row["moved"]:
                self.changed += 1
                self.total += row["moved"]
                self.by_ruleset[row["recorded"]] += row["moved"]
        players: dict[int, list[dict[str, Any]]] = {}
        for row in tables["replayed_players"]:
            self.by_player[row["player"]] += row["difference"]
            players.setdefault(row["line"], []).append(row)
        for row in tables["replayed_steps"]:
            if row["difference"] > 0:
                self.by_step[row["step"]] += row["difference"]
        for moved, line, request in chunk.largest:
            entry = (moved, -line, self._round(rounds[line], players[line], json.loads(request)))
            if len(self._largest) < LARGEST:
                heapq.heappush(self._largest, entry)
            elif entry[:2] > self._largest[0][:2]:
                heapq.heapreplace(self._largest, entry)

    def _round(self, row: dict[str, Any], players: list[dict[str, Any]], request: dict[str, Any]) -> dict[str, Any]:
        replayed = candidate_request(request, self.candidate)
        return {
            "line": row["line"],
            "round_id": row["round_id"],
            "recorded": row["recorded"],
            "moved": row["moved"],
            "players": [{key: p[key] for key in ("player", "recorded", "candidate", "difference")} for p in players],
            "links": {
                "recorded": viewer_link(request, self.viewer),
                "candidate": f"{self.viewer}#room={base64url(replayed)}",
            },
        }

    def largest(self) -> list[dict[str, Any]]:
        """The rounds that move the most money, most first (then by input line)."""
        return [entry[2] for entry in sorted(self._largest, key=lambda e: (-e[0], -e[1]))]

    def _players(self, sign: int) -> list[dict[str, Any]]:
        """The players who gain (``sign`` 1) or lose (−1) the most over all rounds, most first, then by id."""
        ranked = sorted((-sign * net, who) for who, net in self.by_player.items() if sign * net > 0)
        return [{"player": who, "net": -sign * amount} for amount, who in ranked[:LARGEST]]

    def figures(self, summary: Summary, source: HashedLines) -> dict[str, Any]:
        """page.json: the page's figures, provenance first (the same block as verify's report)."""
        return {
            **provenance(source, self.rulesets),
            "candidate": {
                "ruleset": self.candidate.name,
                "digest": self.candidate.ruleset.digest,
                "given": self.candidate.reference,
                "only": self.candidate.only,
            },
            "unit": UNIT,
            "rounds": {
                "lines": summary.lines,
                **{outcome: self.outcomes[outcome] for outcome in OUTCOMES},
                "changed": self.changed,
                "refused_by_code": _most_first(self.codes["refused"]),
                "not_replayable_by_code": _most_first(self.codes["not_replayable"]),
                "not_replayed_rounds": self.not_replayed,
            },
            "moved": {
                "total": self.total,
                "by_step": dict(self.by_step.most_common()),
                "by_ruleset": dict(self.by_ruleset.most_common()),
                "players": {
                    "changed": sum(1 for net in self.by_player.values() if net),
                    "gain_most": self._players(1),
                    "lose_most": self._players(-1),
                },
            },
            "largest": self.largest(),
        }

    def html(self, figures: dict[str, Any]) -> str:
        rounds, moved = figures["rounds"], figures["moved"]
        not_replayed = sum(rounds[outcome] for outcome in NOT_REPLAYED)
        cards = self._cards(
            ("lines", "report.checked", rounds["lines"]),
            ("replayed", "replay.replayed", rounds["replayed"]),
            ("changed", "replay.changed", rounds["changed"]),
            ("not-replayed", "replay.not_replayed", not_replayed),
            ("moved", "replay.moved", moved["total"]),
        )
        steps = {STEP_TEXTS[step].render(self.language): amount for step, amount in moved["by_step"].items()}
        title = self._t("replay.title", candidate=self.candidate.name)
        return (
            PAGE_HEAD.format(lang=self.language, title=title, style=STYLE)
            + f"<body>\n<h1>{title}</h1>\n<p>{self._t('replay.lead')}</p>\n"
            + f"<h2>{self._t('report.provenance')}</h2>\n"
            + f'<table id="provenance">{provenance_rows(figures, self.language)}'
            + f"<tr><th>{self._t('replay.candidate')}</th><td><code>{html.escape(self.candidate.name)}</code> "
            + f"<code>{self.candidate.ruleset.digest}</code></td></tr></table>\n"
            + f'<div class="figures">{cards}</div>\n<p id="unit">{self._t("report.unit")}</p>\n'
            + f'<h2>{self._t("replay.why_not")}</h2>\n<div id="not-replayed">{self._not_replayed(rounds)}</div>\n'
            + f'<h2>{self._t("replay.by_step")}</h2>\n<figure id="by-step">'
            + f"{bar_chart(steps, self._t('report.amount'), self.language)}</figure>\n"
            + f'<p id="by-step-note">{self._t("replay.by_step_note")}</p>\n'
            + f'<h2>{self._t("replay.by_ruleset")}</h2>\n<figure id="by-ruleset">'
            + f"{bar_chart(moved['by_ruleset'], self._t('report.amount'), self.language)}</figure>\n"
            + f"<h2>{self._t('replay.players', count=LARGEST)}</h2>\n"
            + f'<div id="players">{self._players_table(moved)}</div>\n'
            + f'<h2>{self._t("replay.largest", count=LARGEST)}</h2>\n<div id="largest">{self._largest_table()}</div>\n'
            + "</body>\n</html>\n"
        )

    def _not_replayed(self, rounds: dict[str, Any]) -> str:
        rows = []
        for outcome, key in NOT_REPLAYED.items():
            codes = rounds.get(f"{outcome}_by_code") or ({"": rounds[outcome]} if rounds[outcome] else {})
            for code, count in codes.items():
                shown = f"<code>{html.escape(code)}</code>" if code else ""
                rows.append(
                    f'<tr data-outcome="{outcome}"><td>{self._t(key)}</td>'
                    f'<td>{shown}</td><td class="num">{self._n(count)}</td></tr>'
                )
        if not rows:
            return f"<p>{self._t('replay.all_replayed')}</p>"
        heads = ("replay.col_reason", "report.col_code", "report.col_rounds")
        listed = "".join(
            f'<tr data-line="{r["line"]}"><td class="num">{r["line"]}</td>'
            f"<td>{html.escape(str(r['round_id'] or ''))}</td>"
            f"<td>{self._t(NOT_REPLAYED[r['outcome']])}</td><td><code>{html.escape(r['code'] or '')}</code></td></tr>"
            for r in rounds["not_replayed_rounds"]
        )
        each = ("report.col_line", "report.col_round", "replay.col_outcome", "report.col_code")
        return (
            "<table><thead><tr>" + "".join(f"<th>{self._t(h)}</th>" for h in heads) + "</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>"
            + (
                f'<table id="not-replayed-rounds"><caption>{self._t("replay.not_replayed_rounds", most=REFUSED_LISTED)}'
                "</caption><thead><tr>" + "".join(f"<th>{self._t(h)}</th>" for h in each) + "</tr></thead>"
                f"<tbody>{listed}</tbody></table>"
                if listed
                else ""
            )
        )

    def _players_table(self, moved: dict[str, Any]) -> str:
        ranked = moved["players"]["gain_most"] + moved["players"]["lose_most"]
        if not ranked:
            return f"<p>{self._t('replay.no_changes')}</p>"
        rows = "".join(
            f'<tr data-player="{html.escape(p["player"])}"><td>{html.escape(p["player"])}</td>'
            f'<td class="num">{signed(self._n(p["net"]), p["net"])}</td></tr>'
            for p in ranked
        )
        return (
            f"<table><thead><tr><th>{self._t('report.col_player')}</th><th>{self._t('replay.col_net')}</th>"
            f"</tr></thead><tbody>{rows}</tbody></table>"
        )

    def _largest_table(self) -> str:
        groups = []
        for round_ in self.largest():
            span = len(round_["players"])
            links = round_["links"]
            rows = []
            for k, p in enumerate(round_["players"]):
                first = (
                    f'<td class="num" rowspan="{span}">{round_["line"]}</td>'
                    f'<td rowspan="{span}">{html.escape(str(round_["round_id"] or ""))}</td>'
                    f'<td rowspan="{span}"><code>{html.escape(round_["recorded"])}</code></td>'
                    if k == 0
                    else ""
                )
                last = (
                    f'<td class="num" rowspan="{span}">{self._n(round_["moved"])}</td>'
                    f'<td rowspan="{span}"><a href="{html.escape(links["recorded"])}">'
                    f'{self._t("replay.open_recorded")}</a><br><a href="{html.escape(links["candidate"])}">'
                    f"{self._t('replay.open_candidate')}</a></td>"
                    if k == 0
                    else ""
                )
                rows.append(
                    f'<tr data-player="{html.escape(p["player"])}">{first}<td>{html.escape(p["player"])}</td>'
                    f'<td class="num">{self._n(p["recorded"])}</td><td class="num">{self._n(p["candidate"])}</td>'
                    f'<td class="num">{signed(self._n(p["difference"]), p["difference"])}</td>{last}</tr>'
                )
            groups.append(f'<tbody data-line="{round_["line"]}">{"".join(rows)}</tbody>')
        if not groups:
            return f"<p>{self._t('replay.no_changes')}</p>"
        heads = ("report.col_line", "report.col_round", "replay.col_ruleset", "report.col_player",
                 "replay.col_recorded", "replay.col_candidate", "report.col_difference",
                 "replay.col_moved")  # fmt: skip
        return (
            "<table><thead><tr>" + "".join(f"<th>{self._t(h)}</th>" for h in heads) + "<th></th></tr></thead>"
            + "".join(groups) + "</table>"
        )  # fmt: skip


def _most_first(counts: Counter[str]) -> dict[str, int]:
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
