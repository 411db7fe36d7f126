"""The plugin's tests: offline like flower's own, and never silently skipped in CI.

Every test starts with the model endpoint on a closed loopback port and ``HOME`` in a
temp dir (tests that run the CLI take flower.testing's ``claude_env``, which points them
at the scripted model). Without the plugin installed, or without Chromium for the browser
tests, the tests skip with the reason, except under ``CI=true``, where that is a failure.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flower.testing import need

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


#: The plugin is installed in this environment with its test extras (its tests import both).
PLUGIN = all(importlib.util.find_spec(name) is not None for name in ("flower_plugin_web", "httpx"))
NOT_INSTALLED = (
    "flower-plugin-web is not installed with its test extras:"
    " pip install './plugins/flower-plugin-web[test]'"
)


@pytest.fixture(autouse=True)
def _offline(offline: dict[str, str]) -> None:
    """Every test starts offline (flower.testing's ``offline`` fixture)."""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def chromium(*flags: str) -> Any:
    """Headless Chromium driven by Selenium, with the system's chromedriver (nothing is
    downloaded); ``flags`` are added to Chromium's command line."""
    missing = "no chromium/chromedriver: apt-get install chromium chromium-driver"
    need(bool(CHROMIUM and CHROMEDRIVER), missing)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,900",
        "--no-first-run",
        "--disable-background-networking",
        *flags,
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(30)
    return driver


@pytest.fixture
def browser() -> Iterator[Any]:
    driver = chromium()
    try:
        yield driver
    finally:
        driver.quit()
