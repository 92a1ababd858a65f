"""End to end in a real browser: a page streams a scripted Anthropic answer into its DOM.

Headless Debian Chromium (installed by `.ci/install-e2e.sh`) driven by Playwright for Python
(the `e2e` dependency group). The page is served from one loopback port and calls the stub on
another, so the browser's CORS preflight runs for real. Skipped when Chromium or Playwright is
missing, unless WIRESCRIPT_REQUIRE_E2E=1 (CI sets it), which turns the skip into a failure.
"""

from __future__ import annotations

import http.server
import importlib.util
import os
import pathlib
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from wirescript import ScriptTransport

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


def _missing() -> str | None:
    if importlib.util.find_spec("playwright") is None:
        return "Playwright for Python is not installed (the `e2e` dependency group)"
    if importlib.util.find_spec("uvicorn") is None:
        return "uvicorn is not installed (the `server` extra)"
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (run .ci/install-e2e.sh)"
    return None


if (_reason := _missing()) is not None:
    if os.environ.get("WIRESCRIPT_REQUIRE_E2E") == "1":
        raise RuntimeError(f"WIRESCRIPT_REQUIRE_E2E=1 but {_reason}")
    pytest.skip(_reason, allow_module_level=True)

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>wirescript e2e</title></head>
<body>
<p id="answer" data-state="idle"></p>
<script>
// A browser front end calling the Messages API directly, as anthropic's SDK does with
// dangerouslyAllowBrowser: fetch, then parse the server-sent events by hand.
async function ask(baseUrl, question) {
  const answer = document.getElementById("answer");
  answer.textContent = "";
  answer.dataset.state = "streaming";
  const response = await fetch(baseUrl + "/v1/messages", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": "test-key",
      "anthropic-version": "2023-06-01",
      "anthropic-dangerous-direct-browser-access": "true",
    },
    body: JSON.stringify({
      model: "claude-test", max_tokens: 256, stream: true,
      messages: [{role: "user", content: question}],
    }),
  });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\\n\\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame.split("\\n").filter(l => l.startsWith("data: ")).map(l => l.slice(6)).join("\\n");
      if (!data) continue;
      const event = JSON.parse(data);
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") {
        answer.textContent += event.delta.text;
      } else if (event.type === "message_stop") {
        answer.dataset.state = "done";
      }
    }
  }
}
</script>
</body></html>
"""


@pytest.fixture
def page_url() -> Iterator[str]:
    """The page, served by the test from its own loopback port (another origin than the stub's)."""
    body = PAGE.encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


# Among the slowest (about 3 s): it starts Chromium, the only way to prove a browser's fetch reads the
# stream event by event. One page load carries every assertion.
def test_a_page_streams_a_scripted_answer_into_the_dom_event_by_event(page_url: str) -> None:
    from playwright.sync_api import sync_playwright

    stub = ScriptTransport(
        [
            # stalls after six events: the page can only show text that was flushed event by event
            {"text": "Streaming into the page, one event at a time.", "fault": {"timeout_after": 6}},
            "Hello from a scripted model!",
        ]
    )
    with stub.serve() as base_url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS, headless=True)
        try:
            page = browser.new_page()
            page.goto(page_url)
            answer = page.locator("#answer")

            page.evaluate("([base, q]) => { ask(base, q); }", [base_url, "Stream, then stall."])
            # message_start, ping, content_block_start and three text deltas, and no more
            page.wait_for_function("document.getElementById('answer').textContent === 'Streaming into the page,'")
            assert answer.get_attribute("data-state") == "streaming"

            page.evaluate("([base, q]) => ask(base, q)", [base_url, "Say hello."])
            assert answer.text_content() == "Hello from a scripted model!"
            assert answer.get_attribute("data-state") == "done"
        finally:
            browser.close()

    first, second = stub.requests  # the two CORS preflights were answered, not recorded
    page_origin = page_url.rstrip("/")
    assert [r.headers["origin"] for r in stub.requests] == [page_origin, page_origin]
    assert [r.last_user_text for r in stub.requests] == ["Stream, then stall.", "Say hello."]
    assert (second.stream, second.model, second.api_key) == (True, "claude-test", "test-key")
    assert second.headers["anthropic-dangerous-direct-browser-access"] == "true"
    assert first.turn_index == 0
    stub.check()
