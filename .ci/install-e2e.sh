#!/bin/sh
# Install what the browser end-to-end test (tests/test_server_e2e.py) needs: Debian's Chromium.
# The test drives it through Playwright for Python (the `e2e` dependency group) with
# executable_path=/usr/bin/chromium, so no Playwright browser download is needed.
# Idempotent and quiet: prints nothing on success, the apt log on failure. Runs as root (CI does).
set -eu

[ -x /usr/bin/chromium ] && exit 0

log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "install-e2e: installing chromium failed" >&2
    exit 1
fi
[ -x /usr/bin/chromium ] || { echo "install-e2e: /usr/bin/chromium missing after install" >&2; exit 1; }
