"""``kwdocs clean``: remove what kwdocs wrote, and nothing else."""
from __future__ import annotations

import argparse
import shutil

from kwdocs.config import Config

HELP = "remove the pages and state kwdocs wrote (files it did not write stay)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def run(config: Config, args: argparse.Namespace) -> int:
    # here, not at the top: every command's start imports this module (see kwdocs.commands.build)
    from kwdocs.store import journal as ledger, owned, writer as output
    from kwdocs.store.lock import locked

    if not config.out.is_dir():
        print(f"kwdocs: nothing to clean in {config.out}")
        return 0
    had_state = config.state.is_dir()
    with locked(config.state):
        # by the journal, else by their looks: pages of a build whose state was lost go too
        pages = owned.own_files(config, ledger.load(config))
        removed = sum(output.remove(config.out, config.out / page) for page in sorted(pages))
    shutil.rmtree(config.state, ignore_errors=True)
    if not (removed or had_state):
        print(f"kwdocs: nothing to clean in {config.out}")
        return 0
    try:
        config.out.rmdir()  # only if nothing else is left in it
    except OSError:
        pass
    print(f"kwdocs: removed {removed:,} pages and the state folder")
    return 0
