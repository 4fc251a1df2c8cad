"""A cold build's CPU seconds per stage, in one process (``-j 1``), with each stage's files/s and MB/s.

    python3 bench/stages.py SOURCE_TREE [--out DIR] [--html] [--json] [--no-ctags]

The build runs in this process with its steps wrapped in timers (CPU seconds of the process,
``time.process_time``, which a machine loaded by others changes less than wall time): the scan,
extraction (reading, parsing, facts), linking, rendering (the file pages' text), writing (the
file pages put on disk), the keyword index, assembling (folder pages and keyword pages) and the
snapshot that vouches for the state.  "other" is the rest of the build: doit's task bookkeeping,
imports.  The symbol index of ``kwdocs find`` is made by the first query, not the build: its
CPU seconds are timed after the build, as that query, and printed below the build's.
``bench/run.py`` prints this table beside ``ctags -R`` on the same tree.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# (stage, module, function): the functions each stage's time is spent in, outermost first; a
# stage called inside another (writing, inside rendering) is taken out of the outer one
STAGES = (
    ("scan", "kwdocs.engine.incremental", "scan"),
    ("parse/extract", "kwdocs.engine.steps.extract", "extract_unit"),
    ("analyse/link", "kwdocs.engine.steps.link", "link_tree"),
    ("render", "kwdocs.engine.steps.render", "render_unit"),
    ("write", "kwdocs.engine.steps.render", "_write_page"),
    ("keyword index", "kwdocs.engine.steps.keywords", "index_keywords"),
    ("assemble", "kwdocs.engine.steps.assemble", "assemble"),
    ("snapshot", "kwdocs.engine.incremental", "vouch"),
    ("site search", "kwdocs.site.search", "write_search"),
    ("site", "kwdocs.site.html", "build_site"),
)


class Timers:
    """CPU seconds per stage, an inner stage's time taken out of the stage it runs in."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.stack: list[str] = []
        self.results: dict[str, Any] = {}

    def wrap(self, stage: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)     # doit reads a task action's parameters through __wrapped__
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.process_time()
            self.stack.append(stage)
            try:
                self.results[stage] = function(*args, **kwargs)
                return self.results[stage]
            finally:
                self.stack.pop()
                spent = time.process_time() - started
                self.seconds[stage] = self.seconds.get(stage, 0.0) + spent
                if self.stack:
                    outer = self.stack[-1]
                    self.seconds[outer] = self.seconds.get(outer, 0.0) - spent
        return timed


def measure(src: Path, out: Path, html: bool = False) -> dict[str, Any]:
    """Build ``src`` into the empty ``out`` in this process; the stages' CPU seconds and the tree's size."""
    import importlib

    from kwdocs import cli

    timers = Timers()
    for stage, module_name, name in STAGES:
        module = importlib.import_module(module_name)
        if hasattr(module, name):
            setattr(module, name, timers.wrap(stage, getattr(module, name)))
    started = time.process_time(), time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["build", "--src", str(src), "--out", str(out), "-q", "-j", "1", *(["--html"] if html else [])])
    cpu, wall = time.process_time() - started[0], time.perf_counter() - started[1]
    if code:
        raise SystemExit(f"stages: the build of {src} failed (exit {code})")
    scanned = timers.results["scan"]     # the files and bytes the build documented
    files, size = len(scanned.files), sum(source.size for source in scanned.files)
    stages = {stage: timers.seconds.get(stage, 0.0) for stage, _, _ in STAGES if stage in timers.seconds}
    stages["other"] = cpu - sum(stages.values())
    started_query = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):     # a name found nowhere: exit 1, the index made
        cli.main(["find", "no_such_name_anywhere", "--src", str(src), "--out", str(out)])
    first_query = time.process_time() - started_query
    return {"files": files, "bytes": size, "cpu": cpu, "wall": wall, "stages": stages, "first_query": first_query}


def ctags_seconds(src: Path) -> float | None:
    """CPU seconds of ``ctags -R`` (Universal Ctags) over the tree, its tags file thrown away;
    None without ctags on PATH."""
    import resource
    import shutil
    import subprocess

    if shutil.which("ctags") is None:
        return None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory(prefix="kwdocs-ctags-") as scratch:
        subprocess.run(["ctags", "-R", "-f", os.path.join(scratch, "tags"), "."], cwd=src, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def table(result: dict[str, Any], ctags_cpu: float | None = None) -> list[str]:
    """Markdown rows: each stage's CPU seconds, share, files/s and MB/s (of the whole tree's files
    and bytes per CPU second), then the build's, and ``ctags -R``'s when measured."""
    files, mb = result["files"], result["bytes"] / 1e6

    def row(name: str, seconds: float) -> str:
        rate = (f"{files / seconds:,.0f} | {mb / seconds:,.1f}" if seconds > 0.005 else "- | -")
        share = f"{100 * seconds / result['cpu']:.0f}%"
        return f"| {name} | {seconds:.2f} | {share} | {rate} |"

    lines = ["| stage | CPU s | share | files/s | MB/s |", "| --- | ---: | ---: | ---: | ---: |"]
    lines += [row(stage, seconds) for stage, seconds in result["stages"].items()]
    lines.append(row("**cold build, one process**", result["cpu"]))
    if ctags_cpu is not None:
        lines.append(row("`ctags -R` (same tree, same run)", ctags_cpu))
        lines.append(f"| cold build / ctags | {result['cpu'] / ctags_cpu:.1f}x | | | |")
    if result.get("first_query") is not None:
        lines.append(row("symbol index, made by the first `kwdocs find` (not the build)", result["first_query"]))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("src", type=Path, help="the source tree (read only)")
    parser.add_argument("--out", type=Path, help="an empty or missing output folder (default: a temporary one)")
    parser.add_argument("--html", action="store_true", help="also the HTML site")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--no-ctags", action="store_true", help="leave out ctags -R's row")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kwdocs-stages-") as scratch:
        out = args.out or Path(scratch) / "out"
        if out.exists() and any(out.iterdir()):
            parser.error(f"{out} is not empty: a cold build needs an empty output folder")
        result = measure(args.src.resolve(), out.resolve(), args.html)
    result["ctags_cpu"] = None if args.no_ctags else ctags_seconds(args.src.resolve())
    print(json.dumps(result, indent=1) if args.json else "\n".join(table(result, result["ctags_cpu"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
