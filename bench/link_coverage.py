"""How many imports/includes that name a file of the corpus kwdocs links to it, and how fast.

Usage: python bench/link_coverage.py --corpus /work/corpus/full [--jobs N] [--misses K]

Imports come from kwdocs' own extractors when their modules import (per
language); otherwise from a regex stand-in, and the output says which.  The
check of "this module/header exists in the corpus" looks at the disk directly,
independently of ``kwdocs.extract.links``' indexes.
"""
from __future__ import annotations

import argparse
import bisect
import importlib.util
import os
import posixpath
import re
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kwdocs.extract import language_of  # noqa: E402
from kwdocs.extract.links import resolve_links  # noqa: E402

_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n#;]+)", re.M)
_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"\n]+)[>\"]", re.M)


def has_extractor(module: str) -> bool:
    """True when ``kwdocs.extract.<module>`` exists, so ``extract_bytes`` uses the real one."""
    try:
        return importlib.util.find_spec(f"kwdocs.extract.{module}") is not None
    except ImportError:
        return False


def regex_python_imports(text: str, path: str) -> list[dict]:
    """Imports as the Python extractor reports them (relative ones made absolute)."""
    starts = _line_starts(text)
    package = path.split("/")[:-1]
    found = []
    for match in _FROM.finditer(text):
        dots, module, names = match.group(1), match.group(2), match.group(3)
        level = len(dots)
        if level:
            base = package[:len(package) - (level - 1)] if level - 1 <= len(package) else []
            module = ".".join(base + ([module] if module else []))
        names = re.sub(r"#[^\n]*", "", names).strip("()\\ \t").replace("\n", " ")
        names = [name.split()[0] for name in names.split(",")
                 if name.strip() and name.split()[0].isidentifier() or name.strip() == "*"]
        found.append({"module": module, "names": names, "kind": "from", "level": level,
                      "line": bisect.bisect_right(starts, match.start())})
    for match in _IMPORT.finditer(text):
        line = bisect.bisect_right(starts, match.start())
        for item in match.group(1).split(","):
            words = item.split()
            if words and all(part.isidentifier() for part in words[0].split(".")):
                found.append({"module": words[0], "kind": "import", "level": 0, "line": line})
    return sorted(found, key=lambda entry: entry["line"])


def regex_includes(text: str) -> list[dict]:
    """``#include`` lines as the C/C++ extractor reports them."""
    starts = _line_starts(text)
    return [{"module": match.group(2).strip(), "kind": "include", "system": match.group(1) == "<",
             "line": bisect.bisect_right(starts, match.start())} for match in _INCLUDE.finditer(text)]


def _line_starts(text: str) -> list[int]:
    return [0] + [match.end() for match in re.finditer("\n", text)]


def imports_of(task: tuple[str, str, str, bool]) -> tuple[str, str, list[dict]]:
    """(path, language, imports) of one corpus file."""
    root, path, language, use_extractor = task
    data = Path(root, path).read_bytes()
    if use_extractor:
        from kwdocs.extract import extract_bytes
        facts, _, _ = extract_bytes(path, data)
        return path, facts.get("language", language), facts.get("imports", [])
    text = data.decode("utf-8", "replace")
    if language == "python":
        return path, language, regex_python_imports(text, path)
    if language in ("cpp", "cuda"):
        return path, language, regex_includes(text)
    return path, language, []


def corpus_paths(root: Path) -> list[str]:
    paths = []
    for folder, _, files in os.walk(root):
        for name in files:
            paths.append(Path(folder, name).relative_to(root).as_posix())
    return sorted(paths)


def python_files_for(root: Path, module: str) -> set[str]:
    """The files at the corpus root that are ``module`` (package, module or stub)."""
    base = module.replace(".", "/")
    candidates = (f"{base}/__init__.py", f"{base}.py", f"{base}/__init__.pyi", f"{base}.pyi")
    return {candidate for candidate in candidates if (root / candidate).is_file()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--misses", type=int, default=10, help="unlinked examples to print")
    args = parser.parse_args()
    root = args.corpus.resolve()

    use = {"python": has_extractor("python"), "cpp": has_extractor("cpp")}
    print(f"imports from: Python {'kwdocs.extract.python' if use['python'] else 'regex fallback'}; "
          f"C/C++ {'kwdocs.extract.cpp' if use['cpp'] else 'regex fallback'}")
    paths = corpus_paths(root)
    tasks = []
    for path in paths:
        language = language_of(path).id
        module = "python" if language == "python" else "cpp" if language in ("cpp", "cuda") else None
        tasks.append((str(root), path, language, bool(module and use[module])))
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(imports_of, tasks, chunksize=64))
    print(f"extracted imports of {len(paths)} files in {time.perf_counter() - started:.1f} s")
    languages = {path: language for path, language, _ in results}
    imports = {path: found for path, _, found in results if found}
    print(f"imports/includes: {sum(map(len, imports.values()))}")

    wall, cpu = [], []
    for _ in range(7):
        started, started_cpu = time.perf_counter(), time.process_time()
        links = resolve_links(languages, imports)
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    print(f"resolve_links over 7 runs: wall best {min(wall) * 1000:.0f} ms, "
          f"median {sorted(wall)[3] * 1000:.0f} ms; CPU best {min(cpu) * 1000:.0f} ms "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")

    report_python(root, links, args.misses)
    report_includes(root, paths, links, args.misses)
    categories = Counter(dep["category"] for entry in links.values() for dep in entry["deps"])
    print("categories:", dict(sorted(categories.items())))
    return 0


def report_python(root: Path, links: dict[str, dict], misses: int) -> None:
    """Coverage of Python imports whose module is a file at the corpus root."""
    cache: dict[str, set[str]] = {}

    def files(module: str) -> set[str]:
        if module not in cache:
            cache[module] = python_files_for(root, module)
        return cache[module]

    for label, wanted in (("torch", lambda module: module.partition(".")[0] == "torch"),
                          ("all", lambda module: True)):
        counted = linked = 0
        unlinked = []
        for path, entry in links.items():
            for dep in entry["deps"]:
                if dep.get("kind") not in ("import", "from") or not wanted(dep["module"]):
                    continue
                expected = set(files(dep["module"])) if dep["module"] else set()
                if dep.get("kind") == "from":
                    for name in dep.get("names", []):
                        expected |= files(f"{dep['module']}.{name}" if dep["module"] else name)
                if not expected:
                    continue
                counted += 1
                targets = {dep["target"], *dep.get("name_targets", {}).values()}
                if targets & expected:
                    linked += 1
                else:
                    unlinked.append(f"{path}:{dep['line']} {dep['module']} -> {dep['target']}")
        print(f"python imports ({label}) naming a corpus module: {counted}, linked {linked} "
              f"({100 * linked / max(counted, 1):.2f}%)")
        for example in unlinked[:misses]:
            print("   unlinked:", example)


def report_includes(root: Path, paths: list[str], links: dict[str, dict], misses: int) -> None:
    """Coverage of includes whose header is a file of the corpus."""
    path_set = set(paths)
    by_name: dict[str, list[str]] = {}
    for path in paths:
        by_name.setdefault(path.rpartition("/")[2], []).append(path)
    for label, system in (('quoted "..."', False), ("angle <...>", True)):
        counted = linked = 0
        unlinked = []
        for path, entry in links.items():
            folder = path.rpartition("/")[0]
            for dep in entry["deps"]:
                if dep.get("kind") != "include" or bool(dep.get("system")) != system:
                    continue
                header = dep["module"]
                beside = posixpath.normpath(posixpath.join(folder, header))
                if not system and beside in path_set:
                    expected = {beside}
                elif "/" in header:  # a folder in the name: any path ending in it is that header
                    tail = "/" + posixpath.normpath(header)
                    expected = {candidate for candidate in by_name.get(header.rpartition("/")[2], [])
                                if candidate.endswith(tail) or candidate == header}
                else:  # a bare name: only the tree root or a folder named include holds it
                    expected = {candidate for candidate in by_name.get(header, [])
                                if f"/{candidate}".endswith(f"/include/{header}") or candidate == header}
                if not expected:
                    continue
                counted += 1
                if dep["target"] in expected:
                    linked += 1
                else:
                    unlinked.append(f"{path}:{dep['line']} {header} -> {dep['target']}")
        print(f"includes {label} naming a corpus file: {counted}, linked {linked} "
              f"({100 * linked / max(counted, 1):.2f}%)")
        for example in unlinked[:misses]:
            print("   unlinked:", example)


if __name__ == "__main__":
    raise SystemExit(main())
