"""``kwdocs check``: are the committed pages what kwdocs would write now?  Writes nothing."""
from __future__ import annotations

import argparse

from kwdocs.commands import add_cache_arguments
from kwdocs.config import Config

HELP = "list pages that are stale, missing or orphaned, writing nothing; exit 1 if there is any"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--fix", action="store_true",
                        help="bring the pages up to date instead, and still exit 1 if any had to be written "
                             "or removed (the pre-commit hook)")
    add_cache_arguments(parser)


def run(config: Config, args: argparse.Namespace) -> int:
    from kwdocs.engine.verify import run_check

    return run_check(config, fix=args.fix, jobs=args.jobs)
