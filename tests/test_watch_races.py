"""``kwdocs watch`` against a tree that keeps changing under it (issue 31): branch switches,
edits, atomic saves, deletions and renames at random intervals, on a machine whose cores are
busy.  After every quiet period the output must equal a clean build byte for byte, and
``kwdocs check`` must give the same answer with the state folder and without it.

It takes a minute or two: deselect it with ``-m "not slow"``."""
from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_watch import OUT, STARTUP_SECONDS, Watching, clean_build, git, pages

ROUNDS = 30
SEED = 31
SETTLE_SECONDS = 30     # a rebuild of this tree takes well under a second, even beside the hogs
BRANCHES = ("main", "other", "third")
HOG = "while True: pass"


def _module(folder: int, module: int, variant: str) -> str:
    """A generated module; ``variant`` changes its definitions (and often not its size)."""
    functions = "".join(f'def {variant}_{module:02d}_{number:02d}(value):\n    """Adds {number}."""\n'
                        f"    return value + {number}\n\n\n" for number in range(24))
    return (f'"""Generated module {folder}/{module}, {variant}."""\n\n\n{functions}'
            f"class Shape{variant.title()}{module:02d}:\n    side = {folder}\n")


def _make_repository(tree: Path) -> None:
    """The golden tree and 48 generated modules on ``main``; ``other`` and ``third`` change most of
    them (``other`` keeps their sizes), delete some and add others."""
    shutil.copytree(Path(__file__).parent / "fixtures" / "golden" / "tree", tree)
    git(tree, "init", "-q", "-b", "main")
    (tree / ".git/info/exclude").write_text(f"{OUT}/\n")

    def write(variant: str, keep: range, extra: range = range(0)) -> None:
        for folder in range(4):
            package = tree / "generated" / f"package_{folder}"
            package.mkdir(parents=True, exist_ok=True)
            for module in range(12):
                path = package / f"module_{module:02d}.py"
                if module in keep or module in extra:
                    path.write_text(_module(folder, module, variant if module % 3 else "alpha"))
                elif path.exists():
                    path.unlink()

    write("alpha", range(12))
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "main")
    git(tree, "checkout", "-q", "-b", "other")
    write("gamma", range(10))       # the same length as "alpha": the same sizes, other content
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "other")
    git(tree, "checkout", "-q", "-b", "third", "main")
    write("epsilon", range(2, 12), range(12, 15))
    (tree / "geometry/shapes/circle.py").write_text("def only_on_third():\n    return 3\n")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "third")
    git(tree, "checkout", "-q", "main")


def _sources(tree: Path) -> list[Path]:
    return sorted(path for path in tree.rglob("*.py") if OUT not in path.parts and ".git" not in path.parts)


def _change(tree: Path, rng: random.Random, serial: int) -> None:
    """One change to the tree, as git or an editor makes it."""
    kind = rng.choice(("checkout", "checkout", "checkout", "edit", "atomic", "delete", "rename"))
    files = _sources(tree)
    if kind == "checkout" or not files:     # to a branch and back again, as in the issue
        for branch in rng.sample(BRANCHES, 3)[:rng.randint(1, 3)]:
            subprocess.run(["git", "checkout", "-q", "-f", branch], cwd=tree, check=True, capture_output=True)
            time.sleep(rng.uniform(0.05, 0.3))
        return
    path = rng.choice(files)
    if kind == "edit":
        with open(path, "a") as handle:
            handle.write(f"\n\ndef edited_{serial}():\n    return {serial}\n")
    elif kind == "atomic":      # VS Code, sed -i: a temporary file renamed over the old one
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(path.read_text() + f"\n\ndef saved_{serial}():\n    return {serial}\n")
        os.replace(temporary, path)
    elif kind == "delete":
        path.unlink()
    else:
        path.rename(path.with_name(f"renamed_{serial}.py"))


def _check(tree: Path, out: Path) -> tuple[int, str]:
    """``kwdocs check`` of ``tree`` into ``out``: exit code and output."""
    done = subprocess.run([sys.executable, "-m", "kwdocs", "check", "--src", str(tree), "--out", str(out)],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout + done.stderr


def _settled(watching: Watching, expected: dict[str, bytes]) -> dict[str, bytes]:
    """The watched output once it equals ``expected``, or as it is after ``SETTLE_SECONDS``."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        actual = pages(watching.tree / OUT)
        if actual == expected or time.monotonic() > deadline:
            return actual
        assert watching.process.poll() is None, "kwdocs watch died:\n" + "\n".join(watching.lines)
        time.sleep(0.1)


@pytest.mark.slow
def test_watch_through_random_changes_on_busy_cores_always_settles_on_a_clean_build(tmp_path):
    tree = tmp_path / "tree"
    _make_repository(tree)
    rng = random.Random(SEED)
    hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(2)]
    watching = Watching(tree)
    try:
        watching.wait_for(r"kwdocs: watching ", STARTUP_SECONDS)
        for round_ in range(ROUNDS):
            for serial in range(rng.randint(1, 3)):
                _change(tree, rng, round_ * 10 + serial)
                time.sleep(rng.choice((0.0, 0.02, 0.05, 0.1, 0.2, 0.4)))
            expected = clean_build(tree, tmp_path)
            actual = _settled(watching, expected)
            # with the state: under its shared lock, so after the rebuild in progress
            with_state = _check(tree, tree / OUT)
            # without: the same pages beside a copy of the same sources, as a fresh clone has them
            copy = tmp_path / "reference" / tree.name
            shutil.rmtree(copy / OUT)
            shutil.copytree(tree / OUT, copy / OUT, ignore=shutil.ignore_patterns(".kwdocs"))
            without_state = _check(copy, copy / OUT)
            differ = sorted(page for page in set(actual) | set(expected) if actual.get(page) != expected.get(page))
            assert not differ, (f"round {round_}: the output never equalled a clean build; differing: {differ[:10]}; "
                                f"check with state exited {with_state[0]}, without {without_state[0]}\n"
                                + "\n".join(watching.lines[-10:]))
            assert with_state[0] == without_state[0] == 0, (round_, with_state[1][-500:], without_state[1][-500:])
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        if watching.process.poll() is None:
            watching.stop()
