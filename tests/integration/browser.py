"""Pages opened in headless Chromium: Debian's (`make system-deps` installs it), driven by
Playwright for Python (the dev extra); without them a test skips, and fails in CI
(DBSCALE_REQUIRE_SERVERS=1). `open_page` loads a page from its file, waits for every chart, and
returns what it saw (console messages, requests leaving the page, each chart's marks, the text);
the screenshot goes to test-artifacts/ (gitignored) for a person to look at."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.conftest import REPO, skip_or_fail

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def launched_browser() -> Iterator[Any]:
    if not CHROMIUM.is_file():
        skip_or_fail(f"no {CHROMIUM}: `make system-deps` installs Debian's chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_or_fail("Playwright for Python is missing: `make venv` installs the dev extra")
        raise
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


def open_page(browser: Any, page_file: Path, screenshot: Path) -> dict[str, Any]:
    """Loads the page, waits for every chart, and returns what it saw."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    console: list[str] = []
    outside: list[str] = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    dialogs: list[str] = []

    def dismiss(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)
    page.on(
        "request",
        lambda r: None if r.url.startswith(("file:", "data:", "blob:")) else outside.append(r.url),
    )
    page.goto(page_file.as_uri())
    page.wait_for_function("document.body.dataset.charts === 'done'", timeout=60_000)
    charts = page.evaluate(
        """Array.from(document.querySelectorAll('.vis')).map(el => ({
            id: el.id, rendered: el.dataset.rendered,
            marks: el.querySelectorAll('svg.marks').length,
            paths: el.querySelectorAll('svg.marks path, svg.marks line').length}))"""
    )
    text = page.inner_text("body")
    # What a crafted value would do if it ran: set window.__pwned, or open a dialog.
    pwned = page.evaluate("window.__pwned === undefined ? null : String(window.__pwned)")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(screenshot), full_page=True)
    page.close()
    return {"console": console, "outside": outside, "charts": charts, "text": text,
            "pwned": pwned, "dialogs": dialogs}  # fmt: skip
