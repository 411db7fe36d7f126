"""The README's picture: a trace as Phoenix shows it, taken in headless Chromium."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from flower.testing import need

from .backend import Phoenix

#: The span clicked open beside the tree: the judge's first ruling (state, failed checks).
RULING = "干活·判定#1"


def screenshot(phoenix: Phoenix, trace_id: str, target: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    need(bool(chromium and driver_path), "no chromium/chromedriver for the screenshot")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    options = webdriver.ChromeOptions()
    options.binary_location = str(chromium)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1500,1200", "--no-first-run", "--lang=en-US"):  # fmt: skip
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=str(driver_path)), options=options)
    try:
        driver.get(f"{phoenix.url}/projects/{phoenix.project_id()}/traces/{trace_id}")
        deadline = time.monotonic() + 30
        while "claude_code.interaction" not in driver.page_source:
            assert time.monotonic() < deadline, "Phoenix did not show the trace"
            time.sleep(0.5)
        for span in driver.find_elements(By.XPATH, f"//*[text()='{RULING}']"):
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", span)
            span.click()
            break
        time.sleep(1.5)
        driver.save_screenshot(str(target))
    finally:
        driver.quit()
