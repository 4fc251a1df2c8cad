"""``kwdocs clean``: remove what kwdocs wrote, and nothing else."""
from __future__ import annotations

import argparse
import shutil

from kwdocs.store import writer as output
from kwdocs.config import Config
from kwdocs.store.lock import locked

HELP = "remove the pages and state kwdocs wrote (files it did not write stay)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def run(config: Config, args: argparse.Namespace) -> int:
    from kwdocs.engine import steps as build  # heavy: only when cleaning, not for `kwdocs --help`
    from kwdocs.site import html
    if not config.state.is_dir():
        print(f"kwdocs: nothing to clean in {config.out}")
        return 0
    with locked(config.state):
        pages = build.written_pages(config)
        removed = sum(output.remove(config.out, config.out / page) for page in sorted(pages))
        removed += html.remove_site(config)
    shutil.rmtree(config.state, ignore_errors=True)
    try:
        config.out.rmdir()  # only if nothing else is left in it
    except OSError:
        pass
    print(f"kwdocs: removed {removed:,} pages and the state folder")
    return 0
