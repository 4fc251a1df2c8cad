"""``kwdocs check``: are the committed pages what kwdocs would write now?  Writes nothing."""
from __future__ import annotations

import argparse
import sys

from kwdocs.commands import add_cache_arguments, add_format_arguments
from kwdocs.commands.coverage import measure
from kwdocs.config import Config
from kwdocs.pages.coverage import percent

HELP = "list pages that are stale, missing or orphaned, writing nothing; exit 1 if there is any"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_format_arguments(parser)
    parser.add_argument("--fix", action="store_true",
                        help="bring the pages up to date instead, and still exit 1 if any had to be written "
                             "or removed (the pre-commit hook)")
    parser.add_argument("--min-coverage", type=_percent, metavar="N",
                        help="also exit 1 if a file documents fewer than N%% of its public definitions, "
                             "naming the undocumented ones (see kwdocs coverage)")
    add_cache_arguments(parser)


def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage from 0 to 100")
    return value


def below(config: Config, minimum: float, stream) -> int:
    """Name the undocumented public definitions of each file documenting less than ``minimum``
    percent of them, one per line; 1 if there was any, else 0."""
    failing = [(path, counts) for path, counts in measure(config)
               if percent(counts["documented"], counts["public"]) < minimum]
    for path, counts in failing:
        for line, name in counts["undocumented"]:
            stream.write(f"undocumented: {path}:{line} {name}\n")
    if failing:
        many = len(failing) != 1
        stream.write(f"kwdocs check: {len(failing):,} file{'s' if many else ''} document{'' if many else 's'} "
                     f"fewer than {minimum:g}% of {'their' if many else 'its'} public definitions\n")
    return 1 if failing else 0


def run(config: Config, args: argparse.Namespace) -> int:
    # on use: `kwdocs --help` imports every command module, and this loads the build's engine
    from kwdocs.engine.verify import run_check

    code = run_check(config, fix=args.fix, jobs=args.jobs)
    if args.min_coverage is None:
        return code
    sys.stdout.flush()
    return max(code, below(config, args.min_coverage, sys.stdout))
