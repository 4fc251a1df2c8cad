"""Recall of kwdocs' C/C++/CUDA extractor measured against Universal Ctags.

Universal Ctags is the reference people already trust for "where is X
defined"; this script runs both over the same files and counts, per ctags
kind, how many ctags tags kwdocs also reports (same name, line within +-1).
It is a test-time comparison only: kwdocs itself never needs ctags.

    python bench/ctags_recall.py [--corpus DIR] [--jobs N] [--examples N]

Prints a table per kind, the overall recall over the kinds the extractor
promises (classes, structs, unions, enums, functions, prototypes, macros,
namespaces), the CPU seconds of both tools, and a few misses per kind with
their source line, plus kwdocs symbols ctags did not report (to see false
positives).
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from functools import lru_cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kwdocs.extract.decode import decode, is_binary  # noqa: E402

SUFFIXES = {".h", ".hpp", ".hh", ".hxx", ".c", ".cc", ".cpp", ".cxx", ".inl", ".cu", ".cuh"}
CTAGS_ARGS = [
    "--output-format=json", "--fields=+nKzSlr", "--extras=-F+r",
    "--kinds-C++=+p", "--kinds-C=+p", "--kinds-CUDA=+p",
    "--langmap=C++:+.inl",
]
# ctags kind -> the kwdocs kinds that count as finding it.
KIND_MAP: dict[str, set[str]] = {
    "namespace": {"namespace"},
    "class": {"class"},
    "struct": {"class"},
    "union": {"class"},
    "enum": {"class"},
    "function": {"function", "method"},
    "prototype": {"function", "method"},
    "macro": {"macro"},
    "typedef": {"type"},
    "header": {"include"},
}
TARGET_KINDS = ("namespace", "class", "struct", "union", "enum", "function", "prototype", "macro")
MACRO_CALL = "macro call"
"""ctags reads ``C10_DECLARE_bool(flag);`` or ``AT_FORALL_TYPES(DEFINE)`` at
namespace scope as a function or prototype; kwdocs leaves such macro
invocations out on purpose, so they are counted apart, not as misses."""
MACRO_AS_NAME = "macro as name"
"""ctags names ``class PROTOBUF_EXPORT Any PROTOBUF_FINAL :`` after the macro;
kwdocs reports ``Any`` on that line.  Counted apart, not as misses."""
_MACRO_NAME = re.compile(r"[A-Z][A-Z0-9]*_[A-Za-z0-9_]*")
LANGUAGES = {"C", "C++", "CUDA"}  # ctags guesses Objective-C for a few .h files
OUR_TO_CTAGS = {
    "namespace": ("namespace",), "class": ("class", "struct", "union", "enum"),
    "function": ("function", "prototype"), "method": ("function", "prototype"),
    "macro": ("macro",), "type": ("typedef",), "include": ("header",),
}


def source_files(corpus: Path) -> list[str]:
    """C/C++/CUDA files under ``corpus`` as sorted relative POSIX paths."""
    found = []
    for folder, _dirs, files in os.walk(corpus):
        for name in files:
            if Path(name).suffix.lower() in SUFFIXES:
                found.append(Path(folder, name).relative_to(corpus).as_posix())
    return sorted(found)


def normalise(name: str) -> str:
    """ctags writes ``operator ==``, the source may say ``operator==``."""
    return "".join(name.split())


def run_ctags(ctags: str, corpus: Path, files: list[str]) -> tuple[dict[str, list[dict]], float]:
    """Tags per file, and ctags' CPU seconds (user + system of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    completed = subprocess.run(
        [ctags, *CTAGS_ARGS, "-L", "-", "-f", "-"], cwd=corpus, input="\n".join(files),
        capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    tags: dict[str, list[dict]] = defaultdict(list)
    for line in completed.stdout.splitlines():
        tag = json.loads(line)
        if tag.get("_type") != "tag" or tag.get("kind") not in KIND_MAP:
            continue
        if tag["kind"] != "header" and tag.get("roles", "def") != "def":
            continue  # ``#undef X`` and other references: not definitions
        if tag["name"].startswith("__anon") or tag.get("language", "C++") not in LANGUAGES:
            continue  # an anonymous struct/enum has nothing to name; Objective-C is not ours
        tags[tag["path"]].append(tag)
    return tags, cpu


def is_macro_call(tag: dict, lines: list[str]) -> bool:
    """A "function" whose line starts with its own ALL_CAPS name: no return type."""
    if tag["kind"] not in ("function", "prototype") or not _MACRO_NAME.fullmatch(tag["name"]):
        return False
    line = tag.get("line", 0)
    return 0 < line <= len(lines) and lines[line - 1].lstrip().startswith(tag["name"])


def extract_chunk(arguments: tuple[str, list[str]]) -> tuple[dict[str, list[dict]], float]:
    """Worker: kwdocs symbols for some files and the CPU seconds it took."""
    from kwdocs.extract.cpp import extract

    corpus, files = arguments
    start = time.process_time()
    results = {}
    for path in files:
        data = Path(corpus, path).read_bytes()
        if is_binary(data):
            continue
        text, _encoding = decode(data)
        results[path] = extract(text, path)["symbols"]
    return results, time.process_time() - start


def run_kwdocs(corpus: Path, files: list[str], jobs: int) -> tuple[dict[str, list[dict]], float]:
    chunks = [files[index::jobs * 8] for index in range(jobs * 8)]
    symbols: dict[str, list[dict]] = {}
    cpu = 0.0
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        work = [(str(corpus), chunk) for chunk in chunks]
        for found, seconds in pool.imap_unordered(extract_chunk, work):
            symbols.update(found)
            cpu += seconds
    return symbols, cpu


def compare(corpus: Path, tags: dict[str, list[dict]], symbols: dict[str, list[dict]]):
    """Per ctags kind: count, found, misses; per kwdocs kind: symbols ctags lacks."""
    count: Counter[str] = Counter()
    found: Counter[str] = Counter()
    misses: dict[str, list[tuple[str, int, str]]] = defaultdict(list)
    extras: dict[str, list[tuple[str, int, str]]] = defaultdict(list)
    for path in sorted(set(tags) | set(symbols)):
        ours: dict[tuple[str, str], set[int]] = defaultdict(set)
        class_lines: set[int] = set()
        for symbol in symbols.get(path, []):
            ours[(symbol["kind"], normalise(symbol["name"]))].add(symbol["line"])
            if symbol["kind"] == "class":
                class_lines.add(symbol["line"])
        theirs: dict[tuple[str, str], set[int]] = defaultdict(set)
        lines = read_lines(corpus, path) if path in tags else []
        for tag in tags.get(path, []):
            kind, name, line = tag["kind"], normalise(tag["name"]), tag.get("line", 0)
            theirs[(kind, name)].add(line)
            hit = any(line + delta in ours[(our_kind, name)]
                      for our_kind in KIND_MAP[kind] for delta in (-1, 0, 1))
            if is_macro_call(tag, lines):
                kind = MACRO_CALL
            elif (not hit and KIND_MAP[kind] == {"class"} and _MACRO_NAME.fullmatch(name)
                  and class_lines & {line - 1, line, line + 1}):
                kind = MACRO_AS_NAME
            count[kind] += 1
            if hit:
                found[kind] += 1
            else:
                misses[kind].append((path, line, tag["name"]))
        for (kind, name), our_lines in ours.items():
            for line in our_lines:
                if not any(line + delta in theirs[(ctags_kind, name)]
                           for ctags_kind in OUR_TO_CTAGS.get(kind, ()) for delta in (-1, 0, 1)):
                    extras[kind].append((path, line, name))
    return count, found, misses, extras


@lru_cache(maxsize=64)
def read_lines(corpus: Path, path: str) -> list[str]:
    try:
        return decode(Path(corpus, path).read_bytes())[0].split("\n")
    except OSError:
        return []


def source_line(corpus: Path, path: str, line: int) -> str:
    lines = read_lines(corpus, path)
    return lines[line - 1].strip()[:110] if 0 < line <= len(lines) else ""


def report(corpus: Path, count, found, misses, extras, cpu_ctags: float, cpu_ours: float,
           files: int, wall_ours: float, examples: int) -> float:
    print(f"corpus: {corpus} ({files:,} C/C++/CUDA files)\n")
    print(f"{'ctags kind':<12} {'ctags':>8} {'found':>8} {'recall':>8}")
    for kind in [*KIND_MAP, MACRO_CALL, MACRO_AS_NAME]:
        if count[kind]:
            print(f"{kind:<12} {count[kind]:>8,} {found[kind]:>8,} {_percent(found[kind], count[kind])}")
    total = sum(count[kind] for kind in TARGET_KINDS)
    hits = sum(found[kind] for kind in TARGET_KINDS)
    overall = 100 * hits / total if total else 100.0
    print(f"{'overall*':<12} {total:>8,} {hits:>8,} {overall:>7.2f}%")
    raw_total, raw_hits = total + count[MACRO_CALL], hits + found[MACRO_CALL]
    print(f"{'overall+mc':<12} {raw_total:>8,} {raw_hits:>8,} {_percent(raw_hits, raw_total)}")
    print("* over " + ", ".join(TARGET_KINDS) + f"; +mc: counting the {MACRO_CALL}s"
          " (ALL_CAPS names without a return type, left out by design) as misses;\n"
          f"  {MACRO_AS_NAME}: ctags took an export macro for the class name, kwdocs has"
          " the class there under its real name\n")
    print(f"CPU seconds: ctags {cpu_ctags:.2f}, kwdocs {cpu_ours:.2f}"
          f" (kwdocs wall {wall_ours:.2f})\n")
    for kind in [*KIND_MAP, MACRO_CALL, MACRO_AS_NAME]:
        if misses[kind]:
            print(f"missed {kind} ({len(misses[kind]):,}):")
            for path, line, name in _spread(misses[kind], examples):
                print(f"  {path}:{line} {name!r}: {source_line(corpus, path, line)}")
    print()
    for kind in sorted(extras):
        print(f"kwdocs {kind} not tagged by ctags ({len(extras[kind]):,}):")
        for path, line, name in _spread(extras[kind], examples):
            print(f"  {path}:{line} {name!r}: {source_line(corpus, path, line)}")
    return overall


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:>7.2f}%" if whole else "      -"


def _spread(items: list, limit: int) -> list:
    """A few examples from across the list rather than the first file's."""
    if len(items) <= limit:
        return items
    step = len(items) / limit
    return [items[int(index * step)] for index in range(limit)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path("/work/corpus/full"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--examples", type=int, default=8, help="misses shown per kind")
    parser.add_argument("--ctags", default=shutil.which("ctags") or "/usr/bin/ctags")
    parser.add_argument("--misses", type=Path, help="write every miss here (TSV) for study")
    args = parser.parse_args(argv)
    if not args.ctags or not Path(args.ctags).exists():
        print("Universal Ctags not found (apt-get install universal-ctags)", file=sys.stderr)
        return 2
    files = source_files(args.corpus)
    tags, cpu_ctags = run_ctags(args.ctags, args.corpus, files)
    start = time.perf_counter()
    symbols, cpu_ours = run_kwdocs(args.corpus, files, args.jobs)
    wall = time.perf_counter() - start
    count, found, misses, extras = compare(args.corpus, tags, symbols)
    report(args.corpus, count, found, misses, extras, cpu_ctags, cpu_ours, len(files), wall,
           args.examples)
    if args.misses:
        with args.misses.open("w") as out:
            for kind, items in sorted(misses.items()):
                for path, line, name in items:
                    out.write(f"{kind}\t{path}\t{line}\t{name}\t"
                              f"{source_line(args.corpus, path, line)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
