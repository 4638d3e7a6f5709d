"""The showdown viewer, end to end: Debian's Chromium driven by Playwright against `maubinh serve`.

Screenshots of each scenario are kept in artifacts/. Without Chromium the tests skip, except
in CI (MAUBINH_REQUIRE_BROWSER=1), where a missing browser is a failure.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import golden_cases
from server import start

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
CASES = {c["name"]: c for c in golden_cases()}

if CHROMIUM is None:
    if os.environ.get("MAUBINH_REQUIRE_BROWSER") == "1":
        raise RuntimeError("Chromium is required here (MAUBINH_REQUIRE_BROWSER=1): apt-get install chromium")
    pytest.skip("Chromium is not installed (apt-get install chromium)", allow_module_level=True)

from playwright.sync_api import Browser, Page, expect, sync_playwright  # noqa: E402

FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    key = tmp_path_factory.mktemp("signing") / "key.pem"  # answers signed, so that receipts can be made
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(key)], check=True, capture_output=True)
    url, process = start({"MAUBINH_WORKERS": "1", "MAUBINH_SIGNING_KEY_FILE": str(key)})
    yield url
    process.terminate()
    process.wait(timeout=15)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser, base: str) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    expected = "the server responded with a status of 422"  # scoring an invalid room, on purpose
    opened.on(
        "console",
        lambda message: (
            errors.append(message.text) if message.type == "error" and expected not in message.text else None
        ),
    )
    opened.goto(base + "/viewer")
    yield opened
    context.close()
    assert not errors, errors


def shoot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"viewer-{name}.png"), full_page=True)


def paste_and_score(page: Page, room: dict[str, Any]) -> None:
    page.get_by_label("Room JSON").fill(json.dumps(room, ensure_ascii=False, indent=1))
    page.get_by_role("button", name="Score this room").click()


def test_e1_step_through_totals_hand_names_and_ledger(page: Page) -> None:
    paste_and_score(page, CASES["worked-example/E1"]["request"])
    result = page.locator("#result")
    expect(result).to_be_visible()
    players = page.locator("#players")
    expect(players.get_by_label("Player P")).to_contain_text("Thú · Two pair")
    expect(players.get_by_label("Player Q")).to_contain_text("Cù lũ · Full house")
    expect(players.get_by_label("Player P").locator("[data-position=back]")).to_contain_text("Chi 1")
    expect(page.locator("#players .card.red").first).to_be_visible()

    title = page.locator("#step-title")
    expect(title).to_have_text("Step 1 of 4: Back (Chi 1)")
    expect(page.locator("#chi-back tbody tr")).to_contain_text(["P – Q"])
    expect(page.locator("#chi-back tbody tr td").first).to_have_text("Q")
    page.get_by_role("button", name="Next ▶").click()
    expect(title).to_have_text("Step 2 of 4: Middle (Chi 2)")
    expect(page.locator("#chi-middle tbody td").first).to_have_text("Q")
    page.get_by_role("button", name="Next ▶").click()
    expect(title).to_have_text("Step 3 of 4: Front (Chi 3)")
    page.get_by_role("button", name="Next ▶").click()
    expect(title).to_contain_text("Step 4 of 4")
    expect(page.locator("#settlement-lines li")).to_have_count(1)
    expect(page.locator("#settlement-lines li")).to_contain_text("Scoop (sập): P pays Q 6 units (6,000)")
    expect(page.get_by_role("button", name="Next ▶")).to_be_disabled()

    summary = page.locator("#summary")
    expect(summary.locator("tr[data-player=P] td").nth(1)).to_have_text("−9,000")
    expect(summary.locator("tr[data-player=Q] td").nth(1)).to_have_text("+9,000")
    expect(page.locator("#payments")).to_contain_text("P pays Q 9 units (9,000)")
    ledger = page.locator("#ledger tbody tr")
    expect(ledger).to_have_count(4)
    expect(ledger.nth(0)).to_contain_text("docs/rules.md §5: one unit per chi won")
    expect(ledger.nth(0).get_by_role("link", name="§5")).to_have_attribute("href", "/docs/rules#s5")
    expect(ledger.nth(3).get_by_role("link", name="§6")).to_have_attribute("href", "/docs/rules#s6")
    expect(ledger.nth(3)).to_contain_text("scoop.multiplier")
    shoot(page, "e1")


def test_a_house_rule_variant_shows_its_base_patch_and_every_changed_value(page: Page) -> None:
    """E1 under sập ×2, a fixed 6 for lủng and a relabelled front: the variant panel, the new label on
    the hands, and the scoop line naming the resolved field (3 × (2 − 1) = 3, so P −6000)."""
    patch = {
        "scoop": {"multiplier": 2},
        "fouls": {"foul_is_scoop": False, "fixed_units": 6},
        "labels": {"front": "Chi cuối"},
    }
    room = {**CASES["worked-example/E1"]["request"], "ruleset": {"base": "maubinh-2020@2", "patch": patch}}
    paste_and_score(page, room)
    panel = page.locator("#variant")
    expect(panel).to_be_visible()
    expect(page.locator("#variant-base")).to_contain_text("maubinh-2020~custom, a variant of maubinh-2020 version 2")
    expect(panel.locator("tr[data-field='scoop.multiplier'] td")).to_have_text(["3", "2"])
    expect(panel.locator("tr[data-field='fouls.fixed_units'] td")).to_have_text(["—", "6"])
    expect(panel.locator("tr[data-field='labels.front'] td")).to_have_text(['"Chi 3"', '"Chi cuối"'])
    expect(page.locator("#variant-patch")).to_contain_text('"fixed_units": 6')
    expect(page.get_by_label("Player P").locator("[data-position=front]")).to_contain_text("Chi cuối")
    expect(page.locator("#ledger tbody tr[data-step=scoop]")).to_contain_text("scoop.multiplier")
    expect(page.locator("#summary tr[data-player=P] td").nth(1)).to_have_text("−6,000")
    shoot(page, "variant")


SECOND_FAMILY_PATCH = {
    "scoop": {"multiplier": 2, "basis": "fixed", "fixed_units": 3, "sweep_pays": "total"},
    "fouls": {"both_fouled": "compare"},
    "instant_wins": {"collision": "difference"},
}


def test_the_variant_panel_says_what_each_second_family_knob_does_in_both_languages(
    page: Page, browser: Browser, base: str
) -> None:
    """E1 under a fixed scoop of 3 (× (2 − 1): P −6000) and three more §12 knobs: each changed row says
    what its knob decides, and the scoop line cites §12.1."""
    room = {**CASES["worked-example/E1"]["request"], "ruleset": {"base": "maubinh-2020", "patch": SECOND_FAMILY_PATCH}}
    paste_and_score(page, room)
    panel = page.locator("#variant")
    expect(panel.locator("tr[data-field='scoop.basis'] td")).to_have_text(['"total"', '"fixed"'])
    expect(panel.locator("tr[data-field='scoop.basis'] .knob")).to_contain_text("a fixed number of units (fixed)")
    expect(panel.locator("tr[data-field='scoop.sweep_pays'] .knob")).to_contain_text("each opponent's total once more")
    expect(panel.locator("tr[data-field='fouls.both_fouled'] .knob")).to_contain_text("compare chi by chi")
    expect(panel.locator("tr[data-field='instant_wins.collision'] .knob")).to_contain_text(
        "the difference of the units"
    )
    scoop = page.locator("#ledger tbody tr[data-step=scoop]")
    expect(scoop).to_contain_text("scoop.multiplier, scoop.fixed_units")
    expect(scoop.get_by_role("link", name="§12.1")).to_have_attribute("href", "/docs/rules#s12.1")
    expect(page.locator("#summary tr[data-player=P] td").nth(1)).to_have_text("−6,000")
    shoot(page, "variant-second-family")
    context, vi = vietnamese_page(browser, base)
    vi.get_by_label("JSON của ván bài").fill(json.dumps(room))
    vi.get_by_role("button", name="Tính điểm ván này").click()
    vi_panel = vi.locator("#variant")
    expect(vi_panel.locator("tr[data-field='scoop.sweep_pays'] .knob")).to_contain_text("bắt sập làng")
    expect(vi_panel.locator("tr[data-field='fouls.both_fouled'] .knob")).to_contain_text("hai người cùng binh lủng")
    expect(vi.locator("#ledger tbody tr[data-step=scoop]")).to_contain_text("sập tính trên 3 chi cố định")
    context.close()


def test_a_rule_citation_opens_its_section_of_the_rules(page: Page) -> None:
    paste_and_score(page, CASES["worked-example/E1"]["request"])
    page.locator("#ledger tbody tr").nth(0).get_by_role("link", name="§5").click()
    expect(page).to_have_url(re.compile(r"/docs/rules#s5$"))
    heading = page.locator("h2#s5")
    expect(heading).to_have_text("5. Chi and bonuses")
    expect(heading).to_be_in_viewport()
    shoot(page, "rules")


def test_a_plain_room_has_no_variant_panel(page: Page) -> None:
    paste_and_score(page, CASES["worked-example/E1"]["request"])
    expect(page.locator("#result")).to_be_visible()
    expect(page.locator("#variant")).to_be_hidden()


def test_four_player_chi_at_room_shows_the_ace_line(page: Page) -> None:
    room = CASES["maubinh-chi-at/n4/aces-2200"]["request"]
    paste_and_score(page, room)
    expect(page.locator("#result")).to_be_visible()
    expected = [line for line in CASES["maubinh-chi-at/n4/aces-2200"]["expect"]["ledger"] if line["step"] == "ace"]
    ace_rows = page.locator("#ledger tbody tr[data-step=ace]")
    expect(ace_rows).to_have_count(len(expected))
    expect(ace_rows.first).to_contain_text("aces.no_ace_pays")
    for _ in range(3):
        page.get_by_role("button", name="Next ▶").click()
    lines = page.locator("#settlement-lines li[data-step=ace]")
    expect(lines).to_have_count(len(expected))
    for line in expected:
        expect(page.locator("#settlement-lines")).to_contain_text(
            f"{line['payer']} pays {line['payee']} {line['units']} unit"
        )
    shoot(page, "aces")


def test_an_invalid_room_shows_the_fault_at_the_right_player_and_card(page: Page) -> None:
    room = CASES["invalid/maubinh-2020/bad-card-1S"]["request"]
    paste_and_score(page, room)
    problem = page.locator("#problem")
    expect(problem).to_be_visible()
    expect(page.locator("#result")).to_be_hidden()
    pointer = CASES["invalid/maubinh-2020/bad-card-1S"]["expect"]["faults"][0]["pointer"]  # /players/0/back/1
    index = int(pointer.split("/")[2])
    player_id = room["players"][index]["id"]
    box = problem.get_by_label(f"Player {player_id}")
    expect(box).to_contain_text("Back (Chi 1) hand, card 2 (“1S”): '1S': unknown rank '1'")
    expect(box.locator(".card.bad")).to_have_count(1)
    expect(box.locator(".card.bad")).to_have_text("1S")
    others = [p["id"] for k, p in enumerate(room["players"]) if k != index]
    for other in others:
        expect(problem.get_by_label(f"Player {other}")).to_have_count(0)
    shoot(page, "invalid")


def test_a_link_carries_the_room_in_its_fragment(browser: Browser, base: str) -> None:
    room = CASES["worked-example/E4"]["request"]
    fragment = base64.urlsafe_b64encode(json.dumps(room).encode()).decode().rstrip("=")
    context = browser.new_context()
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{base}/viewer#room={fragment}")
    expect(page.locator("#result")).to_be_visible()
    expect(page.locator("#ledger tbody tr[data-step=foul]")).to_contain_text("fouls.foul_multiplier")
    assert all(url.startswith(base) for url in requests)  # nothing leaves for another host
    assert not any(fragment in url for url in requests)  # the fragment itself is never sent
    context.close()


def test_examples_keyboard_and_phone_width(browser: Browser, base: str) -> None:
    context = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True)
    page = context.new_page()
    page.goto(base + "/viewer")
    page.get_by_label("Example rooms").select_option(label="E3 — four players, ace settlement 2/1/1/0 (maubinh-chi-at)")
    expect(page.locator("#result")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")  # no sideways scrolling
    page.locator("#step-next").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#step-title")).to_have_text("Step 2 of 4: Middle (Chi 2)")
    for control in ("Room JSON", "Example rooms", "Or open a file"):
        expect(page.get_by_label(control)).to_have_count(1)
    shoot(page, "phone")
    context.close()


@pytest.mark.parametrize("case", ["worked-example/E1", "invalid/maubinh-2020/bad-card-1S"])
def test_no_wcag_2_a_or_aa_violations_found_by_axe(page: Page, case: str) -> None:
    """axe-core (shipped in the axe-selenium wheel) run in the page through Playwright, CSP untouched."""
    from importlib import resources

    axe = resources.files("axe_selenium_python").joinpath("node_modules/axe-core/axe.min.js").read_text()
    paste_and_score(page, CASES[case]["request"])
    expect(page.locator("#result" if "error" not in CASES[case]["expect"] else "#problem")).to_be_visible()
    page.evaluate(axe)
    violations = page.evaluate(
        """async () => (await axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa"]}}))
            .violations.map(v => `${v.id} (${v.impact}): ${v.help} at ${v.nodes[0].target}`)"""
    )
    assert violations == []


E1_ROOM = CASES["worked-example/E1"]["request"]
NO_SCOOP = {
    "amounts": {"P": -3000, "Q": 3000},
    "ledger": [{"payer": "P", "payee": "Q", "amount": 1000, "step": "chi"}] * 3,
}


def vietnamese_page(browser: Browser, base: str, path: str = "/viewer") -> tuple[Any, Page]:
    context = browser.new_context(locale="vi-VN", viewport={"width": 1100, "height": 900})
    page = context.new_page()
    page.goto(base + path)
    return context, page


def test_vietnamese_by_default_under_a_vietnamese_browser(browser: Browser, base: str) -> None:
    context, page = vietnamese_page(browser, base)
    expect(page.locator("h1")).to_have_text("Xem lại ván Mậu Binh")
    assert page.evaluate("document.documentElement.lang") == "vi"
    page.get_by_label("JSON của ván bài").fill(json.dumps(E1_ROOM))
    page.get_by_role("button", name="Tính điểm ván này").click()
    expect(page.locator("#step-title")).to_have_text("Bước 1/4: Chi 1")
    ledger = page.locator("#ledger tbody tr")
    expect(ledger.nth(0)).to_contain_text("Chi 1 (5 lá): cù lũ 9 đôi 4 (9-9-9-4-4) thắng thú Át-7 (A-A-7-7-2)")
    expect(ledger.nth(3)).to_contain_text("Q thắng cả 3 chi, bắt sập P")
    expect(ledger.nth(3)).to_contain_text("scoop.multiplier")  # the rule, a machine field, stays as it is
    expect(page.locator("#payments")).to_contain_text("P trả Q 9 chi (9.000)")
    shoot(page, "vi")
    context.close()


def test_switching_to_english_rescores_and_is_remembered(browser: Browser, base: str) -> None:
    context, page = vietnamese_page(browser, base)
    page.get_by_label("JSON của ván bài").fill(json.dumps(E1_ROOM))
    page.get_by_role("button", name="Tính điểm ván này").click()
    expect(page.locator("#ledger tbody tr").nth(0)).to_contain_text(
        "Chi 1 (5 lá): cù lũ 9 đôi 4 (9-9-9-4-4) thắng thú Át-7 (A-A-7-7-2)"
    )
    page.get_by_label("Ngôn ngữ").select_option("en")
    expect(page.locator("h1")).to_have_text("Mậu Binh showdown viewer")
    expect(page.locator("#ledger tbody tr").nth(0)).to_contain_text(
        "back: full house, nines full of fours (9-9-9-4-4) beats two pair, aces and sevens (A-A-7-7-2)"
    )
    expect(page.locator("#step-title")).to_have_text("Step 1 of 4: Back (Chi 1)")
    page.reload()
    expect(page.locator("h1")).to_have_text("Mậu Binh showdown viewer")
    assert page.evaluate("document.documentElement.lang") == "en"
    context.close()


def test_verify_mode_highlights_a_planted_difference_per_player_and_step(browser: Browser, base: str) -> None:
    """E1 settled without its scoop: P paid 3000, the rules give 9000."""
    context, page = vietnamese_page(browser, base)
    page.get_by_label("JSON của ván bài").fill(json.dumps(E1_ROOM))
    page.get_by_text("Đối chiếu: kết quả game đã ghi").click()
    page.get_by_label("JSON của kết quả game đã ghi").fill(json.dumps(NO_SCOOP))
    page.get_by_role("button", name="Đối chiếu kết quả này").click()
    verdict = page.locator("#verdict")
    expect(verdict).to_be_visible()
    expect(page.locator("#verdict-heading")).to_have_text("Kết quả game đã ghi không khớp với luật")
    row = verdict.locator("tr[data-player=P]")
    expect(row).to_have_class(re.compile(r"\bdiffers\b"))
    expect(row.locator("td")).to_have_text(["−3.000", "−9.000", "+6.000"])
    expect(verdict.locator(".verdict-player[data-player=P] p")).to_have_text(
        "P: game ghi −3.000, theo luật −9.000 → P còn phải trả 6.000 cho Q"
    )
    expect(verdict.locator(".verdict-player[data-player=P] li")).to_have_text(
        ["sập: theo luật −6.000, game không ghi khoản này"]
    )
    expect(verdict.locator("#verdict-line-list li[data-kind=missing]")).to_have_text(
        "Khoản game không ghi: P trả 6.000 cho Q (Sập)"
    )
    highlighted = page.locator("#ledger tbody tr.differs")
    expect(highlighted).to_have_count(1)
    expect(highlighted).to_have_attribute("data-step", "scoop")
    shoot(page, "verify-vi")
    context.close()


def test_a_link_carries_room_and_claim_and_opens_in_verify_mode(browser: Browser, base: str) -> None:
    def encoded(document: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(document).encode()).decode().rstrip("=")

    context = browser.new_context(locale="en-US")
    page = context.new_page()
    page.goto(f"{base}/viewer#room={encoded(E1_ROOM)}&claim={encoded({'P': -9000, 'Q': 9000})}")
    expect(page.locator("#verdict-heading")).to_have_text("The settlement agrees with the rules")
    expect(page.locator("#verdict tr.differs")).to_have_count(0)
    expect(page.locator("#ledger tbody tr")).to_have_count(4)
    context.close()


def test_verify_mode_in_vietnamese_has_no_axe_violations(browser: Browser, base: str) -> None:
    from importlib import resources

    axe = resources.files("axe_selenium_python").joinpath("node_modules/axe-core/axe.min.js").read_text()
    context, page = vietnamese_page(browser, base)
    page.get_by_label("Ván mẫu").select_option(label="Khiếu nại — E1, game trả thiếu tiền sập (đối chiếu)")
    expect(page.locator("#verdict")).to_be_visible()
    page.evaluate(axe)
    violations = page.evaluate(
        """async () => (await axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa"]}}))
            .violations.map(v => `${v.id} (${v.impact}): ${v.help} at ${v.nodes[0].target}`)"""
    )
    assert violations == []
    context.close()


def test_the_audit_report_counts_charts_and_links_into_verify_mode(browser: Browser, base: str, tmp_path: Path) -> None:
    """`maubinh verify --jsonl --report`: rendered in Chromium, its four figures are the summary
    line's, both charts are drawn, and the first difference's link opens the viewer in verify mode on
    that round, showing the same claimed and computed amounts."""
    import subprocess
    import sys

    maubinh = str(Path(sys.executable).with_name("maubinh"))
    rooms = [CASES[name]["request"] for name in CASES if "ledger" in CASES[name].get("expect", {})][:30]
    claims = []
    for k, room in enumerate(rooms):
        answer = json.loads(subprocess.run([maubinh, "score", "-"], input=json.dumps(room).encode(),
                                           capture_output=True, check=True).stdout)  # fmt: skip
        amounts = {p["id"]: p["amount"] for p in answer["players"]}
        if k % 3 == 0:
            first, second = list(amounts)[:2]
            amounts[first], amounts[second] = amounts[first] - 2000 * (k + 1), amounts[second] + 2000 * (k + 1)
        claims.append(json.dumps({**room, "round_id": f"audit/{k}", "claimed": {"amounts": amounts}}))
    claims.append('{"ruleset": "nope"}')
    source, report = tmp_path / "claims.jsonl", tmp_path / "report.html"
    source.write_text("\n".join(claims) + "\n")
    done = subprocess.run([maubinh, "verify", "--jsonl", str(source), "--report", str(report), "--viewer",
                           f"{base}/viewer", "--jobs", "1"], capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 1
    summary = re.search(r"(\d+) rooms checked, (\d+) agree, (\d+) disagree, (\d+) refused", done.stderr)
    assert summary, done.stderr
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    page = context.new_page()
    page.goto(report.as_uri())
    figures = [page.locator(f"[data-figure={name}] .number").inner_text().replace(",", "")
               for name in ("checked", "agreed", "disagreed", "refused")]  # fmt: skip
    assert figures == list(summary.groups())
    expect(page.locator("#by-step svg")).to_be_visible()
    expect(page.locator("#by-ruleset svg")).to_contain_text("maubinh-2020")
    assert "http" not in re.sub(r'(href|xmlns(:\w+)?)="[^"]*"', "", report.read_text())  # nothing fetched
    shoot(page, "audit-report")
    first = page.locator("#largest tbody").first  # the round with the most money in dispute, every player
    assert first.locator("tr").count() >= 2  # a round's rows: one a player
    differs = first.locator("tr").filter(has_not=page.locator("td:text-is('0')")).first
    cells = differs.locator("td:not([rowspan])")
    player, claimed, computed = (cells.nth(k).inner_text().replace(",", "").replace("\u2212", "-") for k in (0, 1, 2))
    first.get_by_role("link").click()
    expect(page.locator("#verdict-heading")).to_have_text("The settlement does not agree with the rules")
    row = page.locator(f"#verdict tr[data-player='{player}'] td")
    expect(row.nth(0)).to_have_text(
        f"{int(claimed):,}".replace("-", "\u2212")
    )  # the viewer writes numbers as English does, and the report as the viewer does (a true minus)
    expect(row.nth(1)).to_have_text(f"{int(computed):,}".replace("-", "\u2212"))
    context.close()


def signed_receipt(base: str, room: dict[str, Any]) -> dict[str, Any]:
    """A receipt of scoring ``room``, made from the answer as the service sent it."""
    from service.trust.receipts import from_exchange

    body = json.dumps(room).encode()
    sent = urllib.request.Request(base + "/v1/score", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(sent, timeout=10) as answer:
        head = f"HTTP/1.1 {answer.status} OK\r\n" + "".join(f"{k}: {v}\r\n" for k, v in answer.headers.items())
        return from_exchange("POST", "/v1/score", body, head.encode() + b"\r\n" + answer.read())


def test_a_receipt_pasted_as_the_room_is_checked_and_its_answer_shown(browser: Browser, base: str) -> None:
    made = signed_receipt(base, E1_ROOM)
    context, page = vietnamese_page(browser, base)
    page.get_by_label("JSON của ván bài").fill(json.dumps(made))
    page.get_by_role("button", name="Tính điểm ván này").click()
    expect(page.locator("#receipt-heading")).to_have_text(
        "Biên nhận đã được xác minh: dịch vụ đã ký phản hồi này cho đúng ván này"
    )
    expect(page.locator("#receipt-checks li[data-outcome=passed]")).to_have_count(4)
    expect(page.locator("#summary tr[data-player=P] td").nth(1)).to_have_text("−9.000")

    made["response"]["body"] = made["response"]["body"].replace("-9000", "-3000", 1)  # the backend's own copy
    page.get_by_label("JSON của ván bài").fill(json.dumps(made))
    page.get_by_role("button", name="Tính điểm ván này").click()
    expect(page.locator("#receipt-heading")).to_have_text("Biên nhận KHÔNG xác minh được")
    expect(page.locator("#receipt-checks li[data-outcome=failed]")).to_contain_text("Mã băm nội dung (không đạt)")
    expect(page.locator("#receipt-checks li[data-outcome=not_run]")).to_have_count(3)
    context.close()
