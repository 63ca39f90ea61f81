"""The static report in headless Chromium (Debian's chromium + chromium-driver, driven by Selenium).

Sorting, the keyboard-driven hand replay checked card by card against the engine, no console
errors, the ``<script>alert(1)</script>`` label shown as text, and the leaderboard and
crosstable at a 390 px phone width. Screenshots of the leaderboard, a replay and the phone
views are kept under the report's folder and copied to
``arena-out/screenshots/`` in the repository for a person to look at.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.engine import Hand, Rules
from results.leaderboard import Leaderboard, build_leaderboard
from results.store import DB_NAME, Store

from tests.chromium import chromium, screenshot

from .conftest import ROOT, XSS_LABEL, LiveRun

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.requires("chromium"),
]

STATE_JS = """
const cards = (sel) => Array.from(document.querySelectorAll(sel)).map((e) => e.dataset.card);
const label = document.getElementById('step-label');
return {
  hand: Number(label.dataset.hand), step: Number(label.dataset.step),
  hands: [cards('#seat-0 .hand .card'), cards('#seat-1 .hand .card')],
  up: cards('#up-card .card'), stock: cards('#stock .card:not(.dead)'), dead: cards('#stock .card.dead'),
  table: cards('#table .card'), trump: document.getElementById('trump').dataset.suit,
  scores: [document.querySelector('#seat-0 .score-line').textContent,
           document.querySelector('#seat-1 .score-line').textContent],
  result: document.getElementById('result').textContent,
};
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium("report-chromium-") as driver:
        yield driver


@pytest.fixture(scope="module")
def board(live_run: LiveRun) -> Leaderboard:
    with Store(live_run.out / DB_NAME, readonly=True) as store:
        return build_leaderboard(store)


def assert_clean(driver: Any) -> None:
    """No error in the browser console and no alert() dialog open."""
    from selenium.common.exceptions import NoAlertPresentException

    errors = [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]
    assert not errors, errors
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text  # noqa: B018 (reading it is the check)


def rows(driver: Any) -> list[str]:
    return [row.get_attribute("data-entrant") for row in
            driver.find_elements("css selector", "#leaderboard tbody tr")]


def test_leaderboard_sorts_by_the_clicked_column(browser: Any, site_dir: Path, board: Leaderboard) -> None:
    browser.get((site_dir / "index.html").as_uri())
    by_entrant = {s.entrant: s for s in board.standings}
    assert rows(browser) == [str(s.entrant) for s in board.standings]

    def click(key: str) -> list[Any]:
        header = browser.find_element("css selector", f'#leaderboard th[data-key="{key}"]')
        header.click()
        return [by_entrant[int(e)] for e in rows(browser)]

    assert [s.bot for s in click("bot")] == sorted((s.bot for s in board.standings), key=str.lower)
    header = browser.find_element("css selector", '#leaderboard th[data-key="bot"]')
    assert header.get_attribute("aria-sort") == "ascending"
    assert [s.bot for s in click("bot")] == sorted((s.bot for s in board.standings), key=str.lower, reverse=True)
    assert [s.bt.elo for s in click("elo")] == sorted((s.bt.elo for s in board.standings), reverse=True)
    assert [s.mu for s in click("mu")] == sorted((s.mu for s in board.standings), reverse=True)
    assert [s.faults for s in click("faults")] == sorted((s.faults for s in board.standings), reverse=True)
    assert [s.sigma for s in click("sigma")] == sorted(s.sigma for s in board.standings)
    assert [s.rank for s in click("rank")] == [1, 2, 3, 4]

    link = browser.find_element("css selector", '#leaderboard tbody tr[data-entrant="0"] a.bot')
    assert link.text == XSS_LABEL
    assert browser.execute_script("return document.querySelectorAll('script').length") == 1
    screenshot(browser, site_dir, "leaderboard")
    assert_clean(browser)


def expected_state(record: dict[str, Any], steps: int) -> dict[str, Any]:
    """What the replay must show after ``steps`` actions, from the engine alone."""
    hand = Hand.deal(record["deck"], record["dealer"], Rules(**record["rules"]))
    table: list[str] = []
    for action in record["actions"][:steps]:
        tricks = len(hand.view(0)["tricks"])
        hand.apply(action)
        after = hand.view(0)
        table = [after["tricks"][-1]["lead"], after["tricks"][-1]["follow"]] if len(after["tricks"]) > tricks else []
    v0, v1 = hand.view(0), hand.view(1)
    if v0["lead"] is not None:
        table = [v0["lead"]]
    played = {c for t in v0["tricks"] for c in (t["lead"], t["follow"])} | ({v0["lead"]} if v0["lead"] else set())
    unseen = set(record["deck"]) - set(v0["hand"]) - set(v1["hand"]) - played
    return {"hands": [v0["hand"], v1["hand"]], "up": [v0["up_card"]] if v0["up_card"] else [], "table": table,
            "stock_size": v0["stock_size"], "closed": v0["closed"], "unseen": unseen, "totals": v0["totals"],
            "trump": v0["trump"], "result": v0["result"]}


def check_step(browser: Any, record: dict[str, Any], hand_index: int, step: int) -> dict[str, Any]:
    shown = browser.execute_script(STATE_JS)
    want = expected_state(record, step)
    assert (shown["hand"], shown["step"]) == (hand_index, step)
    assert shown["hands"] == want["hands"], f"step {step}"
    assert shown["up"] == want["up"] and shown["trump"] == want["trump"]
    assert shown["table"] == want["table"], f"step {step}"
    if want["closed"]:
        assert shown["stock"] == [] and set(shown["dead"]) == want["unseen"]
    else:
        assert len(shown["stock"]) + len(shown["up"]) == want["stock_size"]
        assert set(shown["stock"]) | set(shown["up"]) == want["unseen"] and shown["dead"] == []
    for seat in (0, 1):
        assert shown["scores"][seat].startswith(f"total {want['totals'][seat]} "), shown["scores"]
    return shown


def test_replay_steps_with_the_keyboard_and_shows_the_engines_cards(
        browser: Any, site_dir: Path, live_run: LiveRun) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    with Store(live_run.out / DB_NAME, readonly=True) as store:
        tid = store.tournament().id
        entrant_0 = {m.id: m.match_id for m in store.matches(tid) if 0 in m.seats}
        hands = [h for h in store.all_hands(tid) if h.match_row in entrant_0]
    row = max(hands, key=lambda h: (len(json.loads(h.record_json)["actions"]), -h.match_row))
    record = json.loads(row.record_json)
    n = len(record["actions"])
    assert n >= 6, "pick a tournament seed whose longest hand has a few tricks"
    hand_index = row.hand_index
    browser.get((site_dir / "matches" / f"{entrant_0[row.match_row]}.html").as_uri() + f"#h{hand_index + 1}")

    def press(*keys: str, shift: bool = False) -> None:
        chain = ActionChains(browser)
        if shift:
            chain.key_down(Keys.SHIFT)
        for key in keys:
            chain.send_keys(key)
        if shift:
            chain.key_up(Keys.SHIFT)
        chain.perform()

    names = [name.text for name in browser.find_elements("css selector", ".seat-head .name")]
    assert XSS_LABEL in names  # seat boxes show the label as text
    pictured = False
    for step in range(n + 1):
        shown = check_step(browser, record, hand_index, step)
        if not pictured and step >= n // 2 and len(shown["table"]) == 2:  # a finished trick on the table
            screenshot(browser, site_dir, "replay")
            pictured = True
        press(Keys.ARROW_RIGHT)
    if not pictured:
        screenshot(browser, site_dir, "replay")
    assert shown["step"] == n
    result = expected_state(record, n)["result"]
    assert result is not None and f"totals {result['totals'][0]}–{result['totals'][1]}" in shown["result"]
    check_step(browser, record, hand_index, n)  # → at the end stays at the end
    for step in (n - 1, n - 2, n - 3):
        press(Keys.ARROW_LEFT)
        check_step(browser, record, hand_index, step)
    press(Keys.ARROW_LEFT, shift=True)  # back to the last completed trick
    jumped = browser.execute_script(STATE_JS)
    assert jumped["step"] < n - 3 and (len(jumped["table"]) == 2 or jumped["step"] == 0)
    check_step(browser, record, hand_index, jumped["step"])
    press(Keys.HOME)
    check_step(browser, record, hand_index, 0)
    press(Keys.END)
    check_step(browser, record, hand_index, n)
    assert browser.current_url.endswith(f"#h{hand_index + 1}s{n}")
    press(Keys.PAGE_UP if hand_index else Keys.PAGE_DOWN)
    other = browser.execute_script(STATE_JS)
    assert other["hand"] != hand_index and other["step"] == 0
    assert_clean(browser)


PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}

COMMITMENT_JS = """
document.getElementById('deals').innerHTML = 'Deals secret, committed to in advance: sha256(key) = <code>' + 'a'.repeat(64) + '</code>';
return document.documentElement.scrollWidth;
"""

LAYOUT_JS = """
const table = document.querySelector(arguments[0]);
const box = table.closest('.scroll') || table.parentElement;
box.scrollLeft = box.scrollWidth;
const last = table.querySelector('thead tr').lastElementChild.getBoundingClientRect();
const names = Array.from(table.querySelectorAll('a.bot')).map((a) => ({
  text: a.textContent, lines: a.getClientRects().length,
  height: a.getBoundingClientRect().height, width: a.getBoundingClientRect().width,
  line: parseFloat(getComputedStyle(a).lineHeight) || 1.45 * parseFloat(getComputedStyle(a).fontSize),
  vertical: getComputedStyle(a.closest('th, td')).writingMode.startsWith('vertical')}));
const interval = table.querySelector('td.interval');
const result = {
  viewport: window.innerWidth, page: document.documentElement.scrollWidth,
  box: box.clientWidth, scrolled: box.scrollLeft, lastRight: last.right, names: names,
  interval: interval && {width: interval.getBoundingClientRect().width,
                         bar: interval.querySelector('.bar').getBoundingClientRect().width,
                         left: interval.getBoundingClientRect().left}};
box.scrollLeft = 0;
return result;
"""


def phone_layout(browser: Any, site_dir: Path, page: str, table: str) -> dict[str, Any]:
    """Load ``page`` at a 390x844 phone viewport and measure ``table`` (scrolled to its end)."""
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    try:
        browser.get((site_dir / page).as_uri())
        layout: dict[str, Any] = browser.execute_script(LAYOUT_JS, table)
        screenshot(browser, site_dir, "phone-" + page.removesuffix(".html").replace("/", "-"))
        layout["with_commitment"] = browser.execute_script(COMMITMENT_JS)
        assert_clean(browser)
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    return layout


@pytest.mark.parametrize(("page", "table"), [("index.html", "#leaderboard"), ("crosstable.html", "#crosstable"),
                                           ("matches.html", "table.matches"), ("bots/1.html", "#opponents")])
def test_tables_read_at_phone_width(browser: Any, site_dir: Path, page: str, table: str) -> None:
    layout = phone_layout(browser, site_dir, page, table)
    assert layout["viewport"] == PHONE["width"]
    assert layout["page"] <= layout["viewport"], "the page itself must not scroll sideways; the table does"
    assert layout["with_commitment"] <= layout["viewport"], "a secret tournament's 64-digit commitment wraps"
    labels = {n["text"] for n in layout["names"]}
    assert labels >= {XSS_LABEL, "random", "echo", "illegal"} if table in ("#leaderboard", "#crosstable") else len(labels) >= 2
    for name in layout["names"]:  # one line each: never one letter per line
        assert name["lines"] == 1, name
        extent = name["width"] if name["vertical"] else name["height"]
        assert extent < 1.6 * name["line"], name
    assert layout["lastRight"] <= layout["viewport"] + 1, "the last column is reachable by scrolling"
    if table == "#leaderboard":
        assert layout["scrolled"] > 0, "at 390 px the leaderboard scrolls inside its box"
        interval = layout["interval"]
        assert interval["width"] >= 150 and interval["bar"] >= interval["width"] - 30, interval


def test_every_page_loads_without_console_errors(browser: Any, site_dir: Path) -> None:
    for name in ("crosstable.html", "matches.html", "bots/0.html", "bots/3.html"):
        browser.get((site_dir / name).as_uri())
        assert browser.find_element("tag name", "h1").text
        assert_clean(browser)
    browser.get((site_dir / "bots/0.html").as_uri())
    assert browser.find_element("id", "bot-label").text == XSS_LABEL
    assert browser.title.startswith(XSS_LABEL)
    assert_clean(browser)


def test_a_served_page_reloads_itself_when_a_pair_is_stored(browser: Any, live_run: LiveRun, tmp_path: Path) -> None:
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    from results.report.serve import ReportServer

    folder = tmp_path / "live"
    folder.mkdir()
    source, copy = live_run.out / DB_NAME, folder / DB_NAME
    with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as src, sqlite3.connect(copy) as dst:
        src.backup(dst)
    with sqlite3.connect(copy) as con:  # take the last pair back out, as if it were still being played
        last = "(SELECT id FROM matches WHERE pair_index = 5)"
        for table in ("faults", "hands", "think_times"):
            con.execute(f"DELETE FROM {table} WHERE match_row IN {last}")
        con.execute("DELETE FROM matches WHERE pair_index = 5")
        con.execute("DELETE FROM rating_snapshots WHERE after_pair = 5")
        con.execute("UPDATE pairs SET finished_at = NULL WHERE pair_index = 5")
        con.execute("UPDATE tournaments SET finished_at = NULL")
    server = ReportServer(folder, 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        browser.get(server.url)
        assert browser.find_element("id", "progress").text.startswith("5/6 pairs")
        browser.execute_script("window.notReloaded = true;")
        with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as src, sqlite3.connect(copy) as dst:
            src.backup(dst)  # the pair is stored
        # The page reloads under our feet: an element read mid-navigation goes stale, so poll by script.
        WebDriverWait(browser, 15, poll_frequency=0.2, ignored_exceptions=(WebDriverException,)).until(
            lambda driver: driver.execute_script(
                "const p = document.getElementById('progress'); return p !== null && p.textContent.trim()"
                ".startsWith('6/6 pairs') && window.notReloaded === undefined"))
        assert browser.execute_script("return window.notReloaded === undefined")
        assert len(browser.find_elements("css selector", "#leaderboard tbody tr")) == 4
        assert_clean(browser)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


RANK_BARS = """
return [...document.querySelectorAll('#leaderboard tbody tr')].map(tr => {
  const cell = tr.querySelector('td.rank-interval');
  const bar = cell.querySelector('.bar').getBoundingClientRect();
  const range = cell.querySelector('.range').getBoundingClientRect();
  return {low: +cell.dataset.low, high: +cell.dataset.high, left: (range.left - bar.left) / bar.width,
          width: range.width / bar.width};
});
"""


def test_rank_intervals_and_the_p_matrix_are_drawn(browser: Any, site_dir: Path, board: Leaderboard) -> None:
    """Each rank-interval bar spans its interval on the 1..n scale; the heatmap cells shade by P."""
    browser.set_window_size(1400, 1000)
    browser.get((site_dir / "index.html").as_uri())
    n = len(board.standings)
    for bar in browser.execute_script(RANK_BARS):
        assert bar["left"] == pytest.approx((bar["low"] - 1) / n, abs=0.02)
        assert bar["width"] == pytest.approx((bar["high"] - bar["low"] + 1) / n, abs=0.02)
    shades = browser.execute_script(
        "return [...document.querySelectorAll('#p-better td.p')].map(td => "
        "[+td.dataset.p, getComputedStyle(td).backgroundColor])")
    assert len(shades) == n * (n - 1)
    by_p = {p: colour for p, colour in shades}
    assert all(by_p[p] == colour for p, colour in shades)  # the same P, the same shade
    if len(by_p) > 1:
        assert len(set(by_p.values())) > 1
    browser.find_element("css selector", "#p-better").location_once_scrolled_into_view  # noqa: B018
    screenshot(browser, site_dir, "p-matrix")
    assert_clean(browser)


SPRT_JS = """
const svg = document.getElementById('sprt-chart');
const path = svg.querySelector('path.llr');
const end = path.getPointAtLength(path.getTotalLength());
const y = (sel) => svg.querySelector(sel).getBBox().y;
return {vertices: (path.getAttribute('d').match(/[ML]/g) || []).length, points: +svg.dataset.points,
        end_y: end.y, upper_y: y('line.upper'), lower_y: y('line.lower'),
        result: document.getElementById('sprt-result').dataset.result};
"""


def test_the_sprt_page_draws_the_llr_path_against_its_bounds(browser: Any, tmp_path: Path) -> None:
    import subprocess
    import sys

    out = tmp_path / "sprt"
    run = subprocess.run([sys.executable, "-m", "arena.cli", "sprt", "bots/greedy", "bots/random", "--out", str(out),
                          "--elo1", "50", "--public-deals", "--seed", "2", "--allow-unvalidated", "--quiet",
                          "--concurrency", "2"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    site = out / "report"
    assert subprocess.run([sys.executable, "-m", "arena.cli", "report", str(out)], capture_output=True,
                          cwd=ROOT, timeout=120).returncode == 0
    browser.get((site / "sprt.html").as_uri())
    chart = browser.execute_script(SPRT_JS)
    assert chart["result"] == "H1" and chart["vertices"] == chart["points"] + 1 > 1
    assert chart["end_y"] <= chart["upper_y"] + 0.5 < chart["lower_y"]  # the path ends on the H1 bound or past it
    assert browser.find_element("css selector", 'header nav a[href$="sprt.html"]').text == "SPRT"
    screenshot(browser, site, "sprt")
    assert_clean(browser)
