"""``kwdocs build``: bring the pages of a tree up to date."""
from __future__ import annotations

import argparse

from kwdocs.commands import add_cache_arguments, add_format_arguments
from kwdocs.config import Config

HELP = "write or update the documentation and keyword pages of a source tree"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_format_arguments(parser)
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the summary line")
    parser.add_argument("--html", action="store_true",
                        help="also write the browsable HTML site to <out>/site (config key: html)")
    add_cache_arguments(parser)
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="extract and render on a Dask cluster: a scheduler's tcp://HOST:PORT, or 'local' "
                             "for a cluster of -j worker processes on this machine; this process still writes "
                             "every page, and workers are sent the files (pip install 'kwdocs[dask]'; "
                             "config key: scheduler)")


def run(config: Config, args: argparse.Namespace) -> int:
    # here, not at the top: every command's start imports this module, and the build's engine
    # was 45 ms of the 50 a query of the symbol index may take (python -X importtime)
    from kwdocs.engine.incremental import check_first_build, run_build
    from kwdocs.store.lock import locked

    scanned = check_first_build(config)
    with locked(config.state):
        code = run_build(config, jobs=args.jobs, quiet=args.quiet, scanned=scanned)
    return 0 if code == 0 else 1
