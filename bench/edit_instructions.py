"""Count the instructions of one edit's build, this version against an earlier one.

    python3 bench/edit_instructions.py --baseline REV [--corpus DIR] [--file REL ...]
                                       [--python PYTHON] [--keep]

A sub-second build timed on a shared machine drifts by a fifth from one half
hour to the next.  valgrind's callgrind counts the instructions a process runs
instead: the same total, to 0.05%, from run to run, whatever else the machine
does.  For each version (copies of the code, as ``compare.py`` makes them):
one cold build of a copy of the corpus; then for each file, the output as that
build left it is put back, the file gets the benchmarks' edit (``run.py``'s
``add_keyword``), and one build runs under callgrind.  Prints each count and
the ratio.  The build runs in one process (an edit of a file or two hands doit
too few units for worker processes), so the count is the whole build's.
Default files: one ``.py`` and one ``.h`` of the corpus, picked as
``compare.py`` picks them.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare import code_copy, comparison_parser, pick  # noqa: E402  (this folder's)
from run import add_keyword, lay_out, working_folder  # noqa: E402

VERSIONS = ("baseline", "this")
_COLLECTED = re.compile(r"Collected : (\d+)")


def kwdocs_build(python: str, code: Path, src: Path, out: Path, work: Path,
                 under: list[str] = ()) -> subprocess.CompletedProcess:
    """``kwdocs build`` of ``code``'s copy, from the working folder (``python -m`` would
    import this repository's kwdocs if started in it)."""
    environment = dict(os.environ, PYTHONPATH=str(code))
    return subprocess.run([*under, python, "-m", "kwdocs", "build", "--src", str(src), "--out", str(out), "-q"],
                          cwd=work, env=environment, capture_output=True, text=True)


def instructions(python: str, code: Path, src: Path, out: Path, work: Path, label: str) -> int:
    """The instructions of one build under callgrind."""
    run = kwdocs_build(python, code, src, out, work,
                       ["valgrind", "--tool=callgrind", f"--callgrind-out-file={work / 'callgrind' / label}"])
    found = _COLLECTED.search(run.stderr)
    if run.returncode != 0 or found is None:
        raise SystemExit(f"edit_instructions: the build of {label} failed ({run.returncode}):\n{run.stderr[-2000:]}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = comparison_parser(__doc__)
    parser.add_argument("--file", action="append", metavar="REL",
                        help="a file of the corpus to edit (repeatable; default: one .py and one .h)")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("edit_instructions: valgrind is not installed (Debian: apt-get install valgrind)", file=sys.stderr)
        return 2
    with working_folder("kwdocs-instructions-", args.keep, say="edit_instructions") as work:
        corpus = work / "corpus"
        if args.corpus:
            corpus = args.corpus.resolve()
        else:
            lay_out(args, corpus)
        src = work / "src"
        shutil.copytree(corpus, src, symlinks=True)
        files = args.file or [rel for rel in (pick(src, ".py", 1), pick(src, ".h", 2)) if rel]
        (work / "callgrind").mkdir()
        counts: dict[tuple[str, str], int] = {}
        for version in VERSIONS:
            code = code_copy(args.baseline if version == "baseline" else None, work / f"code-{version}", args.python)
            out, built = work / f"out-{version}", work / f"built-{version}"
            print(f"edit_instructions: {version}: cold build", file=sys.stderr)
            cold = kwdocs_build(args.python, code, src, out, work)
            if cold.returncode != 0:
                raise SystemExit(f"edit_instructions: the cold build of {version} failed:\n{cold.stderr[-2000:]}")
            out.rename(built)   # each edit starts from it, put back where it was built (doit keeps paths)
            for number, rel in enumerate(files):
                shutil.rmtree(out, ignore_errors=True)
                shutil.copytree(built, out, symlinks=True)     # times kept: the state compares them
                shutil.copy2(corpus / rel, src / rel)
                add_keyword(src / rel, "instructions", number)
                print(f"edit_instructions: {version}: {rel} under callgrind", file=sys.stderr)
                counts[version, rel] = instructions(args.python, code, src, out, work, f"{version}-{number}")
                shutil.copy2(corpus / rel, src / rel)
        print(f"instructions of one edit's build (millions), baseline {args.baseline} against this version:")
        for rel in files:
            base, this = counts["baseline", rel], counts["this", rel]
            print(f"  {rel}: {base / 1e6:,.0f} against {this / 1e6:,.0f} ({this / base:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
