"""Headless Chromium for report and app tests (Debian's chromium driven by Playwright).

Chromium is installed by the README's test command (``apt-get install chromium``); Playwright
never downloads a browser here: it is pointed at the system binary.
"""

from __future__ import annotations

import shutil
from contextlib import contextmanager

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic"]


def chromium_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        raise RuntimeError("Debian's chromium is required for the browser tests: "
                           "apt-get install -y chromium")
    return path


@contextmanager
def browser_page(extra_args: tuple[str, ...] = (), width: int = 1280):
    """A page plus the list that collects its console errors and page errors; ``extra_args``
    go to Chromium (``--host-resolver-rules=...`` for a DNS-rebinding test)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(),
                                    args=[*CHROMIUM_ARGS, *extra_args], headless=True)
        page = browser.new_page(viewport={"width": width, "height": 900})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            yield page, errors
        finally:
            browser.close()
