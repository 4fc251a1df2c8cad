"""Per language: how many files fall back to a plain-text page, definition recall against
Universal Ctags, and the share of in-repository imports that link to their page.

    python bench/language_recall.py TREE [TREE ...] [--examples N] [--ctags-fallback]

Each TREE is documented as one source tree.  Files are grouped by the language Universal
Ctags gives them (``--print-language``), so a file kwdocs does not recognise still counts
for its language.  A file "falls back" when kwdocs gives it the plain-text page (language
``text``) or its parser failed.  Recall counts the ctags definitions of the kinds listed in
KINDS for which kwdocs reports a symbol of the same name within one line; languages kwdocs
reads through ctags itself are left out of recall unless ``--ctags-fallback`` (they agree by
construction).  A shell "function" ctags finds inside a here-document body or a quoted string
spanning lines is text the script writes or evals elsewhere (a ``configure`` writing
``config.status``, an ``awk`` program, a help text), not a definition of the script: such tags
are left out, the here-documents and strings found by shfmt's parser (``shfmt-py``, one of
kwdocs' test extras), independently of kwdocs' own line scanner.  Imports: of the imports
kwdocs classifies as the project's own, the share with a target page.  A test-time comparison only: kwdocs never needs ctags.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kwdocs.extract import extract_bytes  # noqa: E402
from kwdocs.extract.decode import is_binary  # noqa: E402
from kwdocs.extract.links import resolve_links  # noqa: E402

# ctags language -> the ctags kinds that are definitions kwdocs promises for it
KINDS: dict[str, set[str]] = {
    "Go": {"package", "func", "const", "type", "var", "struct", "interface", "methodSpec", "talias"},
    "Rust": {"module", "struct", "interface", "implementation", "method", "function", "enum",
             "macro", "typedef", "constant", "variable"},
    "Java": {"class", "interface", "enum", "method", "annotation", "package"},
    "JavaScript": {"function", "class", "method", "generator"},
    "TypeScript": {"function", "class", "interface", "enum", "method", "namespace", "alias"},
    "Lua": {"function"},
    "Make": {"macro", "target"},
    "Sh": {"function"},
}
SKIP_DIRS = {".git", "node_modules"}


def files_of(tree: Path) -> list[str]:
    found = []
    for folder, folders, names in os.walk(tree, followlinks=True):
        folders[:] = sorted(name for name in folders if name not in SKIP_DIRS)
        for name in names:
            path = Path(folder, name)
            if path.is_file():
                found.append(path.relative_to(tree).as_posix())
    return sorted(found)


def ctags_languages(tree: Path, files: list[str]) -> dict[str, str]:
    completed = subprocess.run(["ctags", "--print-language", "-L", "-"], cwd=tree, input="\n".join(files),
                               capture_output=True, text=True, check=False)
    found = {}
    for line in completed.stdout.splitlines():
        path, _, language = line.rpartition(": ")
        if language and language != "NONE":
            found[path] = language
    return found


def ctags_tags(tree: Path, files: list[str]) -> dict[str, list[dict]]:
    completed = subprocess.run(["ctags", "--output-format=json", "--fields=+nKl", "--extras=-F",
                                "-L", "-", "-f", "-"], cwd=tree, input="\n".join(files),
                               capture_output=True, text=True, errors="replace", check=False)
    tags: dict[str, list[dict]] = defaultdict(list)
    for line in completed.stdout.splitlines():
        try:
            tag = json.loads(line)
        except ValueError:
            continue
        if tag.get("_type") == "tag" and tag.get("roles", "def") == "def":
            tags[tag["path"]].append(tag)
    return tags


def invented(tag: dict) -> bool:
    """Tags ctags makes up rather than reads: names of anonymous functions and shell
    "functions" named ``X=`` (``declare -A X=()``); object literals
    holding functions, which ctags calls classes (``var headers = {``); and a class tag on
    the first ``A.prototype.m = function`` line (kwdocs lists ``m`` there, ``A`` where its
    constructor is defined); calls through a prototype (``_super.prototype.next.call(this)``)
    that ctags reads as methods; Lua "functions" that are the result of a call
    (``local ok, err = pcall(function()``, ``fn = function_arg(1, fn)``)."""
    if tag["name"].startswith("AnonymousFunction") or tag["name"].endswith("="):
        return True  # ``declare -A X=()`` is no shell function ``X=``
    pattern = str(tag.get("pattern", ""))
    if tag.get("language") == "JavaScript" and re.search(
            rf"\.{re.escape(tag['name'])}\.(?:call|apply)\(|prototype\[", pattern):
        return True  # ``_super.prototype.next.call(this)`` calls ``next``; ``p[name] = f`` names nothing
    if tag.get("language") == "Lua":  # ``local ok, err = pcall(function()`` is no function ``err``
        name = re.escape(tag["name"].replace(":", ".").rpartition(".")[2])
        return not re.search(rf"function\s+[\w.:]*\b{name}\b|\b{name}\s*=\s*function\s*\(", pattern)
    return tag.get("kind") == "class" and tag.get("language") == "JavaScript" and (
        ".prototype." in pattern or not any(word in pattern for word in ("class", "function")))


# shfmt's nodes whose lines are text, not code; a command substitution inside one is code again
_SHELL_TEXT = {"SglQuoted", "DblQuoted"}
_SHELL_CODE = {"CmdSubst", "ProcSubst"}


def shell_text_lines(path: Path) -> set[int]:
    """The lines of a shell script inside a here-document body or a quoted string's
    continuation lines, as shfmt's parser reads the script (its dialect from the ``#!``
    line, else bash); none when shfmt cannot parse it."""
    shfmt = shutil.which("shfmt", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if shfmt is None:
        sys.exit("shfmt is not installed (pip install -e '.[test]' brings it)")
    for dialect in ("auto", "bash"):
        done = subprocess.run([shfmt, "-ln", dialect, "--to-json"], input=path.read_bytes(), capture_output=True,
                              check=False)
        if done.returncode == 0:
            break
    else:
        return set()
    text: set[int] = set()
    stack: list[tuple[str, object]] = [("", json.loads(done.stdout))]
    while stack:  # parents before children: an inner command substitution unmarks its lines
        field, node = stack.pop()
        if isinstance(node, list):
            stack.extend((field, item) for item in reversed(node))
            continue
        if not isinstance(node, dict):
            continue
        if "Pos" in node:
            first, last = node["Pos"]["Line"], node["End"]["Line"]
            if field == "Hdoc":
                text.update(range(first, last + 1))
            elif node.get("Type") in _SHELL_TEXT and last > first:
                text.update(range(first + 1, last + 1))  # the quote's own line holds code before it
            elif node.get("Type") in _SHELL_CODE and last > first:
                text.difference_update(range(first + 1, last))
        stack.extend((key, value) for key, value in reversed(node.items()) if isinstance(value, (dict, list)))
    return text


def measure(trees: list[Path], examples: int, include_fallback: bool) -> None:
    files_per: Counter[str] = Counter()
    fallback: Counter[str] = Counter()
    wanted: Counter[str] = Counter()
    found: Counter[str] = Counter()
    imports_repo: Counter[str] = Counter()
    imports_linked: Counter[str] = Counter()
    misses: dict[str, list[str]] = defaultdict(list)
    unlinked: dict[str, list[str]] = defaultdict(list)
    by_kind: dict[str, Counter] = defaultdict(Counter)
    by_kind_found: dict[str, Counter] = defaultdict(Counter)
    for tree in trees:
        files = files_of(tree)
        languages = ctags_languages(tree, files)
        sources = [path for path in files if path in languages]
        tags = ctags_tags(tree, sources)
        facts_by_path = {}
        for path in files:
            data = Path(tree, path).read_bytes()
            if is_binary(data):
                continue
            facts_by_path[path] = extract_bytes(path, data)[0]
        for path in sources:
            facts = facts_by_path.get(path)
            if facts is None:
                continue
            language = languages[path]
            files_per[language] += 1
            if facts["language"] == "text" or not facts.get("parsed", True):
                fallback[language] += 1
            if language not in KINDS and not (include_fallback and facts.get("extractor")):
                continue
            ours: dict[str, set[int]] = defaultdict(set)
            for symbol in facts["symbols"]:
                name = "".join(symbol["name"].split())
                ours[name].add(symbol["line"])
                if symbol.get("parent"):  # ctags names Lua's ``function M.f`` ``M.f``
                    for separator in (".", ":"):
                        ours[symbol["parent"] + separator + name].add(symbol["line"])
            text_lines = shell_text_lines(Path(tree, path)) if language == "Sh" else set()
            for tag in tags.get(path, []):
                if language in KINDS and tag.get("kind") not in KINDS[language]:
                    continue
                if invented(tag) or tag.get("line", 0) in text_lines:
                    continue
                name = "".join(tag["name"].split())
                line = tag.get("line", 0)
                wanted[language] += 1
                by_kind[language][tag.get("kind")] += 1
                if any(line + delta in ours[name] for delta in (-1, 0, 1)):
                    found[language] += 1
                    by_kind_found[language][tag.get("kind")] += 1
                else:
                    misses[language].append(f"{path}:{line} {tag.get('kind')} {tag['name']}")
        resolved = resolve_links({path: facts["language"] for path, facts in facts_by_path.items()},
                                 {path: facts["imports"] for path, facts in facts_by_path.items()})
        for path, links in resolved.items():
            language = languages.get(path)
            if language is None:
                continue
            for dep in links["deps"]:
                if dep["category"] == "repo":
                    imports_repo[language] += 1
                    if dep["target"]:
                        imports_linked[language] += 1
                    else:
                        unlinked[language].append(f"{path}:{dep['line']} {dep['module']}")
    print(f"{'language':<12} {'files':>6} {'plain':>7} {'ctags defs':>10} {'recall':>8} "
          f"{'own imports':>11} {'linked':>8}")
    everything = "(all)"  # the last row: every file ctags gives a language, summed
    for counter in (files_per, fallback, wanted, found, imports_repo, imports_linked):
        counter[everything] = sum(counter.values())
    for language in [*sorted(set(files_per) - {everything}, key=lambda name: -files_per[name]), everything]:
        plain = fallback[language] / files_per[language] if files_per[language] else 0.0
        recall = f"{found[language] / wanted[language]:.1%}" if wanted[language] else "-"
        linked = (f"{imports_linked[language] / imports_repo[language]:.1%}"
                  if imports_repo[language] else "-")
        print(f"{language:<12} {files_per[language]:>6} {plain:>7.1%} {wanted[language]:>10} {recall:>8} "
              f"{imports_repo[language]:>11} {linked:>8}")
    if examples:
        for language, items in sorted(misses.items()):
            kinds = ", ".join(f"{kind} {by_kind_found[language][kind]}/{count}"
                              for kind, count in by_kind[language].most_common())
            print(f"\n{language} definitions missed ({len(items)}; {kinds}):")
            for item in items[:examples]:
                print("  ", item)
        for language, items in sorted(unlinked.items()):
            print(f"\n{language} own imports not linked ({len(items)}):")
            for item in items[:examples]:
                print("  ", item)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--examples", type=int, default=0)
    parser.add_argument("--ctags-fallback", action="store_true",
                        help="count recall for languages kwdocs reads through ctags too")
    arguments = parser.parse_args()
    measure(arguments.trees, arguments.examples, arguments.ctags_fallback)


if __name__ == "__main__":
    main()
