"""The report of a run of receipts (``receipts verify --report DIR``): report.json, and report.html, one
offline page in the audit report's style (:mod:`service.bulk.report_page`), for whoever must act on it.

What was checked first (each input's SHA-256, the keys' RFC 7638 thumbprints, the tool's version and
the date), then the counts by outcome and by code, the rounds ruled on two rooms, and each failing
receipt (the first :data:`service.bulk.receipt_runs.FAILURES_KEPT`) with its file, line and the money
its answer moves. It holds no more than the run kept.
"""

from __future__ import annotations

import datetime
import html
import json
from pathlib import Path
from typing import Any

from service import version
from service.bulk.receipt_runs import FAILURES_KEPT, Run
from service.bulk.report_page import PAGE_HEAD, STYLE, UNIT, Page
from service.texts import Language

JSON, HTML = ".json", ".html"
"""The report's files are report.json and report.html."""


def figures(done: Run, thumbprints: tuple[str, ...]) -> dict[str, Any]:
    """report.json: what was checked, the counts, the re-rolled rounds and the failing receipts."""
    return {
        "inputs": [{"path": path, "sha256": sha} for path, sha in zip(done.files, done.sha256, strict=True)],
        "keys": list(thumbprints),
        "maubinh_version": version(),
        "generated_at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "receipts": {
            "checked": done.receipts,
            "verified": done.verified,
            "failed": done.receipts - done.verified,
            "by_code": dict(sorted(done.codes.items(), key=lambda kv: (-kv[1], kv[0]))),
            "failed_money": done.failed_money,
        },
        "unit": UNIT,
        "rerolled": [
            {
                "round_id": round_id,
                "receipts": [
                    {"file": done.files[f], "line": n, "room_digest": digest}
                    for digest, (f, n) in sorted(held, key=lambda h: h[1])
                ],
            }
            for round_id, held in sorted(done.rerolled.items())
        ],
        "failures": [
            {key: failure[key] for key in ("file", "line", "round_id", "code", "message", "money")}
            for failure in done.failures
        ],
    }


def _round(round_id: Any) -> str:
    """A round id as the page shows it: as it is, a batch's as a list, none as nothing."""
    if round_id is None or isinstance(round_id, str):
        return round_id or ""
    return json.dumps(round_id, ensure_ascii=False)


class ReceiptsPage(Page):
    def __init__(self, language: Language) -> None:
        self.language = language

    def html(self, shown: dict[str, Any]) -> str:
        counts = shown["receipts"]
        checked = "".join(
            f"<tr><th>{self._t('receipts.report_inputs')}</th><td>"
            + "<br>".join(f"<code>{html.escape(i['path'])}</code> <code>{i['sha256']}</code>" for i in shown["inputs"])
            + "</td></tr>"
            f"<tr><th>{self._t('receipts.report_keys')}</th><td>"
            + "<br>".join(f"<code>{html.escape(k)}</code>" for k in shown["keys"])
            + f"</td></tr><tr><th>{self._t('report.version')}</th>"
            f"<td>maubinh {html.escape(shown['maubinh_version'])}</td></tr>"
            f"<tr><th>{self._t('report.generated_at')}</th><td>{html.escape(shown['generated_at'])}</td></tr>"
        )
        cards = self._cards(
            ("checked", "receipts.report_receipts", counts["checked"]),
            ("verified", "receipts.report_verified", counts["verified"]),
            ("failed", "receipts.report_failed", counts["failed"]),
            ("failed-money", "receipts.report_money", counts["failed_money"]),
        )
        codes = "".join(
            f'<tr data-code="{html.escape(code)}"><td><code>{html.escape(code)}</code></td>'
            f'<td class="num">{self._n(n)}</td></tr>'
            for code, n in counts["by_code"].items()
        )
        rerolled = "".join(
            f'<tr data-round="{html.escape(r["round_id"])}"><td>{html.escape(r["round_id"])}</td><td>'
            + "<br>".join(
                f"{html.escape(x['file'])}:{x['line']} <code>{x['room_digest']}</code>" for x in r["receipts"]
            )
            + "</td></tr>"
            for r in shown["rerolled"]
        )
        failures = "".join(
            f'<tr data-code="{html.escape(f["code"])}"><td>{html.escape(f["file"])}:{f["line"]}</td>'
            f"<td>{html.escape(_round(f['round_id']))}</td>"
            f"<td><code>{html.escape(f['code'])}</code></td>"
            f'<td class="num">{self._n(f["money"]) if f["money"] is not None else ""}</td>'
            f"<td>{html.escape(f['message'])}</td></tr>"
            for f in shown["failures"]
        )
        none = f"<p>{self._t('receipts.report_none')}</p>"
        head = PAGE_HEAD.format(lang=self.language, title=self._t("receipts.report_title"), style=STYLE)
        return (
            f"{head}<body>\n<h1>{self._t('receipts.report_title')}</h1>\n"
            f'<h2>{self._t("receipts.report_checked")}</h2>\n<table id="provenance">{checked}</table>\n'
            f'<div class="figures">{cards}</div>\n<p>{self._t("receipts.report_unit")}</p>\n'
            f"<h2>{self._t('receipts.report_by_code')}</h2>\n"
            + (
                f'<table id="codes"><thead><tr><th>{self._t("receipts.report_code")}</th>'
                f"<th>{self._t('receipts.report_count')}</th></tr></thead><tbody>{codes}</tbody></table>\n"
                if codes
                else none
            )
            + f"<h2>{self._t('receipts.report_rerolled')}</h2>\n"
            + (
                f'<table id="rerolled"><thead><tr><th>{self._t("receipts.report_round")}</th>'
                f"<th>{self._t('receipts.report_where')}</th></tr></thead><tbody>{rerolled}</tbody></table>\n"
                if rerolled
                else none
            )
            + f"<h2>{self._t('receipts.report_failures', most=FAILURES_KEPT)}</h2>\n"
            + (
                f'<table id="failures"><thead><tr><th>{self._t("receipts.report_file")}</th>'
                f"<th>{self._t('receipts.report_round')}</th><th>{self._t('receipts.report_code')}</th>"
                f"<th>{self._t('receipts.report_amount')}</th><th>{self._t('receipts.report_message')}</th></tr></thead>"
                f"<tbody>{failures}</tbody></table>\n"
                if failures
                else none
            )
            + "</body>\n</html>\n"
        )


def write_report(folder: str, done: Run, thumbprints: tuple[str, ...], language: Language) -> None:
    """report.json and report.html in ``folder`` (made if need be)."""
    where = Path(folder)
    where.mkdir(parents=True, exist_ok=True)
    shown = figures(done, thumbprints)
    (where / f"report{JSON}").write_text(json.dumps(shown, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    (where / f"report{HTML}").write_text(ReceiptsPage(language).html(shown), encoding="utf-8")
