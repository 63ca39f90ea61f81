"""The server's pages in headless Chromium: logging in and uploading with the form, the live
leaderboard redrawing itself without a reload, and a replay stepped with the keyboard.
Screenshots are kept in arena-out/screenshots/ (server-*.png)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.chromium import chromium, screenshot

from .archives import bot_targz
from .conftest import Server

pytestmark = [pytest.mark.e2e, pytest.mark.requires("chromium")]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium("server-chromium-") as driver:
        yield driver


def wait_until(driver: Any, what: str, script: str, timeout_s: float = 60.0) -> Any:
    """Evaluate ``script`` in the page until it returns something true."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout_s, poll_frequency=0.2).until(
        lambda d: d.execute_script(script), message=f"waiting for {what}")


def test_log_in_and_upload_with_the_form(browser: Any, competition: Server, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    archive = tmp_path / "mallorybot.tar.gz"
    archive.write_bytes(bot_targz("mallorybot"))
    browser.get(f"{competition.url}/login")
    browser.find_element(By.ID, "token").send_keys(competition.tokens["mallory"])
    browser.find_element(By.ID, "login-button").click()
    wait_until(browser, "the signed-in front page", "return document.getElementById('who') !== null")
    assert "mallory (participant)" in browser.find_element(By.ID, "who").text
    browser.get(f"{competition.url}/submit")
    browser.find_element(By.ID, "archive").send_keys(str(archive))
    browser.find_element(By.ID, "upload-button").click()
    wait_until(browser, "the status page", "return location.pathname.startsWith('/submissions/')")
    wait_until(browser, "the verdict", "const s = document.getElementById('status');"
               "return s !== null && s.dataset.status === 'accepted'", 90)
    steps = browser.execute_script("return Array.from(document.querySelectorAll('#report tr[data-step]'))"
                                   ".map((r) => r.className)")
    assert steps == ["step-pass"] * 12
    screenshot(browser, tmp_path, "server-submission")


def test_the_leaderboard_updates_itself(browser: Any, competition: Server, tmp_path: Path) -> None:
    browser.get(f"{competition.url}/")
    browser.execute_script("window.notReloaded = true;")
    before = int(browser.execute_script("return document.getElementById('pairs').dataset.pairs"))
    wait_until(browser, "a redraw with more pairs",
               f"return window.notReloaded === true && Number(document.getElementById('pairs').dataset.pairs) > {before}")
    rows = browser.execute_script("return Array.from(document.querySelectorAll('#leaderboard tbody tr'))"
                                  ".map((r) => r.dataset.bot)")
    assert {"alicebot", "bobbot"} <= set(rows)
    screenshot(browser, tmp_path, "server-leaderboard")


def test_a_replay_steps_with_the_keyboard(browser: Any, competition: Server, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    with competition.client() as anonymous:
        match = anonymous.get("/api/matches").json()["matches"][0]
    browser.get(f"{competition.url}{match['url']}")
    wait_until(browser, "the replay", "return document.getElementById('step-label') !== null && "
               "document.getElementById('step-label').dataset.step !== undefined")
    start = browser.execute_script("return Number(document.getElementById('step-label').dataset.step)")
    body = browser.find_element(By.TAG_NAME, "body")
    for _ in range(3):
        body.send_keys(Keys.ARROW_RIGHT)
    wait_until(browser, "three steps on", f"return Number(document.getElementById('step-label').dataset.step) "
               f"=== {start + 3}", 10)
    cards = browser.execute_script("return document.querySelectorAll('#seat-0 .hand .card').length")
    assert 0 < cards <= 6
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors
    screenshot(browser, tmp_path, "server-replay")
