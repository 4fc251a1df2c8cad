"""Every stored result proves itself: a killed build, a lost or damaged state folder cost time, never
correctness.  After each, the next build equals a clean build byte for byte, and ``kwdocs check``
gives the answer it gives without any state."""
from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.output_checks import kwdocs_command, pages, run_build, temporaries
from tests.test_concurrency import make_tree


def check(src: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(kwdocs_command("check", "--src", str(src), "--out", str(out)),
                          capture_output=True, text=True, timeout=300)


def verdict(result: subprocess.CompletedProcess) -> tuple[int, list[str]]:
    """What check said: its exit code and the pages it named (its timing aside)."""
    return result.returncode, sorted(line for line in result.stdout.splitlines() if not line.startswith("kwdocs"))


def stateless_verdict(src: Path, out: Path, scratch: Path) -> tuple[int, list[str]]:
    """check's answer for the same pages with no state at all (a fresh clone in CI)."""
    if scratch.exists():
        shutil.rmtree(scratch)
    shutil.copytree(out, scratch, ignore=shutil.ignore_patterns(".kwdocs"))
    return verdict(check(src, scratch))


def assert_like_a_clean_build(src: Path, out: Path, tmp: Path, *args: str) -> None:
    """``out`` holds exactly what a clean build (with ``args``) writes, and check says so with and
    without state."""
    clean = tmp / "clean-compare"
    if clean.exists():
        shutil.rmtree(clean)
    result = run_build(src, clean, "-q", *args)
    assert result.returncode == 0, result.stderr
    expected, actual = pages(clean), pages(out)
    assert sorted(actual) == sorted(expected), sorted(set(actual) ^ set(expected))[:10]
    assert [rel for rel in expected if actual[rel] != expected[rel]] == []
    assert temporaries(out) == []
    said = check(src, out)
    assert said.returncode == 0, said.stdout + said.stderr
    assert "Traceback" not in said.stderr


def build(src: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    result = run_build(src, out, "-q", *args)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stdout + result.stderr
    return result


# ---------------------------------------------------------------- the reproductions

def test_an_edit_after_a_build_killed_mid_extraction_reaches_its_pages(tmp_path):
    """A first build killed after one folder's facts were saved, but before doit recorded
    anything: the next build must read the edited file again, and check must not vouch for it."""
    src, out = tmp_path / "t", tmp_path / "o"
    (src / "a").mkdir(parents=True)
    (src / "b").mkdir()
    (src / "a/x.py").write_text("def one():\n    return 1\n")
    (src / "b/big.py").write_text("".join(f"def f{i}(a, b=1):\n    return a + b\n" for i in range(60000)))
    process = subprocess.Popen(kwdocs_command("build", "--src", str(src), "--out", str(out), "-j", "1"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not list((out / ".kwdocs/facts").glob("*.json")):
            assert process.poll() is None and time.monotonic() < deadline, "the build ended before it was killed"
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
    finally:
        process.kill()
        process.wait()
    with open(src / "a/x.py", "a") as handle:
        handle.write("\ndef two():\n    return 2\n")
    build(src, out, "-j", "1")
    assert "two" in (out / "a/x.py_kw.md").read_text()
    assert_like_a_clean_build(src, out, tmp_path)


def test_lost_facts_and_a_deleted_file_keep_the_other_pages(tmp_path):
    src, out = tmp_path / "t", tmp_path / "o"
    (src / "pkg/sub").mkdir(parents=True)
    (src / "pkg/util.py").write_text("def helper():\n    pass\n")
    (src / "pkg/sub/a.py").write_text("from pkg.util import helper\n")
    (src / "pkg/sub/b.py").write_text("from pkg.util import helper\n")
    build(src, out)
    shutil.rmtree(out / ".kwdocs/facts")
    (src / "pkg/sub/b.py").unlink()
    build(src, out)
    assert (out / "pkg/util.py_docs.md").is_file()
    assert_like_a_clean_build(src, out, tmp_path)


# ---------------------------------------------------------------- damage

def small_tree(src: Path) -> None:
    (src / "pkg/sub").mkdir(parents=True)
    (src / "pkg/__init__.py").write_text('"""The package."""\n')
    (src / "pkg/util.py").write_text("def helper():\n    pass\n\n\nclass Tool:\n    def run(self):\n        pass\n")
    for name in "abcde":
        (src / f"pkg/sub/{name}.py").write_text(f"from pkg.util import helper\n\n\ndef use_{name}():\n    helper()\n")
    (src / "README.md").write_text("# Tree\n\nA tree.\n")
    (src / "setup.cfg").write_text("[metadata]\nname = tree\n")


def everyday_edit(src: Path) -> None:
    """Append to 3 files, delete 1, add 1 (and a new folder)."""
    for rel in ("pkg/util.py", "pkg/sub/a.py", "README.md"):
        with open(src / rel, "a") as handle:
            handle.write("\n\ndef appended():\n    return 2\n" if rel.endswith(".py") else "\n## More\n")
    (src / "pkg/sub/b.py").unlink()
    (src / "pkg/extra").mkdir()
    (src / "pkg/extra/new.py").write_text("from pkg.util import Tool\n\n\nclass Newer(Tool):\n    pass\n")


def state_files(state: Path, pattern: str = "**/*") -> list[Path]:
    return sorted(path for path in state.glob(pattern) if path.is_file() and path.name != "lock")


def _replace_by_folder(path: Path) -> None:
    path.unlink()
    (path / "inside").mkdir(parents=True)


def _zero_hashes(path: Path) -> None:
    import re
    path.write_bytes(re.sub(rb'"sha256":"[0-9a-f]{64}"', b'"sha256":"' + b"0" * 64 + b'"', path.read_bytes()))


def _wrong_shape(path: Path) -> None:
    import json
    unit = json.loads(path.read_bytes().split(b"\n")[0]).get("unit")
    path.write_text(json.dumps({"unit": unit, "key": 5, "files": ["not", "facts"]}))


DAMAGE = {
    "every JSON file truncated": lambda s: [p.write_bytes(b"") for p in state_files(s, "**/*.json")],
    "every JSON file garbage": lambda s: [p.write_bytes(b"\x00garbage{[") for p in state_files(s, "**/*.json")],
    "shard folders deleted": lambda s: [shutil.rmtree(p) for p in s.iterdir() if p.is_dir() and p.name != "ledger"],
    "doit.sqlite3 deleted": lambda s: (s / "doit.sqlite3").unlink(),
    "doit.sqlite3 truncated": lambda s: (s / "doit.sqlite3").write_bytes(b""),
    "doit.sqlite3 garbage": lambda s: (s / "doit.sqlite3").write_bytes(os.urandom(4096)),
    "facts deleted": lambda s: shutil.rmtree(s / "facts"),
    "facts of the wrong shape": lambda s: [_wrong_shape(p) for p in state_files(s, "facts/*.json")],
    "sha256 in facts zeroed": lambda s: [_zero_hashes(p) for p in state_files(s, "facts/*.json")],
    "snapshot.json a folder": lambda s: _replace_by_folder(s / "snapshot.json"),
    "scanned.json a folder": lambda s: _replace_by_folder(s / "scanned.json"),
    "folders.json a folder": lambda s: _replace_by_folder(s / "folders.json"),
    "page records deleted": lambda s: shutil.rmtree(s / "pages"),
    "keyword index state deleted": lambda s: shutil.rmtree(s / "keywords"),
    "journals garbage": lambda s: [p.write_bytes(b'["x.md", 5, "a", 3]\n\xff\xfe') for p in state_files(s, "ledger/*")],
    "state of another kwdocs version": lambda s: (s / "format").write_text("kwdocs state 1\n"),
    "all state but the journal of pages written deleted":
        lambda s: [shutil.rmtree(p) if p.is_dir() else p.unlink() for p in s.iterdir() if p.name != "ledger"],
}


@pytest.mark.parametrize("kind", DAMAGE)
def test_damaged_state_costs_time_never_correctness(tmp_path, kind):
    src, out = tmp_path / "t", tmp_path / "o"
    small_tree(src)
    build(src, out)
    everyday_edit(src)
    DAMAGE[kind](out / ".kwdocs")
    damaged = verdict(check(src, out))
    assert damaged == stateless_verdict(src, out, tmp_path / "stateless"), kind
    assert damaged[0] == 1
    result = build(src, out)
    assert "Traceback" not in result.stderr
    assert_like_a_clean_build(src, out, tmp_path)
    assert verdict(check(src, out)) == stateless_verdict(src, out, tmp_path / "stateless") == (0, [])
    assert build(src, out).stderr == ""       # recovered for good: no more warnings


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picks=st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1), st.binary(min_size=1, max_size=8)),
                      min_size=1, max_size=6))
def test_random_bytes_in_random_state_files(tmp_path_factory, picks):
    tmp = tmp_path_factory.mktemp("random")
    src, out = tmp / "t", tmp / "o"
    small_tree(src)
    build(src, out)
    everyday_edit(src)
    files = state_files(out / ".kwdocs")
    for which, where, data in picks:
        path = files[int(which * (len(files) - 1))]
        content = bytearray(path.read_bytes())
        at = int(where * len(content))
        content[at:at + len(data)] = data
        path.write_bytes(bytes(content))
    assert verdict(check(src, out)) == stateless_verdict(src, out, tmp / "stateless")
    build(src, out)
    assert_like_a_clean_build(src, out, tmp)


# ---------------------------------------------------------------- damage, with the site

def _swap_facts(state: Path) -> None:
    first, second = state_files(state, "facts/*.json")[:2]
    one, other = first.read_bytes(), second.read_bytes()
    first.write_bytes(other)
    second.write_bytes(one)


SITE_DAMAGE = {     # issues 31 and 34: after each, the site stayed unlike a clean build's
    "two facts shards swapped": _swap_facts,
    "doit.sqlite3 garbage": DAMAGE["doit.sqlite3 garbage"],
    "journals garbage": DAMAGE["journals garbage"],
    "state rolled back": None,     # the state of the build before, over the pages of the last one, its edit undone
    "every JSON file garbage": DAMAGE["every JSON file garbage"],
    "search records deleted": lambda s: [shutil.rmtree(s / name) for name in ("search", "fulltext")],
}


def documented_edit(src: Path) -> None:
    """New words in documentation and a new definition: the search data and the tree change."""
    with open(src / "pkg/util.py", "a") as handle:
        handle.write('\n\ndef zebra():\n    """Quokka words only this edit brings."""\n')
    (src / "pkg/sub/f.py").write_text('"""Yak module."""\n')


@pytest.mark.parametrize("kind", SITE_DAMAGE)
def test_damaged_state_gives_the_site_of_a_clean_build(tmp_path, kind):
    """After each kind of damage, the next ``build --html`` writes the site (pages, search data,
    ``tree.js``) of a clean ``build --html`` byte for byte, and check (no ``html`` setting) says
    what it says without state, before and after."""
    src, out = tmp_path / "t", tmp_path / "o"
    small_tree(src)
    build(src, out, "--html")
    if SITE_DAMAGE[kind] is None:
        original = (src / "pkg/util.py").read_bytes()
        shutil.copytree(out / ".kwdocs", tmp_path / "earlier")
        documented_edit(src)
        build(src, out, "--html")
        shutil.rmtree(out / ".kwdocs")
        shutil.copytree(tmp_path / "earlier", out / ".kwdocs")
        # the sources as the state knows them: the edit's pages and site are what is left to judge
        (src / "pkg/util.py").write_bytes(original)
        (src / "pkg/sub/f.py").unlink()
    else:
        documented_edit(src)
        SITE_DAMAGE[kind](out / ".kwdocs")
    damaged = verdict(check(src, out))
    assert damaged == stateless_verdict(src, out, tmp_path / "stateless"), kind
    assert damaged[0] == 1 and "stale: site/_kwdocs/tree.js" in damaged[1], damaged   # a file came or went
    assert {"stale: site/pkg/util.py_docs.html", f"{'orphaned' if SITE_DAMAGE[kind] is None else 'missing'}: "
            "site/pkg/sub/f.py_docs.html"} <= set(damaged[1]), damaged
    build(src, out, "--html")
    assert_like_a_clean_build(src, out, tmp_path, "--html")
    assert verdict(check(src, out)) == stateless_verdict(src, out, tmp_path / "stateless") == (0, [])
    everyday_edit(src)
    build(src, out, "--html")
    assert_like_a_clean_build(src, out, tmp_path, "--html")


# ---------------------------------------------------------------- kills at random moments, edits between

def random_edit(src: Path, rng: random.Random, step: int) -> None:
    """Change, add and delete files; now and then a new folder."""
    files = sorted(src.rglob("*.py"))
    # the newest folder: a killed build may have extracted it without doit recording it
    newest = sorted(src.glob("new_*/mod.py"), key=lambda path: int(path.parent.name[4:]))[-1:]
    for path in rng.sample(files, min(3, len(files))) + newest:
        with open(path, "a") as handle:
            handle.write(f"\n\ndef edited_{step}_{rng.randrange(1000)}():\n    return {step}\n")
    if len(files) > 20:
        rng.choice(files).unlink()
    folder = rng.choice(sorted({path.parent for path in files}))
    (folder / f"added_{step}.py").write_text(f"class Added{step}:\n    pass\n")
    if rng.random() < 0.5:
        (src / f"new_{step}").mkdir()
        (src / f"new_{step}/mod.py").write_text("from pkg0.module_0 import Thing0_0\n")


def kill_at(command: list[str], after: float, sig: int) -> bool:
    """Run ``command`` in its own process group and send ``sig`` to its main process ``after``
    seconds in; whether it was still running then.  Whatever is left is killed."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    try:
        time.sleep(after)
        landed = process.poll() is None
        process.send_signal(sig)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        return landed
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def kill_and_recover(tmp: Path, kills: int, seed: int) -> int:
    """Kill builds and watchers at random moments with edits between; after each kill, check
    answers as without state, and the next build equals a clean build.  Kills that landed."""
    rng = random.Random(seed)
    src, out = tmp / "t", tmp / "o"
    make_tree(src, folders=6, files=20)     # a build lasts about a second
    started = time.monotonic()
    build(src, out, "-j", "2")
    seconds = time.monotonic() - started
    landed = 0
    for step in range(kills):
        random_edit(src, rng, step)
        sig = rng.choice([signal.SIGKILL, signal.SIGTERM])
        command = kwdocs_command("watch" if rng.random() < 0.3 else "build", "--src", str(src), "--out", str(out),
                                 "-j", "2", "-q")
        after = rng.uniform(0.05, seconds * 1.2)
        # a run that ended before its kill (an edit's build is quicker than the first, and a loaded
        # machine stretches every run) is run again and killed sooner, so every kill lands
        for _ in range(4):
            if kill_at(command, after, sig):
                landed += 1
                break
            after /= 3
        random_edit(src, rng, kills + step)
        assert verdict(check(src, out)) == stateless_verdict(src, out, tmp / "stateless"), f"kill {step}"
        build(src, out, "-j", "2")
        assert_like_a_clean_build(src, out, tmp)
    return landed


def test_killed_builds_and_watchers_with_edits_between_end_like_a_clean_build(tmp_path):
    assert kill_and_recover(tmp_path, kills=3, seed=1) == 3


@pytest.mark.slow
def test_killed_builds_and_watchers_at_twenty_moments(tmp_path):
    assert kill_and_recover(tmp_path, kills=20, seed=2) == 20


# ---------------------------------------------------------------- state of other code

def test_state_of_another_python_is_not_trusted_by_check(tmp_path, monkeypatch, capsys):
    """The state of a build under one Python says nothing about the pages under another (the
    standard library's modules differ): check answers as it does without state."""
    from kwdocs.context import drop_contexts as clear_caches
    from kwdocs.extract import links
    from kwdocs.store import snapshot
    from tests.conftest import run_kwdocs

    src, out, bare = tmp_path / "t", tmp_path / "o", tmp_path / "bare"
    src.mkdir()
    (src / "old.py").write_text("import imp\nimport json\n\n\ndef load(path):\n    return json.load(path)\n")
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    shutil.copytree(out, bare, ignore=shutil.ignore_patterns(".kwdocs"))

    def another_python() -> None:
        monkeypatch.setattr(snapshot.sys, "version_info", (3, sys_minor() + 1, 0, "final", 0))
        monkeypatch.setattr(links, "PYTHON_STDLIB", links.PYTHON_STDLIB - {"imp"})
        snapshot.code_fingerprint.cache_clear()
        clear_caches()

    def answer(folder: Path) -> tuple[int, list[str]]:
        capsys.readouterr()
        code = run_kwdocs("check", "--src", str(src), "--out", str(folder))
        return code, sorted(line for line in capsys.readouterr().out.splitlines() if not line.startswith("kwdocs"))

    try:
        another_python()
        assert answer(out) == answer(bare)
    finally:
        monkeypatch.undo()
        snapshot.code_fingerprint.cache_clear()
        clear_caches()


def sys_minor() -> int:
    import sys
    return sys.version_info[1]


_CODE_READS = """
import os, sys
from kwdocs.config import load_config
from kwdocs.store import snapshot
config = load_config(sys.argv[1], overrides={"output": sys.argv[2]})
package = os.path.dirname(os.path.dirname(snapshot.__file__))
opened = []
sys.addaudithook(lambda event, args: opened.append(args[0]) if event == "open" and isinstance(args[0], str)
                 and args[0].startswith(package + os.sep) else None)
snapshot.settings_digest(config)
print(len(opened), snapshot.code_fingerprint())
"""


def test_a_build_reads_kwdocs_own_code_only_when_a_file_of_it_changed(tmp_path):
    """The fingerprint of kwdocs' code is taken from what the last build recorded while the code
    files' stamps are the same (it read every file on every build), and is the same either way."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text("x = 1\n")
    built, fresh = tmp_path / "out", tmp_path / "fresh"
    from tests.conftest import run_kwdocs
    assert run_kwdocs("build", "--src", str(src), "--out", str(built), "-q") == 0

    def reads(out: Path) -> tuple[int, str]:
        done = subprocess.run([sys.executable, "-c", _CODE_READS, str(src), str(out)],
                              capture_output=True, text=True, check=True)
        count, fingerprint = done.stdout.split()
        return int(count), fingerprint

    (after_build, recorded), (without_record, hashed) = reads(built), reads(fresh)
    assert (after_build, recorded) == (0, hashed)
    assert without_record > 50    # every file of the package read


def test_code_files_written_just_now_are_hashed_again_by_the_next_build(monkeypatch):
    """A code file stamped within the clock's reach of now may change again keeping its stamp:
    its stamps are not recorded, so the next build reads the contents rather than trusting them."""
    from kwdocs.store import snapshot
    monkeypatch.setattr(snapshot, "_code_found", {})
    snapshot._code_digest()
    assert snapshot._code_found["files"]        # files of long ago: stamps kept for the next build
    monkeypatch.setattr(snapshot, "CODE_RACY_NS", time.time_ns())   # every file "just written"
    snapshot._code_digest()
    assert snapshot._code_found["files"] is None
