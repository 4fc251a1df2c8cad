"""``kwdocs watch``: build, then rebuild the pages of every file as it is saved."""
from __future__ import annotations

import argparse
import signal

from kwdocs.commands import add_format_arguments, overrides
from kwdocs.config import Config, load_config

HELP = "build, then keep the pages current while files are edited (Ctrl-C to stop)"
STOP_SECONDS = 0.8      # after Ctrl-C or SIGTERM, winding down may take this long, then the process ends


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_format_arguments(parser)
    parser.add_argument("-q", "--quiet", action="store_true", help="print only summary and status lines")
    parser.add_argument("--html", action="store_true",
                        help="also keep the browsable HTML site in <out>/site current (config key: html)")
    parser.add_argument("--poll", action="store_true",
                        help="poll the tree instead of using inotify (network and container mounts, "
                             "or more folders than inotify watches)")


def _interrupt(signum, frame) -> None:
    """Stop as cleanly as the time allows, then for sure: a parallel first build can take seconds
    to wind its workers down.  The alarm's default action ends the process even while Python
    finalizes; pages are replaced whole and the kernel releases the lock (and kills the workers,
    see ``kwdocs.engine.workers``), so that loses nothing but temporary files, which the next kwdocs
    process sweeps away."""
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_REAL, STOP_SECONDS)
    raise KeyboardInterrupt


def run(config: Config, args: argparse.Namespace) -> int:
    # on use: `kwdocs --help` imports every command module, and watching loads the engine
    from kwdocs.engine.on_save import watch

    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)
    return watch(config, jobs=args.jobs, poll=args.poll, quiet=args.quiet,
                 reload=lambda: load_config(args.src, args.config, overrides(args)))
