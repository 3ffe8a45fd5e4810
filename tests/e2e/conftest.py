"""Browser tests: Playwright driving Debian's Chromium (/usr/bin/chromium) against
a live server. No browser is ever downloaded; CI installs Chromium with apt."""

import os
import shutil
from pathlib import Path

import pytest

from tests.e2e.participant import PHONE
from tests.services import require_services

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-output" / "screenshots"


def _chromium_missing() -> bool:
    return not (Path(CHROMIUM).exists() or shutil.which("chromium"))


@pytest.fixture(scope="session")
def browser():
    if _chromium_missing():
        if require_services():
            pytest.fail(f"Chromium is required for the browser tests ({CHROMIUM})")
        pytest.skip("Chromium is not installed (apt install chromium); runs in CI")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in the test thread; Django's guard
    # against ORM calls from async code would otherwise refuse the tests' queries.
    # Browser tests run last (tests/conftest.py), so no other test sees this.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    playwright = sync_playwright().start()
    browser = playwright.chromium.launch(
        executable_path=CHROMIUM,
        headless=True,
        args=[
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ],
    )
    yield browser
    browser.close()
    playwright.stop()
    os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.fixture
def new_page(browser, live_server):
    """new_page() -> a page in a fresh browser context (its own cookies)."""
    contexts = []

    def build(locale: str = "en-GB"):
        context = browser.new_context(base_url=live_server.url, locale=locale)
        context.set_default_timeout(15_000)
        contexts.append(context)
        return context.new_page()

    yield build
    for context in contexts:
        context.close()


@pytest.fixture
def screenshot():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(page, name: str):
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)

    return take


def log_in(page, email: str, password: str):
    page.goto("/accounts/login/")
    page.fill("input[name=login]", email)
    page.fill("input[name=password]", password)
    page.locator("form.stacked button[type=submit], form button[type=submit]").last.click()
    page.wait_for_url("**/studies/**")


@pytest.fixture
def axe_page(browser, live_server):
    if not AXE.exists():
        if require_services():
            pytest.fail("axe-core is required (npm ci installs it)")
        pytest.skip("axe-core not installed (npm ci); runs in CI")
    # axe is injected as a script; the site's CSP rightly forbids that, so this
    # context alone bypasses it.
    context = browser.new_context(base_url=live_server.url, bypass_csp=True)
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


def violations(page) -> list[dict]:
    """Every axe-core violation on the page, whatever its impact."""
    page.add_script_tag(path=str(AXE))
    results = page.evaluate("async () => await axe.run(document)")
    return [
        {"id": v["id"], "impact": v["impact"], "nodes": [n["target"] for n in v["nodes"]][:3]}
        for v in results["violations"]
    ]


def serious_violations(page) -> list[dict]:
    return [v for v in violations(page) if v["impact"] in ("serious", "critical")]


# The remote participant's private window; the panel's site is PANEL (tests of §11, §14).
PANEL = "https://panel.example.org"


@pytest.fixture
def participant(browser, live_server):
    """participant(viewport, touch) -> a page in a fresh context: a private window.
    The panel's site answers from here, so no test needs the network."""
    contexts = []

    def build(viewport=None, touch=True):
        viewport = viewport or PHONE
        context = browser.new_context(
            base_url=live_server.url,
            viewport=viewport,
            is_mobile=touch,
            has_touch=touch,
            locale="en-GB",
        )
        context.set_default_timeout(15_000)
        context.route(
            PANEL + "/**",
            lambda route: route.fulfill(status=200, content_type="text/html", body="<p>Panel</p>"),
        )
        contexts.append(context)
        return context.new_page()

    yield build
    for context in contexts:
        context.close()  # again for one a test closed: Playwright lets that pass


# What tests/e2e/test_click_counts.py measured, printed after the run's results.
CLICK_COUNTS = pytest.StashKey[list]()


def pytest_terminal_summary(terminalreporter, config):
    lines = config.stash.get(CLICK_COUNTS, [])
    if lines:
        terminalreporter.section("clicks and taps per session")
        for line in lines:
            terminalreporter.write_line(line)
