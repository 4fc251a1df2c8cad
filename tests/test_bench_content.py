"""bench/content.py: what it counts on a tree whose answers are known."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPOSITORY


def test_content_figures_of_a_small_tree(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text('"""Same words."""\n')
    (src / "b.py").write_text('"""Same words."""\n')
    (src / "shapes.py").write_text('"""Shapes."""\n\n\ndef area(side):\n    """Area of a square of this side."""\n'
                                   '    return side * side\n\n\ndef secret():\n    return 1\n')
    # four documented declarations: a prototype, a struct, a member with ``///<``, one with ``///``
    # over it; the plain ``//`` over ``depth`` and the undocumented ``id`` are not counted
    (src / "box.h").write_text("#pragma once\n\n/// Width of the box in pixels.\nint box_width(int scale);\n\n"
                               "/// A box.\nstruct Box {\n  int width;  ///< Width in pixels.\n"
                               "  /// Height in pixels.\n  int height;\n  // Depth.\n  int depth;\n  int id;\n};\n")
    (src / "run.py").write_text('"""Run it."""\nimport subprocess\n\nsubprocess.run("ls", shell=True)\n')
    done = subprocess.run([sys.executable, str(REPOSITORY / "bench" / "content.py"), str(src),
                           "--out", str(tmp_path / "out"), "--seed", "3"],
                          capture_output=True, text=True, timeout=300, cwd=REPOSITORY)
    assert done.returncode == 0, done.stderr
    report = done.stdout
    assert "docs pages: 5" in report
    assert "File Purpose shared with another page: 2 of 5 pages (40.0%)" in report
    assert "documented definitions whose documentation is on their page: 5 of 5 (100.0%)" in report
    assert "python: 1 of 1" in report and "c/c++: 4 of 4" in report
    assert "seed sections left out:" in report
    # the shell finding, with the line it names, read from the source
    assert "run.py_docs.md [Security & Safety]" in report
    assert '4 | subprocess.run("ls", shell=True)' in report
    # an output folder is read as it is, the same figures
    again = subprocess.run([sys.executable, str(REPOSITORY / "bench" / "content.py"), str(tmp_path / "out"),
                            "--seed", "3"], capture_output=True, text=True, timeout=300, cwd=REPOSITORY)
    assert again.stdout == report


def test_c_parameter_and_typedef_docs_count_where_kwdocs_shows_them(tmp_path: Path):
    """A parameter's ``///<`` counts as shown under its function, an anonymous ``typedef struct``'s
    doc under the typedef's name, a ``/**<\\brief`` without its command."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "grid.h").write_text(
        "#pragma once\n\n/// Cell count of the grid.\nint cells(int rows, ///< Rows of the grid.\n"
        "          int columns);\n\n/** A point of the grid. */\ntypedef struct {\n  int x; /**<\\brief Column. */\n"
        "} point_t;\n")
    done = subprocess.run([sys.executable, str(REPOSITORY / "bench" / "content.py"), str(src),
                           "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300, cwd=REPOSITORY)
    assert done.returncode == 0, done.stderr
    # cells, its parameter rows, point_t and its member x are shown; nothing else is documented
    assert "c/c++: 4 of 4 (100.0%)" in done.stdout, done.stdout
