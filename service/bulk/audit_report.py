"""An audit report to hand over: one offline HTML page for a ``maubinh verify --jsonl`` run, and
page.json beside it with the same figures.

Provenance first (the input's path, SHA-256 and lines, the tool's version, the date, every ruleset
used with its digest); rounds checked, agreed, disagreed and refused, refusals by code; the money in
dispute by step and by ruleset as bar charts (matplotlib, drawn to inline SVG: no JavaScript, no CDN,
text kept as text so the page is searchable and translatable); the rounds with the most money in
dispute, every player of each, with a link into the viewer's verify mode. It is built from the same
table rows as the Parquet files (:mod:`service.bulk.tables`), chunk by chunk, so it holds sums and the
few largest rounds only.
"""

from __future__ import annotations

import heapq
import html
import json
from collections import Counter
from typing import TYPE_CHECKING, Any

from service.bulk import VIEWER
from service.bulk.report_page import (
    PAGE_HEAD,
    REFUSED_LISTED,
    STYLE,
    UNIT,
    HashedLines,
    Page,
    bar_chart,
    provenance,
    provenance_rows,
    signed,
    viewer_link,
)
from service.bulk.tables import decode_rows
from service.scoring.claims import AMOUNTS_ONLY, STEP_TEXTS
from service.texts import Language

if TYPE_CHECKING:
    from service.bulk.jsonl import Chunk, Summary

LARGEST = 20
"""How many rounds with the most money in dispute the report lists (and keeps the requests of)."""


class Report(Page):
    """The figures of a verify run, gathered chunk by chunk: rounds by outcome, refusals by code, the
    rulesets used, the money in dispute by step and by ruleset, and the rounds with the most of it.

    Money in dispute is, over the disagreeing rounds, the sum of each round's positive differences
    (claimed − computed, by player): what the claimed settlement moved wrongly, counted once. By step,
    a round's line-level differences are netted per player and step (each positive part counted), so a
    claim that moved money between steps counts in both; a claim without ledger lines is ``amounts``."""

    def __init__(self, language: Language = "en", viewer: str = VIEWER) -> None:
        self.language = language
        self.viewer = viewer
        self.rulesets: dict[str, str] = {}
        self.rounds: Counter[str] = Counter()
        self.refused_by_code: Counter[str] = Counter()
        self.refused_rounds: list[dict[str, Any]] = []
        self.by_step: Counter[str] = Counter()
        self.by_ruleset: Counter[str] = Counter()
        self.total = 0
        self._largest: list[tuple[int, int, dict[str, Any]]] = []  # a min-heap of (in dispute, -line, round)

    def add(self, chunk: Chunk) -> None:
        tables = {name: batch.to_pylist() for name, batch in decode_rows("verify", chunk.tables).items()}
        rooms = {room["line"]: room for room in tables["rooms"]}
        for room in rooms.values():
            if room["refused"] is None:
                self.rulesets[f"{room['ruleset_id']}@{room['ruleset_version']}"] = room["ruleset_digest"]
                self.rounds["agree" if room["agrees"] else "disagree"] += 1
        for line, codes in _group(tables["problems"], "code").items():
            self.refused_by_code.update(set(codes))  # a round once per code
            if len(self.refused_rounds) < REFUSED_LISTED:
                round_id = rooms[line]["round_id"] if line in rooms else None
                self.refused_rounds.append({"line": line, "round_id": round_id, "codes": sorted(set(codes))})
        players = _group(tables["players"])
        differences = _group(tables["differences"])
        requests = dict(chunk.requests)
        for line, rows in differences.items():
            disputed = sum(row["difference"] for row in rows if row["kind"] == "player" and row["difference"] > 0)
            room = rooms[line]
            self.total += disputed
            self.by_ruleset[f"{room['ruleset_id']}@{room['ruleset_version']}"] += disputed
            self.by_step.update(_by_step(rows, disputed))
            differ = {row["player"]: row["difference"] for row in rows if row["kind"] == "player"}
            round_ = {
                "line": line,
                "round_id": room["round_id"],
                "in_dispute": disputed,
                "players": [
                    {
                        "player": p["player"],
                        "claimed": p["amount"] + differ.get(p["player"], 0),
                        "computed": p["amount"],
                        "difference": differ.get(p["player"], 0),
                    }
                    for p in players[line]
                ],
                "request": requests[line],
            }
            entry = (disputed, -line, round_)
            if len(self._largest) < LARGEST:
                heapq.heappush(self._largest, entry)
            elif entry[:2] > self._largest[0][:2]:
                heapq.heapreplace(self._largest, entry)

    def largest(self) -> list[dict[str, Any]]:
        """The rounds with the most money in dispute, most first (then by input line)."""
        return [entry[2] for entry in sorted(self._largest, key=lambda e: (-e[0], -e[1]))]

    def figures(self, summary: Summary, source: HashedLines) -> dict[str, Any]:
        """page.json: the page's figures, provenance first."""
        return {
            **provenance(source, self.rulesets),
            "unit": UNIT,
            "rounds": {
                "lines": summary.lines,
                "scored": self.rounds["agree"] + self.rounds["disagree"],
                "agree": self.rounds["agree"],
                "disagree": self.rounds["disagree"],
                "refused": summary.refused,
                "refused_by_code": dict(sorted(self.refused_by_code.items(), key=lambda kv: (-kv[1], kv[0]))),
                "refused_rounds": sorted(self.refused_rounds, key=lambda r: r["line"]),
            },
            "in_dispute": {
                "total": self.total,
                "by_step": dict(self.by_step.most_common()),
                "by_ruleset": dict(self.by_ruleset.most_common()),
            },
            "largest": [{key: value for key, value in round_.items() if key != "request"} for round_ in self.largest()],
        }

    def html(self, figures: dict[str, Any]) -> str:
        rounds, dispute = figures["rounds"], figures["in_dispute"]
        provenance = provenance_rows(figures, self.language)
        cards = self._cards(
            ("checked", "report.checked", rounds["lines"]),
            ("agreed", "report.agreed", rounds["agree"]),
            ("disagreed", "report.disagreed", rounds["disagree"]),
            ("refused", "report.refused", rounds["refused"]),
            ("in-dispute", "report.in_dispute", dispute["total"]),
        )
        refusals = "".join(
            f'<tr data-code="{html.escape(code)}"><td><code>{html.escape(code)}</code></td>'
            f'<td class="num">{self._n(count)}</td></tr>'
            for code, count in rounds["refused_by_code"].items()
        )
        refused_rounds = "".join(
            f'<tr data-line="{r["line"]}"><td class="num">{r["line"]}</td>'
            f"<td>{html.escape(str(r['round_id'] or ''))}</td>"
            f"<td>{', '.join(f'<code>{html.escape(code)}</code>' for code in r['codes'])}</td></tr>"
            for r in rounds["refused_rounds"]
        )
        steps = {STEP_TEXTS[step].render(self.language): amount for step, amount in dispute["by_step"].items()}
        return PAGE.format(
            lang=self.language,
            style=STYLE,
            title=self._t("report.title"),
            lead=self._t("report.lead"),
            provenance_title=self._t("report.provenance"),
            provenance=provenance,
            cards=cards,
            refusals_title=self._t("report.refused_by_code"),
            refusals=(
                f"<table><thead><tr><th>{self._t('report.col_code')}</th><th>{self._t('report.col_rounds')}</th>"
                f"</tr></thead><tbody>{refusals}</tbody></table>"
                f'<table id="refused-rounds"><caption>{self._t("report.refused_rounds", most=REFUSED_LISTED)}</caption>'
                f"<thead><tr><th>{self._t('report.col_line')}</th><th>{self._t('report.col_round')}</th>"
                f"<th>{self._t('report.col_code')}</th></tr></thead><tbody>{refused_rounds}</tbody></table>"
                if refusals
                else f"<p>{self._t('report.no_refusals')}</p>"
            ),
            unit=self._t("report.unit"),
            by_step=self._t("report.by_step"),
            step_chart=bar_chart(steps, self._t("report.amount"), self.language),
            by_ruleset=self._t("report.by_ruleset"),
            ruleset_chart=bar_chart(dispute["by_ruleset"], self._t("report.amount"), self.language),
            largest=self._t("report.largest", count=LARGEST),
            table=self._largest_table(),
        )

    def _largest_table(self) -> str:
        groups = []
        for round_ in self.largest():
            link = html.escape(viewer_link(json.loads(round_["request"]), self.viewer))
            span = len(round_["players"])
            rows = []
            for k, p in enumerate(round_["players"]):
                first = (
                    f'<td class="num" rowspan="{span}">{round_["line"]}</td>'
                    f'<td rowspan="{span}">{html.escape(str(round_["round_id"] or ""))}</td>'
                    if k == 0
                    else ""
                )
                last = (
                    f'<td class="num" rowspan="{span}">{self._n(round_["in_dispute"])}</td>'
                    f'<td rowspan="{span}"><a href="{link}">{self._t("report.open_in_viewer")}</a></td>'
                    if k == 0
                    else ""
                )
                rows.append(
                    f'<tr data-player="{html.escape(p["player"])}">{first}<td>{html.escape(p["player"])}</td>'
                    f'<td class="num">{self._n(p["claimed"])}</td><td class="num">{self._n(p["computed"])}</td>'
                    f'<td class="num">{signed(self._n(p["difference"]), p["difference"])}</td>{last}</tr>'
                )
            groups.append(f'<tbody data-line="{round_["line"]}">{"".join(rows)}</tbody>')
        if not groups:
            return f"<p>{self._t('report.no_differences')}</p>"
        heads = ("report.col_line", "report.col_round", "report.col_player", "report.col_claimed",
                 "report.col_computed", "report.col_difference", "report.col_in_dispute")  # fmt: skip
        return (
            "<table><thead><tr>" + "".join(f"<th>{self._t(h)}</th>" for h in heads) + "<th></th></tr></thead>"
            + "".join(groups) + "</table>"
        )  # fmt: skip


def _group(rows: list[dict[str, Any]], column: str | None = None) -> dict[int, list[Any]]:
    """Rows by their input line (or, with ``column``, that column's values)."""
    grouped: dict[int, list[Any]] = {}
    for row in rows:
        grouped.setdefault(row["line"], []).append(row if column is None else row[column])
    return grouped


def _by_step(rows: list[dict[str, Any]], disputed: int) -> Counter[str]:
    """One round's money in dispute by step: its line-level differences netted per player and step,
    each positive part counted; a round without them is all ``amounts``."""
    net: Counter[tuple[str, str]] = Counter()
    for row in rows:
        if row["kind"] != "player":
            step = row["step"] or "unstated"
            net[row["payee"], step] += row["difference"]
            net[row["payer"], step] -= row["difference"]
    found: Counter[str] = Counter()
    for (_, step), amount in net.items():
        if amount > 0:
            found[step] += amount
    return found if found else Counter({AMOUNTS_ONLY: disputed} if disputed else {})


PAGE = (
    PAGE_HEAD
    + """<body>
<h1>{title}</h1>
<p>{lead}</p>
<h2>{provenance_title}</h2>
<table id="provenance">{provenance}</table>
<div class="figures">{cards}</div>
<p id="unit">{unit}</p>
<h2>{refusals_title}</h2>
<div id="refusals">{refusals}</div>
<h2>{by_step}</h2>
<figure id="by-step">{step_chart}</figure>
<h2>{by_ruleset}</h2>
<figure id="by-ruleset">{ruleset_chart}</figure>
<h2>{largest}</h2>
<div id="largest">{table}</div>
</body>
</html>
"""
)
