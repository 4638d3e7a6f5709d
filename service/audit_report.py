"""An audit report a manager opens: one offline HTML page for a ``maubinh verify --jsonl`` run.

Rounds checked, agreed, disagreed and refused; the money at stake by step and by ruleset as bar
charts (matplotlib, drawn to inline SVG: a well-kept library, no JavaScript, no CDN, text kept as
text so the page is searchable and translatable); the largest differences, each a link into the
viewer's verify mode with its room and claim. It is built from the same table rows as the Parquet
files (:mod:`service.tables`), chunk by chunk, so it holds sums and the few largest rounds only.
"""

from __future__ import annotations

import base64
import heapq
import html
import io
import json
import re
from collections import Counter
from typing import TYPE_CHECKING, Any

from service.tables import decode_rows
from service.texts import Language, Text

if TYPE_CHECKING:
    from service.jsonl import Chunk, Summary

LARGEST = 20
"""How many of the largest differences the report lists (and keeps the requests of)."""
VIEWER = "http://127.0.0.1:8000/viewer"
"""Where the links go unless told (``maubinh verify --viewer URL``): a service run with ``make run``."""


def _base64url(document: object) -> str:
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(text).decode().rstrip("=")


def viewer_link(request: dict[str, Any], viewer: str = VIEWER) -> str:
    """The viewer in verify mode on one round: the room and the claim in the link's fragment."""
    room = {key: value for key, value in request.items() if key != "claimed"}
    return f"{viewer}#room={_base64url(room)}&claim={_base64url(request['claimed'])}"


class Report:
    """Sums and the largest differences of a verify run, gathered chunk by chunk."""

    def __init__(self, language: Language = "en", viewer: str = VIEWER) -> None:
        self.language = language
        self.viewer = viewer
        self.by_step: Counter[str] = Counter()
        self.by_ruleset: Counter[str] = Counter()
        self._largest: list[tuple[int, int, str, dict[str, Any]]] = []  # a min-heap of (|difference|, -line, …)

    def add(self, chunk: Chunk) -> None:
        tables = {name: batch.to_pylist() for name, batch in decode_rows("verify", chunk.tables).items()}
        rulesets = {room["line"]: room["ruleset_id"] for room in tables["rooms"]}
        for line in tables["ledger"]:
            self.by_step[line["step"]] += line["amount"]
            self.by_ruleset[rulesets[line["line"]]] += line["amount"]
        requests = dict(chunk.requests)
        for row in tables["differences"]:
            if row["kind"] != "player":
                continue
            entry = (abs(row["difference"]), -row["line"], row["player"], {**row, "request": requests[row["line"]]})
            if len(self._largest) < LARGEST:
                heapq.heappush(self._largest, entry)
            elif entry[:3] > self._largest[0][:3]:
                heapq.heapreplace(self._largest, entry)

    def largest(self) -> list[dict[str, Any]]:
        """The largest differences, largest first (then by input line)."""
        return [entry[3] for entry in sorted(self._largest, key=lambda e: (-e[0], -e[1], e[2]))]

    def _t(self, key: str, **fields: Any) -> str:
        return html.escape(Text(key, **fields).render(self.language))

    def html(self, summary: Summary) -> str:
        disagreed = summary.lines - summary.refused - summary.agreed
        figures = [
            ("report.checked", summary.lines),
            ("report.agreed", summary.agreed),
            ("report.disagreed", disagreed),
            ("report.refused", summary.refused),
        ]
        cards = "".join(
            f'<div class="figure" data-figure="{key.split(".")[1]}"><span class="number">{value:,}</span>'
            f"<span>{self._t(key)}</span></div>"
            for key, value in figures
        )
        rows = []
        for row in self.largest():
            request = json.loads(row["request"])
            link = html.escape(viewer_link(request, self.viewer))
            rows.append(
                f'<tr data-line="{row["line"]}"><td class="num">{row["line"]}</td>'
                f"<td>{html.escape(str(row['round_id'] or ''))}</td><td>{html.escape(row['player'])}</td>"
                f'<td class="num">{row["claimed"]:+,}</td><td class="num">{row["computed"]:+,}</td>'
                f'<td class="num">{row["difference"]:+,}</td>'
                f'<td><a href="{link}">{self._t("report.open_in_viewer")}</a></td></tr>'
            )
        table = (
            f"<table><thead><tr><th>{self._t('report.col_line')}</th><th>round_id</th>"
            f"<th>{self._t('report.col_player')}</th><th>{self._t('report.col_claimed')}</th>"
            f"<th>{self._t('report.col_computed')}</th><th>{self._t('report.col_difference')}</th><th></th></tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table>"
            if rows
            else f"<p>{self._t('report.no_differences')}</p>"
        )
        steps = {Text(f"step.{step}").render(self.language): amount for step, amount in self.by_step.most_common()}
        return PAGE.format(
            lang=self.language,
            title=self._t("report.title"),
            lead=self._t("report.lead", seconds=round(summary.seconds, 1)),
            cards=cards,
            by_step=self._t("report.by_step"),
            step_chart=bar_chart(steps, self._t("report.amount")),
            by_ruleset=self._t("report.by_ruleset"),
            ruleset_chart=bar_chart(dict(self.by_ruleset.most_common()), self._t("report.amount")),
            largest=self._t("report.largest", count=LARGEST),
            table=table,
        )


def bar_chart(values: dict[str, int], axis: str) -> str:
    """Horizontal bars as an inline ``<svg>``, its labels as text."""
    if not values:
        return ""
    from matplotlib import rc_context
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    with rc_context({"svg.fonttype": "none", "font.size": 10, "svg.hashsalt": "maubinh"}):
        figure = Figure(figsize=(7, 0.45 * len(values) + 1.0))
        axes = figure.subplots()
        labels = list(values)[::-1]
        bars = axes.barh(labels, [values[label] for label in labels], color="#1f5fa8")
        axes.bar_label(bars, labels=[f"{values[label]:,}" for label in labels], padding=3)
        axes.set_xlabel(html.unescape(axis))
        axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
        axes.spines[["top", "right"]].set_visible(False)
        axes.margins(x=0.2)
        figure.tight_layout()
        out = io.StringIO()
        figure.savefig(out, format="svg", metadata={"Date": None})
    svg = out.getvalue()
    return re.sub(r"\s*<metadata>.*?</metadata>", "", svg[svg.index("<svg") :], flags=re.DOTALL)  # RDF, no use here


PAGE = """<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #1b1b1b; }}
.figures {{ display: flex; gap: 1rem; flex-wrap: wrap; }}
.figure {{ border: 1px solid #ccc; border-radius: 6px; padding: .75rem 1rem; min-width: 9rem; }}
.figure .number {{ display: block; font-size: 1.8rem; font-weight: 600; }}
table {{ border-collapse: collapse; width: 100%; }}
th, td {{ border-bottom: 1px solid #ddd; padding: .35rem .5rem; text-align: left; }}
td.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
svg {{ max-width: 100%; height: auto; }}
</style>
</head>
<body>
<h1>{title}</h1>
<p>{lead}</p>
<div class="figures">{cards}</div>
<h2>{by_step}</h2>
<figure id="by-step">{step_chart}</figure>
<h2>{by_ruleset}</h2>
<figure id="by-ruleset">{ruleset_chart}</figure>
<h2>{largest}</h2>
<div id="largest">{table}</div>
</body>
</html>
"""
