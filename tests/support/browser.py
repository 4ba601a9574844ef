"""Headless Chromium for the tests of the pages (the report, ``referee serve``'s, a watched match), and
where they keep their screenshots.

Screenshots go to ``$PYRAMID_TEST_ARTIFACTS`` or, without it, ``tests/artifacts/`` (git-ignored), so a
person or CI can look at the pages the tests saw after the run.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")

needs_chromium = pytest.mark.skipif(
    not os.environ.get("CI") and (CHROMIUM is None or DRIVER is None),
    reason="chromium and chromedriver not installed (apt-get install chromium chromium-driver; CI does)",
)


def artifacts() -> Path:
    folder = Path(os.environ.get("PYRAMID_TEST_ARTIFACTS") or Path(__file__).parents[1] / "artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def chromium(javascript: bool = True) -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1280,1600",
    ):
        options.add_argument(flag)
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    return webdriver.Chrome(service=Service(DRIVER), options=options)


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    """One headless Chromium, with JavaScript, for a test module: started once, as it is slow to start,
    and quit after the module's last test, so that what one module leaves open stays in it."""
    driver = chromium()
    yield driver
    driver.quit()


PHONE = {"width": 420, "height": 900, "deviceScaleFactor": 1, "mobile": True}
"""A phone's viewport. ``--window-size`` is not one: headless Chromium still lays a page out about 500 px
wide in a 420 px window, so the device metrics are set through the DevTools protocol."""

LAYOUT = """
const lineHigh = (cell) => {
  const style = getComputedStyle(cell);
  const edges = ["paddingTop", "paddingBottom", "borderTopWidth", "borderBottomWidth"];
  const inner = edges.reduce((h, edge) => h - parseFloat(style[edge]), cell.getBoundingClientRect().height);
  return inner > 1.5 * parseFloat(style.lineHeight);
};
const shown = (node) => node.offsetParent !== null;
const all = (selector, root = document) => [...root.querySelectorAll(selector)].filter(shown);
const rows = (hand) => {  // a card more than half a card below the row's first starts a row
  const boxes = all(".card", hand).map((card) => card.getBoundingClientRect()).sort((a, b) => a.top - b.top);
  let count = 0;
  let top = -Infinity;
  for (const box of boxes) if (box.top > top + box.height / 2) [count, top] = [count + 1, box.top];
  return count;
};
return {
  width: window.innerWidth,
  wide: document.documentElement.scrollWidth,
  tall: all("th, td").filter((c) => !c.classList.contains("text") && lineHigh(c))
    .map((c) => c.textContent.trim()).slice(0, 8),
  hands: all(".hand").map((hand) => [all(".card", hand).length, rows(hand)]),
  scrolling: all("table").filter((t) => t.scrollWidth > t.clientWidth + 1).map((t) => t.id || t.className),
};
"""
"""What a page's layout is at the viewport's width: the page's own width (``wide``), the table cells
taller than a line (``tall``: a header one letter a line, a figure broken), each hand's cards and rows
of cards, and the tables that scroll inside themselves."""


@contextlib.contextmanager
def phone(driver: webdriver.Chrome) -> Iterator[None]:
    """The driver's pages laid out at :data:`PHONE`'s width, for the ``with`` block."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    try:
        yield
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def fits_a_phone(driver: webdriver.Chrome, page: str) -> dict[str, Any]:
    """Checks the page now shown at :func:`phone` width: no sideways scroll of the page, every table
    cell one line high, every hand's cards on one or two rows; returns the layout (:data:`LAYOUT`)."""
    found: dict[str, Any] = driver.execute_script(LAYOUT)
    assert found["wide"] <= found["width"], (
        f"{page} is {found['wide']} px wide in a {found['width']} px viewport"
    )
    assert not found["tall"], f"{page}: cells taller than a line: {found['tall']}"
    for cards, rows in found["hands"]:
        assert rows <= 2, f"{page}: a hand of {cards} cards takes {rows} rows"
    return found
