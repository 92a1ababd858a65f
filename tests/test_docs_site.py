"""The docs site: `mkdocs build --strict` refuses broken links, and a real browser opens every page.

The site is built into a temporary directory and served from a loopback port by the standard
library. Headless Debian Chromium (installed by `.ci/install-e2e.sh`), driven by Playwright for
Python (the `e2e` dependency group), opens each page and fails on a console error, an uncaught
exception, a failed request or any request that leaves the loopback address; then it follows the
navigation and runs a search. A screenshot of the home page is written to
`.ci/artifacts/docs-home.png` for CI to show. Skipped without mkdocs (the `docs` group), Chromium
or Playwright, unless WIRESCRIPT_REQUIRE_E2E=1 (CI sets it), which turns the skip into a failure.
The browser tests run only in CI (CI set, or WIRESCRIPT_REQUIRE_E2E=1): the quick default leaves
them out.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import pathlib
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCREENSHOT = ROOT / ".ci" / "artifacts" / "docs-home.png"
CHROMIUM = pathlib.Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]


def _require(reason: str) -> None:
    if os.environ.get("WIRESCRIPT_REQUIRE_E2E") == "1":
        pytest.fail(f"WIRESCRIPT_REQUIRE_E2E=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def _needs_mkdocs() -> None:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        _require("mkdocs-material is not installed (the `docs` dependency group)")


def _needs_browser() -> None:
    _needs_mkdocs()
    if not os.environ.get("CI") and os.environ.get("WIRESCRIPT_REQUIRE_E2E") != "1":
        # The site's build and its walk through every page cost about 20 s of CPU, and the walk is the
        # longest test of the suite (25-40 s of Chromium rendering on two cores): CI runs them, the
        # quick default `uv run pytest` leaves them out (run them with `CI=1 uv run pytest tests/test_docs_site.py`).
        pytest.skip("the docs site's browser tests run in CI (CI=1 or WIRESCRIPT_REQUIRE_E2E=1 runs them here)")
    if importlib.util.find_spec("playwright") is None:
        _require("Playwright for Python is not installed (the `e2e` dependency group)")
    if not CHROMIUM.exists():
        _require(f"{CHROMIUM} is missing (run .ci/install-e2e.sh)")


def build(project: pathlib.Path, site: pathlib.Path) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` of the project's mkdocs.yml into `site`."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(project / "mkdocs.yml"), "-d", str(site)],
        cwd=project,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_strict_build_fails_on_a_broken_link_and_a_broken_anchor(tmp_path: pathlib.Path) -> None:
    _needs_mkdocs()
    import yaml

    # The real configuration (its theme, markdown extensions and validation settings), with a
    # one-page nav and without the API reference, which needs the package's sources.
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    config["plugins"] = ["search"]
    config["nav"] = [{"Home": "index.md"}]
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()

    # One build (each costs about 3 s of CPU): both breaks at once, and nothing else is warned about, so
    # the real configuration builds this page and each break is refused on its own account.
    (docs / "index.md").write_text("# Home\n\nSee [the page](missing.md) and [below](#nowhere).\n", encoding="utf-8")
    done = build(tmp_path, tmp_path / "site")
    assert done.returncode != 0
    warnings = [line for line in done.stderr.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 2, done.stderr
    assert "'missing.md', but the target is not found" in warnings[0]
    assert "there is no such anchor" in warnings[1]
    assert "Aborted with 2 warnings in strict mode" in done.stdout + done.stderr, done.stdout


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """The real site, built strictly."""
    _needs_browser()
    site = tmp_path_factory.mktemp("site")
    done = build(ROOT, site)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    # A page with a script error, to prove that the checks below catch one.
    (site / "broken-for-the-test.html").write_text(
        "<!doctype html><title>broken</title><script>undefined_function()</script>"
        '<script>console.error("a console error")</script><img src="https://example.invalid/x.png">',
        encoding="utf-8",
    )
    return site


@pytest.fixture(scope="module")
def site_url(site: pathlib.Path) -> Iterator[str]:
    """The built site, served from a loopback port."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def site_pages(site_url: str, site: pathlib.Path) -> list[str]:
    """The URL of every page of the built site (each is a directory with an index.html)."""
    folders = (page.parent.relative_to(site).as_posix() for page in site.rglob("index.html"))
    return sorted(site_url if folder == "." else f"{site_url}{folder}/" for folder in folders)


class PageWatch:
    """What went wrong while a browser page was open: console errors, exceptions, bad requests."""

    def __init__(self, page: Any, origin: str) -> None:
        self.problems: list[str] = []
        page.on("console", lambda m: m.type == "error" and self.problems.append(f"console error: {m.text}"))
        page.on("pageerror", lambda e: self.problems.append(f"uncaught exception: {e}"))
        page.on("requestfailed", lambda r: self.problems.append(f"request failed: {r.url}"))

        def route(route: Any) -> None:
            if route.request.url.startswith(origin):
                route.continue_()
            else:  # the site must load nothing from the network (fonts, scripts, images)
                self.problems.append(f"request off the loopback server: {route.request.url}")
                route.abort()

        page.route("**/*", route)


@pytest.fixture(scope="module")
def browser(site_url: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()


def test_the_watch_catches_a_broken_page(browser: Any, site_url: str) -> None:
    page = browser.new_page()
    watch = PageWatch(page, site_url)
    page.goto(site_url + "broken-for-the-test.html", wait_until="load")
    joined = "\n".join(watch.problems)
    assert "undefined_function is not defined" in joined
    assert "console error: a console error" in joined
    assert "request off the loopback server: https://example.invalid/x.png" in joined


def test_every_page_opens_without_errors_and_the_home_page_is_captured(
    browser: Any, site: pathlib.Path, site_url: str
) -> None:
    pages = site_pages(site_url, site)
    assert {site_url, site_url + "api/", site_url + "frameworks/pydantic-ai/"} <= set(pages), pages
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    watch = PageWatch(page, site_url)
    for url in pages:
        page.goto(url, wait_until="load")
        assert page.locator("article h1").count() >= 1, f"{url}: no title"
        page.wait_for_load_state("networkidle")
        assert not watch.problems, f"{url}:\n" + "\n".join(watch.problems)
    page.goto(site_url, wait_until="networkidle")
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=False)
    assert SCREENSHOT.stat().st_size > 10_000
    assert not watch.problems, "\n".join(watch.problems)


def test_the_navigation_and_the_search_work(browser: Any, site_url: str) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    watch = PageWatch(page, site_url)
    page.goto(site_url, wait_until="networkidle")

    page.locator("nav.md-nav--primary a", has_text="Getting started").first.click()
    page.wait_for_url(site_url + "getting-started/")
    assert page.locator("article h1").first.text_content() == "Getting started¶"  # with its permalink

    page.locator("nav.md-nav--primary a", has_text="Hold and release").first.click()
    page.wait_for_url(site_url + "hold/")

    search = page.locator("input.md-search__input")
    search.click()
    search.press_sequentially("overflow", delay=20)  # the search listens to key presses, not to fill()
    results = page.locator(".md-search-result__item")
    results.first.wait_for(state="visible", timeout=15_000)
    assert results.count() >= 1
    assert "matching document" in (page.locator(".md-search-result__meta").text_content() or "")
    assert "overflow" in (page.locator(".md-search-result").text_content() or "").lower()
    results.first.locator("a").first.click()
    page.wait_for_load_state("networkidle")
    assert page.url.startswith(site_url)
    assert page.url != site_url + "hold/"
    assert not watch.problems, "\n".join(watch.problems)
