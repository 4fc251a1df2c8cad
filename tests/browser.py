"""Headless Chromium for the site tests: Debian's ``chromium`` driven by Playwright.

Playwright's own browser download is never used (``executable_path`` points at
the system browser, which ``.ci/run`` installs).  Without a browser the tests
skip with the reason, except under CI, where a missing browser is a failure:
a green run must have looked at the pages.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"browser tests cannot run in CI: {reason}")
    pytest.skip(reason)


def chromium_path() -> str | None:
    return os.environ.get("KWDOCS_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@contextmanager
def chromium() -> Iterator[object]:
    """A Playwright Browser on the system's Chromium."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (python3 -m pip install -e '.[test]')")
    path = chromium_path()
    if not path:
        _unavailable("Chromium is not installed (apt-get install chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Watched:
    """What a page did that a reader did not ask for: dialogs, console errors, uncaught exceptions."""

    dialogs: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    def clean(self) -> bool:
        return not (self.dialogs or self.console_errors or self.page_errors)


def watch(page) -> Watched:
    watched = Watched()

    def on_dialog(dialog) -> None:
        watched.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("console", lambda message: message.type == "error" and watched.console_errors.append(message.text))
    page.on("pageerror", lambda error: watched.page_errors.append(str(error)))
    return watched
