"""The Python extractor's cold CPU, this checkout's against another's, interleaved file by file.

    python3 bench/python_extract_ab.py SOURCE_TREE OTHER_CHECKOUT [--rounds N]

Every ``.py``/``.pyi`` file of the tree is read into memory first; then, in each round, each file
is given to both extractors in turn (the order swapped every round), so the load of a shared
machine falls on both alike.  It prints each round's CPU seconds (``time.process_time``, the
collector paused) and the difference, then the totals, and how many class attributes
(``detail`` ``attribute``) and keyword-indexed definitions each version finds.
"""
from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import sys
import time
from pathlib import Path
from types import ModuleType

from kwdocs.extract import python as this_python
from kwdocs.pages.keywords import INDEXED_KINDS


def other_extractor(checkout: Path) -> ModuleType:
    """The other checkout's ``kwdocs/extract/python.py``, loaded under another name (its own
    imports come from this checkout's package)."""
    spec = importlib.util.spec_from_file_location("other_python", checkout / "kwdocs" / "extract" / "python.py")
    if spec is None or spec.loader is None:
        sys.exit(f"no Python extractor in {checkout}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def python_files(src: Path) -> list[tuple[str, str]]:
    found = []
    for root, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for name in sorted(files):
            if name.endswith((".py", ".pyi")):
                path = Path(root, name)
                found.append((path.relative_to(src).as_posix(), path.read_text(encoding="utf-8", errors="replace")))
    return found


def counts(module: ModuleType, files: list[tuple[str, str]]) -> tuple[int, int]:
    """(class attributes, keyword-indexed definitions and attributes) the extractor finds."""
    attributes = indexed = 0
    for rel, text in files:
        for symbol in module.extract(text, rel)["symbols"]:
            is_attribute = symbol.get("detail") == "attribute"
            attributes += is_attribute
            indexed += is_attribute or symbol["kind"] in INDEXED_KINDS
    return attributes, indexed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("src", type=Path)
    parser.add_argument("other", type=Path, help="another checkout of kwdocs")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    files = python_files(args.src)
    versions = {"other": other_extractor(args.other), "this": this_python}
    totals = dict.fromkeys(versions, 0.0)
    gc.disable()
    for round_ in range(args.rounds):
        spent = dict.fromkeys(versions, 0.0)
        order = list(versions.items()) if round_ % 2 == 0 else list(reversed(versions.items()))
        for rel, text in files:
            for name, module in order:
                start = time.process_time()
                module.extract(text, rel)
                spent[name] += time.process_time() - start
            gc.collect(0)
        for name in versions:
            totals[name] += spent[name]
        print(f"round {round_ + 1}: other {spent['other']:.2f} s, this {spent['this']:.2f} s, "
              f"{100 * (spent['this'] / spent['other'] - 1):+.1f}%", flush=True)
    gc.enable()
    print(f"{len(files)} files, {args.rounds} rounds: other {totals['other']:.2f} s, this {totals['this']:.2f} s, "
          f"{100 * (totals['this'] / totals['other'] - 1):+.1f}%")
    for name, module in versions.items():
        attributes, indexed = counts(module, files)
        print(f"{name}: {attributes} class attributes, {indexed} keyword-indexed entries")


if __name__ == "__main__":
    main()
