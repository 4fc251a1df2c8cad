"""The keyword step redone from scratch on a built output, in a process of its own (issue 33).

    python3 bench/keyword_step.py SOURCE_TREE OUTPUT [--trace] [--frames]

The step's meta is removed (so it reads every unit's entries again and writes every letter's
table and page, as a cold build does) and ``index_keywords`` is called once.  Printed: the
process's CPU seconds in the step, its maximum RSS (``ru_maxrss``) before and after, and with
``--trace`` tracemalloc's peak, with ``--frames`` the frames holding most at the write (of a
table, page or rows) when the most was traced (slow: a snapshot each time).
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from pathlib import Path

from kwdocs.config import load_config
from kwdocs.engine.steps import keywords as keywords_step
from kwdocs.store import writer as output
from kwdocs.store.state import KEYWORDS_META

_fullest: list = [0, None]     # the most traced at a write, and a snapshot of it


def _snapshot_at_writes() -> None:
    """A snapshot whenever a table or page is written with more traced than ever before: each
    write happens with a letter's table or page (and what made it) still held."""
    write = output.write_if_changed

    def noted(*args: object) -> bool:
        current = tracemalloc.get_traced_memory()[0]
        if current > _fullest[0]:
            _fullest[:] = [current, tracemalloc.take_snapshot()]
        return write(*args)  # type: ignore[arg-type]

    output.write_if_changed = noted  # type: ignore[assignment]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--trace", action="store_true", help="tracemalloc's peak")
    parser.add_argument("--frames", action="store_true", help="and the frames holding most at the fullest write")
    args = parser.parse_args()
    config = load_config(args.src, overrides={"output": str(args.out)})
    meta_path = config.state / KEYWORDS_META
    units = sorted(output.read_json(meta_path, {}).get("units", {}))
    if not units:
        print(f"{meta_path}: no units (build the tree first)", file=sys.stderr)
        return 2
    meta_path.unlink()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if args.trace or args.frames:
        tracemalloc.start(8 if args.frames else 1)
    if args.frames:
        _snapshot_at_writes()
    started = time.process_time()
    keywords_step.index_keywords(config, units, [])
    cpu = time.process_time() - started
    print(f"units {len(units)}  cpu {cpu:.2f} s  maxrss before {before / 1024:.0f} MB"
          f"  after {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    if args.trace and not args.frames:
        print(f"tracemalloc peak {tracemalloc.get_traced_memory()[1] / 1e6:.1f} MB")
    if args.frames:
        print(f"tracemalloc peak {tracemalloc.get_traced_memory()[1] / 1e6:.1f} MB;"
              f" at the fullest write {_fullest[0] / 1e6:.1f} MB, held by:")
        for stat in _fullest[1].statistics("traceback")[:8] if _fullest[1] else []:
            print(f"  {stat.size / 1e6:7.1f} MB {stat.count:8d} blocks")
            for line in stat.traceback.format()[-6:]:
                print(f"      {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
