"""What the report pages share (the audit report's and the replay's): the input's hash as it is read,
provenance, numbers as each language writes them, bar charts as inline SVG, the viewer's links, and
the page's head and style sheet."""

from __future__ import annotations

import base64
import datetime
import hashlib
import html
import io
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from service import version
from service.bulk import VIEWER
from service.bulk.lines import capped
from service.texts import MINUS, Language, Text

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
    """A whole amount as each language writes it: 1,234,567 in English, 1.234.567 in Vietnamese, and a
    negative one with the true minus sign, as every text of the service writes it (−32.098.742)."""
    text = f"{value:,.0f}".replace("-", MINUS)
    return text.replace(",", ".") if language == "vi" else text


SCALES = ((10**9, "B", "tỷ"), (10**6, "M", "triệu"), (10**3, "k", "nghìn"))


def compact(value: float, language: Language) -> str:
    """An axis tick from units to billions, short enough never to run into the next: 1.5 M, 1,5 triệu."""
    for size, en, vi in SCALES:
        if abs(value) >= size:
            short = f"{value / size:.3g}".replace("-", MINUS)
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
        if hasattr(self._lines, "read"):  # a stream: its lines capped, every byte hashed, over-long ones too
            for line in capped(self._lines, seen=self._sha256.update):
                self.count += 1
                yield line
            return
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
