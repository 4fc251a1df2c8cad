"""Time kwdocs on a real tree against the performance targets of issue 5.

    python3 bench/run.py [--corpus DIR | --small] [--kwdocs CMD] [--runs 3] [--large]
                         [--only SCENARIO,...] [--markdown] [--keep] [--freeze]

Without ``--corpus`` the tree is laid out with ``../shared/bench/make-corpus.sh``
(from the repository root; ``--make-corpus PATH`` to use another); with it, the
given folder is copied.  Either way everything happens in a temporary working
folder (removed at the end unless ``--keep``): the given corpus is never touched,
and the output folder is ``<work>/out``, outside the source tree.

Every kwdocs run is a subprocess under GNU ``/usr/bin/time -v``: wall seconds,
CPU seconds (user + system, which include the worker processes doit forks, as
they are waited for) and the maximum resident set size, which is that of the
largest single process, not of the workers together.  Cold builds therefore
also sample the summed PSS of the whole process tree (given in the notes), the
memory the build really holds at once.  The notes also say what each build
changed under the output folder, so a no-op build that rewrites pages shows.
Before each run the earlier runs' writes are flushed (``sync``, untimed), so
that one scenario's write-back does not land in the next one's time.

Scenarios (names for ``--only``): cold, cold-after-delete (one cold build
started as soon as the last output is deleted), noop (with the floor it is
compared with: a Python walk + ``os.stat`` of every source file, run
interleaved with it), floor, noop-gitignore (no-op builds with a 300-pattern
``.gitignore`` at the root that matches nothing in the corpus), edit-py, edit-header, edit-100, check,
html-cold (Markdown-only and ``--html`` cold builds alternating, into outputs of their own: the
site's cost as a ratio measured in one run, and its size beside the Markdown pages'), html-edit
(one ``.py`` edited, then an ``--html`` build), and with ``--large`` (or
named in ``--only``) large-cold and large-noop, on the corpus hard-linked 8
times under ``copy1/`` ... ``copy8/``.  Edits append a new function (``.py``)
or a ``#define`` and a declaration (``.h``) to a file not edited before, so
every edit changes keywords; they accumulate and are never undone.  Each
scenario reports the median of ``--runs`` runs (the large cold build runs once).
Earlier outputs are moved aside, not deleted, until the end (see ``Bench.set_aside``).

kwdocs rebuilds everything when its own code changes, and others edit it while
the benchmark runs: runs after such an edit are flagged in the notes, and
``--freeze`` measures a copy of the code taken at the start instead, compiled
once as an installed package is.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MAKE_CORPUS = REPO.parent / "shared" / "bench" / "make-corpus.sh"
GNU_TIME = "/usr/bin/time"
SCENARIOS = ("cold", "stages", "cold-after-delete", "floor", "noop", "noop-gitignore", "edit-py", "edit-header",
             "edit-import", "edit-100", "check", "html-cold", "html-edit", "large-cold", "large-noop")
LARGE = ("large-cold", "large-noop")
# issue 33's targets on the 8-copy tree: the largest process, the summed PSS, cold wall against the 12k cold
LARGE_PEAK_MB, LARGE_TREE_MB, LARGE_WALL_RATIO = 400, 1024, 8
HTML = ("html-cold", "html-edit")
HTML_RATIO = 1.5    # the site's cold build / the Markdown cold build, both measured in one run
SITE_SIZE = 2.0     # the site's size / the Markdown pages' size
LARGE_COPIES = 8
STATE = ".kwdocs"  # kwdocs' state folder inside the output folder
IMPORT_FILE = "torch/nn/modules/linear.py"   # edit-import's file (else the first .py file of the tree)
IMPORT_RATIO = 1.3  # an import line added / a function appended to the same file, CPU (issue 30)
BOTH_CORES = 1.5  # CPU s / wall s at or above which a cold build counts as using both cores

FLOOR_CODE = """\
import os, sys
count = 0
for root, _, files in os.walk(sys.argv[1]):
    for name in files:
        os.stat(os.path.join(root, name))
        count += 1
print(count)
"""


def big_gitignore(names: int = 100) -> str:
    """A ``.gitignore`` of 3 × ``names`` patterns in the forms real ones use (a repository's
    build folders, file kinds, generated files under a path, exceptions), none of which matches
    a file of the corpus: the corpus (a wheel) has none, and a checkout of PyTorch has one of
    350 lines, which every file and folder of the tree is checked against."""
    lines = ["# written by bench/run.py (scenario noop-gitignore): matches nothing in the corpus"]
    for number in range(names):
        lines += [f"/kwdocs-bench-build{number}/", f"*.kwdocs-bench-{number}", f"tools/**/kwdocs_generated_{number}.h"]
        if number % 10 == 0:
            lines.append(f"!kwdocs-bench-keep{number}.kwdocs-bench-{number}")
    return "\n".join(lines) + "\n"


# The kernel's share of a cold build: the same files (folders, names' count, sizes) created as
# kwdocs creates them (a temporary opened exclusively, written, renamed), into a scratch folder.
# On this machine's disk the cost of creating a file moved between 0.03 and 0.8 ms within an
# hour, so a cold build is read against this, measured next to it.
CREATE_FLOOR_CODE = """\
import json, os, sys
manifest, scratch = sys.argv[1], sys.argv[2]
made = set()
count = 0
with open(manifest, encoding="utf-8") as lines:
    for line in lines:
        folder, size = json.loads(line)
        target = os.path.join(scratch, folder)
        if target not in made:
            os.makedirs(target, exist_ok=True)
            made.add(target)
        tmp = os.path.join(target, f".floor-{count}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, b"x" * size)
        os.close(fd)
        os.rename(tmp, os.path.join(target, f"f{count}"))
        count += 1
print(count)
"""


def write_manifest(out: Path, manifest: Path) -> int:
    """Each file under ``out`` as a JSON line, its folder (relative) and size, for CREATE_FLOOR_CODE;
    how many."""
    lines = []
    for root, dirs, files in os.walk(out):
        dirs.sort()
        folder = os.path.relpath(root, out)
        lines += [json.dumps([folder, os.lstat(os.path.join(root, name)).st_size]) + "\n"
                  for name in sorted(files)]
    manifest.write_text("".join(lines), encoding="utf-8")
    return len(lines)


def add_keyword(path: Path, tag: str, serial: int) -> str:
    """The benchmarks' edit: append a new function (``.py``), or a macro and a declaration;
    return the new keyword (the function, or the macro)."""
    if path.suffix == ".py":
        keyword = f"kwdocs_{tag}_{serial}"
        addition = f"\n\ndef {keyword}():\n    \"\"\"Added by a kwdocs benchmark.\"\"\"\n    return {serial}\n"
    else:
        keyword = f"KWDOCS_{tag.upper()}_{serial}"
        addition = f"\n#define {keyword} 1\nint kwdocs_{tag}_{serial}(void);\n"
    with open(path, "a", encoding="utf-8") as stream:
        stream.write(addition)
    return keyword


def add_import(path: Path, serial: int) -> None:
    """edit-import's edit: ``import keyword as kwdocs_bench_import_N`` as the file's fourth line,
    which moves every line below it (every definition and every other import)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    lines.insert(3, f"import keyword as kwdocs_bench_import_{serial}")
    path.write_text("\n".join(lines), encoding="utf-8")


# ---------------------------------------------------------------- measuring

@dataclass
class Measurement:
    """One subprocess run as /usr/bin/time -v saw it."""
    wall: float
    user: float
    system: float
    max_rss_kb: int
    returncode: int
    stdout: str
    stderr: str
    tree_pss_kb: int | None = None  # sampled peak of the tree's summed PSS (cold builds only)
    process_rss_kb: list[int] | None = None  # sampled peak RSS of each process of the tree, the build's first
    # files under the output folder added, removed or rewritten, relative to it
    out_changed: list[str] | None = None
    code_changed: bool = False  # kwdocs' source changed since the previous build, or during this one

    @property
    def pages_changed(self) -> int:
        """Changed files outside kwdocs' state folder: what a reader of the pages would see."""
        return sum(1 for path in self.out_changed or [] if not path.startswith(STATE + "/"))

    @property
    def cpu(self) -> float:
        return self.user + self.system

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def stderr_tail(self, lines: int = 4) -> str:
        """The last lines of stderr (of stdout when stderr is empty): what a failure said."""
        for text in (self.stderr, self.stdout):
            tail = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
            if tail:
                return " / ".join(tail)
        return f"(no output; exit {self.returncode})"


def parse_time_v(text: str) -> dict[str, float]:
    """The four figures the benchmark needs from GNU time's verbose report."""
    figures: dict[str, float] = {}
    for line in text.splitlines():
        label, _, value = line.strip().rpartition(": ")
        if label.startswith("Elapsed (wall clock) time"):
            seconds = 0.0
            for part in value.split(":"):  # h:mm:ss or m:ss.ss
                seconds = seconds * 60 + float(part)
            figures["wall"] = seconds
        elif label == "User time (seconds)":
            figures["user"] = float(value)
        elif label == "System time (seconds)":
            figures["system"] = float(value)
        elif label == "Maximum resident set size (kbytes)":
            figures["max_rss_kb"] = float(value)
        elif label == "Exit status":
            figures["exit"] = float(value)
    return figures


class TreeMemorySampler:
    """Peak of the summed PSS of a process and all its descendants, sampled every ``interval`` s.

    PSS splits pages shared after fork() between the processes sharing them, so
    the sum is the memory the tree holds, where adding up RSS would count them
    once per worker.  Descendants are found among pids above the root's (new
    processes get higher pids until the pid counter wraps), which keeps a sample
    to a few reads of /proc instead of all of them.
    """

    def __init__(self, root: int, interval: float = 0.2) -> None:
        self.root = root
        self.interval = interval
        self.peak_kb = 0
        self.process_peaks: dict[int, int] = {}    # pid -> its peak RSS (kB), sampled
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> "TreeMemorySampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.peak_kb = max(self.peak_kb, self.sample())
            self._stop.wait(self.interval)

    def tree(self) -> set[int]:
        parents: dict[int, int] = {}
        for name in os.listdir("/proc"):
            if name.isdigit() and int(name) > self.root:
                try:
                    stat = Path(f"/proc/{name}/stat").read_bytes()
                except OSError:
                    continue
                parents[int(name)] = int(stat[stat.rindex(b")") + 2:].split()[1])
        members = {self.root}
        grew = True
        while grew:
            found = {pid for pid, parent in parents.items() if parent in members} - members
            members |= found
            grew = bool(found)
        return members

    def sample(self) -> int:
        total = 0
        for pid in self.tree() - {self.root}:  # the root is /usr/bin/time itself
            try:
                rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
            except OSError:
                continue
            match = re.search(r"^Pss:\s+(\d+) kB", rollup, re.M)
            total += int(match.group(1)) if match else 0
            rss = re.search(r"^Rss:\s+(\d+) kB", rollup, re.M)
            if rss:
                self.process_peaks[pid] = max(self.process_peaks.get(pid, 0), int(rss.group(1)))
        return total

    def per_process(self) -> list[int]:
        """Each process's peak RSS (kB) in the order they started: the build's own first, then its workers."""
        return [self.process_peaks[pid] for pid in sorted(self.process_peaks)]


def timed(command: list[str], logs: Path, label: str, timeout: float,
          sample_tree: bool = False, cwd: Path | None = None) -> Measurement:
    """Run ``command`` in ``cwd`` under /usr/bin/time -v; a timeout kills the whole process group.

    Earlier runs' writes are flushed first (``sync``, not timed): a large cold
    build leaves a gigabyte of pages for the kernel to write back, and that
    write-back would otherwise land in the next run's time.  ``python -m
    kwdocs`` imports kwdocs from the current folder before PYTHONPATH: the
    runs of a copy of the code must not start in this repository.
    """
    logs.mkdir(parents=True, exist_ok=True)
    if hasattr(os, "sync"):
        os.sync()
    stem = logs / re.sub(r"[^\w.-]+", "_", label)
    report, out_path, err_path = (Path(f"{stem}.{suffix}") for suffix in ("time", "out", "err"))
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        process = subprocess.Popen([GNU_TIME, "-v", "-o", str(report), *command], stdin=subprocess.DEVNULL,
                                   stdout=out, stderr=err, start_new_session=True, cwd=cwd)
        sampler = TreeMemorySampler(process.pid) if sample_tree else None
        try:
            if sampler:
                with sampler:
                    returncode = process.wait(timeout)
            else:
                returncode = process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            returncode = -1
            err.write(f"\nbench: killed after {timeout:.0f} s\n".encode())
    stdout = out_path.read_text(errors="replace")
    stderr = err_path.read_text(errors="replace")
    figures = parse_time_v(report.read_text(errors="replace")) if report.exists() else {}
    if "wall" not in figures:
        returncode = returncode or -1
    elif returncode == 0 and int(figures.get("exit", 0)):
        returncode = int(figures["exit"])
    return Measurement(wall=figures.get("wall", float("nan")), user=figures.get("user", float("nan")),
                       system=figures.get("system", float("nan")),
                       max_rss_kb=int(figures.get("max_rss_kb", 0)), returncode=returncode,
                       stdout=stdout, stderr=stderr, tree_pss_kb=sampler.peak_kb if sampler else None,
                       process_rss_kb=sampler.per_process() if sampler else None)


def file_states(folder: Path) -> dict[str, tuple[int, int, int]]:
    """(inode, size, mtime) of every file under ``folder``: an atomic rewrite changes the inode."""
    states = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            try:
                stat = os.lstat(path)
            except OSError:
                continue
            states[os.path.relpath(path, folder)] = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
    return states


def changed_files(before: dict, after: dict) -> list[str]:
    return sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))


def source_stamp() -> float:
    """Latest modification under this repository's kwdocs/ and templates/.

    Others edit kwdocs while the benchmark runs (an editable install runs their
    code at once); a change may make the next build redo work, which the notes
    should say rather than pass off as kwdocs' normal behaviour.
    """
    latest = 0.0
    for folder in (REPO / "kwdocs", REPO / "templates"):
        for root, _, files in os.walk(folder):
            for name in files:
                try:
                    latest = max(latest, os.stat(os.path.join(root, name)).st_mtime)
                except OSError:
                    continue
    return latest


# ---------------------------------------------------------------- results

@dataclass
class Row:
    """One line of the table: a scenario's runs, its target and whether it was met."""
    name: str
    target: str
    runs: list[Measurement] = field(default_factory=list)
    limit: float | None = None  # upper bound on the median wall seconds
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None
    error: str | None = None  # a failure outside the measured runs (a preparing build)
    # a derived row (a ratio, a memory target) fills these instead of runs
    cells: tuple[str, str, str] | None = None
    met: bool | None = None

    @property
    def good(self) -> list[Measurement]:
        return [run for run in self.runs if run.ok]

    @property
    def failed(self) -> bool:
        return any(not run.ok for run in self.runs)

    def median(self, attribute: str) -> float:
        return statistics.median(getattr(run, attribute) for run in self.good)

    def verdict(self) -> bool | None:
        """None when there is nothing to judge; a failed run fails the target."""
        if self.skipped:
            return None
        if self.failed or self.error:
            return False
        if self.met is not None:
            return self.met
        if self.limit is None or not self.good:
            return None
        return self.median("wall") < self.limit


def mb(kilobytes: float) -> float:
    return kilobytes / 1024


def render_table(rows: list[Row]) -> list[str]:
    lines = ["| scenario | wall s | CPU s (user+sys) | peak MB | target | met? |",
             "| --- | ---: | ---: | ---: | --- | --- |"]
    for row in rows:
        if row.skipped:
            cells = ("skipped", "", "")
        elif row.error:
            cells = ("FAILED", "", "")
        elif row.cells:
            cells = row.cells
        elif not row.runs:
            cells = ("–", "", "")
        elif row.failed or not row.good:
            cells = ("FAILED", "", "")
        else:
            cells = (f"{row.median('wall'):.2f}", f"{row.median('cpu'):.2f}",
                     f"{mb(row.median('max_rss_kb')):.0f}")
        verdict = row.verdict()
        mark = {True: "yes", False: "**no**", None: "–"}[verdict]
        lines.append(f"| {row.name} | {' | '.join(cells)} | {row.target} | {mark} |")
    return lines


def render_notes(rows: list[Row]) -> list[str]:
    notes = []
    for row in rows:
        items = list(row.notes)
        for reason in (row.skipped, row.error):
            if reason:
                items.insert(0, reason)
        if row.runs and not row.cells:
            walls = ", ".join("FAILED" if not run.ok else f"{run.wall:.2f}" for run in row.runs)
            items.insert(0, f"runs: {len(row.runs)} (wall {walls})")
        for run in row.runs:
            if not run.ok:
                items.append(f"FAILED (exit {run.returncode}): {run.stderr_tail()}")
        touched = [str(number) for number, run in enumerate(row.runs, 1) if run.code_changed]
        if touched:
            items.append(f"CODE CHANGED: kwdocs' source in {REPO} was edited before or during run(s) "
                         f"{', '.join(touched)}, which makes kwdocs rebuild everything (--freeze avoids it)")
        if items:
            notes.append(f"- {row.name}: " + "; ".join(dict.fromkeys(items)))
    return notes


def folder_bytes(folder: Path) -> int:
    """The size of the files under ``folder``."""
    return sum(os.lstat(os.path.join(root, name)).st_size for root, _, names in os.walk(folder) for name in names)


def markdown_bytes(out: Path) -> int:
    """The size of the Markdown pages under an output folder (its state folder left out)."""
    return sum(os.lstat(os.path.join(root, name)).st_size for root, _, names in os.walk(out)
               for name in names if name.endswith(".md") and os.path.relpath(root, out).split(os.sep)[0] != STATE)


def pages_written(run: Measurement) -> int | None:
    """The pages-written count of kwdocs' summary line, when it printed one."""
    match = re.search(r"([\d,]+) pages written", run.stdout)
    return int(match.group(1).replace(",", "")) if match else None


# ---------------------------------------------------------------- the bench

class Bench:
    def __init__(self, args: argparse.Namespace, work: Path, kwdocs: list[str]) -> None:
        self.args = args
        self.work = work
        self.kwdocs = kwdocs
        self.src = work / "src"
        self.out = work / "out"
        self.logs = work / "logs"
        self.rows: list[Row] = []
        self.up_to_date: dict[Path, bool] = {}     # per output folder: built since the last edit
        self.html_out = work / "out-html"
        self.edited: set[Path] = set()
        self.edit_serial = 0
        self.random = random.Random(5)
        self.cold_row: Row | None = None
        self.run_serial = 0
        self.code_stamp = None if args.freeze else source_stamp()
        self.set_aside_serial = 0
        self.stage_lines: list[str] = []     # the per-stage table (``stages``), printed after the notes

    def set_aside(self, folder: Path) -> None:
        """Move an earlier run's output out of the way, to be deleted when the benchmark ends.

        Deleting it would slow the next cold build down: on this machine's ext4 (mounted
        without a journal), creating a file skips every inode of its block group freed less
        than a minute ago (five when not yet written back), one lookup each, so the 29,000
        files of a cold build made right after deleting the last one's cost the kernel 5 to
        12 s instead of 1 (`cold-after-delete` measures that case)."""
        if folder.exists():
            self.set_aside_serial += 1
            aside = self.work / "set-aside"
            aside.mkdir(exist_ok=True)
            folder.rename(aside / f"{self.set_aside_serial}-{folder.name}")

    def delete_set_aside(self) -> None:
        """At the end, unless ``--keep``: deleting them slows the file creations of the next
        few minutes (see ``set_aside``), so benchmarks run back to back should keep them."""
        if not self.args.keep:
            shutil.rmtree(self.work / "set-aside", ignore_errors=True)

    # -- helpers

    def progress(self, message: str) -> None:
        print(f"bench: {message}", file=sys.stderr, flush=True)

    def measure(self, command: list[str], label: str, sample_tree: bool = False) -> Measurement:
        self.run_serial += 1
        run = timed(command, self.logs, f"{self.run_serial:03d}-{label}", self.args.timeout, sample_tree,
                    cwd=self.work)
        status = "ok" if run.ok else f"FAILED exit {run.returncode}"
        self.progress(f"  {label}: {run.wall:.2f} s wall, {run.cpu:.2f} s CPU, "
                      f"{mb(run.max_rss_kb):.0f} MB ({status})")
        return run

    def build_command(self, src: Path, out: Path) -> list[str]:
        return [*self.kwdocs, "build", "--src", str(src), "--out", str(out),
                *(["--html"] if out == self.html_out else [])]

    def build(self, src: Path, out: Path, label: str, sample_tree: bool = False,
              watch_out: bool = False) -> Measurement:
        before = file_states(out) if watch_out else None
        run = self.measure(self.build_command(src, out), label, sample_tree)
        if before is not None:
            run.out_changed = changed_files(before, file_states(out))
        self.up_to_date[out] = run.ok
        if self.code_stamp is not None:
            stamp = source_stamp()
            run.code_changed = stamp != self.code_stamp
            self.code_stamp = stamp
        return run

    def ensure_built(self, src: Path, out: Path, row: Row) -> bool:
        """Bring the tree up to date before a scenario that needs it, unmeasured."""
        if self.up_to_date.get(out):
            return True
        self.progress(f"  preparing: a build of {src.relative_to(self.work)} into {out.relative_to(self.work)} first")
        run = self.build(src, out, "prepare")
        if not run.ok:
            row.error = f"the preparing build FAILED (exit {run.returncode}): {run.stderr_tail()}"
        return run.ok

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        return row

    def change_notes(self, row: Row) -> None:
        """What each build wrote: kwdocs' own count and the files that changed under the output."""
        written = [pages_written(run) for run in row.runs]
        if any(count is not None for count in written):
            row.notes.append("kwdocs said pages written: " + ", ".join(str(c) for c in written))
        watched = [run for run in row.runs if run.out_changed is not None]
        if watched:
            row.notes.append("pages changed under the output folder: "
                             + ", ".join(str(run.pages_changed) for run in watched))
            state = sorted({path for run in watched for path in run.out_changed if path.startswith(STATE + "/")})
            if state:
                shown = ", ".join(state[:3]) + (f" and {len(state) - 3} more" if len(state) > 3 else "")
                row.notes.append(f"state files rewritten: {shown}")

    # -- edits

    def editable(self, suffix: str) -> list[Path]:
        found = []
        for root, dirs, files in os.walk(self.src):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            found.extend(Path(root) / name for name in sorted(files) if name.endswith(suffix))
        return [path for path in found if path not in self.edited]

    def edit(self, path: Path, scenario: str) -> None:
        """Append something that adds a keyword (see ``add_keyword``)."""
        self.edit_serial += 1
        add_keyword(path, f"bench_{scenario.replace('-', '_')}", self.edit_serial)
        self.edited.add(path)
        for out in self.up_to_date:     # the other outputs of this tree are behind it now
            self.up_to_date[out] = False

    # -- scenarios

    def cold(self) -> None:
        row = self.add(Row("cold build (empty output and state)",
                           f"< 20 s wall, both cores (CPU/wall ≥ {BOTH_CORES})", limit=20))
        self.cold_row = row
        floor = Row("floor: creating the cold build's files (same folders and sizes; write, rename)",
                    "reference")
        self.progress("cold builds, each followed by its file-creation floor")
        manifest, scratch = self.work / "cold-files.jsonl", self.work / "creation-floor"
        for number in range(self.args.runs):
            self.set_aside(self.out)
            row.runs.append(self.build(self.src, self.out, f"cold-{number + 1}", sample_tree=True))
            if row.runs[-1].ok:
                write_manifest(self.out, manifest)
                self.set_aside(scratch)
                floor.runs.append(self.measure([self.args.python, "-c", CREATE_FLOOR_CODE, str(manifest),
                                                str(scratch)], f"creation-floor-{number + 1}"))
                self.set_aside(scratch)
        if row.good and not row.failed:
            ratio = row.median("cpu") / row.median("wall")
            row.notes.append(f"CPU/wall {ratio:.2f}; user {row.median('user'):.1f} s, "
                             f"system {row.median('system'):.1f} s (medians)")
            row.met = row.median("wall") < 20 and ratio >= BOTH_CORES
        self.change_notes(row)
        if floor.runs:
            self.add(floor)
            if floor.good:
                floor.notes.append(f"{floor.good[0].stdout.strip()} files, one process; its system time is "
                                   f"the kernel's: {floor.median('system'):.1f} s (median)")
        self.add(self.memory_row(row.runs, 300, "peak memory of the cold build"))

    def stages(self) -> None:
        """A cold build in one process (``-j 1``), each stage's CPU seconds, files/s and MB/s, beside
        ``ctags -R`` on the same tree in the same run (``bench/stages.py``)."""
        self.progress("a cold build in one process, timed per stage, and ctags -R")
        python = self.kwdocs[0] if self.kwdocs[1:] == ["-m", "kwdocs"] else _python_of(self.kwdocs[0])
        out = self.work / "out-stages"
        self.set_aside(out)
        done = subprocess.run([python, str(REPO / "bench" / "stages.py"), str(self.src), "--out", str(out), "--json"],
                              capture_output=True, text=True, cwd=self.work, timeout=self.args.timeout)
        self.set_aside(out)
        if done.returncode != 0:
            self.stage_lines = [f"per-stage build FAILED (exit {done.returncode}): {done.stderr.strip()[-400:]}"]
            return
        from stages import table  # bench/stages.py, beside this script
        result = json.loads(done.stdout)
        self.stage_lines = [f"Cold build per stage, one process (`-j 1`), CPU seconds; files/s and MB/s of the "
                            f"{result['files']:,} files ({result['bytes'] / 1e6:,.0f} MB) kwdocs documents:", "",
                            *table(result, result.get("ctags_cpu"))]

    def cold_after_delete(self) -> None:
        """A cold build started as soon as the last output is deleted (``rm -rf out && kwdocs
        build``): what the kernel adds when it must step over the inodes just freed."""
        row = self.add(Row("cold build right after deleting the last build's output, 1 run", "reference"))
        if not (self.out / STATE).exists() and not self.ensure_built(self.src, self.out, row):
            return
        self.progress("a cold build right after deleting the last output")
        shutil.rmtree(self.out)
        row.runs.append(self.build(self.src, self.out, "cold-after-delete"))
        if row.good:
            row.notes.append(f"user {row.median('user'):.1f} s, system {row.median('system'):.1f} s")

    def memory_row(self, runs: list[Measurement], limit_mb: float, name: str,
                   tree_limit_mb: float | None = None) -> Row:
        """A memory target, judged on /usr/bin/time's figure; the tree's summed PSS goes in a note
        (judged against ``tree_limit_mb``, else against ``limit_mb``), and each process's peak."""
        memory = Row(name, f"< {limit_mb:.0f} MB")
        good = [run for run in runs if run.ok]
        if not good:
            if runs:
                memory.error = "every build FAILED"
            else:
                memory.skipped = "no build measured"
            return memory
        peak = max(mb(run.max_rss_kb) for run in good)
        memory.cells = ("", "", f"{peak:.0f}")
        memory.met = peak < limit_mb
        memory.notes.append("largest of the runs' maximum RSS, which /usr/bin/time takes from the single "
                            "largest process")
        trees = [run.tree_pss_kb for run in good if run.tree_pss_kb is not None]
        if trees:
            tree_peak = mb(max(trees))
            tree_limit = limit_mb if tree_limit_mb is None else tree_limit_mb
            memory.notes.append(f"summed PSS of the whole process tree (sampled every 0.2 s): {tree_peak:.0f} MB"
                                f"{' — over the target' if tree_peak >= tree_limit else ''}"
                                f"{f' (target < {tree_limit:.0f} MB)' if tree_limit_mb is not None else ''}")
            if tree_limit_mb is not None:
                memory.met = memory.met and tree_peak < tree_limit_mb
        for run in good:
            if run.process_rss_kb:
                shown = ", ".join(f"{mb(kb):.0f}" for kb in run.process_rss_kb)
                memory.notes.append(f"peak RSS of each process (sampled; the build's own first), MB: {shown}")
        return memory

    def noop(self) -> None:
        """The no-op build interleaved with its floor, so both see the same load on the machine."""
        floor = self.add(Row("floor: Python walk + os.stat of every source file", "reference"))
        noop = None
        if "noop" in self.selected:
            noop = self.add(Row("no-op build", "< 0.35 s wall", limit=0.35))
            ratio = self.add(Row("no-op / floor (wall)", "printed"))
            if not self.ensure_built(self.src, self.out, noop):
                ratio.skipped = "no build to compare"
                noop = None
        self.progress("floor" + (" and no-op builds, interleaved" if noop else ""))
        floor_command = [self.args.python, "-c", FLOOR_CODE, str(self.src)]
        for number in range(self.args.runs):
            floor.runs.append(self.measure(floor_command, f"floor-{number + 1}"))
            if noop:
                noop.runs.append(self.build(self.src, self.out, f"noop-{number + 1}", watch_out=True))
        if floor.good:
            floor.notes.append(f"{floor.good[0].stdout.strip()} files stat'ed with {self.args.python}")
        if noop:
            self.change_notes(noop)
            if any(run.pages_changed for run in noop.runs):
                noop.notes.append("ODD: a no-op build changed pages")
            if noop.good and floor.good and not noop.failed and not floor.failed:
                value = noop.median("wall") / floor.median("wall")
                ratio.cells = (f"{value:.2f}×", "", "")
                ratio.notes.append(f"median no-op wall / median floor wall "
                                   f"({noop.median('wall'):.3f} / {floor.median('wall'):.3f})")

    def noop_gitignore(self) -> None:
        """No-op builds with a large ``.gitignore`` at the root that leaves out nothing: what a
        real checkout costs, whose every file is matched against such a file."""
        row = self.add(Row("no-op build, with a 300-pattern `.gitignore` at the root", "< 0.35 s wall", limit=0.35))
        if not self.ensure_built(self.src, self.out, row):
            return
        self.progress("no-op builds with a large .gitignore")
        ignore = self.src / ".gitignore"
        if ignore.exists():
            row.skipped = "the corpus has a .gitignore of its own"
            return
        ignore.write_text(big_gitignore(), encoding="utf-8")
        try:
            for number in range(self.args.runs):
                row.runs.append(self.build(self.src, self.out, f"noop-gitignore-{number + 1}", watch_out=True))
        finally:
            ignore.unlink()
        self.change_notes(row)
        if any(run.pages_changed for run in row.runs):
            row.notes.append("ODD: the .gitignore changed pages, though it matches no file of the corpus")

    def edit_scenario(self, name: str, title: str, limit: float, files_per_run, out: Path | None = None) -> None:
        """Per run: a complete build, then the edits, then the measured build (into ``out``, the
        Markdown output by default)."""
        out = out or self.out
        row = self.add(Row(title, f"< {limit:g} s wall", limit=limit))
        self.progress(title)
        edits = 0
        for number in range(self.args.runs):
            if not self.ensure_built(self.src, out, row):
                break
            chosen = files_per_run(row)
            if not chosen:
                break
            for path in chosen:
                self.edit(path, name)
            edits += len(chosen)
            row.runs.append(self.build(self.src, out, f"{name}-{number + 1}", watch_out=True))
        self.change_notes(row)
        if edits > len(row.runs):
            row.notes.append(f"{edits} files edited in all")

    def import_vs_append(self) -> None:
        """One file edited in turn, each edit followed by a build: a function appended, then an
        import line added above its imports (``add_import``); the ratio of their median CPU."""
        target = self.src / IMPORT_FILE
        if not target.is_file():
            candidates = self.editable(".py")
            target = candidates[0] if candidates else target
        rel = target.relative_to(self.src).as_posix()
        append = self.add(Row(f"function appended to `{rel}`, then build", "reference"))
        imported = self.add(Row(f"import line added to `{rel}`, then build", "reference"))
        ratio = self.add(Row("import line / function appended (CPU)", f"≤ {IMPORT_RATIO}"))
        if not target.is_file():
            ratio.skipped = append.skipped = imported.skipped = "no .py file to edit in the corpus"
            return
        self.progress(f"a function appended to {rel} and an import line added, alternating")
        for number in range(self.args.runs):
            if not self.ensure_built(self.src, self.out, append):
                break
            self.edit(target, "edit-import")
            append.runs.append(self.build(self.src, self.out, f"append-{number + 1}", watch_out=True))
            self.edit_serial += 1
            add_import(target, self.edit_serial)
            for out in self.up_to_date:     # as ``edit`` does: the other outputs are behind the tree now
                self.up_to_date[out] = False
            imported.runs.append(self.build(self.src, self.out, f"import-{number + 1}", watch_out=True))
        self.change_notes(append)
        self.change_notes(imported)
        if append.good and imported.good and not append.failed and not imported.failed:
            value = imported.median("cpu") / append.median("cpu")
            ratio.cells = (f"{value:.2f}×", "", "")
            ratio.met = value <= IMPORT_RATIO
            ratio.notes.append(f"median CPU s, import line / function appended ({imported.median('cpu'):.2f} / "
                               f"{append.median('cpu'):.2f}); wall {imported.median('wall'):.2f} / "
                               f"{append.median('wall'):.2f}")

    def pick_one(self, suffix: str):
        def choose(row: Row) -> list[Path]:
            candidates = self.editable(suffix)
            if not candidates:
                reason = f"no {suffix} file left to edit in the corpus"
                if row.runs:
                    row.notes.append(reason)
                else:
                    row.skipped = reason
                return []
            picked = self.random.choice(candidates)
            row.notes.append(f"edited {picked.relative_to(self.src)}")
            return [picked]
        return choose

    def pick_spread(self, row: Row, folders_wanted: int = 20, per_folder: int = 5) -> list[Path]:
        """5 not yet edited .py/.h files in each of 20 folders spread over the tree."""
        by_folder: dict[Path, list[Path]] = {}
        for path in self.editable(".py") + self.editable(".h"):
            by_folder.setdefault(path.parent, []).append(path)
        folders = sorted(folder for folder, files in by_folder.items() if len(files) >= per_folder)
        if len(folders) < folders_wanted:
            row.notes.append(f"only {len(folders)} folders with {per_folder} unedited files")
            if not folders:
                row.skipped = "no folder with enough files to edit"
                return []
        step = max(1, len(folders) // folders_wanted)
        chosen_folders = folders[::step][:folders_wanted]
        return [path for folder in chosen_folders
                for path in sorted(self.random.sample(by_folder[folder], per_folder))]

    def html_cold(self) -> None:
        """Markdown-only and ``--html`` cold builds, alternating so both see the same machine; the
        site's target is a ratio of the two (issue 20), and its size one of the outputs'."""
        markdown = self.add(Row("Markdown-only cold build (beside the `--html` one)", "reference"))
        site = self.add(Row("`--html` cold build (Markdown pages and the site)", "reference"))
        ratio = self.add(Row("`--html` cold / Markdown cold (wall)", f"≤ {HTML_RATIO:g}×"))
        size = self.add(Row("site size / Markdown pages' size", f"≤ {SITE_SIZE:g}×"))
        self.progress("Markdown-only and --html cold builds, alternating")
        for number in range(self.args.runs):
            self.set_aside(self.out)
            markdown.runs.append(self.build(self.src, self.out, f"markdown-cold-{number + 1}"))
            self.set_aside(self.html_out)
            site.runs.append(self.build(self.src, self.html_out, f"html-cold-{number + 1}"))
        for row in (markdown, site):
            self.change_notes(row)
        if not (markdown.good and site.good) or markdown.failed or site.failed:
            ratio.error = size.error = "a cold build FAILED"
            return
        walls = [html_run.wall / md_run.wall for md_run, html_run in zip(markdown.runs, site.runs)]
        value = site.median("wall") / markdown.median("wall")
        ratio.cells = (f"{value:.2f}×", f"{site.median('cpu') / markdown.median('cpu'):.2f}×", "")
        ratio.met = value <= HTML_RATIO
        ratio.notes.append("median wall / median wall; CPU column: the same of CPU; each pair: "
                           + ", ".join(f"{wall:.2f}" for wall in walls))
        pages, site_size = markdown_bytes(self.out), folder_bytes(self.html_out / "site")
        size.cells = (f"{site_size / pages:.2f}×", "", "")
        size.met = site_size / pages <= SITE_SIZE
        size.notes.append(f"site/ {site_size / 1e6:.0f} MB, Markdown pages {pages / 1e6:.0f} MB (of the last builds)")

    def check(self) -> None:
        row = self.add(Row("`kwdocs check` on an up-to-date tree", "< 0.5 s wall", limit=0.5))
        probe = subprocess.run([*self.kwdocs, "check", "--help"], capture_output=True, text=True, cwd=self.work)
        if probe.returncode != 0:
            row.skipped = "`kwdocs check` does not exist yet (`kwdocs check --help` failed)"
            return
        if not self.ensure_built(self.src, self.out, row):
            return
        self.progress("kwdocs check")
        command = [*self.kwdocs, "check", "--src", str(self.src), "--out", str(self.out)]
        for number in range(self.args.runs):
            before = file_states(self.out)
            run = self.measure(command, f"check-{number + 1}")
            run.out_changed = changed_files(before, file_states(self.out))
            row.runs.append(run)
        self.change_notes(row)
        if any(run.pages_changed for run in row.runs):
            row.notes.append("ODD: `kwdocs check` changed pages")

    def large(self) -> None:
        large_src = self.work / "large" / "src"
        large_out = self.work / "large" / "out"
        if not large_src.exists():
            self.progress(f"laying out the large tree: {LARGE_COPIES} hard-linked copies")
            large_src.mkdir(parents=True)
            for copy in range(1, LARGE_COPIES + 1):
                subprocess.run(["cp", "-al", f"{self.src}/.", str(large_src / f"copy{copy}")], check=True)
        files = sum(len(names) for _, _, names in os.walk(large_src))
        cold = None
        if "large-cold" in self.selected:
            cold_12k = (self.cold_row.median("wall")
                        if self.cold_row and self.cold_row.good and not self.cold_row.failed else None)
            target = (f"≤ {LARGE_WALL_RATIO} × the 12k cold = {LARGE_WALL_RATIO * cold_12k:.1f} s" if cold_12k
                      else f"≤ {LARGE_WALL_RATIO} × the 12k cold (not measured in this run)")
            cold = self.add(Row(f"large tree ({files:,} files): cold build, 1 run", target))
            self.progress("large cold build")
            self.set_aside(large_out)
            cold.runs.append(self.build(large_src, large_out, "large-cold", sample_tree=True))
            if cold_12k and cold.good and not cold.failed:
                cold.notes.append(f"{cold.median('wall') / cold_12k:.2f} × the 12k cold")
                cold.met = cold.median("wall") <= LARGE_WALL_RATIO * cold_12k
        noop = None
        if "large-noop" in self.selected:
            noop = self.add(Row("large tree: no-op build", "≤ 1 s wall", limit=1))
            if self.ensure_built(large_src, large_out, noop):
                self.progress("large no-op builds")
                for number in range(self.args.runs):
                    noop.runs.append(self.build(large_src, large_out, f"large-noop-{number + 1}",
                                                watch_out=True))
                self.change_notes(noop)
                if any(run.pages_changed for run in noop.runs):
                    noop.notes.append("ODD: a no-op build changed pages")
        runs = (cold.runs if cold else []) + (noop.runs if noop else [])
        self.add(self.memory_row(runs, LARGE_PEAK_MB, "large tree: peak memory", LARGE_TREE_MB))

    # -- driver

    @property
    def selected(self) -> list[str]:
        return self.args.selected

    def run(self) -> None:
        chosen = self.selected
        steps = [
            ("cold" in chosen, self.cold),
            ("stages" in chosen, self.stages),
            ("cold-after-delete" in chosen, self.cold_after_delete),
            ("noop" in chosen or "floor" in chosen, self.noop),
            ("noop-gitignore" in chosen, self.noop_gitignore),
            ("edit-py" in chosen, lambda: self.edit_scenario(
                "edit-py", "one `.py` file edited (new function), then build", 0.5, self.pick_one(".py"))),
            ("edit-header" in chosen, lambda: self.edit_scenario(
                "edit-header", "one header edited (new macro and declaration), then build", 0.5,
                self.pick_one(".h"))),
            ("edit-import" in chosen, self.import_vs_append),
            ("edit-100" in chosen, lambda: self.edit_scenario(
                "edit-100", "100 files edited across 20 folders, then build", 2, self.pick_spread)),
            ("check" in chosen, self.check),
            ("html-cold" in chosen, self.html_cold),
            ("html-edit" in chosen, lambda: self.edit_scenario(
                "html-edit", "one `.py` file edited, then an `--html` build", 1, self.pick_one(".py"),
                out=self.html_out)),
            (any(name in chosen for name in LARGE), self.large),
        ]
        try:
            for wanted, step in steps:
                if wanted:
                    step()
        finally:
            self.delete_set_aside()


# ---------------------------------------------------------------- entry point

def freeze(kwdocs: list[str], work: Path) -> list[str]:
    """Run a copy of this repository's kwdocs, taken now, so that others' edits don't reach the runs.

    The copy goes on PYTHONPATH (ahead of the editable install) and runs with
    the interpreter of the ``--kwdocs`` command, which has kwdocs' dependencies,
    from the working folder (see ``timed``).
    """
    code = work / "kwdocs-code"
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(REPO / "kwdocs", code / "kwdocs", ignore=skip)
    shutil.copytree(REPO / "templates", code / "kwdocs" / "templates", ignore=skip)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(code), os.environ.get("PYTHONPATH")]))
    command = kwdocs if kwdocs[1:] == ["-m", "kwdocs"] else [_python_of(kwdocs[0]), "-m", "kwdocs"]
    # compiled once, as an installed package is: with PYTHONDONTWRITEBYTECODE set (as on these
    # machines) every run would otherwise compile kwdocs' modules again, 30-50 ms of each edit
    subprocess.run([command[0], "-m", "compileall", "-q", str(code)], check=True, stdout=subprocess.DEVNULL)
    return command


def _python_of(script_name: str) -> str:
    """The interpreter named on the first line of a console script."""
    script = Path(shutil.which(script_name) or script_name)
    first_line = script.read_bytes()[:200].split(b"\n", 1)[0].decode(errors="replace")
    words = shlex.split(first_line[2:].strip()) if first_line.startswith("#!") else []
    if words and Path(words[0]).name == "env":  # "#!/usr/bin/env python3": the interpreter comes next
        words = [word for word in words[1:] if not word.startswith("-")]
    if not words or not Path(words[0]).name.startswith("python"):   # a wrapper (a pyenv shim, say)
        raise SystemExit(f"bench: --freeze cannot tell the Python of {script}; give --kwdocs 'PYTHON -m kwdocs'")
    return words[0]


def version_of(kwdocs: list[str], cwd: Path) -> str:
    try:
        done = subprocess.run([*kwdocs, "--version"], capture_output=True, text=True, timeout=60, cwd=cwd)
    except OSError as error:
        return f"unknown ({error})"
    lines = done.stdout.strip().splitlines()
    return lines[0] if done.returncode == 0 and lines else f"version unknown (exit {done.returncode})"


@contextmanager
def working_folder(prefix: str, keep: bool, parent: str | None = None, say: str = "bench") -> Iterator[Path]:
    """A temporary folder for a benchmark's trees, outputs and logs: removed at the end unless kept."""
    work = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    try:
        print(f"{say}: working folder {work}", file=sys.stderr, flush=True)
        yield work
    finally:
        if keep:
            print(f"{say}: kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


def lay_out(args: argparse.Namespace, src: Path) -> None:
    """The source tree in the working folder: a copy of --corpus, or make-corpus.sh's output."""
    if args.corpus:
        shutil.copytree(args.corpus, src, symlinks=True)
        return
    script = Path(args.make_corpus)
    if not script.is_file():
        raise SystemExit(f"bench: {script} not found; give --corpus DIR or --make-corpus PATH")
    subprocess.run(["bash", str(script), str(src), *(["--small"] if args.small else [])], check=True,
                   stdout=sys.stderr)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="Scenarios: " + ", ".join(SCENARIOS))
    parser.add_argument("--corpus", type=Path, metavar="DIR", help="a source tree to copy (never modified)")
    parser.add_argument("--make-corpus", default=str(MAKE_CORPUS), metavar="PATH",
                        help=f"the script laying out the corpus without --corpus (default: {MAKE_CORPUS})")
    parser.add_argument("--small", action="store_true", help="make-corpus.sh --small (500 files)")
    parser.add_argument("--kwdocs", default="kwdocs", metavar="CMD",
                        help='the kwdocs command (default: kwdocs on PATH; e.g. "python -m kwdocs")')
    parser.add_argument("--runs", type=int, default=3, help="runs per scenario, the median reported (default 3)")
    parser.add_argument("--large", action="store_true",
                        help=f"also the {LARGE_COPIES}-copy tree (about 100,000 files): cold and no-op")
    parser.add_argument("--only", metavar="SCENARIO,...", help="run only these scenarios")
    parser.add_argument("--markdown", action="store_true", help="print only the table block for bench/README.md's Figures")
    parser.add_argument("--keep", action="store_true", help="keep the working folder")
    parser.add_argument("--freeze", action="store_true",
                        help="run a copy of this repository's kwdocs/ and templates/ taken at the start, "
                             "so edits made meanwhile don't change the code measured")
    parser.add_argument("--workdir-parent", metavar="DIR", help="where the working folder goes (default: $TMPDIR)")
    parser.add_argument("--python", default=sys.executable, help="the Python the floor runs with (default: this one)")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds before one run is killed (default 3600)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.corpus and not args.corpus.is_dir():
        parser.error(f"--corpus {args.corpus}: not a folder")
    if args.only:
        args.selected = [name.strip() for name in args.only.split(",") if name.strip()]
        unknown = [name for name in args.selected if name not in SCENARIOS]
        if unknown:
            parser.error(f"unknown scenario(s) {', '.join(unknown)}; choose from {', '.join(SCENARIOS)}")
    else:
        args.selected = [name for name in SCENARIOS if name not in LARGE or args.large]
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    kwdocs = shlex.split(args.kwdocs)
    if os.sep in kwdocs[0]:     # a path: the runs start in the working folder
        kwdocs[0] = os.path.abspath(kwdocs[0])
    if not shutil.which(kwdocs[0]):
        raise SystemExit(f"bench: {kwdocs[0]!r} not found on PATH; give --kwdocs CMD")
    if not os.access(GNU_TIME, os.X_OK):
        raise SystemExit(f"bench: {GNU_TIME} is missing (apt-get install time)")
    load_start = os.getloadavg()
    with working_folder("kwdocs-bench-", args.keep, args.workdir_parent) as work:
        if args.freeze:
            kwdocs = freeze(kwdocs, work)
        bench = Bench(args, work, kwdocs)
        lay_out(args, bench.src)
        files = sum(len(names) for _, _, names in os.walk(bench.src))
        source = str(args.corpus) if args.corpus else f"make-corpus.sh{' --small' if args.small else ''}"
        bench.run()
        load_end = os.getloadavg()
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        header = (f"{datetime.date.today().isoformat()}, nproc {cores}, "
                  f"{version_of(kwdocs, work)}{' (frozen copy)' if args.freeze else ''}, "
                  f"corpus {source}: {files:,} files, median of {args.runs} run(s), "
                  f"load average {load_start[0]:.2f} at the start and {load_end[0]:.2f} at the end")
        block = [header, "", *render_table(bench.rows)]
        notes = render_notes(bench.rows)
        if notes:
            block += ["", *notes]
        if bench.stage_lines:
            block += ["", *bench.stage_lines]
        print("\n".join(block))
        if not args.markdown:
            print(f"\nlogs of every run: {bench.logs}" + ("" if args.keep else " (removed; --keep to keep)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
