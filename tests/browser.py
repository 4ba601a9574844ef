"""Headless Chromium for the report's tests, and where they keep their screenshots.

Screenshots go to ``$PYRAMID_TEST_ARTIFACTS`` or, without it, ``tests/artifacts/`` (git-ignored), so a
person or CI can look at the pages the tests saw after the run.
"""

import os
import shutil
from pathlib import Path

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
    folder = Path(os.environ.get("PYRAMID_TEST_ARTIFACTS") or Path(__file__).parent / "artifacts")
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
