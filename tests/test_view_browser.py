"""`rwpost view` as a person uses it: the real command serves the bundled sample's outputs on loopback and
one headless Chromium session (the Label Studio tests' browser, tests/screenshot.py) opens the dataset,
filters to a label, opens a sample and sees its image load, opens a run, filters to its errors, opens an
agent's transcript and compares two runs. Screenshots are written under the session's temporary folder
(``RWPOST_UPDATE_SCREENSHOTS=1`` also refreshes the README's, docs/view/)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port
from tests.killing import child_env
from tests.screenshot import CHROMIUM_FLAGS, find_browser
from tests.view_helpers import ROOT, SECRET, bundled_outputs

pytestmark = [pytest.mark.slow, pytest.mark.session_fixtures("cli_built_sample")]
DOCS = ROOT / "docs" / "view"


@pytest.fixture(scope="module")
def server(tmp_path_factory, request):
    built = bundled_outputs(tmp_path_factory, request)
    port = free_port()
    folders = [built / "data" / "rwpost" / "v0.1.0", built / "data" / "work", built / "reports"]
    process = subprocess.Popen(
        [sys.executable, "-m", "rwpost", "view", *map(str, folders), "--port", str(port)],
        cwd=built,
        env=child_env(OPENAI_API_KEY=SECRET),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:  # ready when it answers (a loaded machine imports slowly)
            assert process.poll() is None, process.stderr.read()
            try:
                if httpx.get(f"{url}/api/sources", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "rwpost view did not start"
            time.sleep(0.3)
        yield url
    finally:
        process.terminate()
        try:
            _, err = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            _, err = process.communicate()
        assert "Traceback" not in err and SECRET not in err


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, chromedriver = find_browser()
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
    driver.set_page_load_timeout(90)
    yield driver
    driver.quit()


def wait_for(driver, condition, what: str, timeout: float = 60):
    """Poll ``condition(driver)`` until it is true (a page renders after its API answers)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = condition(driver)
        except Exception:  # an element not there yet, or replaced while read
            value = None
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}: {driver.current_url}"
        time.sleep(0.2)


README_SHOTS = ("sample", "transcript")
"""The screenshots the README's tour shows (docs/view/), kept small: 1000 px wide, 128 colours."""


def settled(driver) -> bool:
    """Whether the page has rendered the URL it shows (the page marks each render it finishes)."""
    return driver.execute_script("return document.body.dataset.ready === (location.hash || '#/')")


def column(driver, number: int) -> set[str]:
    """The texts of one column of the table, once the page has settled."""
    from selenium.webdriver.common.by import By

    wait_for(driver, settled, "the page to render")
    return {
        r.find_elements(By.TAG_NAME, "td")[number].text
        for r in driver.find_elements(By.CSS_SELECTOR, "tr.row")
    }


def shot(driver, folder: Path, name: str) -> Path:
    path = folder / f"{name}.png"
    driver.save_screenshot(str(path))
    if os.environ.get("RWPOST_UPDATE_SCREENSHOTS") == "1" and name in README_SHOTS:
        from PIL import Image

        DOCS.mkdir(parents=True, exist_ok=True)
        with Image.open(path) as image:
            size = (1000, round(image.height * 1000 / image.width))
            small = image.convert("RGB").resize(size, Image.LANCZOS)
            small.quantize(128).save(DOCS / path.name, optimize=True)
    return path


def test_a_person_looks_at_the_dataset_a_sample_a_run_its_errors_a_transcript_and_a_comparison(
    server, browser, tmp_path_factory
):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    shots = tmp_path_factory.mktemp("view-screenshots")
    sources = httpx.get(f"{server}/api/sources").json()["sources"]
    key = {Path(s["label"]).name: s["key"] for s in sources}
    rows = lambda d: d.find_elements(By.CSS_SELECTOR, "tr.row")  # noqa: E731

    browser.get(f"{server}/#/")
    wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, "a.source.version"), "the list of folders")
    browser.find_element(By.CSS_SELECTOR, "a.source.version").click()
    wait_for(
        browser, lambda d: settled(d) and "57 samples" in d.find_element(By.TAG_NAME, "h1").text, "the table"
    )
    charts = "return document.querySelectorAll('canvas').length"
    assert wait_for(browser, lambda d: d.execute_script(charts), "the card's charts")
    Select(browser.find_element(By.CSS_SELECTOR, "select[name=label]")).select_by_value("False")
    wait_for(
        browser, lambda d: settled(d) and d.find_element(By.ID, "count").text == "1–22 of 22", "the filter"
    )
    assert column(browser, 1) == {"False"}
    shot(browser, shots, "dataset")

    rows(browser)[0].click()
    image = wait_for(browser, lambda d: d.find_element(By.ID, "post-image"), "the sample page")
    loaded = wait_for(
        browser,
        lambda d: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", image),
        "the post image to load",
    )
    assert loaded > 0
    assert browser.find_element(By.ID, "sample-label").text == "False"
    assert browser.find_elements(By.CSS_SELECTOR, "#tagged .tag")  # the article's links highlighted
    page = browser.find_element(By.TAG_NAME, "body").text
    assert "Funnel history" in page and "neardup" in page and "Key points and their evidence" in page
    shot(browser, shots, "sample")

    browser.get(f"{server}/#/run/{key['majority-T']}")
    body = lambda d: d.find_element(By.TAG_NAME, "body").text  # noqa: E731
    wait_for(browser, lambda d: settled(d) and "Metrics with 95% intervals" in body(d), "a run")
    Select(browser.find_element(By.CSS_SELECTOR, "select[name=outcome]")).select_by_value("wrong")
    wait_for(browser, lambda d: "outcome=wrong" in d.current_url and settled(d) and rows(d), "the errors")
    assert column(browser, 3) == {"wrong"}
    shot(browser, shots, "run")

    browser.get(f"{server}/#/run/{key['agentfact-TW']}")
    wait_for(browser, lambda d: settled(d) and rows(d), "the agent run's samples")
    rows(browser)[1].click()
    transcript = wait_for(browser, lambda d: d.find_element(By.ID, "transcript"), "the transcript")
    calls = transcript.find_elements(By.CSS_SELECTOR, "tr.call, tr.drop")
    drops = transcript.find_elements(By.CSS_SELECTOR, "tr.drop")
    assert len(calls) > len(drops) > 0
    assert "reason: blocked:snopes.com" in transcript.text and "search:loopback" in transcript.text
    assert "What the detector was shown" in browser.find_element(By.ID, "blinded").text
    shot(browser, shots, "transcript")

    browser.get(f"{server}/#/run/{key['majority-T']}")
    menu = "select[name=compare]"
    compare = wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, menu), "the compare menu")
    Select(compare).select_by_value(key["category-prior-T"])
    paired = wait_for(browser, lambda d: d.find_element(By.ID, "paired"), "the paired comparison")
    assert "A right" in paired.text and "B wrong" in paired.text
    shot(browser, shots, "compare")
    assert SECRET not in browser.page_source
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
