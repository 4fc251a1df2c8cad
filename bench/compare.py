"""Compare this kwdocs with an earlier version, interleaved in one run on one machine.

    python3 bench/compare.py --baseline REV [--corpus DIR] [--rounds 2] [--edits 7]
                             [--python PYTHON] [--keep]

These machines are shared and noisy: the same build takes 30% longer from one
minute to the next, so figures from different runs of ``bench/run.py`` say
little about a change.  This runs the two versions in turn, each on its own
copy of the corpus: ``--rounds`` cold builds of each (which goes first
alternates from round to round), then ``--edits`` edit-and-build rounds of a ``.py``
file and of a header (the same file and the same edit for both, as
``bench/run.py`` edits), and prints both versions' runs, their medians and
the ratios, of wall and of CPU time.  Edits are counted from the second round on: the first shows
whatever the cold builds left behind.

Both versions run from copies compiled once (``git archive REV`` for the
baseline, the working tree for this version), with ``PYTHON``, which must
have kwdocs' dependencies, and from the working folder: ``python -m kwdocs``
started in this repository would import the working tree's kwdocs for both.  Timing is ``/usr/bin/time``'s, as in ``run.py``;
earlier writes are flushed before every run.
"""
from __future__ import annotations

import argparse
import io
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import MAKE_CORPUS, REPO, Measurement, add_keyword, lay_out, timed, working_folder  # noqa: E402  (this folder's)

VERSIONS = ("baseline", "this")


def code_copy(revision: str | None, folder: Path, python: str) -> Path:
    """kwdocs' package (with its templates) from a git revision, or from the working tree."""
    package = folder / "kwdocs"
    if revision is None:
        shutil.copytree(REPO / "kwdocs", package, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(REPO / "templates", package / "templates", ignore=shutil.ignore_patterns("__pycache__"))
    else:
        archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", revision, "kwdocs", "templates"],
                                 check=True, capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        (folder / "templates").rename(package / "templates")
    subprocess.run([python, "-m", "compileall", "-q", str(folder)], check=True, stdout=subprocess.DEVNULL)
    return folder


def pick(src: Path, suffix: str, seed: int) -> str | None:
    """One file of the corpus with the suffix, the same for both versions; None if there is none."""
    found = sorted(str(path.relative_to(src)) for path in src.rglob(f"*{suffix}") if path.is_file())
    return random.Random(seed).choice(found) if found else None


def in_turn(number: int) -> tuple[str, ...]:
    """Which version runs first alternates, so that neither always follows the other's writes."""
    return VERSIONS if number % 2 else VERSIONS[::-1]


def report(title: str, runs: dict[str, list[Measurement]]) -> str:
    """Each version's runs, wall and CPU (user + system, the workers' included), their medians and ratios."""
    lines = [f"{title}:"]
    ratios = []
    for what in ("wall", "cpu"):
        medians = {version: statistics.median(getattr(run, what) for run in measured)
                   for version, measured in runs.items()}
        for version in VERSIONS:
            lines.append(f"  {version:8} {what:4} median {medians[version]:6.2f} s   runs "
                         + " ".join(f"{getattr(run, what):.2f}" for run in runs[version]))
        ratios.append(f"{medians['this'] / medians['baseline']:.2f} ({what})")
    lines.append(f"  this / baseline: {', '.join(ratios)}")
    return "\n".join(lines)


def comparison_parser(doc: str) -> argparse.ArgumentParser:
    """The options of every comparison with an earlier version (``doc``: the script's docstring)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", required=True, metavar="REV", help="the git revision to compare with")
    parser.add_argument("--corpus", type=Path, metavar="DIR", help="a source tree to copy (never modified)")
    parser.add_argument("--make-corpus", default=str(MAKE_CORPUS), metavar="PATH",
                        help=f"the script laying out the corpus without --corpus (default: {MAKE_CORPUS})")
    parser.add_argument("--small", action="store_true", help="without --corpus: make-corpus.sh --small")
    parser.add_argument("--python", default=sys.executable, help="the Python to run kwdocs with")
    parser.add_argument("--keep", action="store_true", help="keep the working folder")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = comparison_parser(__doc__)
    parser.add_argument("--rounds", type=int, default=2, help="cold builds of each version (default 2)")
    parser.add_argument("--edits", type=int, default=7, help="edit rounds of each kind (default 7; 0: cold builds only)")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds before a run is killed")
    args = parser.parse_args(argv)
    with working_folder("kwdocs-compare-", args.keep, say="compare") as work:
        commands, sources = {}, {}
        for version in VERSIONS:
            code = code_copy(args.baseline if version == "baseline" else None, work / f"code-{version}", args.python)
            commands[version] = ["env", f"PYTHONPATH={code}", args.python, "-m", "kwdocs"]
            sources[version] = work / f"src-{version}"
            lay_out(args, sources[version])

        def build(version: str, out: Path, label: str) -> Measurement:
            run = timed([*commands[version], "build", "--src", str(sources[version]), "--out", str(out), "-q"],
                        work / "logs", f"{label}-{version}", args.timeout, cwd=work)
            status = "ok" if run.ok else f"FAILED exit {run.returncode}: {run.stderr_tail()}"
            print(f"compare:   {label} {version}: {run.wall:.2f} s wall, {run.cpu:.2f} s CPU ({status})",
                  file=sys.stderr, flush=True)
            if not run.ok:
                raise SystemExit(f"compare: {label} of {version} failed")
            return run

        results = []
        cold: dict[str, list[Measurement]] = {version: [] for version in VERSIONS}
        for number in range(1, args.rounds + 1):
            for version in in_turn(number):
                cold[version].append(build(version, work / f"cold-{version}-{number}", f"cold-{number}"))
        results.append(report("cold build", cold))
        serial = 0
        for suffix, seed in ((".py", 1), (".h", 2)) if args.edits > 0 else ():
            relative = pick(sources["baseline"], suffix, seed)
            if relative is None:
                results.append(f"one {suffix} file edited: skipped, the corpus has no {suffix} file")
                continue
            edits: dict[str, list[Measurement]] = {version: [] for version in VERSIONS}
            for number in range(args.edits + 1):
                serial += 1
                for version in in_turn(number):
                    add_keyword(sources[version] / relative, "compare", serial)
                    run = build(version, work / f"cold-{version}-1", f"edit{suffix}-{number}")
                    if number:
                        edits[version].append(run)
            results.append(report(f"one {suffix} file edited ({relative}), then build", edits))
        print("\n\n".join(results))
        return 0

if __name__ == "__main__":
    sys.exit(main())
