"""What the parse/extract stage's CPU goes to: the parsers against the work done around them.

    python3 bench/extract_parts.py SOURCE_TREE

Every Python and C/C++/CUDA file of the tree is read into memory first, then each part is
timed alone in this process (CPU seconds, ``time.process_time``; the collector paused as the
extract step pauses it): ``ast.parse`` and freeing its tree, the Python extractor's reading of
the tree; the C/C++ preparation (macros blanked), tree-sitter's parse and the whole C/C++
extractor; then the rules' masking and evaluation of every file of the tree.  The parsers' rows
are the floor a pure-Python extractor stands on; the rest is what optimising kwdocs can cut.
"""
from __future__ import annotations

import argparse
import ast
import gc
import os
import sys
import time
from pathlib import Path

from kwdocs.extract import cpp, extract_bytes, python
from kwdocs.extract.decode import decode, is_binary
from kwdocs.pages.compose import ANALYSE_LIMIT
from kwdocs.rules.ruleset import RuleSet

C_FAMILY = (".h", ".hpp", ".hh", ".hxx", ".inl", ".c", ".cc", ".cpp", ".cxx", ".cu", ".cuh")


def files_of(src: Path) -> list[Path]:
    found = []
    for root, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        found += [Path(root, name) for name in sorted(files)]
    return found


def parts(src: Path) -> dict[str, float]:
    """CPU seconds per part over the tree."""
    paths = files_of(src)
    heads = {path: path.read_bytes()[:ANALYSE_LIMIT] for path in paths}
    texts = {path: decode(data)[0] for path, data in heads.items() if not is_binary(data)}
    py = [(str(path), text) for path, text in texts.items() if path.suffix == ".py" and not python._too_heavy(text)]
    cc = [(str(path), text) for path, text in texts.items() if path.suffix.lower() in C_FAMILY]
    seconds: dict[str, float] = {}

    def add(part: str, started: float) -> float:
        now = time.process_time()
        seconds[part] = seconds.get(part, 0.0) + now - started
        return now

    gc.disable()
    for path, text in py:
        started = time.process_time()
        try:
            tree = ast.parse(text, filename=path)
        except (SyntaxError, ValueError):
            continue
        started = add("python: ast.parse", started)
        python._AstReader(path).read(tree, text)
        started = add("python: the rest of the extractor", started)
        del tree
        add("python: freeing the tree", started)
    for path, text in cc:
        cuda = path.lower().endswith(cpp.CUDA_SUFFIXES)
        started = time.process_time()
        prepared, _ = cpp._prepare(text, cuda)
        started = add("c/c++: preparation", started)
        source = prepared.encode("utf-8", "surrogatepass")
        if len(source) <= cpp.MAX_PARSE_BYTES:
            cpp._parse(cpp._parser(cuda), source)
        started = add("c/c++: tree-sitter parse", started)
        cpp.extract(text, path)
        add("c/c++: whole extractor", started)
    seconds["c/c++: the rest of the extractor"] = (seconds.pop("c/c++: whole extractor", 0.0)
                                                   - seconds.get("c/c++: tree-sitter parse", 0.0)
                                                   - seconds.get("c/c++: preparation", 0.0))
    rules = RuleSet.load(lazy=True)
    for path in paths:
        facts, text, calls = extract_bytes(str(path.relative_to(src)), heads[path])
        started = time.process_time()
        if text is not None:
            rules.mask_secrets(text, facts["language"], "x")
        started = add("rules: masking secrets", started)
        rules.evaluate(facts, text, calls)
        add("rules: evaluation", started)
    gc.enable()
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("src", type=Path, help="the source tree (read only)")
    args = parser.parse_args(argv)
    seconds = parts(args.src)
    print("| part | CPU s |\n| --- | ---: |")
    for part, spent in seconds.items():
        print(f"| {part} | {spent:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
