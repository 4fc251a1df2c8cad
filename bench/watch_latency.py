"""How long after a save ``kwdocs watch`` has rewritten that file's pages.

    python3 bench/watch_latency.py [--corpus DIR] [--saves 50] [--kwdocs CMD] [--keep]

Without ``--corpus`` the tree is laid out with ``../shared/bench/make-corpus.sh``
(``--make-corpus PATH`` for another); with it, the folder is copied.  Either way
the work happens in a temporary folder (removed unless ``--keep``), pages go to
``<work>/out``, and the corpus given is never touched.

``kwdocs watch`` is started on the copy and left to finish its first build.
Then, one at a time, ``--saves`` different files (half ``.py``, half ``.h``,
spread over the tree, fixed seed) are saved in place with an edit that adds a
keyword: a new function for Python, a ``#define`` and a declaration for a
header.  The latency of a save runs from the moment the file is closed to the
moment both of its pages (``_docs.md`` and ``_kw.md``) have been replaced and
name the new keyword, seen by polling their ``stat`` every millisecond.  The
next save waits for watch's status line of the previous one, so saves do not
overlap.  Prints every save, then the median and the 95th percentile.
"""
from __future__ import annotations

import argparse
import math
import os
import queue
import random
import re
import shlex
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import MAKE_CORPUS, add_keyword, lay_out, working_folder  # noqa: E402  (this folder's benchmark)

TARGET_P95_MS = 300.0
POLL_SECONDS = 0.001


def pick_files(tree: Path, count: int, seed: int) -> list[Path]:
    """Half .py, half .h text files, from as many different folders as possible."""
    by_suffix: dict[str, list[Path]] = {".py": [], ".h": []}
    for folder, _, names in os.walk(tree):
        for name in names:
            path = Path(folder, name)
            if path.suffix in by_suffix and 0 < path.stat().st_size < 200_000 and b"\0" not in path.read_bytes()[:8000]:
                by_suffix[path.suffix].append(path)
    rng = random.Random(seed)
    picked: list[Path] = []
    for suffix, share in ((".py", count - count // 2), (".h", count // 2)):
        candidates = sorted(by_suffix[suffix])
        rng.shuffle(candidates)
        seen_folders: set[Path] = set()
        chosen = [path for path in candidates if path.parent not in seen_folders and not seen_folders.add(path.parent)]
        chosen += [path for path in candidates if path not in chosen]
        picked += chosen[:share]
    rng.shuffle(picked)
    return picked


def stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    return info.st_ino, info.st_mtime_ns


class Watch:
    """``kwdocs watch`` as a subprocess, its stdout lines in a queue."""

    def __init__(self, command: list[str]):
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        stdin=subprocess.DEVNULL)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(line) for line in self.process.stdout], daemon=True).start()

    def wait_for(self, pattern: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or self.process.poll() is not None and self.lines.empty():
                raise SystemExit(f"watch_latency: no line matching {pattern!r} within {timeout:.0f} s")
            try:
                line = self.lines.get(timeout=min(left, 1.0))
            except queue.Empty:
                continue
            if re.search(pattern, line):
                return line

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(len(ordered) * share) - 1)] if ordered else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="a laid-out tree to copy (default: lay one out)")
    parser.add_argument("--make-corpus", type=Path, default=MAKE_CORPUS, help="the corpus script")
    parser.add_argument("--small", action="store_true", help="make-corpus.sh --small (500 files)")
    parser.add_argument("--saves", type=int, default=50, help="files saved, one after another (default: 50)")
    parser.add_argument("--seed", type=int, default=4, help="which files (default: 4)")
    parser.add_argument("--kwdocs", default=f"{shlex.quote(sys.executable)} -m kwdocs", help="the kwdocs command")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds for the first build")
    parser.add_argument("--keep", action="store_true", help="keep the working folder")
    args = parser.parse_args()

    watch = None
    with working_folder("kwdocs-watch-latency-", args.keep, say="watch_latency") as work:
        try:
            tree = work / "tree"
            lay_out(args, tree)
            out = work / "out"
            files = pick_files(tree, args.saves, args.seed)
            print(f"watch_latency: {sum(1 for _ in tree.rglob('*')):,} entries in {tree}; "
                  f"load {os.getloadavg()[0]:.2f}", file=sys.stderr)
            started = time.monotonic()
            watch = Watch(shlex.split(args.kwdocs) + ["watch", "--src", str(tree), "--out", str(out), "-q"])
            watch.wait_for(r"kwdocs: watching ", args.timeout)
            print(f"watch_latency: first build {time.monotonic() - started:.1f} s", file=sys.stderr)
            time.sleep(1.0)
            latencies: list[float] = []
            for number, path in enumerate(files, 1):
                rel = path.relative_to(tree).as_posix()
                pages = [out / f"{rel}_docs.md", out / f"{rel}_kw.md"]
                before = [stamp(page) for page in pages]
                keyword = add_keyword(path, "bench", number)
                saved = time.monotonic()
                while any(stamp(page) == old for page, old in zip(pages, before)):
                    if time.monotonic() - saved > 60:
                        raise SystemExit(f"watch_latency: the pages of {rel} were not rewritten within 60 s")
                    time.sleep(POLL_SECONDS)
                latency = (time.monotonic() - saved) * 1000
                if not all(keyword in page.read_text(encoding="utf-8") for page in pages):
                    raise SystemExit(f"watch_latency: the pages of {rel} were rewritten without {keyword}")
                status = watch.wait_for(re.escape(rel), 60).strip()
                latencies.append(latency)
                print(f"{number:3d} {latency:7.1f} ms  {status}")
                time.sleep(0.3)
            median, p95 = statistics.median(latencies), percentile(latencies, 0.95)
            print(f"watch_latency: {len(latencies)} saves on {tree.name}: median {median:.0f} ms, "
                  f"95th percentile {p95:.0f} ms (target < {TARGET_P95_MS:.0f} ms); load {os.getloadavg()[0]:.2f}")
            return 0 if p95 < TARGET_P95_MS else 1
        finally:
            if watch is not None:
                watch.stop()


if __name__ == "__main__":
    sys.exit(main())
