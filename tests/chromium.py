"""Headless Chromium for the browser tests (Debian's chromium + chromium-driver, driven by Selenium),
and full-page screenshots kept under ``arena-out/screenshots/`` (gitignored) for a person to look at."""

from __future__ import annotations

import base64
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1280,900")
KEPT = ROOT / "arena-out" / "screenshots"


@contextmanager
def chromium(prefix: str) -> Iterator[Any]:
    """A headless Chromium WebDriver with its own profile folder (removed afterwards)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix=prefix)
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)  # with the driver path below, Selenium Manager downloads nothing
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(10)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def screenshot(driver: Any, folder: Path, name: str) -> Path:
    """A full-page PNG in ``folder``/screenshots, copied to arena-out/screenshots/."""
    size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    clip = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 4000), "scale": 1}
    shot = driver.execute_cdp_cmd("Page.captureScreenshot",
                                  {"format": "png", "captureBeyondViewport": True, "clip": clip})
    shots = folder / "screenshots"
    shots.mkdir(exist_ok=True)
    path = shots / f"{name}.png"
    path.write_bytes(base64.b64decode(shot["data"]))
    KEPT.mkdir(parents=True, exist_ok=True)
    shutil.copy(path, KEPT / path.name)
    return path
