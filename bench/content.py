"""What kwdocs' documentation pages say: how much is specific to its file, and what to read.

Usage: python bench/content.py TREE [--out DIR] [--seed N] [--sample K] [--missed]

TREE is an output folder of kwdocs (it holds ``.kwdocs``) or a source tree, which is
built first (into ``--out``, by default a temporary folder) with this checkout's kwdocs.
It prints:

- the share of docs pages whose File Purpose text is the same as another page's;
- the share of documented definitions whose summary line is shown on their page: Python
  classes and functions with a docstring (shown anywhere outside the embedded source), and
  C/C++ declarations with a doc comment directly attached (shown under that declaration's own
  entry in Detailed Analysis, or, for a forward declaration ``struct X;``, under an entry
  named ``X``).  A C/C++ doc comment is a ``///`` or ``//!`` run or a ``/** */`` or ``/*! */``
  block whose next line starts a declaration (a function, class, namespace, typedef, ``using``,
  ``#define``, variable, data member or enumerator, ``template <...>`` heads included), or a
  ``///<``, ``//!<``, ``/**<``, ``/*!<`` comment after a declaration on its line; JS/TS
  declarations and members (private ones aside) with a ``/** */`` block above, Rust items,
  fields and variants with a ``///`` run above (attributes may stand between), Go exported
  names (a group's values and a struct's fields too) with a ``//`` run above, each shown under
  its own entry;
- the share of the seed layout's sections a page leaves out;
- a seeded random sample of rule findings (patterns, performance, security), each with
  the source line it names, to read and judge.

Definitions are found here, from the source files, not from kwdocs' state: the figures
check kwdocs rather than repeat it.
"""
from __future__ import annotations

import argparse
import ast
import html
import os
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

SEED_SECTIONS = ("File Metadata", "File Purpose", "Original Source", "High-Level Overview", "Detailed Analysis",
                 "Architecture & Design", "Dependencies", "Code Patterns & Idioms", "Performance Considerations",
                 "Security & Safety", "Testing & Usage", "Related Files", "Cross-References")
FINDING_SECTIONS = ("Code Patterns & Idioms", "Performance Considerations", "Security & Safety")
SOURCE_SECTION = "Original Source"
C_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".c", ".cc", ".cpp", ".cxx", ".cu", ".cuh")
JS_SUFFIXES = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")
LANGUAGE_OF = {".py": "python", ".rs": "rust", ".go": "go", **dict.fromkeys(C_SUFFIXES, "c/c++"),
               **dict.fromkeys(JS_SUFFIXES, "js/ts")}
_HEADING = re.compile(r"^## (.+)$", re.MULTILINE)
_ORIGINAL = re.compile(r"\*\*Original File\*\*: \[[^\]]*\]\(([^)]+)\)")
_LINE = re.compile(r"\b[Ll]ines? (\d+)")
_WORDS = re.compile(r"[A-Za-z0-9]+")
_FILLER = re.compile(r"^No (?:obvious|specific)\b|not applicable")   # a section's stand-in, not a finding
_DOC_BLOCK = re.compile(r"^[ \t]*(?:///(?!/)|//!)(.*)$")
_DECLARATION = re.compile(r"^[ \t]*(?:template\b|class\b|struct\b|enum\b|union\b|namespace\b|using\b|typedef\b|#define\b|"
                          r"[A-Za-z_][\w:<>,*& \t]*[\w>*&][ \t]+[*&]*[A-Za-z_~][\w:]*[ \t]*\(|"
                          # a variable or data member: a type, a name, then ``=``, ``{``, ``;``, ``[`` or a bit field
                          r"(?!(?:return|delete|throw|goto|case|else|co_return|co_yield)\b)"
                          r"[A-Za-z_][\w:<>,*& \t]*[\w>*&][ \t]+[*&]*[A-Za-z_]\w*[ \t]*(?:[=;{\[]|:[ \t]*\d))")
_ENUMERATOR = re.compile(r"^[ \t]*[A-Za-z_]\w*[ \t]*(?:=[^,;{}]*)?,?[ \t]*(?:$|//|/\*)")
_ANONYMOUS_TYPEDEF = re.compile(r"^[ \t]*typedef[ \t]+(?:struct|union|enum)[ \t]*\{")
_TRAILING_MORE = re.compile(r"^[ \t]*//[/!]<")
_ENUM_OPENS = re.compile(r"^[ \t]*(?:typedef[ \t]+)?enum\b[^;]*$")
_TRAILING = re.compile(r"^(?P<code>[^/]*?\S[^/]*?)[ \t]*(?://[/!]<|/\*[*!]<)[ \t]?(?P<doc>.*)$")
_INLINE_COMMAND = re.compile(r"[\\@](?:c|p|a|b|e|em|ref)[ \t]+")
_COMMAND = re.compile(r"^[\\@](?:(?:param|tparam|throws?|exception|retval)\b(?:\[[\w,]+\])?[ \t]+\S+|\w+\b(?:\[\w+\])?)[ \t]*")
# declarations with no name to show: anonymous unions, structs, enums, namespaces; friends
_ANONYMOUS = re.compile(r"^[ \t]*(?:(?:union|struct|enum)[ \t]*\{|namespace[ \t]*(?:\{|//|/\*|$)|friend\b)")
_FORWARD = re.compile(r"\b(?:class|struct|union)[ \t]+(\w+)[ \t]*;")
_ENTRY = re.compile(r'^[ \t]*- <a id="l(\d+)-[^"]*"></a>[^`\n]*\*\*`([^`]+)`\*\*', re.MULTILINE)


def sections(markdown: str) -> dict[str, str]:
    """``##`` title -> body, outside fenced blocks (a page embeds its source in one)."""
    found: dict[str, str] = {}
    title, body, fence = None, [], ""
    for line in markdown.split("\n"):
        stripped = line.lstrip()
        if fence:
            if stripped.startswith(fence) and not stripped[len(fence):].strip():
                fence = ""
        elif stripped.startswith(("```", "~~~")):
            fence = re.match(r"[`~]{3,}", stripped).group(0)
        elif line.startswith("## "):
            if title is not None:
                found[title] = "\n".join(body)
            title, body = line[3:].strip(), []
            continue
        body.append(line)
    if title is not None:
        found[title] = "\n".join(body)
    return found


_MARKUP = re.compile(r"\]\([^)\s]*\)|\]\[[^\]\s]*\]|<a id=\"[^\"]*\"></a>")   # link targets and anchors: not read


_ROLE = re.compile(r":(?:[a-z]+:)+(?=`)")   # reST roles: ``:class:`X``` reads as ``X``


def words(text: str) -> str:
    """The text's words, lower case, one space apart: what a reader sees, markup aside."""
    return " ".join(_WORDS.findall(html.unescape(_MARKUP.sub("", text).replace("\\", "")))).lower()


def python_docs(text: str) -> list[tuple[int, str]]:
    """(line, summary line) of each documented class and function."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node)
            summary = _ROLE.sub("", next((line.strip() for line in (doc or "").split("\n") if line.strip()), ""))
            if summary:
                found.append((node.lineno, summary))
    return found


def c_docs(text: str) -> list[tuple[int, str, int, str, bool]]:
    """(first line, summary, last line of the head, the name it is shown under when not at its
    head (a forward-declared class, an anonymous ``typedef struct {...} name;``), is it a
    parameter's) of each C/C++ declaration with a doc comment directly attached: a
    ``///``/``//!`` run or ``/** */``/``/*! */`` block whose next line starts the declaration,
    or a ``///<`` after it on its line.  A parameter's doc is shown under its function."""
    lines = text.split("\n")
    found = []
    index = 0
    in_enum = False
    while index < len(lines):
        line = lines[index]
        block: list[str] = []
        if _ENUM_OPENS.match(line) or (in_enum and "{" in line):
            in_enum = "}" not in line.split("{", 1)[-1]
        elif in_enum and "}" in line.split("//")[0]:
            in_enum = False
        if (trailing := _TRAILING.match(line)) and re.search(r"\w", trailing.group("code")):
            if words(trailing.group("doc")):
                # ``/**<\brief text`` shows as ``text``, as a doc above does
                doc = re.sub(r"^[\\@]brief\s*", "", trailing.group("doc").split("*/")[0].strip())
                # ``  120}; ///< text`` ends a declaration begun on the line above
                first = index if re.match(r"[ \t]*[\d})]", trailing.group("code")) else index + 1
                # a parameter's: before a comma, or the last one before the list's ``)`` or ``>``
                after = next((rest.strip() for rest in lines[index + 1:index + 20]
                              if rest.strip() and not _TRAILING_MORE.match(rest)), "")
                parameter = trailing.group("code").rstrip().endswith(",") or after[:1] in (")", ">")
                found.append((first, doc, index + 1, "", not in_enum and parameter))
            index += 1
            continue
        if _DOC_BLOCK.match(line) and not re.match(r"^[ \t]*//[/!]<", line):
            while index < len(lines) and (match := _DOC_BLOCK.match(lines[index])) \
                    and not re.match(r"^[ \t]*//[/!]<", lines[index]):
                block.append(match.group(1))
                index += 1
        elif re.match(r"^[ \t]*/\*[*!](?![*/<])", line):
            while index < len(lines):
                block.append(re.sub(r"^[ \t]*(?:/\*[*!]|\*(?!/))?", "", lines[index]).split("*/")[0])
                index += 1
                if "*/" in lines[index - 1]:
                    break
        else:
            index += 1
            continue
        if index >= len(lines):
            continue
        following = lines[index]
        if _DECLARATION.match(following) or (in_enum and _ENUMERATOR.match(following)):
            summary = next((re.sub(r"^[\\@]brief\s*", "", item.strip()) for item in block
                            if item.strip() and not re.fullmatch(r"[\\@]\w+", item.strip())), "")
            # ``\c none`` shows as ``none``, ``:c:macro:`X``` as ``X``, ``@param[in] s text`` as ``s``: text
            summary = _ROLE.sub("", _INLINE_COMMAND.sub("", _COMMAND.sub("", summary)))
            if words(summary) and not _ANONYMOUS.match(following):
                last = index
                # the head runs to its ``{`` or ``;`` (a ``template`` head may hold an ``#if``); a ``#define`` is its line
                while last < min(len(lines), index + 30) and not re.search(r"[{;]|^[ \t]*#[ \t]*define", lines[last]):
                    last += 1
                head = " ".join(lines[index:last + 1])
                forward = _FORWARD.search(head)
                shown_as = forward.group(1) if forward and "{" not in head else ""
                if _ANONYMOUS_TYPEDEF.match(head):
                    shown_as = _typedef_name(lines, index)
                code = following.split("//")[0].rstrip()
                found.append((index + 1, summary, last + 1, shown_as, not in_enum and (
                    code.endswith(",") or (code.endswith(")") and "(" not in code))))
    return found


def _typedef_name(lines: list[str], index: int) -> str:
    """The name after the ``}`` closing the ``typedef struct {`` on line ``index``."""
    depth = 0
    for line in lines[index:index + 5000]:
        code = line.split("//")[0]
        for position, char in enumerate(code):
            depth += {"{": 1, "}": -1}.get(char, 0)
            if char == "}" and depth == 0:
                name = re.match(r"\s*(\w+)", code[position + 1:])
                return name.group(1) if name else ""
    return ""


# what each language's own tool documents: a doc comment right above one of these lines
_JS_DECLARATION = re.compile(
    r"^[ \t]*(?:export[ \t]+)?(?:default[ \t]+)?(?:declare[ \t]+)?(?:abstract[ \t]+)?(?:async[ \t]+)?"
    r"(?:(?:function\*?|class|interface|type|enum|const|let|var|namespace|module)[ \t]+[\w$]|"
    # a class or interface member; private ones are not part of the API
    r"(?!(?:private|return|if|for|while|switch|throw|case)\b)(?:(?:public|protected|static|readonly|abstract|override|"
    r"declare|async|get|set)[ \t]+)*[A-Za-z_$][\w$]*[?!]?[ \t]*[(:<=;])")
_RUST_ITEM = re.compile(
    r"^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?(?:(?:unsafe|async|const|default|extern(?:[ \t]+\"[^\"]*\")?)[ \t]+)*"
    r"(?:(?:fn|struct|enum|trait|type|const|static|mod|union)[ \t]+[A-Za-z_]|macro_rules!|"
    r"pub(?:\([^)]*\))?[ \t]+[A-Za-z_]\w*[ \t]*:|[A-Z]\w*[ \t]*(?:[({,=]|$))")   # a public field, a variant
_GO_DECLARATION = re.compile(r"^(?:(?:func[ \t]+(?:\([^)]*\)[ \t]*)?|type[ \t]+|var[ \t]+|const[ \t]+)[A-Z]\w*|"
                             r"\t[A-Z]\w*(?:[ \t]+[\w*\[\]]|[ \t]*=|[ \t]*$))")   # or a group's value, a field
_LINK_TAG = re.compile(r"\{@(?:link|linkcode|linkplain)[ \t]+([^}|]+?)(?:[ \t|][^}]*)?\}")


def comment_docs(path: Path, text: str) -> list[tuple[int, str, int, str, bool]]:
    """(line, summary, line, "", False) of each JS/TS, Rust or Go declaration with a doc comment
    right above it, as TypeDoc, rustdoc and go doc read them: a ``/** */`` block, a ``///`` run
    (attributes may stand between), a ``//`` run above an exported name."""
    lines = text.split("\n")
    language = LANGUAGE_OF.get(path.suffix)
    found = []
    index = 0
    while index < len(lines):
        block: list[str] = []
        line = lines[index]
        if language == "js/ts" and re.match(r"^[ \t]*/\*\*(?!/)", line):
            while index < len(lines):
                block.append(re.sub(r"^[ \t]*(?:/\*\*|\*(?!/))?", "", lines[index]).split("*/")[0])
                index += 1
                if "*/" in lines[index - 1]:
                    break
        elif language == "rust" and re.match(r"^[ \t]*///(?!/)", line):
            while index < len(lines) and re.match(r"^[ \t]*(?:///(?!/)|#\[)", lines[index]):
                if not lines[index].lstrip().startswith("#["):
                    block.append(lines[index].lstrip()[3:])
                index += 1
        elif language == "go" and line.startswith("//") or language == "go" and re.match(r"^\t//", line):
            while index < len(lines) and lines[index].lstrip().startswith("//"):
                block.append(lines[index].lstrip()[2:])
                index += 1
            block = [item for item in block if not re.match(r"go:|\s*\+build|nolint", item)]
        else:
            index += 1
            continue
        if language == "js/ts":
            while index < len(lines) and re.match(r"^[ \t]*@\w", lines[index]):   # decorators
                index += 1
        if index >= len(lines):
            break
        following = lines[index]
        pattern = {"js/ts": _JS_DECLARATION, "rust": _RUST_ITEM, "go": _GO_DECLARATION}[language]
        if not pattern.match(following):
            continue
        summary = next((item.strip() for item in block if item.strip()), "")
        if language == "js/ts" and summary.startswith("@"):
            continue   # tags only: nothing for a reader
        summary = _LINK_TAG.sub(r"\1", summary)
        if language == "rust":
            summary = re.sub(r"^#+[ \t]+", "", summary)
        if words(summary):
            found.append((index + 1, summary, index + 1, "", False))
    return found


def entry_docs(page_section: str) -> list[tuple[int, str, str]]:
    """(line, name, the words under it) of each entry of a page's Detailed Analysis."""
    entries = list(_ENTRY.finditer(page_section))
    found = []
    for number, entry in enumerate(entries):
        end = entries[number + 1].start() if number + 1 < len(entries) else len(page_section)
        found.append((int(entry.group(1)), entry.group(2), words(page_section[entry.end():end])))
    return found


def documented(path: Path, text: str) -> list[tuple[int, str]] | list[tuple[int, str, int, str, bool]]:
    if path.suffix == ".py":
        return python_docs(text)
    if path.suffix in C_SUFFIXES:
        return c_docs(text)
    if path.suffix in LANGUAGE_OF:
        return comment_docs(path, text)
    return []


def is_shown(summary: str, where: str) -> bool:
    """Are the summary's words (its first 80 characters' worth) in ``where``'s words?"""
    said = words(summary)
    return (said[:80].rsplit(" ", 1)[0] if len(said) > 80 else said) in where


def build(tree: Path, out: Path) -> None:
    command = [sys.executable, "-m", "kwdocs", "build", "--src", str(tree), "--out", str(out), "-q"]
    print("building:", " ".join(command), file=sys.stderr)
    subprocess.run(command, check=True, cwd=Path(__file__).resolve().parent.parent, stdout=sys.stderr)


def read_pages(out: Path) -> list[tuple[str, Path | None, str]]:
    """(page's path in the output, its source file, the page) of every docs page."""
    found = []
    for folder, folders, names in os.walk(out):
        folders[:] = sorted(name for name in folders if name != ".kwdocs" and name != "site")
        for name in sorted(names):
            if not name.endswith("_docs.md"):
                continue
            page = Path(folder, name)
            kw = Path(folder, name[:-len("_docs.md")] + "_kw.md")
            source = None
            if kw.is_file() and (match := _ORIGINAL.search(kw.read_text(errors="replace"))):
                source = (kw.parent / unquote(match.group(1))).resolve()
            found.append((page.relative_to(out).as_posix(), source, page.read_text(errors="replace")))
    return found


def measure(out: Path, seed: int, sample: int, missed: list[str] | None = None) -> None:
    pages = read_pages(out)
    if not pages:
        sys.exit(f"{out}: no kwdocs documentation pages")
    purposes: dict[str, str] = {}
    left_out = 0
    definitions = shown = 0
    by_language: Counter = Counter()
    shown_by_language: Counter = Counter()
    findings: list[tuple[str, str, str, Path | None]] = []
    for name, source, page in pages:
        parts = sections(page)
        purposes[name] = parts.get("File Purpose", "").strip()
        left_out += sum(title not in parts for title in SEED_SECTIONS)
        for title in FINDING_SECTIONS:
            for line in parts.get(title, "").split("\n"):
                if line.startswith("- ") and not _FILLER.search(line[2:]):
                    findings.append((name, title, line[2:], source))
        if source is None or not source.is_file():
            continue
        text = source.read_text(errors="replace")
        docs = documented(source, text)
        if not docs:
            continue
        language = LANGUAGE_OF[source.suffix]
        if language == "python":
            outside = words("\n".join(body for title, body in parts.items() if title != SOURCE_SECTION))
            hits = [is_shown(summary, outside) for _, summary in docs]
        else:
            entries = entry_docs(parts.get("Detailed Analysis", ""))
            hits = []
            for first, summary, last, shown_as, parameter in docs:
                under = [text for line, name, text in entries if first <= line <= last or name == shown_as]
                if parameter:   # under its function or template: the entry above it or below it
                    before = [text for line, _, text in entries if line < first]
                    after = [text for line, _, text in entries if line > last]
                    under += before[-1:] + after[:1]
                hits.append(any(is_shown(summary, text) for text in under))
        if missed is not None:
            missed.extend(f"{source}:{doc[0]}: {doc[1][:70]}" for doc, hit in zip(docs, hits) if not hit)
        for hit in hits:
            definitions += 1
            shown += hit
            by_language[language] += 1
            shown_by_language[language] += hit
    texts = Counter(purposes.values())
    shared = sum(1 for text in purposes.values() if texts[text] > 1)
    print(f"docs pages: {len(pages):,}")
    print(f"File Purpose shared with another page: {shared:,} of {len(pages):,} pages "
          f"({100 * shared / len(pages):.1f}%); {len(texts):,} distinct texts")
    for text, count in texts.most_common(3):
        if count > 1:
            print(f"    {count:,} x {text[:100]!r}")
    if definitions:
        print(f"documented definitions whose documentation is on their page: {shown:,} of {definitions:,} "
              f"({100 * shown / definitions:.1f}%)")
        for language in sorted(by_language):
            print(f"    {language}: {shown_by_language[language]:,} of {by_language[language]:,} "
                  f"({100 * shown_by_language[language] / by_language[language]:.1f}%)")
    else:
        print("documented definitions: none found in the source files")
    total = len(pages) * len(SEED_SECTIONS)
    print(f"seed sections left out: {left_out:,} of {total:,} ({100 * left_out / total:.1f}%)")
    chosen = random.Random(seed).sample(findings, min(sample, len(findings)))
    print(f"\nrule findings: {len(findings):,}; a sample of {len(chosen)} (seed {seed}) to read:")
    lines_of: dict[Path, list[str]] = {}
    for name, title, finding, source in sorted(chosen):
        print(f"\n{name} [{title}]\n    {finding}")
        numbers = [int(number) for number in _LINE.findall(finding)]
        if source is None or not source.is_file():
            continue
        if source not in lines_of:
            lines_of[source] = source.read_text(errors="replace").split("\n")
        for number in numbers[:2]:
            if 0 < number <= len(lines_of[source]):
                print(f"    {number:>6} | {lines_of[source][number - 1].strip()[:160]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path, help="a kwdocs output folder, or a source tree to build")
    parser.add_argument("--out", type=Path, help="where to build a source tree (default: a temporary folder)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the findings' sample (default 1)")
    parser.add_argument("--sample", type=int, default=50, help="findings to sample (default 50)")
    parser.add_argument("--missed", action="store_true",
                        help="also list each documented definition whose documentation is not shown")
    args = parser.parse_args()
    tree = args.tree.resolve()
    missed: list[str] | None = [] if args.missed else None
    if (tree / ".kwdocs").is_dir():
        measure(tree, args.seed, args.sample, missed)
    else:
        with tempfile.TemporaryDirectory(prefix="kwdocs-content-") as scratch:
            out = args.out.resolve() if args.out else Path(scratch) / "out"
            build(tree, out)
            measure(out, args.seed, args.sample, missed)
    if missed:
        print(f"\ndocumented definitions whose documentation is not shown ({len(missed):,}):")
        print("\n".join(f"    {line}" for line in missed))


if __name__ == "__main__":
    main()
