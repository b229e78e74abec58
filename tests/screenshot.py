"""A headless Chromium picture of the labeling UI, to document and check the annotator's view (used by
the live annotation tests; ``RWPOST_UPDATE_SCREENSHOTS=1`` refreshes ``annotation/screenshots/``).

Driven by Selenium with the system's ``chromium`` and ``chromedriver`` (Debian packages ``chromium``
and ``chromium-driver``); nothing is downloaded at run time.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from rwpost.errors import ConfigError

CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1600,1500",
)


@dataclass(frozen=True)
class PageCapture:
    """What the browser showed: the visible text of the page and where the PNG was saved."""

    text: str
    png: Path


def find_browser() -> tuple[str, str]:
    """Paths of ``chromium`` and ``chromedriver``, or a ConfigError naming the packages to install."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        raise ConfigError("headless Chromium not found: apt-get install -y chromium chromium-driver")
    return browser, driver


def capture_task(
    url: str,
    email: str,
    password: str,
    project_id: int,
    task_id: int,
    out: Path,
    *,
    wait_for: str,
    timeout: float = 90,
) -> PageCapture:
    """Log in as ``email``, open one task in the labeling UI, wait until ``wait_for`` shows, save a PNG."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    browser, driver_path = find_browser()
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    try:
        driver.set_page_load_timeout(timeout)
        driver.get(f"{url}/user/login/")
        driver.find_element(By.NAME, "email").send_keys(email)
        driver.find_element(By.NAME, "password").send_keys(password)
        driver.find_element(By.CSS_SELECTOR, "form button[type=submit], form input[type=submit]").click()
        deadline = time.monotonic() + timeout
        while "/user/login" in driver.current_url and time.monotonic() < deadline:
            time.sleep(0.3)
        driver.get(f"{url}/projects/{project_id}/data?task={task_id}")
        text = ""
        while time.monotonic() < deadline:
            text = driver.find_element(By.TAG_NAME, "body").text
            if wait_for in text:
                break
            time.sleep(0.5)
        time.sleep(1.5)  # let images and fonts finish painting
        text = driver.find_element(By.TAG_NAME, "body").text
        out.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(out))
        return PageCapture(text=text, png=out)
    finally:
        driver.quit()
