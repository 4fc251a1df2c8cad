"""``kwdocs watch`` as a user runs it: a real process on a temporary tree, edited the ways editors
and git edit files.  After every change the output must settle on exactly what a clean build
of the tree writes."""
from __future__ import annotations

import logging
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kwdocs.engine import on_save as watch_module, watches
from kwdocs.config import load_config
from kwdocs.store.lock import locked
from kwdocs.engine.rescan import Changes
from kwdocs.scan import scan, scan_folder
from tests.conftest import changed_after_extraction, run_kwdocs
from tests.output_checks import fulltext_search, keyword_search

STARTUP_SECONDS = 90
SETTLE_SECONDS = 90
OUT = "kwdocs-out"
TEMP_NAMES = re.compile(r"~|\.swp|4913|___jb_|\.tmp|^\.#")


# ---------------------------------------------------------------- a watch process and a reference build

class Watching:
    """``kwdocs watch`` on ``tree`` in a subprocess; every line it prints, in order."""

    def __init__(self, tree: Path, *extra: str):
        self.tree = tree
        self.process = subprocess.Popen([sys.executable, "-m", "kwdocs", "watch", "--src", str(tree), "-j", "1",
                                         *extra], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        stdin=subprocess.DEVNULL)
        self.lines: list[str] = []
        self._new: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))
            self._new.put(line)

    def wait_for(self, pattern: str, timeout: float = SETTLE_SECONDS) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self._new.get(timeout=0.2)
            except queue.Empty:
                assert self.process.poll() is None, "kwdocs watch died:\n" + "\n".join(self.lines)
                continue
            if re.search(pattern, line):
                return line
        raise AssertionError(f"no line matching {pattern!r} within {timeout} s:\n" + "\n".join(self.lines))

    def status_lines(self) -> list[str]:
        return [line for line in self.lines if re.match(r"kwdocs: \d\d:\d\d:\d\d ", line)]

    def stop(self) -> float:
        """SIGTERM, as a service manager stops it; seconds until it exited."""
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise
        return time.monotonic() - started


def pages(out: Path) -> dict[str, bytes]:
    """The output's pages (state aside), read while kwdocs may be writing and removing them."""
    found = {}
    for folder, subfolders, names in os.walk(out):
        subfolders[:] = [name for name in subfolders if name != ".kwdocs"]
        for name in names:
            path = Path(folder, name)
            try:
                found[path.relative_to(out).as_posix()] = path.read_bytes()
            except FileNotFoundError:
                pass
    return found


def clean_build(tree: Path, scratch: Path) -> dict[str, bytes]:
    """The pages a clean build writes for the tree as it is now (copied to the same relative place)."""
    copy = scratch / "reference" / tree.name
    shutil.rmtree(copy.parent, ignore_errors=True)
    shutil.copytree(tree, copy, symlinks=True, ignore=shutil.ignore_patterns(OUT, ".git"))
    assert run_kwdocs("build", "--src", str(copy), "-q") == 0
    return pages(copy / OUT)


def settle(watching: Watching, scratch: Path, timeout: float = SETTLE_SECONDS) -> dict[str, bytes]:
    """Wait until the watched output equals a clean build; return it."""
    expected = clean_build(watching.tree, scratch)
    deadline = time.monotonic() + timeout
    while True:
        actual = pages(watching.tree / OUT)
        if actual == expected:
            return actual
        assert watching.process.poll() is None, "kwdocs watch died:\n" + "\n".join(watching.lines)
        if time.monotonic() > deadline:
            differ = sorted(name for name in set(actual) | set(expected) if actual.get(name) != expected.get(name))
            raise AssertionError(f"output never equalled a clean build; differing: {differ[:20]}\n"
                                 + "\n".join(watching.lines[-20:]))
        time.sleep(0.1)


def no_temp_pages(out: Path) -> None:
    odd = [page for page in pages(out) if TEMP_NAMES.search(page.rsplit("/", 1)[-1])]
    assert not odd, f"editor temporary files got pages: {odd}"


@pytest.fixture(scope="module")
def watched(tmp_path_factory):
    """One watch process for the save-style tests below, which run in order on one tree."""
    root = tmp_path_factory.mktemp("watched")
    tree = root / "tree"
    shutil.copytree(Path(__file__).parent / "fixtures" / "golden" / "tree", tree)
    watching = Watching(tree)
    try:
        watching.wait_for(r"kwdocs: watching ", STARTUP_SECONDS)
        yield watching, root
    finally:
        if watching.process.poll() is None:
            watching.stop()


# ---------------------------------------------------------------- every way of saving

def test_in_place_save(watched):
    watching, scratch = watched
    circle = watching.tree / "geometry/shapes/circle.py"
    with open(circle, "a") as handle:
        handle.write("\n\ndef unit_circle() -> Circle:\n    return Circle(1.0)\n")
    watching.wait_for(r"geometry/shapes/circle\.py changed: .*pages written")
    output = settle(watching, scratch)
    assert b"unit_circle" in output["geometry/shapes/circle.py_kw.md"]


def test_temp_file_and_rename_save(watched):
    """VS Code's atomic save and ``sed -i``: a new file renamed over the old one."""
    watching, scratch = watched
    subprocess.run(["sed", "-i", "s/class Square/class Quadrate/", str(watching.tree / "geometry/shapes/square.py")],
                   check=True)
    output = settle(watching, scratch)
    assert b"Quadrate" in output["geometry/shapes/square.py_kw.md"]


def test_jetbrains_save(watched):
    watching, scratch = watched
    base = watching.tree / "geometry/shapes/base.py"
    temporary, old = base.with_name("base.py___jb_tmp___"), base.with_name("base.py___jb_old___")
    temporary.write_text(base.read_text() + "\n\ndef jetbrains_saved():\n    return True\n")
    os.rename(base, old)
    os.rename(temporary, base)
    old.unlink()
    output = settle(watching, scratch)
    assert b"jetbrains_saved" in output["geometry/shapes/base.py_kw.md"]
    no_temp_pages(watching.tree / OUT)


def test_vim_save_with_its_swap_file_open(watched):
    watching, scratch = watched
    tools = watching.tree / "tools"
    target = tools / "make_shapes.py"
    swap = tools / ".make_shapes.py.swp"
    swap.write_bytes(b"b0VIM 9.0\0" + b"\0" * 100)
    probe = tools / "4913"
    probe.write_text("")
    probe.unlink()
    os.rename(target, tools / "make_shapes.py~")
    target.write_text((tools / "make_shapes.py~").read_text() + "\n\ndef vim_saved():\n    return 1\n")
    (tools / "make_shapes.py~").unlink()
    output = settle(watching, scratch)
    assert b"vim_saved" in output["tools/make_shapes.py_kw.md"]
    no_temp_pages(watching.tree / OUT)
    swap.unlink()
    assert not any(TEMP_NAMES.search(line) for line in watching.status_lines()), watching.status_lines()


def test_delete_rename_and_new_file(watched):
    watching, scratch = watched
    (watching.tree / "docs/notes.txt").unlink()
    settle(watching, scratch)
    os.rename(watching.tree / "docs/guide.rst", watching.tree / "docs/handbook.rst")
    output = settle(watching, scratch)
    assert "docs/handbook.rst_docs.md" in output and "docs/guide.rst_docs.md" not in output
    (watching.tree / "docs/extra.md").write_text("# Extra\n\nUses `ProcessGroupNCCL`.\n")
    settle(watching, scratch)


def test_folder_move_and_new_folders(watched):
    watching, scratch = watched
    os.rename(watching.tree / "geometry/shapes", watching.tree / "geometry/forms")
    output = settle(watching, scratch)
    assert "geometry/forms/circle.py_docs.md" in output
    assert not any(page.startswith("geometry/shapes/") for page in output)
    deep = watching.tree / "plugins/colour/spaces"
    deep.mkdir(parents=True)
    (deep / "rgb.py").write_text("class RGB:\n    pass\n")
    (deep.parent / "palette.py").write_text("from plugins.colour.spaces.rgb import RGB\n")
    output = settle(watching, scratch)
    assert "plugins/colour/spaces/rgb.py_docs.md" in output
    os.rename(watching.tree / "tests", watching.tree / "checks")      # a folder watched on its own
    output = settle(watching, scratch)
    assert "checks/test_circle.py_docs.md" in output
    (watching.tree / "checks/test_square.py").write_text("def test_square():\n    assert True\n")
    output = settle(watching, scratch)
    assert "checks/test_square.py_docs.md" in output
    shutil.rmtree(watching.tree / "checks")
    output = settle(watching, scratch)
    assert not any(page.startswith("checks/") for page in output)
    assert not any("watcher stopped" in line for line in watching.lines), watching.lines


def test_syntax_error_is_reported_and_watching_goes_on(watched):
    watching, scratch = watched
    broken = watching.tree / "tools/broken_tool.py"
    broken.write_text("def ok():\n    return 1\n\ndef broken(:\n    pass\n")
    watching.wait_for(r"^problem: tools/broken_tool\.py:4: syntax error")
    settle(watching, scratch)
    broken.write_text("def ok():\n    return 1\n\ndef fixed():\n    pass\n")
    watching.wait_for(r"tools/broken_tool\.py changed")
    output = settle(watching, scratch)
    assert b"fixed" in output["tools/broken_tool.py_kw.md"]
    assert sum("broken_tool.py:4" in line for line in watching.lines) == 1


def test_a_settings_change_rebuilds_with_the_new_settings(watched):
    watching, scratch = watched
    settings = watching.tree / "pyproject.toml"
    settings.write_text(settings.read_text().replace("max_source_bytes = 4096", "max_source_bytes = 200"))
    watching.wait_for(r"settings changed")
    output = settle(watching, scratch)
    assert b"bytes were left out" in output["README.md_docs.md"]


def test_idle_watch_rebuilds_nothing(watched):
    """Its own writes and reads never wake it: ten quiet seconds after a build, nothing happens."""
    watching, scratch = watched
    settle(watching, scratch)
    time.sleep(0.5)
    lines, before = len(watching.lines), stamps(watching.tree / OUT)
    time.sleep(10)
    assert watching.lines[lines:] == []
    assert stamps(watching.tree / OUT) == before


def stamps(folder: Path) -> dict[Path, int]:
    return {path: path.stat().st_mtime_ns for path in folder.rglob("*")}


def test_hook_while_watching_waits_its_turn(watched):
    """A pre-commit hook (``check --fix``) runs while watch rebuilds: neither corrupts anything."""
    watching, scratch = watched
    circle = watching.tree / "geometry/forms/circle.py"
    with open(circle, "a") as handle:
        handle.write("\n\ndef during_hook():\n    return 2\n")
    hook = subprocess.run([sys.executable, "-m", "kwdocs", "check", "--fix", "--src", str(watching.tree)],
                          capture_output=True, text=True, timeout=120)
    assert hook.returncode in (0, 1), hook.stdout + hook.stderr
    settle(watching, scratch)
    check = subprocess.run([sys.executable, "-m", "kwdocs", "check", "--src", str(watching.tree)],
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr


def test_sigterm_stops_it_within_a_second_leaving_nothing_half_done(watched):
    watching, scratch = watched
    seconds = watching.stop()
    assert watching.process.returncode == 0
    assert seconds < 1.0 + 1.0, f"took {seconds:.2f} s"   # a second, plus the slack of a loaded 2-core CI machine
    assert watching.lines[-1] == "kwdocs: stopped watching"
    out = watching.tree / OUT
    assert not list(out.rglob(".kwdocs-*.tmp")), "a half-written page was left behind"
    assert (out / ".kwdocs" / "lock").read_text() == "", "the lock was not released in good order"
    started = time.monotonic()
    assert run_kwdocs("build", "--src", str(watching.tree), "-q") == 0
    assert time.monotonic() - started < 30


# ---------------------------------------------------------------- a branch switch

def git(tree: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=kwdocs", "-c", "user.email=kwdocs@example.invalid", *args],
                   cwd=tree, check=True, capture_output=True)


def files_rebuilt(status_lines: list[str]) -> int:
    """Files named by watch status lines: "N files (...)" for a burst, one for a single file's line."""
    total = 0
    for line in status_lines:
        if match := re.search(r" ([\d,]+) files \(", line):
            total += int(match.group(1).replace(",", ""))
        elif re.search(r"\d\d:\d\d:\d\d \S+ (added|changed|deleted):", line):
            total += 1
    return total


def test_branch_switch_of_a_thousand_files_is_coalesced(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(Path(__file__).parent / "fixtures" / "golden" / "tree", tree)
    git(tree, "init", "-q", "-b", "main")
    (tree / ".git/info/exclude").write_text(f"{OUT}/\n")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "base")
    git(tree, "checkout", "-q", "-b", "generated")
    for folder in range(20):
        package = tree / "generated" / f"package_{folder:02d}"
        package.mkdir(parents=True)
        for module in range(50):
            (package / f"module_{module:02d}.py").write_text(
                f'"""Generated module {folder}/{module}."""\n\n\ndef function_{folder}_{module}(value):\n'
                f"    return value + {module}\n")
    with open(tree / "geometry/shapes/circle.py", "a") as handle:
        handle.write("\n\ndef only_on_the_branch():\n    return 3\n")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "a thousand files")
    git(tree, "checkout", "-q", "main")
    watching = Watching(tree)
    try:
        watching.wait_for(r"kwdocs: watching ", STARTUP_SECONDS)
        before = len(watching.status_lines())
        git(tree, "checkout", "-q", "generated")
        output = settle(watching, tmp_path)
        assert len([page for page in output if page.startswith("generated/")]) == 20 * 50 * 2 + 20 * 2 + 2
        time.sleep(1.0)
        rebuilds = watching.status_lines()[before:]
        assert 1 <= len(rebuilds) <= 5, rebuilds      # one burst: a few rebuilds at most, not a thousand
        assert files_rebuilt(rebuilds) >= 1001, rebuilds   # the 1,000 new files and the one changed
        assert b"only_on_the_branch" in output["geometry/shapes/circle.py_docs.md"]
        git(tree, "checkout", "-q", "main")
        output = settle(watching, tmp_path)
        assert not any(page.startswith("generated/") for page in output)
    finally:
        watching.stop()


def test_polling_for_mounts_without_inotify(golden_tree, tmp_path):
    watching = Watching(golden_tree, "--poll")
    try:
        watching.wait_for(r"kwdocs: watching .*\(polling\)", STARTUP_SECONDS)
        with open(golden_tree / "geometry/shapes/circle.py", "a") as handle:
            handle.write("\n\ndef polled():\n    return 4\n")
        (golden_tree / "docs/notes.txt").unlink()
        output = settle(watching, tmp_path)
        assert b"polled" in output["geometry/shapes/circle.py_kw.md"]
    finally:
        watching.stop()


# ---------------------------------------------------------------- the parts, in this process

def test_a_dead_watcher_thread_is_noticed(golden_tree):
    config = load_config(golden_tree)
    observer = watches.TreeObserver(config, watch_module.make_handler(
        watch_module.EventPaths(config), watch_module.Pending()), poll=False)
    observer.start()
    try:
        assert observer.healthy()
        emitter = next(iter(observer.observer.emitters))
        emitter.stop()
        emitter.join(timeout=10)
        assert not observer.healthy()
    finally:
        observer.stop()


def test_rescanning_folder_by_folder_finds_what_a_full_scan_finds(golden_tree):
    (golden_tree / "geometry/.gitignore").write_text("shapes/square.py\n")
    (golden_tree / "geometry/shapes/circle.py~").write_text("backup\n")
    (golden_tree / "node_modules/pkg").mkdir(parents=True)
    (golden_tree / "node_modules/pkg/index.js").write_text("x = 1\n")
    (golden_tree / ".gitignore").write_text((golden_tree / ".gitignore").read_text() + "node_modules/\n")
    config = load_config(golden_tree)
    full = scan(config)
    folders = {source.folder for source in full.files} | {""}
    pieces = [scan_folder(config, folder, recursive=False) for folder in sorted(folders)]
    assert sorted(source for piece in pieces for source in piece.files) == full.files
    assert "geometry/shapes/square.py" not in {source.rel for source in full.files}
    assert "geometry/shapes/circle.py~" not in {source.rel for source in full.files}
    assert scan_folder(config, "node_modules", recursive=True) is None
    assert scan_folder(config, "build", recursive=True) is None
    assert scan_folder(config, "no/such/folder") is None
    assert scan_folder(config, "geometry", recursive=True).files == [s for s in full.files if s.rel.startswith("geometry/")]


def test_left_out_folders_get_no_watches(golden_tree):
    (golden_tree / ".git").mkdir()
    (golden_tree / "kwdocs-out/sub").mkdir(parents=True)
    config = load_config(golden_tree)
    plan = watches.watch_plan(config)
    assert plan[str(golden_tree)] is False                   # the root alone: the output sits in it
    assert plan[str(golden_tree / "geometry")] is True
    assert not any(path.startswith((str(config.out), str(golden_tree / ".git"), str(golden_tree / "build")))
                   for path in plan)


def test_a_burst_is_one_rebuild_but_never_waits_more_than_two_seconds():
    pending = watch_module.Pending()
    assert pending.take(0.15, 2.0, timeout=0.05) is None
    pending.add("a.py", "written")
    started = time.monotonic()
    changes, settings = pending.take(0.15, 2.0, timeout=1.0)
    assert 0.14 <= time.monotonic() - started < 1.0 and changes.written == {"a.py"} and not settings

    stop = threading.Event()

    def burst() -> None:
        count = 0
        while not stop.is_set():
            pending.add(f"f{count}.py", "files")
            count += 1
            time.sleep(0.02)

    threading.Thread(target=burst, daemon=True).start()
    try:
        started = time.monotonic()
        changes, _ = pending.take(0.15, 2.0, timeout=1.0)
        assert 1.9 <= time.monotonic() - started < 3.5
        assert len(changes.files) > 20
    finally:
        stop.set()


def test_lost_events_mean_a_full_rescan():
    pending = watch_module.Pending()
    handler = watch_module.LostEvents(pending)
    logger = logging.getLogger("watchdog.observers.inotify_c")
    logger.addHandler(handler)
    try:
        logger.warning("Inotify queue overflowed; filesystem events were lost")
    finally:
        logger.removeHandler(handler)
    changes, _ = pending.take(0.0, 2.0, timeout=1.0)
    assert changes.everything


def test_a_failing_handler_cannot_stop_the_observer(golden_tree, capsys):
    pending = watch_module.Pending()
    handler = watch_module.make_handler(watch_module.EventPaths(load_config(golden_tree)), pending)

    class Odd:
        is_directory = False
        src_path = 42            # not a path: os.fsdecode raises

    handler.dispatch(Odd())       # must not raise into watchdog's thread
    changes, _ = pending.take(0.0, 2.0, timeout=1.0)
    assert changes.everything
    assert "could not handle an event" in capsys.readouterr().err


def test_too_few_inotify_watches_is_said_at_start():
    assert watches.watch_limit_warning(needed=500, limit=8192, used=100) is None
    warning = watches.watch_limit_warning(needed=9000, limit=8192, used=100)
    assert "--poll" in warning and "9,000" in warning and "8,092" in warning
    counts = watches.inotify_watches()
    assert counts is None or counts[0] > 0 and counts[1] >= 0


def test_changes_only_in_ignored_files_rebuild_nothing(golden_tree):
    from kwdocs.engine.incremental import Rebuilder

    config = load_config(golden_tree)
    rebuilder = Rebuilder(config)
    with locked(config.state):
        assert rebuilder.full(jobs=1, quiet=True).code == 0
        (golden_tree / "build/output.txt").write_text("compiled again\n")
        (golden_tree / "debug.log").write_text("another line\n")
        assert rebuilder.update(Changes(files={"build/output.txt"}, written={"debug.log"})) is None
        os.utime(golden_tree / "README.md")
        outcome = rebuilder.update(Changes(written={"README.md"}))
        assert outcome is not None and outcome.modified == ["README.md"] and outcome.written == 0


def test_an_edited_html_layout_override_shows_without_a_restart(tmp_path):
    """Editing the override ``html/page.html.j2`` changes every site page while watch runs."""
    tree = tmp_path / "tree"
    (tree / "templates" / "html").mkdir(parents=True)
    (tree / "shapes.py").write_text('"""Shapes."""\n\n\ndef area(side: float) -> float:\n    return side * side\n')
    shipped = Path(__file__).parents[1] / "templates" / "html" / "page.html.j2"
    override = tree / "templates" / "html" / "page.html.j2"
    override.write_text(shipped.read_text())
    (tree / "pyproject.toml").write_text('[tool.kwdocs]\nhtml = true\ntemplates = "templates"\n')
    site_page = tree / OUT / "site" / "shapes.py_docs.html"
    watching = Watching(tree)
    try:
        watching.wait_for(r"kwdocs: watching ", STARTUP_SECONDS)
        assert "layout-edited-while-watching" not in site_page.read_text()
        override.write_text(shipped.read_text().replace("<body", "<body data-mark=\"layout-edited-while-watching\"", 1))
        watching.wait_for(r"settings changed")
        deadline = time.monotonic() + SETTLE_SECONDS
        while "layout-edited-while-watching" not in site_page.read_text():
            assert time.monotonic() < deadline, "the site kept the old layout:\n" + "\n".join(watching.lines[-20:])
            assert watching.process.poll() is None, "kwdocs watch died:\n" + "\n".join(watching.lines)
            time.sleep(0.2)
    finally:
        if watching.process.poll() is None:
            watching.stop()


def test_watch_html_keeps_the_site_current(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(Path(__file__).parent / "fixtures" / "golden" / "tree", tree)
    watching = Watching(tree, "--html")
    try:
        watching.wait_for(r"kwdocs: watching ", STARTUP_SECONDS)
        page = tree / OUT / "site" / "geometry" / "shapes" / "circle.py_docs.html"
        assert page.is_file() and "html_watched_function" not in page.read_text()
        with open(tree / "geometry" / "shapes" / "circle.py", "a") as handle:
            handle.write('\n\ndef html_watched_function():\n    """Feed the watched wombats."""\n    return 1\n')
        watching.wait_for(r"geometry/shapes/circle\.py changed: .*pages written")
        assert "html_watched_function" in page.read_text()
        # the search data too, made by its own step beside the render step
        assert "html_watched_function" in {row[0] for row in keyword_search(tree / OUT / "site")}
        assert "wombats" in {row[0] for row in fulltext_search(tree / OUT / "site")}
    finally:
        if watching.process.poll() is None:
            watching.stop()


def test_a_file_changed_after_extraction_is_vouched_for_only_once_read_again(golden_tree, tmp_path):
    """Under load a file can change again between extraction and rendering, its last event
    consumed before the build read it: its pages are left as they were, and the watch vouched
    for them all the same (``kwdocs check`` said current, its page was not a clean build's).  Now
    the build names the file, vouches for nothing, and the watch reads it again; a whole rebuild
    (after damaged state) that leaves one vouches for nothing either."""
    from kwdocs.engine.incremental import Rebuilder
    from kwdocs.store import snapshot, state

    config = load_config(golden_tree)
    rebuilder = Rebuilder(config)
    circle = golden_tree / "geometry/shapes/circle.py"
    with locked(config.state):
        assert rebuilder.full(jobs=1, quiet=True).code == 0
        circle.write_text(circle.read_text() + "\n\ndef added_under_load():\n    return 1\n")
        with changed_after_extraction("geometry/shapes/circle.py"):
            outcome = rebuilder.update(Changes(written={"geometry/shapes/circle.py"}))
        assert outcome is not None and outcome.unsettled == ["geometry/shapes/circle.py"]
        assert snapshot.previous(config) == {}, "a page left as it was is vouched for"
        outcome = rebuilder.update(Changes(written={"geometry/shapes/circle.py"}))    # what watch does next
        assert outcome is not None and outcome.unsettled == []
        assert snapshot.previous(config) != {}
        circle.write_text(circle.read_text() + "\n\ndef added_again():\n    return 2\n")
        state.mark_damaged(config, "damaged by the test")
        with changed_after_extraction("geometry/shapes/circle.py"):
            outcome = rebuilder.update(Changes(written={"geometry/shapes/circle.py"}))
        assert outcome is not None and outcome.full
        assert snapshot.previous(config) == {}, "a whole rebuild's page left as it was is vouched for"
        outcome = rebuilder.update(Changes(written={"geometry/shapes/circle.py"}))
        assert outcome is not None and outcome.code == 0
    assert pages(golden_tree / OUT) == clean_build(golden_tree, tmp_path)
    assert run_kwdocs("check", "--src", str(golden_tree)) == 0
