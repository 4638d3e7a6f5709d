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

import base64
import datetime
import hashlib
import heapq
import html
import io
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from service import version
from service.bulk import VIEWER
from service.bulk.tables import decode_rows
from service.texts import Language, Text
from service.verify import AMOUNTS_ONLY, STEP_TEXTS

if TYPE_CHECKING:
    from service.bulk.jsonl import Chunk, Summary

LARGEST = 20
"""How many rounds with the most money in dispute the report lists (and keeps the requests of)."""
REFUSED_LISTED = 1000
"""How many refused rounds the report lists by line, round id and codes (all are in the problems table)."""
UNIT = "minor"
"""What the amounts are in: the stake's minor unit (đồng, cents), as the claims gave them."""


def base64url(document: object) -> str:
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(text).decode().rstrip("=")


def viewer_link(request: dict[str, Any], viewer: str = VIEWER) -> str:
    """The viewer in verify mode on one round: the room and the claim in the link's fragment."""
    room = {key: value for key, value in request.items() if key != "claimed"}
    return f"{viewer}#room={base64url(room)}&claim={base64url(request['claimed'])}"


def number(value: int | float, language: Language) -> str:
    """A whole amount as each language writes it: 1,234,567 in English, 1.234.567 in Vietnamese."""
    text = f"{value:,.0f}"
    return text.replace(",", ".") if language == "vi" else text


SCALES = ((10**9, "B", "tỷ"), (10**6, "M", "triệu"), (10**3, "k", "nghìn"))


def compact(value: float, language: Language) -> str:
    """An axis tick from units to billions, short enough never to run into the next: 1.5 M, 1,5 triệu."""
    for size, en, vi in SCALES:
        if abs(value) >= size:
            short = f"{value / size:.3g}"
            return f"{short.replace('.', ',')} {vi}" if language == "vi" else f"{short} {en}"
    return number(value, language)


class HashedLines:
    """The input's lines as they are read, its SHA-256 and line count taken on the way: the report
    names exactly what it checked, stdin included, without reading the input twice."""

    def __init__(self, lines: Iterable[bytes], path: str) -> None:
        self._lines, self.path = lines, path
        self._sha256 = hashlib.sha256()
        self.count = 0

    def __iter__(self) -> Iterator[bytes]:
        for line in self._lines:
            self._sha256.update(line)
            self.count += 1
            yield line

    @property
    def sha256(self) -> str:
        return self._sha256.hexdigest()


class Page:
    """What a report page writes with: its texts and numbers in its language, escaped for HTML."""

    language: Language

    def _t(self, key: str, **fields: Any) -> str:
        return html.escape(Text(key, **fields).render(self.language))

    def _n(self, value: int) -> str:
        return number(value, self.language)

    def _cards(self, *figures: tuple[str, str, int]) -> str:
        """The page's headline figures, each (its name, its words' key, its value), as cards."""
        return "".join(
            f'<div class="figure" data-figure="{name}"><span class="number">{self._n(value)}</span>'
            f"<span>{self._t(key)}</span></div>"
            for name, key, value in figures
        )


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


def provenance(source: HashedLines, rulesets: dict[str, str]) -> dict[str, Any]:
    """A report's provenance block (verify's and replay's alike): the input's path, SHA-256 and lines,
    the tool's version, the date, and every ruleset used (``id@version`` → its digest)."""
    return {
        "input": {"path": source.path, "sha256": source.sha256, "lines": source.count},
        "maubinh_version": version(),
        "generated_at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "rulesets": [{"ruleset": ref, "digest": digest} for ref, digest in sorted(rulesets.items())],
    }


def provenance_rows(figures: dict[str, Any], language: Language) -> str:
    """The provenance block as the rows of a page's table."""
    source = figures["input"]
    return "".join(
        f"<tr><th>{html.escape(Text(key).render(language))}</th><td>{value}</td></tr>"
        for key, value in (
            ("report.input", f"<code>{html.escape(source['path'])}</code>"),
            ("report.sha256", f"<code>{source['sha256']}</code>"),
            ("report.lines", number(source["lines"], language)),
            ("report.version", f"maubinh {html.escape(figures['maubinh_version'])}"),
            ("report.generated_at", html.escape(figures["generated_at"])),
            (
                "report.rulesets",
                "<br>".join(
                    f"<code>{html.escape(r['ruleset'])}</code> <code>{r['digest']}</code>" for r in figures["rulesets"]
                ),
            ),
        )
    )


def signed(text: str, value: int) -> str:
    return f"+{text}" if value > 0 else text


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


def bar_chart(values: dict[str, int], axis: str, language: Language = "en") -> str:
    """Horizontal bars as an inline ``<svg>``, its labels as text: each bar's amount in full, the
    axis's ticks short (1.5 M), few enough to stay apart from units to billions."""
    if not values:
        return ""
    from matplotlib import rc_context
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    with rc_context({"svg.fonttype": "none", "font.size": 10, "svg.hashsalt": "maubinh"}):
        figure = Figure(figsize=(7, 0.45 * len(values) + 1.0))
        axes = figure.subplots()
        labels = list(values)[::-1]
        bars = axes.barh(labels, [values[label] for label in labels], color="#1f5fa8")
        axes.bar_label(bars, labels=[number(values[label], language) for label in labels], padding=3)
        axes.set_xlabel(html.unescape(axis))
        axes.xaxis.set_major_locator(MaxNLocator(nbins=4, integer=True))
        axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: compact(value, language)))
        axes.spines[["top", "right"]].set_visible(False)
        axes.margins(x=0.2)
        figure.tight_layout()
        out = io.StringIO()
        figure.savefig(out, format="svg", metadata={"Date": None})
    svg = out.getvalue()
    return re.sub(r"\s*<metadata>.*?</metadata>", "", svg[svg.index("<svg") :], flags=re.DOTALL)  # RDF, no use here


STYLE = """<style>
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #1b1b1b; }
.figures { display: flex; gap: 1rem; flex-wrap: wrap; }
.figure { border: 1px solid #ccc; border-radius: 6px; padding: .75rem 1rem; min-width: 9rem; }
.figure .number { display: block; font-size: 1.8rem; font-weight: 600; }
table { border-collapse: collapse; width: 100%; }
th, td { border-bottom: 1px solid #ddd; padding: .35rem .5rem; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
#provenance th { width: 12rem; font-weight: 500; }
#provenance code { word-break: break-all; }
#largest tbody { border-top: 2px solid #999; }
svg { max-width: 100%; height: auto; }
</style>
"""
"""The reports' style sheet, inline: the page is one file that opens offline."""

PAGE_HEAD = """<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
{style}</head>
"""
"""A report page's head: its language, title and style."""

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
