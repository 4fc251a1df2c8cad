"""Where an ``--html`` cold build's extra CPU goes: a one-process (``-j 1``) build with timers
around the site's parts, beside the Markdown parts they add to.

    python3 bench/html_parts.py SOURCE_TREE [--out DIR] [--markdown-only]

The build runs in this process, the functions below wrapped in timers of the process's CPU
seconds (``time.process_time``), each inclusive: a part called inside another (highlighting,
inside the site's page rendering) is counted in both, and shown indented.  ``--markdown-only``
builds without the site, for the same table's Markdown rows and total.
"""
from __future__ import annotations

import argparse
import functools
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

# (label, module, owner or "", function, which calls count): the site's parts, then the Markdown ones
PARTS: tuple[tuple[str, str, str, str, Callable[[tuple], bool] | None], ...] = (
    ("site pages rendered", "kwdocs.site.format", "HtmlPages", "render", None),
    ("  sources highlighted", "kwdocs.site.html", "", "highlighted", None),
    ("  page layout", "kwdocs.site.html", "", "_page", None),
    ("  definitions", "kwdocs.site.html", "", "_definitions", None),
    ("  keyword items", "kwdocs.site.html", "", "_keyword_items", None),
    ("site index rows", "kwdocs.site.format", "HtmlPages", "rows", None),
    ("highlight tokens kept (extraction)", "kwdocs.site.tokens", "Recorder", "record", None),
    ("search step", "kwdocs.site.search", "", "write_search", None),
    ("site step", "kwdocs.site.html", "", "build_site", None),
    ("site pages written", "kwdocs.engine.steps.render", "", "_write_page", lambda args: args[1].startswith("site/")),
    ("site index pages written", "kwdocs.engine.steps.assemble", "", "_write_page",
     lambda args: args[1].startswith("site/")),
    ("Markdown pages rendered", "kwdocs.pages.markdown", "MarkdownFormat", "render", None),
    ("Markdown pages written", "kwdocs.engine.steps.render", "", "_write_page",
     lambda args: not args[1].startswith("site/")),
)


def wrap(seconds: dict[str, float], label: str, module: str, owner: str, name: str,
         counts: Callable[[tuple], bool] | None) -> None:
    """Replace ``module.owner.name`` with a timer adding to ``seconds[label]`` (only calls that
    ``counts``, when given)."""
    host: Any = sys.modules.get(module) or __import__(module, fromlist=["_"])
    if owner:
        host = getattr(host, owner)
    function = getattr(host, name)

    @functools.wraps(function)     # doit reads a task action's parameters through __wrapped__
    def timed(*args: Any, **kwargs: Any) -> Any:
        if counts is not None and not counts(tuple(str(arg) for arg in args[:2])):
            return function(*args, **kwargs)
        started = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            seconds[label] = seconds.get(label, 0.0) + time.process_time() - started
    setattr(host, name, timed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree")
    parser.add_argument("--out", help="the output folder (default: a new temporary one)")
    parser.add_argument("--markdown-only", action="store_true", help="build without --html")
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="kwdocs-html-parts-")
    seconds: dict[str, float] = {}
    for label, module, owner, name, counts in PARTS:
        wrap(seconds, label, module, owner, name, counts)
    from kwdocs.cli import main as kwdocs_main
    command = ["build", "--src", args.tree, "--out", out, "-j", "1", "-q"] + ([] if args.markdown_only else ["--html"])
    started = time.process_time()
    try:
        kwdocs_main(command)
    except SystemExit:
        pass
    total = time.process_time() - started
    print(f"{'part':40} CPU s")
    for label, *_ in PARTS:
        if label in seconds:
            print(f"{label:40} {seconds[label]:6.2f}")
    print(f"{'the whole build':40} {total:6.2f}")


if __name__ == "__main__":
    main()
