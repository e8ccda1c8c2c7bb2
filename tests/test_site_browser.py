"""The built catalogue in a real browser: Debian's headless chromium, driven by Selenium.

Pages are opened from ``file://`` exactly as a user who downloaded the site would. ``.ci/run``
installs chromium and chromium-driver, so under ``CI=true`` a missing browser fails these tests;
elsewhere they are skipped, with the reason.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.sitebuild import build, make_nightly

# Debian's package names first; a hosted runner may have Google's build of the same browser.
CHROMIUM = shutil.which("chromium") or shutil.which("google-chrome") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def _browser_missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    for path in (CHROMIUM, DRIVER):
        if not os.access(path, os.X_OK):
            return f"{path} is missing (apt-get install chromium chromium-driver)"
    return None


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    nightly = make_nightly(tmp_path_factory.mktemp("browser-nightly"))
    return build(nightly, tmp_path_factory.mktemp("browser-site") / "site")


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    missing = _browser_missing()
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"browser tests cannot run under CI: {missing}")
        pytest.skip(missing)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
        "--window-size=1280,1000",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    browser.set_page_load_timeout(60)
    try:
        yield browser
    finally:
        browser.quit()


def _open(driver: Any, url: str) -> None:
    driver.get(url)
    _console_errors(driver)  # the log so far belongs to earlier pages


def _console_errors(driver: Any) -> list[str]:
    return [f"{e['level']}: {e['message']}" for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def _wait(driver: Any, condition: Any) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, 20).until(condition)


def _search(driver: Any, text: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    box = driver.find_element(By.ID, "q")
    box.clear()
    # The status of the previous search must not pass for this one's.
    driver.execute_script("document.getElementById('status').textContent = ''")
    box.send_keys(text)
    _wait(driver, lambda d: "match" in d.find_element(By.ID, "status").text)
    return list(driver.find_elements(By.CSS_SELECTOR, "#results li a"))


def _index(site: Path) -> str:
    return (site / "index.html").as_uri()


def test_full_runtime_message_finds_its_page_and_a_flag_page(driver: Any, site: Path) -> None:
    from selenium.webdriver.common.by import By

    driver.get(_index(site))
    _wait(driver, lambda d: "errors" in d.find_element(By.ID, "status").text)
    # The message as the server prints it, with a value where the template has a hole.
    found = _search(driver, "ValueError: --tp-size must be at least 1, got 0")
    assert found, driver.find_element(By.ID, "status").text
    assert "--tp-size must be at least 1" in found[0].text
    found[0].click()
    _wait(driver, lambda d: "/errors/" in d.current_url)
    assert "--tp-size must be at least 1" in driver.find_element(By.TAG_NAME, "h1").text
    driver.find_element(By.CSS_SELECTOR, 'a[href="../flags/tp-size.html"]').click()
    _wait(driver, lambda d: d.current_url.endswith("/flags/tp-size.html"))
    assert driver.find_element(By.TAG_NAME, "h1").text == "--tp-size"
    assert "fires when --tp-size is below 1" in driver.find_element(By.TAG_NAME, "main").text
    assert _console_errors(driver) == []


def test_part_of_a_message_and_filters(driver: Any, site: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    driver.get(_index(site))
    found = _search(driver, "requires --dp-size greater")
    assert [a.text for a in found][:1] == [
        "ValueError --enable-dp-attention requires --dp-size greater than 1"
    ]
    # A flag name finds every error that names it.
    found = _search(driver, "--enable-dp-attention")
    assert len(found) >= 2
    Select(driver.find_element(By.ID, "f-subsystem")).select_by_value("srt/mem_cache")
    found = _search(driver, "SGLANG")
    assert found and all(
        "mem_cache" in li.text for li in driver.find_elements(By.CSS_SELECTOR, "#results li")
    )
    # A tag link from a record page opens the index with that filter set.
    driver.get(_index(site) + "#cause=flag-conflict")
    _wait(driver, lambda d: d.find_element(By.ID, "f-cause").get_attribute("value") == "flag-conflict")
    _wait(driver, lambda d: "match" in d.find_element(By.ID, "status").text)
    assert driver.find_elements(By.CSS_SELECTOR, "#results li")
    assert _console_errors(driver) == []


_LINE_TOPS = """
return [...document.querySelectorAll('.code .linenos')].map(
  e => [e.getBoundingClientRect().top, !!e.closest('.hll')]);
"""


def test_code_windows_draw_each_source_line_on_its_own_line(driver: Any, site: Path) -> None:
    after_mark = 0
    for page in sorted((site / "errors").glob("*.html")):
        _open(driver, page.as_uri())
        lines = driver.execute_script(_LINE_TOPS)
        tops = [top for top, _ in lines]
        assert all(a < b for a, b in itertools.pairwise(tops)), f"{page.name}: {tops}"
        assert [marked for _, marked in lines].count(True) == 1, page.name
        after_mark += not lines[-1][1]
    assert after_mark  # some window goes on below its marked line


def _pages(site: Path) -> list[Path]:
    picks = [site / "index.html", site / "flags.html", site / "subsystems.html", site / "versions.html"]
    for folder in ("errors", "flags", "env", "subsystems", "versions"):
        picks += sorted((site / folder).glob("*.html"))[:2]
    return picks


def test_no_page_logs_a_console_error(driver: Any, site: Path) -> None:
    for page in _pages(site):
        _open(driver, page.as_uri())
        errors = _console_errors(driver)
        assert errors == [], f"{page.relative_to(site)}: {errors}"


_A11Y = """
const problems = [];
const one = (sel, what) => { if (document.querySelectorAll(sel).length !== 1) problems.push('one ' + what); };
one('header[role=banner], body > header', 'banner');
one('main', 'main');
one('footer[role=contentinfo], body > footer', 'contentinfo');
if (!document.querySelector('nav[aria-label]')) problems.push('labelled nav');
if (!document.documentElement.lang) problems.push('html lang');
if (!document.title.trim()) problems.push('title');
if (!document.querySelector('h1')) problems.push('h1');
for (const el of document.querySelectorAll('input, select, textarea')) {
  const byFor = el.id && document.querySelector('label[for="' + el.id + '"]');
  if (!byFor && !el.getAttribute('aria-label') && !el.closest('label')) problems.push('unlabelled ' + el.outerHTML.slice(0, 60));
}
for (const svg of document.querySelectorAll('svg')) {
  if (!svg.getAttribute('aria-label') && !svg.querySelector('title')) problems.push('svg without a name');
}
for (const a of document.querySelectorAll('a[href]')) {
  if (!a.textContent.trim() && !a.getAttribute('aria-label')) problems.push('empty link ' + a.outerHTML.slice(0, 60));
}
// WCAG 2 contrast of every text's colour against the background it is drawn on.
const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
const lum = ([r, g, b]) => {
  const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
};
const background = (el) => {
  for (let e = el; e; e = e.parentElement) {
    const c = rgb(getComputedStyle(e).backgroundColor);
    if (c.length === 3 || (c.length === 4 && c[3] > 0)) return c.slice(0, 3);
  }
  return [255, 255, 255];
};
let worst = 21, where = '';
const seen = new Set();
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let n = walker.nextNode(); n; n = walker.nextNode()) {
  const el = n.parentElement;
  if (!n.textContent.trim() || !el || seen.has(el) || el.closest('svg')) continue;
  seen.add(el);
  const style = getComputedStyle(el);
  if (style.visibility === 'hidden' || style.display === 'none' || el.getClientRects().length === 0) continue;
  const fg = rgb(style.color).slice(0, 3), bg = background(el);
  const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
  const ratio = (hi + 0.05) / (lo + 0.05);
  const large = parseFloat(style.fontSize) >= 24 || (parseFloat(style.fontSize) >= 18.66 && Number(style.fontWeight) >= 700);
  const need = large ? 3 : 4.5;
  if (ratio < need && ratio < worst) { worst = ratio; where = el.tagName + '.' + el.className + ' ' + style.color + ' on ' + bg; }
}
if (where) problems.push('contrast ' + worst.toFixed(2) + ' at ' + where);
return problems;
"""


def test_pages_pass_basic_accessibility_checks(driver: Any, site: Path) -> None:
    for page in _pages(site):
        _open(driver, page.as_uri())
        problems = driver.execute_script(_A11Y)
        assert problems == [], f"{page.relative_to(site)}: {problems}"
    # The same checks see a pale theme and an unlabelled input.
    _open(driver, _index(site))
    driver.execute_script(
        "document.querySelector('main p').style.color = '#aaaaaa';"
        "document.querySelector('label[for=q]').remove();"
    )
    problems = driver.execute_script(_A11Y)
    assert any(p.startswith("contrast 2.") for p in problems), problems
    assert any(p.startswith("unlabelled <input") for p in problems), problems
