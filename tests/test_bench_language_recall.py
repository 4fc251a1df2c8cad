"""bench/language_recall.py: what it leaves out of shell recall, on scripts whose answers are known."""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPOSITORY

# a script defining ``real`` and ``after``; ``written``, ``quoted`` and ``awk_fn`` are text the
# script writes to another file, keeps in a variable or hands to awk
SCRIPT = """#!/bin/bash
real() {
  echo real
}
cat > generated.sh <<'EOF'
written() {
  echo written
}
EOF
helpers="
quoted () { :; }
$(printf '%s' x
  printf y
)
"
awk '
function awk_fn(x) { return x }
' /dev/null
after() { :; }
"""


def bench_module():
    spec = importlib.util.spec_from_file_location("language_recall", REPOSITORY / "bench" / "language_recall.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_shell_text_lines_are_heredoc_bodies_and_string_continuations(tmp_path: Path):
    script = tmp_path / "tool.sh"
    script.write_text(SCRIPT)
    text = bench_module().shell_text_lines(script)
    assert {6, 11, 17} <= text                       # written(), quoted (), awk_fn(x)
    assert not {2, 19} & text                        # real() and after()
    assert 13 not in text                            # inside $( ) within the string: code again
    assert not {5, 10, 16} & text                    # the lines the here-document and strings open on


@pytest.mark.skipif(shutil.which("ctags") is None, reason="Universal Ctags is not installed")
def test_shell_recall_leaves_out_ctags_functions_inside_text(tmp_path: Path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "tool.sh").write_text(SCRIPT)
    done = subprocess.run([sys.executable, str(REPOSITORY / "bench" / "language_recall.py"), str(tree),
                           "--examples", "5"], capture_output=True, text=True, timeout=120, cwd=REPOSITORY)
    assert done.returncode == 0, done.stderr
    row = next(line.split() for line in done.stdout.split("\n") if line.startswith("Sh "))
    # ctags lists written() (and maybe more text); only real() and after() are the script's
    assert row[:5] == ["Sh", "1", "0.0%", "2", "100.0%"], done.stdout
