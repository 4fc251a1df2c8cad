"""The ``kwdocs`` command line: common options, configuration, dispatch."""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

from kwdocs import __version__
from kwdocs.config import ConfigError, load_config
from kwdocs.mistakes import describe

COMMANDS = ("build", "clean", "serve", "watch", "check", "init", "find", "refs", "show", "coverage")
INTERRUPTED = 130   # the exit code of a command stopped by Ctrl-C, as shells report one
BROKEN_PIPE = 141   # the exit code of a command whose reader left (SIGPIPE), as shells report one


def parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line; ``only``: with that command's options alone (see ``main``)."""
    main = argparse.ArgumentParser(
        prog="kwdocs",
        description="Keep a browsable documentation page and keyword index for every file of a "
                    "source tree, rewriting only what changed.")
    main.add_argument("--version", action="version", version=f"kwdocs {__version__}")
    commands = main.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in (only,) if only in COMMANDS else COMMANDS:
        module = importlib.import_module(f"kwdocs.commands.{name}")
        sub = commands.add_parser(name, help=module.HELP, description=module.HELP[0].upper() + module.HELP[1:] + ".")
        common = sub.add_argument_group("tree and settings (flags win over [tool.kwdocs] in pyproject.toml)")
        common.add_argument("--src", default=".", metavar="DIR", help="the source tree (default: .)")
        common.add_argument("--out", metavar="DIR", help="the output folder (default: <src>/kwdocs-out)")
        common.add_argument("--config", metavar="FILE",
                            help="a TOML file with the settings (default: <src>/pyproject.toml)")
        common.add_argument("--project-name", metavar="NAME", help="the name pages give the project")
        common.add_argument("--include", action="append", metavar="GLOB", help="document only matching files")
        common.add_argument("--exclude", action="append", metavar="GLOB", help="skip matching files")
        common.add_argument("--max-source-bytes", type=int, metavar="N",
                            help="largest source embedded in a page (default: 262144)")
        common.add_argument("--templates", metavar="DIR", help="templates overriding the shipped ones by name")
        common.add_argument("-j", "--jobs", type=int, metavar="N", help="parallel jobs (default: one per core)")
        module.add_arguments(sub)
        sub.set_defaults(module=module)
    return main


def overrides(args: argparse.Namespace) -> dict:
    """Flags as configuration keys; paths typed on the command line are relative to the shell."""
    absolute = lambda path: str(Path(path).resolve()) if path else None  # noqa: E731
    return {"output": absolute(args.out), "project_name": args.project_name, "include": args.include,
            "exclude": args.exclude, "max_source_bytes": args.max_source_bytes,
            "templates": absolute(args.templates), "jobs": args.jobs,
            "html": True if getattr(args, "html", False) else None,
            "formats": getattr(args, "format", None),
            "cache": getattr(args, "cache", None), "cache_mode": getattr(args, "cache_mode", None),
            "cache_key_file": absolute(getattr(args, "cache_key_file", None)),
            "scheduler": getattr(args, "scheduler", None)}


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    # only the named command's module and options: making all of them was half of what a
    # query of the symbol index (kwdocs find) spent before its lookup; help and errors get all
    command = next((word for word in words if not word.startswith("-")), None)
    args = parser(command).parse_args(argv)
    try:
        config = load_config(args.src, args.config, overrides(args))
        return args.module.run(config, args)
    except ConfigError as error:
        for problem in error.problems:
            print(f"kwdocs: {problem}", file=sys.stderr)
        return 2
    except Exception as error:     # the user's set-up (see kwdocs.mistakes) is one line; a bug, a traceback
        line = describe(error)
        if line is None:
            raise
        print(line, file=sys.stderr)
        return 2
    except KeyboardInterrupt:   # Ctrl-C: pages are whole (atomic writes); the next build goes on
        # to the process's own stderr: a Ctrl-C can land while doit holds sys.stderr swapped for
        # its capture of a task's output (it swaps it just before an action's try block)
        print("kwdocs: interrupted", file=sys.__stderr__ or sys.stderr)
        return INTERRUPTED


def entry() -> None:
    """The ``kwdocs`` command and ``python -m kwdocs``: ``main``, then exit.

    After Ctrl-C the process ends at once, without Python's exit handlers: multiprocessing's
    join the feeder threads of doit's worker queues, and after an interrupt one of them may
    never be told to stop (seen in CI: a parallel build still waiting three minutes after
    "kwdocs: interrupted").  Nothing is left to do by then: pages are written atomically,
    the workers are stopped and the lock is released.
    """
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader of the output left (``kwdocs find 'x*' | head``): end quietly, as grep does,
        # with stdout on /dev/null so that Python's own flush at exit finds no pipe either
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        os._exit(BROKEN_PIPE)
    if code == INTERRUPTED:
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            if stream is not None:
                stream.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    entry()
