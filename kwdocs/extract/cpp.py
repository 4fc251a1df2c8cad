"""C, C++ and CUDA: namespaces, classes, functions, macros, types and includes.

tree-sitter gives a tolerant parse (headers full of macros rarely parse
cleanly); the C++ grammar serves C as well, CUDA files get the CUDA grammar.
Two things make the trees usable on real code such as PyTorch:

* export and attribute macros (``class C10_API Foo``, ``TORCH_API void f()``,
  ``C10_HOST_DEVICE inline int g()``) are blanked with spaces before parsing,
  so line numbers stay the same but the parser no longer mistakes the macro
  for the class name or the return type;
* macro invocations that tree-sitter reads as functions without a return type
  (``TORCH_LIBRARY(aten, m) { ... }``) are left out.

Files too large to parse quickly fall back to a line scan for ``#define`` and
``#include`` and say so in ``problems``.
"""
from __future__ import annotations

import bisect
import re
import string
import threading
from collections.abc import Callable, Container, Iterable, Iterator
from functools import cache
from itertools import count, repeat
from typing import Any

from tree_sitter import Language, Node, Parser, Tree

from kwdocs.extract import not_doc, treesitter

MAX_PARSE_BYTES = 4_000_000
"""Beyond this a file is scanned, not parsed: parse time grows with size."""
MAX_PARSE_MARKS = 400_000
"""Nor is a file with more marks (operators, brackets, quotes) than this: the tree costs
over 100 bytes per token, and code made of nothing but marks (``x = ------...1;``) has a
token per byte; the largest generated headers have 380,000."""
_MARKS = string.punctuation.replace("_", "").encode()
PARSE_CHECKS = 100_000
"""Budget for one parse, in the parser's progress checks (made at a fixed count of its steps),
not seconds: a clock would give a loaded machine other pages. Past it the file is scanned like a too
large one. The densest header measured needs about 14 checks a kilobyte, so a file of
``MAX_PARSE_BYTES`` stays well inside it."""

DAMAGE_LINES = 20
"""A parse error spanning this many lines is reported as a problem; smaller
ones (a macro the parser took for a type) lose nothing worth a warning."""
MAX_DOCSTRING = 600
CUDA_SUFFIXES = (".cu", ".cuh")

# --- grammars: one Language and Parser per grammar per process -------------


@cache
def _parser(cuda: bool) -> Parser:
    """Build the parser once; building a Language costs more than a small parse."""
    # each grammar's library only when a file of its language is parsed
    import tree_sitter_cpp
    import tree_sitter_cuda

    grammar = tree_sitter_cuda if cuda else tree_sitter_cpp
    return Parser(Language(grammar.language()))


# --- preparing the text: macros and #if branches the parser cannot see through --

# Patterns start with a literal (``\n``, ``_``, ``#``) where they can: Python's
# ``re`` then skips ahead quickly, where a leading ``\b`` or alternation costs
# a full attempt at every character.  Indentation is matched possessively (``[ \t]*+``) where
# what follows cannot be a blank: giving blanks back could never help, and
# trying costs a retry per blank on every indented line.
_MACRO_WORD = r"[A-Z][A-Z0-9]*_[A-Z0-9_]*"
# The C++ grammar does not know CUDA's qualifiers; the CUDA grammar does.
_CUDA_QUALIFIER = r"|__(?:host|device|global|forceinline|noinline)__"
_MACRO_ARGS = r"(?:[ \t]*\([^()\n]*\))?"
_BALANCED = r"\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"
# Attribute-like macros named for what they do (``TORCH_API``,
# ``C10_HOST_DEVICE``, ``FMT_CONSTEXPR``, ``PROTOBUF_FINAL``): never a type or a
# name, so blanked wherever a declaration goes on after them.  Found from the
# ``_`` that precedes the telling word, then widened to the whole word.
# The lookaheads only fail early what the alternation would fail (snake_case names).
_ATTRIBUTE_TAIL = re.compile(
    r"_(?=[A-Z0-9_])[A-Z0-9_]*?(?=[ACDEFHINOSUV])"
    r"(?:API|EXPORT|IMPORT|HIDDEN|VISIBLE|VISIBILITY|HOST|DEVICE|INLINE|CONSTEXPR"
    r"|ALIGNAS|ALIGNED|CONSTEVAL|NODISCARD|DEPRECATED|NOEXCEPT|UNUSED|ATTRIBUTE|NORETURN|FINAL"
    r"|OVERRIDE|INTRINSIC|FUNC|CDECL|STDCALL|FASTCALL)[A-Z0-9_]*(?![\w])"
    # with arguments, a name must follow (``F_INLINE(x) {`` would be a function) ...
    r"(?:[ \t]*" + _BALANCED + r"(?=[ \t\n]+(?:[A-Za-z_~:]|/\*))"
    # ... without, also a class body or base list (``class A PROTOBUF_FINAL :``)
    r"|(?=[ \t\n]+(?:[A-Za-z_~:{]|/\*)|[ \t\n]*:[^:]))")
_WORD_BEFORE = re.compile(r"[A-Z][A-Z0-9_]*\Z")
# ``class GOOGLE_PROTOBUF_CAPABILITY("mutex") WrappedMutex {``: any ALL_CAPS
# words between the keyword and a name followed by what only follows a class
# name.  One pattern per keyword: each starts with a literal, which is fast (and
# is not run over a text without its keyword).
_CLASS_MACROS = [
    (keyword, re.compile(keyword + r"[ \t]+((?:[A-Z][A-Z0-9_]*(?:\([^()\n]*\))?[ \t]+)+)"
                         r"(?=[A-Za-z_]\w*[ \t\n]*(?:final\b|:(?!:)|\{))"))
    for keyword in ("class", "struct", "union")
]
# ``__itt_domain* ITTAPI __itt_domain_create(``: a calling-convention macro
# between the return type and the name.
_CALLING_CONVENTION = re.compile(r"API(?=[ \t]+[A-Za-z_]\w*[ \t]*\()")
# Macro words at the start of a declaration (``PREFILL_CONST int f(``):
# blanked only when a type and a name still follow, so that
# ``MY_TYPE_T f(int);`` keeps its ALL_CAPS return type.
_DECL_PREFIX = (r"\n[ \t]*+(?=[A-Z_tsicvef])"  # cheap first test: most lines fail here
                r"(?:(?:template[ \t]*<[^;{}()\n]*>|static|inline|constexpr|virtual"
                r"|explicit|extern|friend)[ \t]+)*")
_DECL_MACROS = {
    cuda: re.compile(_DECL_PREFIX + r"((?:(?:" + _MACRO_WORD + ("" if cuda else _CUDA_QUALIFIER)
                     + r")" + _MACRO_ARGS + r"[ \t]+)+)(?=[A-Za-z_~:])")
    for cuda in (False, True)
}
# A macro invocation alone on its lines (``PROTOBUF_NAMESPACE_OPEN``,
# ``C10_DEPRECATED_MESSAGE("...")``, ``AT_FORALL_SCALAR_TYPES(DEFINE)``,
# ``PYBIND11_TYPE_CASTER(T, name);``): it expands to declarations or
# attributes the parser cannot know; without a semicolon it swallows what
# follows, and a multi-line one confuses a class body.  Not before ``{``
# (``TORCH_LIBRARY(aten, m) {`` has a body that must stay balanced).
_MACRO_LINE = re.compile(
    r"\n[ \t]*+([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?:[ \t]*" + _BALANCED + r")?"
    r"(?:[ \t]*(?:=[^;\n]*)?;[ \t]*(?=\n|//|\Z)"  # ``TORCH_ARG(int, n) = 1;`` has its end
    r"|[ \t]*(?://[^\n]*)?(?=\n\s*(?:[A-Za-z_~}#\[]|/[/*])|\n?\Z)))")
# ``JSON_TRY`` / ``JSON_CATCH (std::out_of_range&)`` on an indented line of their own, the
# block on the next: statement macros inside a body (``try``, ``catch (...)``), which the parser
# cannot read; blanked, the blocks stay balanced.  At a line's start (``TORCH_LIBRARY(aten, m)``)
# such a macro defines something and is kept.
_MACRO_BLOCK = re.compile(r"\n[ \t]++([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?:[ \t]*" + _BALANCED
                          + r")?)[ \t]*(?=\n[ \t]*\{)")
# Where ``_MACRO_LINE``, ``_MACRO_BLOCK`` and ``_MACRO_ACCESS`` can match: lines that start with
# an ALL_CAPS_WORD.  Found in one pass, the three patterns are then tried at those lines only.
_CAPS_LINE = re.compile(r"\n[ \t]*+[A-Z][A-Z0-9]*_[A-Z0-9]")
# ``JSON_PRIVATE_UNLESS_TESTED:``: a macro standing for an access specifier, which the
# parser would take for a bit field swallowing the declaration after it.
_MACRO_ACCESS = re.compile(r"\n[ \t]*+([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+[ \t]*:)(?!:)[ \t]*(?=\n|//)")
# ``f(std::optional<T> x = {})``: tree-sitter reads a declaration with a
# ``= {}`` default as a variable initialised by a call; without the default
# it is the function it is.
_EMPTY_BRACE_DEFAULT = re.compile(r"=[ \t]*\{[ \t]*\}(?=[ \t\n]*[,)])")
# ``f(Half a) __ubsan_ignore_float_divide_by_zero__ {``, ``g() const C10_NOEXCEPT;``:
# an attribute macro after the parameters.
_TRAILING_MACRO = re.compile(
    r"\)[ \t\n]*+(?:const[ \t\n]++)?(__[a-z_]+__|[A-Z][A-Z0-9]*_[A-Z0-9_]+)(?:[ \t]*" + _BALANCED
    + r")?(?=[ \t\n]*(?:[{;:]|override\b|final\b|noexcept\b|->|const\b))")
# ``/* Singular accessors */ \`` inside a multi-line ``#define``: tree-sitter
# ends the macro's body at such a comment and parses the rest as code.
_COMMENT_IN_MACRO = re.compile(r"/\*[^\n]*?\*/(?=[ \t]*\\\n)")
_IDENTIFIER = re.compile(r"[A-Za-z_~]\w*")
_DECLARATION_KEYWORDS = frozenset(
    "class struct union enum typename template static inline constexpr virtual explicit extern"
    " friend const volatile unsigned signed void bool char short int long float double auto"
    " operator".split())
_CONDITIONAL = re.compile(
    r"\n[ \t]*+#[ \t]*+(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b(?:[^\n]*\\\n)*[^\n]*")
_NOT_BRACES = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)


def prepare(text: str, cuda: bool = False) -> str:
    """The text the parser sees: same lines, with macros and branches blanked.

    Blanking replaces characters by spaces (newlines stay), so every line
    number and name found in the prepared text is valid in the original.
    """
    return _prepare(text, cuda)[0]


def prepare_cpp(text: str) -> str:
    """``prepare`` for C and C++: what the site's highlighter parses (``Highlight.prepare``)."""
    return prepare(text, False)


def prepare_cuda(text: str) -> str:
    """``prepare`` for CUDA, its qualifiers blanked too."""
    return prepare(text, True)


def _prepare(text: str, cuda: bool) -> tuple[str, list[tuple[int, int]]]:
    """``prepare``, plus the ``#if 0`` stretches (offsets in ``"\n" + text``)."""
    padded = "\n" + text  # lets line-start patterns begin with a literal
    dead: list[tuple[int, int]] = []
    spans: list[tuple[int, int]] = []
    for match in _ATTRIBUTE_TAIL.finditer(padded):
        word = _WORD_BEFORE.search(padded, max(0, match.start() - 80), match.start())
        start = word.start() if word else match.start()
        if start and (padded[start - 1].isalnum() or padded[start - 1] == "_"):
            continue  # the tail of a lower-case name (``my_API``)
        if _in_directive(padded, start):
            continue  # ``#define TORCH_API ...``, ``#if defined(C10_API)``: keep directives
        spans += _macro_spans(padded, start, match.end())
    # a pattern that needs a word or character the text lacks is not run: on a small file
    # the call costs more than the scan
    for keyword, pattern in _CLASS_MACROS:
        if keyword in text:
            spans += [m.span(1) for m in pattern.finditer(padded)
                      if not (padded[m.start() - 1].isalnum() or padded[m.start() - 1] == "_")]
    for match in _CALLING_CONVENTION.finditer(padded) if "API" in text else ():
        word = _WORD_BEFORE.search(padded, max(0, match.start() - 40), match.start())
        start = word.start() if word else match.start()
        if (padded[start - 1] in " \t*&" and padded[start - 2] not in " \t\n(,"
                and not _in_directive(padded, start)):
            spans.append((start, match.end()))  # after a type, not at a line's start
    for match in _DECL_MACROS[cuda].finditer(padded):
        blanked = _macro_spans(padded, *match.span(1))
        # kept, a wrapped type (``CJSON_PUBLIC(cJSON *)``) is the type a name follows
        if _names_follow(padded, match.end(1)) or (len(blanked) > 1 and _IDENTIFIER.match(padded, match.end(1))):
            spans += blanked
    caps_lines = [m.start() for m in _CAPS_LINE.finditer(padded)]
    spans += [m.span(1) for m in _matches_at(_MACRO_LINE, padded, caps_lines)
              if padded[m.start() - 1:m.start()] != "\\"  # a ``#define`` body's last line
              and not _last_enumerator(padded, m)]
    if "{" in text:
        spans += [m.span() for m in _EMPTY_BRACE_DEFAULT.finditer(padded)]
    if ")" in text:
        spans += [(m.start(1), m.end()) for m in _TRAILING_MACRO.finditer(padded)]   # the word and its arguments
    if ":" in text:
        spans += [m.span(1) for m in _matches_at(_MACRO_ACCESS, padded, caps_lines)]
    spans += [m.span(1) for m in _matches_at(_MACRO_BLOCK, padded, caps_lines)
              if padded[m.start() - 1:m.start()] != "\\"]
    if "#" in text:
        spans += _unbalanced_branches(padded, dead)
        if "\\\n" in text:
            spans += [m.span() for m in _COMMENT_IN_MACRO.finditer(padded)]
    return _blank_spans(padded, spans)[1:], dead


# ``CJSON_PUBLIC(cJSON *) cJSON_Parse(``: a macro whose one argument is the declaration's type
_TYPE_ARGUMENT = re.compile(r"\(([ \t]*(?:(?:const|volatile|struct|enum|union|unsigned|signed)[ \t]+)*"
                            r"[A-Za-z_][\w:]*(?:[ \t]*<[^()<>\n]*>)?[ \t*&]*)\)")


def _macro_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The spans to blank of the macros ``text[start:end]`` before a declaration's name: all of
    them, but for a macro wrapping the return type (``CJSON_PUBLIC(cJSON *)``) the type itself,
    without which the declaration would be read as a call (cJSON's whole API was missed)."""
    found = _TYPE_ARGUMENT.search(text, start, end)
    if found is None or "(" in text[found.end():end] or "(" in text[start:found.start()]:
        return [(start, end)]
    return [(start, found.start(1)), (found.end(1), end)]


def _matches_at(pattern: re.Pattern[str], text: str, starts: list[int]) -> list[re.Match[str]]:
    """What ``pattern.finditer(text)`` finds, for a pattern whose matches begin only at some of
    ``starts`` (ascending): tried there alone instead of at every line."""
    found: list[re.Match[str]] = []
    end = 0
    for start in starts:
        if start >= end and (match := pattern.match(text, start)):
            found.append(match)
            end = match.end()
    return found


def _in_directive(text: str, position: int) -> bool:
    """Is ``position`` on a ``#`` line (after the ``#``)?"""
    return "#" in text[text.rfind("\n", 0, position):position]


def _last_enumerator(text: str, match: re.Match) -> bool:
    """``JT_FALSE`` alone before the ``}`` of a list whose previous line ends with a comma: an
    enum's last value, not a macro statement."""
    if "(" in match.group(1) or ";" in match.group(1) or not text[match.end(1):].lstrip().startswith("}"):
        return False
    previous = text[:match.start()].rstrip().rpartition("\n")[2]
    return _LITERALS_AND_COMMENTS.sub(_blank_comment, previous).rstrip().endswith(",")


def _blank_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """Spaces for everything but newlines inside the (possibly overlapping) spans."""
    if not spans:
        return text
    pieces: list[str] = []
    position = 0
    for start, end in sorted(spans):
        start = max(start, position)
        if end <= start:
            continue
        pieces.append(text[position:start])
        chunk = text[start:end]
        pieces.append(_SPACES.sub(" ", chunk) if "\n" in chunk else " " * len(chunk))
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


_SPACES = re.compile(r"[^\n]")


def _names_follow(text: str, start: int) -> bool:
    """Does a declaration (a type and a name, or a keyword) follow ``start``?"""
    stop = min(len(text), start + 400)
    for char in "(;{=":
        found = text.find(char, start, stop)
        if found != -1:
            stop = found
    words = _IDENTIFIER.finditer(text, start, stop)
    first = next(words, None)
    if first is None:
        return False
    return next(words, None) is not None or first.group() in _DECLARATION_KEYWORDS   # two words, or a keyword


_NON_SPACE = re.compile(r"\S")
_IF_ZERO = re.compile(r"\n[ \t]*#[ \t]*if[ \t]+0[ \t]*(?://|/\*|$)")


class _Conditional:
    """One ``#if`` ... ``#endif`` group while scanning."""

    __slots__ = ("braces", "directives", "disabled", "first_end", "last_code")

    def __init__(self, span: tuple[int, int]) -> None:
        self.directives = [span]
        self.disabled = False              # ``#if 0``
        self.first_end: int | None = None  # where the first branch stops
        self.braces = 0                    # ``{`` minus ``}`` in the first branch
        self.last_code = (0, 0)            # span of its last stretch of code

    def add_code(self, text: str, start: int, end: int) -> None:
        opened, closed = text.count("{", start, end), text.count("}", start, end)
        if opened != closed:  # exact count only where it can matter
            self.braces += _brace_balance(text[start:end])
        if _NON_SPACE.search(text, start, end):
            self.last_code = (start, end)

    def first_branch_only(self, text: str) -> bool:
        """Would the parser stumble over the branches side by side?"""
        if self.braces:
            return True
        start, end = self.last_code
        return _last_code_character(text[start:end]) not in ("", ";", "}")


def _unbalanced_branches(text: str, dead: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans to blank so that some ``#if`` groups read as their first branch
    alone, which is what Universal Ctags does too: groups whose first branch
    opens or closes a brace (``#ifdef _WIN32 struct A : B { #else struct A :
    C { #endif``, ``#ifdef __cplusplus extern "C" { #endif``) or stops in the
    middle of a declaration (``#if X template <class T, class U> #else
    template <class T> #endif struct V {``).  Other groups stay as they are.
    The first branch of ``#if 0`` is dead: blanked and added to ``dead``.
    """
    spans: list[tuple[int, int]] = []
    stack: list[_Conditional] = []
    position = 0
    for match in _CONDITIONAL.finditer(text):
        if stack and stack[-1].first_end is None and match.start() > position:
            stack[-1].add_code(text, position, match.start())
        position = match.end()
        directive = match.group(1)
        if directive.startswith("if"):
            stack.append(_Conditional(match.span()))
            stack[-1].disabled = directive == "if" and bool(_IF_ZERO.match(match.group()))
        elif not stack:
            continue  # an #else or #endif without its #if: leave it
        elif directive == "endif":
            group = stack.pop()
            group.directives.append(match.span())
            if group.disabled:  # ``#if 0``: the first branch is not code at all
                dead.append((group.directives[0][0], group.first_end or match.start()))
                spans.append(dead[-1])
                spans.extend(group.directives)
                continue
            if group.first_branch_only(text):
                spans.extend(group.directives)
                if group.first_end is not None:
                    spans.append((group.first_end, match.start()))
            if stack and stack[-1].first_end is None:
                stack[-1].braces += group.braces
                if group.last_code != (0, 0):
                    stack[-1].last_code = group.last_code
        else:
            group = stack[-1]
            group.directives.append(match.span())
            if group.first_end is None:
                group.first_end = match.start()
    return spans


def _brace_balance(code: str) -> int:
    if "{" not in code and "}" not in code:
        return 0
    code = _NOT_BRACES.sub("", code)
    return code.count("{") - code.count("}")


# ``PYBIND11_NAMESPACE_END(PYBIND11_NAMESPACE)`` alone on its line: blanked before parsing
# (``_MACRO_LINE``), so no declaration is left open by it.
_MACRO_ALONE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?:[ \t]*\([^()]*(?:\([^()]*\)[^()]*)*\))?[ \t]*;?")
_NOT_CODE = re.compile(r"(?m)^[ \t]*#(?:[^\n]*\\\n)*[^\n]*|//[^\n]*|/\*.*?\*/", re.S)


def _last_code_character(code: str) -> str:
    """Last character that is neither comment nor directive, read line by line
    from the end (most branches end in a plain line of code)."""
    end = len(code)
    while end > 0:
        start = code.rfind("\n", 0, end) + 1
        line = code[start:end].strip()
        end = start - 1
        continued = code[max(0, end - 200):end].rstrip(" \t").endswith("\\")
        if not line or line.startswith(("#", "//")) or continued or _MACRO_ALONE.fullmatch(line):
            continue  # blank, a directive, a comment, a directive's continuation, a macro line blanked
        if "/*" in line or "*/" in line:
            tail = _NOT_CODE.sub("", code[-2000:]).rstrip()
            return tail[-1:]
        if "//" in line:
            line = line[:line.index("//")].rstrip()
        return line[-1:]
    return ""


# --- the tree walk ------------------------------------------------------------

_CLASS_TYPES = {
    "class_specifier": "class",
    "struct_specifier": "struct",
    "union_specifier": "union",
    "enum_specifier": "enum",
}
# Nodes whose children are declarations in the same scope.
_TRANSPARENT = frozenset({
    "translation_unit", "declaration_list", "field_declaration_list", "preproc_if",
    "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef", "template_declaration",
    "linkage_specification", "export_declaration",
})
_OPENERS = frozenset({"class", "struct", "union", "namespace"})
_VARIABLE_DECLARATORS = frozenset({"init_declarator", "pointer_declarator", "reference_declarator",
                                   "array_declarator", "attributed_declarator"})
_NAMES = frozenset({"identifier", "type_identifier", "namespace_identifier"})
_DECLARATIONS = frozenset({"function_definition", "declaration", "field_declaration"})
_DECLARATOR_WRAPPERS = frozenset({
    "pointer_declarator", "reference_declarator", "attributed_declarator", "init_declarator",
})
_FUNCTION_NAMES = frozenset({
    "identifier", "field_identifier", "destructor_name", "operator_name", "operator_cast",
})
_SPECIFIER_WORDS = frozenset(
    "static inline constexpr consteval constinit virtual explicit extern friend __global__"
    " __device__ __host__ __forceinline__ __noinline__ typename".split())
# Words a prototype leaves out, as Doxygen does: how it is compiled, not what it declares.
_DROPPED_WORDS = frozenset(
    "inline extern __global__ __device__ __host__ __forceinline__ __noinline__ __inline__".split())
_PURE_OR_DEFAULTED = re.compile(rb"\s*=\s*(0|default|delete)\s*;?\s*$")
_ATTRIBUTES = re.compile(r"__(?:launch_bounds|attribute|declspec)__?\s*" + _BALANCED
                         + r"|\[\[.*?\]\]", re.S)
class _Scope:
    """Where a declaration sits: enclosing namespace or class (by simple name)."""

    __slots__ = ("is_class", "name")

    def __init__(self, name: str, is_class: bool) -> None:
        self.name = name
        self.is_class = is_class


_FILE_SCOPE = _Scope("", False)


class _Fields:
    """Ids of the fields the walk reads most, in one grammar: ``child_by_field_id``
    skips the search among all the grammar's field names that every
    ``child_by_field_name`` call makes."""

    __slots__ = ("body", "declarator", "name", "parameters", "path", "type")
    body: int
    declarator: int
    name: int
    parameters: int
    path: int
    type: int

    def __init__(self, language: Language) -> None:
        for field in self.__slots__:
            setattr(self, field, language.field_id_for_name(field))


@cache
def _fields(cuda: bool) -> _Fields:
    language = _parser(cuda).language
    assert language is not None   # the parser was made with one
    return _Fields(language)


class _Walker:
    def __init__(self, source: bytes, fields: _Fields, docs: _DocComments) -> None:
        self.source = source
        self.fields = fields
        self.docs = docs
        # Documented forward declarations (``/// A policy.`` over ``struct policy;``) by (scope,
        # name): the first definition in this file without documentation of its own takes the
        # documentation, else the declaration is listed with it.
        self.forward_docs: dict[tuple[str, str], dict[str, Any]] = {}
        self.specializations: set[int] = set()   # ids of the symbols of ``struct hash<Foo> {``
        # Node id -> first line of the declaration holding it (a ``template <...>`` head, a
        # ``typedef``, ``friend``), where its documentation is looked for; kept as the walk goes
        # down, since asking a node for its parent searches the tree from the root.
        self.starts: dict[int, int] = {}
        # Node id -> the ``template_declaration`` it is the declaration of (its parent), for the same reason.
        self.templates: dict[int, Node] = {}
        self.symbols: list[dict[str, Any]] = []
        self.imports: list[dict[str, Any]] = []
        self.namespaces: set[str] = set()
        self.classes: set[str] = set()
        # Out-of-line ``A::b`` definitions: method or namespace function is
        # decided once every namespace and class of the file is known.
        self.qualified: list[tuple[dict[str, Any], str]] = []
        self.preproc_lines: set[int] = set()
        # First line of a parse error that swallowed a large part of the file.
        self.damage: int | None = None

    def text(self, node: Node) -> str:
        return self.source[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def walk(self, root: Node) -> None:
        # One dict look-up per node instead of a chain of tests: most nodes
        # visited are comments and includes.  Handlers (``_HANDLERS``) return
        # what to walk next, in the order it is pushed.
        handlers = _HANDLERS
        stack: list[tuple[Node, _Scope]] = [(root, _FILE_SCOPE)]
        pop, extend = stack.pop, stack.extend
        while stack:
            node, scope = pop()
            kind = node.type
            if kind in _TRANSPARENT:
                children = node.named_children
                if kind == "template_declaration":
                    row = self.starts.get(node.id, node.start_point[0])
                    for child in children:
                        child_id = child.id
                        self.starts[child_id] = row
                        self.templates[child_id] = node
                extend(zip(reversed(children), repeat(scope)))
                continue
            handler = handlers.get(kind)
            if handler is not None:
                found = handler(self, node, scope)
                if found:
                    extend(found)

    def friend(self, node: Node, scope: _Scope) -> Iterator[tuple[Node, _Scope]]:
        """A friend is no member: a function."""
        children = node.named_children
        row = self.starts.get(node.id, node.start_point[0])
        for child in children:
            self.starts[child.id] = row
        return zip(children, repeat(_Scope(scope.name, False)))

    def add(self, name: str, kind: str, node: Node, scope: _Scope, detail: str = "",
            signature: str = "", decl: Node | None = None, doc: str = "") -> dict[str, Any]:
        """Record a definition; ``decl``, the declaration naming it at ``node``, holds its documentation."""
        symbol: dict[str, Any] = {"name": name, "kind": kind, "line": node.start_point[0] + 1}
        if scope.name:
            symbol["parent"] = scope.name
        if signature:
            symbol["signature"] = signature
        if detail:
            symbol["detail"] = detail
        if decl is not None and not doc:
            doc = self.docs.of(decl, node, self.starts.get(decl.id))
        if doc:
            symbol["doc"] = doc
        self.symbols.append(symbol)
        return symbol

    def error(self, node: Node, scope: _Scope) -> list[tuple[Node, _Scope]]:
        """Recover declarations from a stretch the parser could not place.

        The children of an ERROR node are loose tokens (``class``, a name,
        ``{``, ``}``) and whole declarations; following the braces gives the
        declarations their class or namespace back.
        """
        if self.damage is None and node.end_point[0] - node.start_point[0] >= DAMAGE_LINES:
            self.damage = self.code_line(node)
        children = node.children
        scopes = [scope]
        pending: tuple[str, Node] | None = None  # ``class Name`` waiting for its ``{``
        previous_type: Node | None = None
        found: list[tuple[Node, _Scope]] = []
        for index, child in enumerate(children):
            kind = child.type
            if not child.is_named:
                following = children[index + 1] if index + 1 < len(children) else None
                if kind in _OPENERS and following is not None and following.type in _NAMES:
                    pending = ("enum" if pending and pending[0] == "enum" else kind, following)
                elif kind == "enum":
                    pending = ("enum", child)
                elif kind == "{":
                    scopes.append(self.opened(pending, scopes[-1]) if pending else scopes[-1])
                    pending = None
                elif kind == "}":
                    if len(scopes) > 1:
                        scopes.pop()
                    pending = None
                elif kind in (";", "(", ")", ">", "="):
                    pending = None
                continue
            if pending is not None and child == pending[1]:
                continue
            if kind == "function_declarator" and previous_type is not None:
                self.function(child, child, previous_type, scopes[-1])
            previous_type = child if node.field_name_for_child(index) == "type" else None
            found.append((child, scopes[-1]))
        found.reverse()  # pushed last first: walked in the order found
        return found

    def code_line(self, node: Node) -> int:
        """The first line of ``node`` that holds code, not an ``#if``/include guard or a comment:
        where a stretch the parser could not place really starts."""
        for child in node.children:
            kind = child.type
            if kind == "comment" or kind.startswith(("preproc", "#")):
                continue
            if self.source[child.start_byte - child.start_point[1]:child.start_byte].strip().startswith(b"#"):
                continue   # a token of a directive (the condition of ``#if``)
            return child.start_point[0] + 1
        return node.start_point[0] + 1

    def opened(self, pending: tuple[str, Node], scope: _Scope) -> _Scope:
        """The scope a recovered ``class Name {`` or ``namespace name {`` opens."""
        kind, name_node = pending
        name = self.text(name_node)
        if kind == "namespace":
            self.add(name, "namespace", name_node, scope, decl=name_node)
            self.namespaces.add(name)
            return _Scope(name, False)
        if kind == "enum" and name_node.type == "enum":
            return scope  # ``enum {`` without a name
        self.add(name, "class", name_node, scope, detail=kind, decl=name_node)
        self.classes.add(name)
        return _Scope(name, True)

    # namespaces and classes

    def namespace(self, node: Node, scope: _Scope) -> list[tuple[Node, _Scope]] | None:
        name_node = node.child_by_field_id(self.fields.name)
        if name_node is not None:
            parts = _namespace_parts(name_node)
            for part in parts:
                name = self.text(part)
                if name == "inline" or not name:
                    continue
                self.add(name, "namespace", part, scope, decl=node if part == parts[-1] else None)
                self.namespaces.add(name)
                scope = _Scope(name, False)
        body = node.child_by_field_id(self.fields.body)
        return [(body, scope)] if body is not None else None

    def class_(self, node: Node, scope: _Scope) -> list[tuple[Node, _Scope]] | None:
        body = node.child_by_field_id(self.fields.body)
        name_node = node.child_by_field_id(self.fields.name)
        if body is None:
            # ``/// A policy.`` over ``struct policy;``: a forward declaration documented (a plain
            # ``// Forward declarations`` over a few of them is a heading, not theirs)
            doc = "" if name_node is None else self.docs.of(node, name_node, self.starts.get(node.id))
            if name_node is not None and doc and self.docs.doxygen and (
                    (parent := node.parent) is not None and parent.type in _TRANSPARENT):
                    name, keyword = self.text(name_node), _CLASS_TYPES[node.type]
                    symbol = {"name": name, "kind": "class", "line": name_node.start_point[0] + 1,
                              "signature": f"{keyword} {name}", "detail": f"{keyword} declaration", "doc": doc}
                    if scope.name:
                        symbol["parent"] = scope.name
                    self.forward_docs.setdefault((scope.name, name), symbol)
            return None  # forward declaration or elaborated type: not a definition
        if name_node is None:
            if node.type == "enum_specifier":
                self.enumerators(body, scope)
            return [(body, scope)]  # anonymous: members belong to the enclosing scope
        owner = scope
        if name_node.type == "qualified_identifier":  # ``struct A::B {``
            qualifiers, name_node = self.split_qualified(name_node)
            if qualifiers:
                owner = _Scope(qualifiers[-1], True)
        specialization = name_node.type == "template_type"
        if specialization:  # ``struct hash<Foo> {`` specialisation
            name_node = name_node.child_by_field_name("name") or name_node
        name = self.text(name_node)
        detail = _CLASS_TYPES[node.type]
        header = self.source[node.start_byte:body.start_byte].decode("utf-8", "replace")
        if detail == "enum" and _ANONYMOUS_ENUM.match(header):
            self.enumerators(body, scope)
            return None   # ``enum : ullong {``: the grammar takes the underlying type for a name
        symbol = self.add(name, "class", name_node, owner, detail=detail, signature=_squeeze(header), decl=node)
        if specialization:
            self.specializations.add(id(symbol))
        self.parameter_docs(symbol, self.template_parameters(node), None)
        self.classes.add(name)
        if detail == "enum":
            self.enumerators(body, _Scope(name, True))
            return None
        return [(body, _Scope(name, True))]

    def enumerators(self, body: Node, scope: _Scope) -> None:
        """The documented enumerators of an enum's body (``A, ///< the first``)."""
        docs = self.docs
        for enumerator in body.named_children:
            if enumerator.type != "enumerator":
                continue
            name_node = enumerator.child_by_field_id(self.fields.name)
            if name_node is None:
                continue
            # every enumerator with its value, as Doxygen lists an enum's values, documented or not
            value = self.source[name_node.end_byte:enumerator.end_byte].decode("utf-8", "replace")
            self.add(self.text(name_node), "constant", name_node, scope, detail="enum",
                     signature=_squeeze(value), doc=docs.of(enumerator, name_node, None))

    # functions, methods and prototypes

    def declaration(self, node: Node, scope: _Scope) -> list[tuple[Node, _Scope]] | None:
        type_node = node.child_by_field_id(self.fields.type)
        for declarator in node.children_by_field_id(self.fields.declarator):
            self.function(node, declarator, type_node, scope)
        if type_node is not None and type_node.type in _CLASS_TYPES:
            # ``struct A {...} a;``: documented above the whole (``struct A;`` is no forward declaration here)
            self.starts[type_node.id] = self.starts.get(node.id, node.start_point[0])
            return [(type_node, scope)]
        return None

    def function(self, node: Node, declarator: Node, type_node: Node | None, scope: _Scope) -> None:
        found = _callable_declarator(declarator)
        if found is None:
            if declarator.type == "init_declarator" and node.type == "declaration" and self.old_style(
                    node, declarator, scope):
                return
            # ``struct A *a;`` names a type it does not define: a member or variable of its own
            if node.type in _DECLARATIONS and (type_node is None or type_node.type not in _CLASS_TYPES
                                               or type_node.child_by_field_id(self.fields.body) is None):
                self.variable(node, declarator, type_node, scope)
            return
        declarator = found
        name_node: Node | None
        if declarator.type == "operator_cast":  # ``operator bool() const``
            name_node, params_owner = declarator, _parameters_owner(declarator)
        else:
            name_node = declarator.child_by_field_id(self.fields.declarator)
            params_owner = declarator
        if name_node is None:
            return
        name_start = name_node.start_byte
        name_kind = name_node.type  # read once: each ``.type`` builds a new string
        qualifiers: list[str] = []
        if name_kind == "qualified_identifier":
            qualifiers, name_node = self.split_qualified(name_node)
            name_kind = name_node.type
        if name_kind == "template_function":
            name_node = name_node.child_by_field_name("name")
            if name_node is None:
                return
            name_kind = name_node.type
        if name_kind not in _FUNCTION_NAMES:
            if name_kind == "parenthesized_declarator" and node.type in _DECLARATIONS:
                self.function_pointer(node, declarator, name_node, scope)  # ``void (*free_data)(record*)``
            return
        if name_kind == "operator_cast":
            name = self.conversion_name(name_node)
        else:
            name = self.text(name_node)
        if not name:
            return
        if (not qualifiers and type_node is not None and type_node.type == "qualified_identifier"
                and self.text(type_node).endswith("::operator")):
            # ``inline Half::operator float() const``: read as type ``Half::operator``
            qualifiers, _operator = self.split_qualified(type_node)
            name, name_start = f"operator {name}", type_node.start_byte
            type_node = None
        guide = (type_node is None and not qualifiers and not scope.is_class
                 and not _is_macro_name(name) and _has_child(declarator, "trailing_return_type"))
        if type_node is None and not guide and not name.startswith("operator ") and not (
                self.may_lack_type(name, name_kind, qualifiers, scope)):
            return  # a macro invocation such as ``TORCH_LIBRARY(aten, m) {``
        head = self.source[node.start_byte:name_start]
        params = params_owner.child_by_field_id(self.fields.parameters) if params_owner is not None else None
        heads = self.template_parameters(node)   # read once for the signature and the @tparam docs
        signature = self.signature(node, head, params_owner, params)
        if signature and heads is not None:
            signature = f"template {_squeeze(self.text(heads))} {signature}"
        detail = "declaration" if node.type != "function_definition" else ""
        if guide:
            detail = "deduction guide"  # ``ArrayRef(const T*, size_t) -> ArrayRef<T>;``
        if b"__global__" in head and any(
                child.type == "__global__" for child in node.children):
            detail = "kernel"
        if qualifiers:
            owner = qualifiers[-1]
            symbol = self.add(name, "method", name_node, _Scope(owner, True),
                              signature=signature, detail=detail, decl=node)
            self.qualified.append((symbol, owner))
        else:
            symbol = self.add(name, "method" if scope.is_class else "function", name_node, scope,
                              signature=signature, detail=detail, decl=node)
        if params_owner is not None:
            self.parameter_docs(symbol, heads, params)

    def old_style(self, node: Node, declarator: Node, scope: _Scope) -> bool:
        """A K&R C definition, ``int f(a, b) int a; char *b; {...}``, added as Doxygen shows it,
        ``int f(a, b)``: the C++ grammar reads its head as a variable initialised by a call, with
        no ``;`` after it, and its parameters' types as declarations before a block."""
        last = node.child(node.child_count - 1)
        if last is None or not last.is_missing or scope.is_class:
            return False
        named = declarator.named_children
        if len(named) != 2 or named[0].type != "identifier" or named[1].type != "argument_list":
            return False
        names = named[1].named_children
        following = node.next_named_sibling
        if not names or any(name.type != "identifier" for name in names) or following is None or (
                following.type not in ("declaration", "compound_statement")):
            return False
        written = self.source[node.start_byte:declarator.end_byte].decode("utf-8", "replace")
        self.add(self.text(named[0]), "function", named[0], scope, signature=_squeeze(written), decl=node)
        return True

    def template_parameters(self, node: Node) -> Node | None:
        """The ``<...>`` list of the template ``node`` is the declaration of, if it is one."""
        template = self.templates.get(node.id)
        return None if template is None else template.child_by_field_id(self.fields.parameters)

    def parameter_docs(self, symbol: dict[str, Any], heads: Node | None, params: Node | None) -> None:
        """The doc comments of a declaration's template parameters ``heads`` and parameters ``params``
        (``int n, ///< rows`` or a ``///`` line above ``int n``) added to ``symbol``'s documentation as
        ``@tparam`` and ``@param`` lines: a parameter is no definition of its own, Doxygen shows it so."""
        added: list[str] = []
        source = self.source
        for command, parameters in (("tparam", heads), ("param", params)):
            if parameters is None:
                continue
            end = source.find(b"\n", parameters.end_byte)
            if source.find(b"/", parameters.start_byte, end if end >= 0 else len(source)) < 0:
                continue   # no comment in the list or after it on its line: the common case
            for parameter in parameters.named_children:
                if parameter.type != "comment" and (doc := self.parameter_doc(parameter)):
                    name = self.parameter_name(parameter)
                    if name is not None:
                        added.append(f"@{command} {self.text(name)} {' '.join(doc.split())}")
        if added:
            doc = symbol.get("doc", "")
            symbol["doc"] = "\n".join([doc, "", *added] if doc else added)

    def parameter_doc(self, parameter: Node) -> str:
        """A Doxygen comment after ``parameter`` and its comma on its line, or on the lines above
        it when it starts its line."""
        lines = self.docs.lines
        row, column = parameter.end_point
        if row >= len(lines):
            return ""
        line = lines[row]
        if (trailing := _TRAILING_DOC.search(line, column)) and line[column:trailing.start()].strip() in ("", ","):
            return self.docs.trailing(trailing.group(1), row + 1)
        row, column = parameter.start_point
        if lines[row][:column].strip():
            return ""
        doc = self.docs.above(row)
        return doc if self.docs.doxygen else ""

    def parameter_name(self, parameter: Node) -> Node | None:
        """The name a (template) parameter declares, if it has one."""
        declarator = parameter.child_by_field_id(self.fields.declarator)
        if declarator is not None:
            return _declared_name(declarator)
        name = parameter.child_by_field_id(self.fields.name)
        if name is not None:
            return name
        return next((child for child in parameter.named_children
                     if child.type in ("type_identifier", "identifier")), None)

    def variable(self, node: Node, declarator: Node, type_node: Node | None, scope: _Scope) -> None:
        """A documented variable or data member (``/// Rows.`` over ``int rows = 0;``); undocumented
        ones are not listed, as Doxygen leaves out undocumented members."""
        name_node: Node | None = declarator
        for _ in range(8):
            if name_node is None or name_node.type in ("identifier", "field_identifier"):
                break
            if name_node.type not in _VARIABLE_DECLARATORS:
                return
            name_node = name_node.child_by_field_id(self.fields.declarator) or (
                name_node.named_children[0] if name_node.named_children else None)
        else:
            return
        if name_node is None:
            return
        doc = self.docs.of(node, name_node, self.starts.get(node.id))
        if not doc:
            return
        head = self.source[node.start_byte:name_node.start_byte].decode("utf-8", "replace")
        words = [word for word in head.split() if word not in _SPECIFIER_WORDS]
        self.add(self.text(name_node), "variable", name_node, scope, detail="member" if scope.is_class else "",
                 signature=" ".join(words), doc=doc)

    def function_pointer(self, node: Node, declarator: Node, inner: Node, scope: _Scope) -> None:
        """A documented variable or data member holding a function (``void (*free)(T*) = nullptr;``):
        its type is written around its name, so the declaration up to its parameters' end is shown."""
        name_node = _declared_name(inner)
        if name_node is None:
            return
        doc = self.docs.of(node, name_node, self.starts.get(node.id))
        if doc:
            written = self.source[node.start_byte:declarator.end_byte].decode("utf-8", "replace")
            words = [word for word in _squeeze(written).split(" ") if word not in _SPECIFIER_WORDS]
            self.add(self.text(name_node), "variable", name_node, scope,
                     detail="member" if scope.is_class else "", signature=" ".join(words), doc=doc)

    def conversion_name(self, name_node: Node) -> str:
        """``operator bool``: the name as written up to its parameters."""
        owner = _parameters_owner(name_node)
        params = owner.child_by_field_name("parameters") if owner is not None else None
        stop = params.start_byte if params is not None else name_node.end_byte
        name = self.source[name_node.start_byte:stop].decode("utf-8", "replace").strip()
        return name.split("\n", 1)[0].rstrip()  # a name is what its first line shows

    @staticmethod
    def may_lack_type(name: str, name_kind: str, qualifiers: list[str], scope: _Scope) -> bool:
        """Constructors, destructors and conversions have no return type; macros neither."""
        if name_kind in ("destructor_name", "operator_cast", "operator_name"):
            return True
        if qualifiers:
            return not _is_macro_name(name) or name == qualifiers[-1]
        if scope.is_class:
            return name == scope.name or not _is_macro_name(name)
        return False

    def split_qualified(self, node: Node) -> tuple[list[str], Node]:
        """``a::B<T>::c`` -> (["a", "B"], node of ``c``)."""
        qualifiers: list[str] = []
        while node.type == "qualified_identifier":
            scope_node = node.child_by_field_name("scope")
            if scope_node is not None:
                if scope_node.type == "template_type":
                    scope_node = scope_node.child_by_field_name("name") or scope_node
                qualifiers.append(self.text(scope_node))
            name = node.child_by_field_name("name")
            if name is None:
                break
            node = name
        return qualifiers, node

    def signature(self, node: Node, head: bytes, params_owner: Node | None, params: Node | None) -> str:
        """The prototype as declared, as Doxygen shows it: ``static T a::B::c(int x) const = 0``,
        whitespace squeezed, without body, attributes, comments or ``inline``; ``head`` is the
        declaration up to its (qualified) name, ``params`` the parameter list of ``params_owner``."""
        if params_owner is None or params is None:
            return ""
        source = self.source
        text = source[node.start_byte:params_owner.end_byte].decode("utf-8", "replace")
        if "/" in text and ("//" in text or "/**" in text or "/*!" in text):
            text = _COMMENTS.sub("", text)   # a parameter's doc comment is no part of the signature
        if "__" in text or "[[" in text:
            text = _ATTRIBUTES.sub(" ", text)
        # ``= 0``, ``= default``, ``= delete`` after the declarator are part of what is declared
        end = node.end_byte   # a body is no clause: only a short tail is read
        tail = source[params_owner.end_byte:end] if end - params_owner.end_byte < 32 else b""
        if b"=" in tail and (clause := _PURE_OR_DEFAULTED.match(tail)):
            text = f"{text} = {clause.group(1).decode()}"
        squeezed = _squeeze(text)
        if b"inline" not in head and b"extern" not in head and b"__" not in head:
            return squeezed   # most heads: none of the dropped words
        # a word of the declarator (``operator new``) is kept: only the head's are dropped
        head_words = len(_squeeze(head.decode("utf-8", "replace")).split())
        return " ".join([word for index, word in enumerate(squeezed.split(" "))
                         if index >= head_words or word not in _DROPPED_WORDS])

    # types

    def typedef(self, node: Node, scope: _Scope) -> list[tuple[Node, _Scope]] | None:
        type_node = node.child_by_field_name("type")
        for declarator in node.children_by_field_name("declarator"):
            name_node = _declared_name(declarator)
            if name_node is not None:
                self.add(self.text(name_node), "type", name_node, scope, detail="typedef", decl=node)
        if type_node is not None and type_node.type in _CLASS_TYPES:
            self.starts[type_node.id] = self.starts.get(node.id, node.start_point[0])
            return [(type_node, scope)]
        return None

    def alias(self, node: Node, scope: _Scope) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is not None:
            self.add(self.text(name_node), "type", name_node, scope, detail="using", decl=node)

    # preprocessor

    def macro(self, node: Node, _scope: _Scope) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return
        name = self.text(name_node)
        params = node.child_by_field_name("parameters")
        # what follows the name, as a function's signature does: its parameters and its replacement,
        # the replacement whole or not at all (Doxygen's initializer)
        signature = _squeeze(self.text(params)) if params is not None else ""
        value = node.child_by_field_name("value")
        if value is not None and value.start_point[0] == node.start_point[0] == value.end_point[0]:
            text = _squeeze(_LITERALS_AND_COMMENTS.sub(_blank_comment, self.text(value)))
            if text and len(text) <= MAX_MACRO_VALUE:
                signature = f"{signature} {text}".lstrip()
        symbol = self.add(name, "macro", name_node, _FILE_SCOPE, signature=signature, decl=node)
        if condition := self.docs.branches.condition(node.start_point[0]):
            symbol["condition"] = list(condition)   # each definition of a macro says its ``#if`` branch
        self.preproc_lines.add(name_node.start_point[0] + 1)

    def include(self, node: Node, _scope: _Scope) -> None:
        path_node = node.child_by_field_id(self.fields.path)
        if path_node is None:
            return
        self.preproc_lines.add(node.start_point[0] + 1)
        path_kind = path_node.type
        if path_kind not in ("system_lib_string", "string_literal"):
            return  # ``#include MACRO``
        written = self.text(path_node).strip()
        header = written[1:-1] if written[:1] in '<"' and len(written) > 1 else written
        if not header or "\n" in header:
            return  # an unterminated name running into the next line
        # After a ``\`` continuation the name is on a later line than the ``#``.
        line = path_node.start_point[0] + 1
        system = path_kind == "system_lib_string"
        self.imports.append({"module": header, "line": line, "kind": "include", "system": system})
        self.symbols.append({"name": header, "kind": "include", "line": line})

    def finish(self) -> None:
        """Out-of-line ``ns::f`` is a function of a namespace, ``A::f`` a method of ``A``; a class
        without documentation takes its forward declaration's."""
        if self.forward_docs:
            undocumented: dict[tuple[str, str], dict[str, Any]] = {}
            for symbol in self.symbols:
                # a specialization is not the template a forward declaration declares
                if symbol["kind"] == "class" and "doc" not in symbol and id(symbol) not in self.specializations:
                    undocumented.setdefault((symbol.get("parent", ""), symbol["name"]), symbol)
            for key, declaration in self.forward_docs.items():
                if key in undocumented:
                    undocumented[key]["doc"] = declaration["doc"]
                else:   # defined elsewhere, or each definition (specialization) documented
                    self.symbols.append(declaration)
        for symbol, owner in self.qualified:
            if owner in self.classes:
                continue
            if owner in self.namespaces or not re.search(r"[A-Z]", owner):
                symbol["kind"] = "function"


# Node type -> the ``_Walker`` method that handles it (made once, not per file).
_HANDLERS: dict[str, Callable[[_Walker, Node, _Scope], Iterable[tuple[Node, _Scope]] | None]] = {
    "friend_declaration": _Walker.friend,
    "ERROR": _Walker.error,
    "namespace_definition": _Walker.namespace,
    "type_definition": _Walker.typedef,
    "alias_declaration": _Walker.alias,
    "preproc_def": _Walker.macro,
    "preproc_function_def": _Walker.macro,
    "preproc_include": _Walker.include,
    **dict.fromkeys(_CLASS_TYPES, _Walker.class_),
    **dict.fromkeys(_DECLARATIONS, _Walker.declaration),
}

# line comments and doc blocks; a ``/*unused*/`` parameter name stays
_COMMENTS = re.compile(r"[ \t]*(?://[^\n]*|/\*[*!].*?\*/)", re.DOTALL)
_ANONYMOUS_ENUM = re.compile(r"enum\s*:")


def _has_child(node: Node, kind: str) -> bool:
    return any(child.type == kind for child in node.named_children)


def _parameters_owner(operator_cast: Node) -> Node | None:
    """The abstract declarator holding a conversion operator's ``()``."""
    node = operator_cast.child_by_field_name("declarator")
    for _ in range(8):
        if node is None or node.child_by_field_name("parameters") is not None:
            return node
        node = node.child_by_field_name("declarator") or (
            node.named_children[0] if node.named_children else None)
    return None


def _namespace_parts(node: Node) -> list[Node]:
    """``a::b::c`` (nested specifiers nest to the right) as its three names."""
    parts: list[Node] = []
    pending = [node]
    while pending:
        current = pending.pop()
        if current.type == "nested_namespace_specifier":
            pending.extend(reversed(current.named_children))
        else:
            parts.append(current)
    return parts


def _callable_declarator(declarator: Node) -> Node | None:
    """The function declarator under ``*``/``&``/attributes; None for variables."""
    for _ in range(16):
        kind = declarator.type
        if kind == "function_declarator" or kind == "operator_cast":
            return declarator
        if kind not in _DECLARATOR_WRAPPERS:
            return None
        inner = declarator.child_by_field_name("declarator")
        if inner is None:
            named = declarator.named_children
            inner = named[-1] if named else None
        if inner is None or (kind == "init_declarator" and inner.type != "function_declarator"):
            return None
        declarator = inner
    return None


def _declared_name(declarator: Node) -> Node | None:
    """The name a (possibly nested) typedef, parameter or function-pointer declarator introduces."""
    node: Node | None = declarator
    for _ in range(16):
        if node is None:
            return None
        if node.type in ("type_identifier", "identifier", "field_identifier", "primitive_type"):
            return node if node.type != "primitive_type" else None
        inner = node.child_by_field_name("declarator")
        if inner is None:
            named = [child for child in node.named_children if child.type not in (
                "parameter_list", "type_qualifier", "attribute_specifier", "ERROR")]
            inner = named[0] if named else None
        node = inner
    return None


def _is_macro_name(name: str) -> bool:
    return name.isupper() or (name.upper() == name and "_" in name)


# a macro's replacement over more than one line or longer than this is a body to read in the
# source, not a value to show
MAX_MACRO_VALUE = 80
# string and character literals (kept) and comments (blanked) in code: a macro's replacement, a line
_LITERALS_AND_COMMENTS = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', re.DOTALL)


def _blank_comment(match: re.Match) -> str:
    text = match.group()
    return " " if text.startswith("/") else text


def _squeeze(text: str) -> str:
    squeezed = " ".join(text.split())
    return squeezed.replace("( ", "(").replace(" )", ")")


# --- doc comments ---------------------------------------------------------------

MAX_DOC_LINES = 300
_TRAILING_DOC = re.compile(r"(?://[/!]|/\*[*!])<[ \t]?(.*)$")
_TRAILING_MORE = re.compile(r"^[ \t]*//[/!]<[ \t]?(.*)$")
# Notes to tools, not to readers: looked past between a declaration and its documentation.
_TOOL_NOTE = re.compile(r"^[ \t]*//[/!]?[ \t]*(?:NOLINT\w*|clang-format\b|IWYU\b|cppcheck-|@lint|codechecker_|"
                        r"LINT\.|NOSONAR|coverity\[)", re.I)
# Between a comment and its declaration: a ``template <...>`` head or an attribute the
# parse did not join to the declaration.
_DOC_SKIP = re.compile(r"^[ \t]*(?:template[ \t]*<.*|\[\[.*\]\][ \t]*|__(?:global|device|host)__[ \t]*)$")
_STAR_PREFIX = re.compile(r"^[ \t]*\*(?!/)[ \t]?")
_RULE_CHARACTERS = "-=*/#~_+ \t"
"""A line of nothing else is a rule (``-----``)."""
# A class, namespace, function or macro ends its line at its name's end for ``///<``; other
# declarations (members, enumerators, prototypes) after themselves.
_TRAIL_AT_NAME = frozenset({"preproc_def", "preproc_function_def", "namespace_definition"})


class _DocComments:
    """The comment that documents a declaration: a ``///``, ``//!``, ``//`` block or a
    ``/** */``, ``/*! */``, ``/* */`` block ending right above it (past ``template`` heads,
    attributes, macros the preparation blanked and notes to tools), or a ``///<``, ``//!<``,
    ``/**<`` comment after it on its line.  Licence headers are not documentation."""

    __slots__ = ("_branches", "blanked", "doxygen", "lines", "text", "top", "trails")

    def __init__(self, text: str, prepared: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.doxygen = False   # was the last comment found a Doxygen one (``///``, ``/**`` ...)?
        self.top = 0           # the first row of the last comment found
        # a line the preparation emptied held only macros (``PYBIND11_NOINLINE``): looked past
        self.blanked = prepared.split("\n") if prepared != text else None
        self._branches: _Branches | None = None
        # does any ``///<``, ``//!<`` or ``/**<`` follow a declaration?  Most files have none
        self.trails = "/<" in text or "!<" in text or "*<" in text

    @property
    def branches(self) -> _Branches:
        """The file's ``#if`` branches, found the first time they are asked for."""
        if self._branches is None:
            self._branches = _Branches(self.text, self.lines)
        return self._branches

    def of(self, decl: Node, name: Node, start_row: int | None) -> str:
        """The documentation of the declaration ``decl`` (naming ``name``; starting on
        ``start_row`` when a template head or typedef holds it), or ""."""
        if not self.trails:
            return self.above(decl.start_point[0] if start_row is None else start_row)
        lines = self.lines
        row = name.end_point[0]
        if row < len(lines) and "<" in (line := lines[row]) and ("/<" in line or "!<" in line or "*<" in line):
            # a ``///<`` after the declaration (members, prototypes) or after the name (the rest)
            column = name.end_point[1]
            if decl.type not in _TRAIL_AT_NAME and decl.child_by_field_name("body") is None:
                row, column = decl.end_point
            if row < len(lines) and (trailing := _TRAILING_DOC.search(lines[row], column)):
                return self.trailing(trailing.group(1), row + 1)
        elif (end := decl.end_point[0]) != row and end < len(lines) and "<" in (line := lines[end]) and (
                "/<" in line or "!<" in line or "*<" in line) and (
                decl.type in _DECLARATIONS and decl.child_by_field_name("body") is None):
            # ``int n{\n 4}; ///< rows``: after a declaration that ends lines below its name,
            # when no comment above documents it
            above = self.above(decl.start_point[0] if start_row is None else start_row)
            if not above and (trailing := _TRAILING_DOC.search(lines[end], decl.end_point[1])):
                return self.trailing(trailing.group(1), end + 1)
            return above
        return self.above(decl.start_point[0] if start_row is None else start_row)

    def trailing(self, first: str, row: int) -> str:
        """``///< text`` and the ``///<`` lines right under it (``/**< ... */`` on its own)."""
        self.doxygen = True
        block = [first]
        if "*/" in first:
            block = [first[:first.index("*/")]]
        else:
            while row < len(self.lines) and len(block) < MAX_DOC_LINES and (
                    more := _TRAILING_MORE.match(self.lines[row])):
                block.append(more.group(1))
                row += 1
        return _doc_text(block)

    def above(self, start_row: int) -> str:
        """The comment ending right above the declaration starting on ``start_row``."""
        lines, blanked = self.lines, self.blanked
        row = start_row - 1
        while 0 <= row < len(lines):
            line = lines[row]
            stripped = line.strip()
            if not stripped:
                return ""
            if stripped[:2] == "//":
                if _TOOL_NOTE.match(line):
                    row -= 1
                    continue
                start = lines[start_row] if start_row < len(lines) else ""
                found = self.line_block(row, len(start) - len(start.lstrip()))
                return self.doxygen_over(found) if found and not self.doxygen else found
            if stripped[-2:] == "*/":
                return self.block(row)
            if (blanked is not None and row < len(blanked) and not blanked[row].strip()) or (
                    stripped[0] in "t[_" and _DOC_SKIP.match(line)):
                row -= 1   # a macro the preparation blanked, a ``template`` head, an attribute
                continue
            if stripped[0] == "#" and (opened := self.branches.opened_by(row)) is not None:
                # the first declaration of an ``#if`` branch: the comment above the ``#if`` is
                # its documentation (``/// Index sequences`` over ``#if ... #else struct index_sequence``)
                row = opened - 1
                continue
            return ""
        return ""

    def doxygen_over(self, plain: str) -> str:
        """A Doxygen comment right above the plain ``//`` comment just found (past ``template``
        heads), else that comment: a ``//`` note between a doc comment and its declaration
        (``/** Return ... */ // Templatized to ...``) is for the source's reader, as for Doxygen."""
        lines = self.lines
        row = self.top - 1
        while row >= 0 and lines[row].lstrip()[:1] == "t" and _DOC_SKIP.match(lines[row]):
            row -= 1
        stripped = lines[row].strip() if row >= 0 else ""
        if stripped[:3] in ("///", "//!") and stripped[3:4] != "<":
            found = self.line_block(row, len(lines[row]) - len(lines[row].lstrip()))
        elif stripped[-2:] == "*/":
            found = self.block(row)
        else:
            found = ""
        if found and self.doxygen:
            return found
        self.doxygen = False
        return plain

    def line_block(self, row: int, indent: int) -> str:
        """The ``//`` lines ending at ``row``: ``///`` and ``//!`` lines alone when the last is one."""
        lines = self.lines
        line = lines[row]
        stripped = line.lstrip()
        if len(line) - len(stripped) > indent + 2:
            return ""   # the tail of a comment after the code above (``int a;  // the a``)
        doxygen = self.doxygen = stripped[2:3] in ("/", "!")
        block: list[str] = []
        while row >= 0 and len(block) < MAX_DOC_LINES:
            stripped = lines[row].lstrip()
            if stripped[:2] != "//" or stripped[2:4] in ("/<", "!<") or stripped[:4] == "////":
                break
            marked = stripped[2:3] in ("/", "!")
            if doxygen and not marked:
                break
            if not _TOOL_NOTE.match(stripped):
                block.append(stripped[3:] if marked else stripped[2:])
            row -= 1
        self.top = row + 1
        block.reverse()
        text = _doc_text(block)
        return "" if not doxygen and not_doc.is_label(text) else text   # a section's label

    def block(self, end: int) -> str:
        """The ``/* ... */`` comment ending on line ``end``, when it starts a line of its own."""
        lines = self.lines
        row = end
        while row >= 0 and "/*" not in lines[row] and end - row < MAX_DOC_LINES:
            row -= 1
        if row < 0 or end - row >= MAX_DOC_LINES:
            return ""
        first = lines[row].lstrip()
        if first[:2] != "/*" or first[:4] in ("/**<", "/*!<"):
            return ""   # a comment that closes code on its line, or a ``/**<`` of the line above
        self.doxygen = first[2:3] in ("*", "!")
        self.top = row
        body = lines[row:end + 1]
        body[0] = _BLOCK_OPENER.sub("", body[0])
        body[-1] = body[-1][:body[-1].rindex("*/")]
        inner = body[1:]
        if inner and all(_STAR_PREFIX.match(line) or not line.strip() for line in inner):
            inner = [_STAR_PREFIX.sub("", line, count=1) for line in inner]
        return _doc_text([body[0].strip(), *_dedent(inner)])


# ``#ifndef X`` or ``#if !defined(X)``: an include guard when ``#define X`` (nothing more) follows
_NOT_DEFINED = re.compile(r"(?:ifndef[ \t]+|if[ \t]*![ \t]*defined[ \t]*\(?[ \t]*)(\w+)[ \t]*\)?[ \t]*$")
_BARE_DEFINE = re.compile(r"[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]*$")
_IN_DIRECTIVE = re.compile(r"\\\n|//[^\n]*|/\*.*?\*/", re.S)   # a continuation or a comment


def _defines_next(lines: list[str], row: int, name: str) -> bool:
    """Is the first line from ``row`` on that is neither blank nor a ``//`` comment ``#define name``?"""
    for line in lines[row:row + 8]:
        stripped = line.strip()
        if stripped and stripped[:2] != "//":
            return bool((define := _BARE_DEFINE.match(line)) and define[1] == name)
    return False


class _Branches:
    """A file's ``#if`` groups by row: the branch (``#if``, ``#elif`` or ``#else``) a row is in,
    and the ``#if`` that each branch's opening directive belongs to.  An include guard is no
    branch: every line of a header is inside it."""

    __slots__ = ("opening", "parents", "spans", "starts")

    def __init__(self, text: str, lines: list[str]) -> None:
        self.opening: dict[int, int] = {}   # row of an #if, #elif or #else -> row of its group's #if
        # (first row, last row, condition) of each branch: its directive, and its group's ``#if`` after
        # an ``#elif`` or ``#else``
        spans: list[tuple[int, int, tuple[str, ...]]] = []
        stack: list[tuple[int, str, bool, list]] = []   # per open group: #if row, #if text, guard, branch
        padded = "\n" + text
        newlines, position = 0, 0
        for match in _CONDITIONAL.finditer(padded):
            newlines += padded.count("\n", position, match.start() + 1)
            position = match.start() + 1
            row, directive = newlines - 1, match.group(1)
            written = " ".join(_IN_DIRECTIVE.sub(" ", match.group()[match.end(1) - match.start():]).split())
            written = f"#{directive} {written}".rstrip()
            if directive.startswith("if"):
                guard = bool((name := _NOT_DEFINED.match(written, 1)) and _defines_next(lines, row + 1, name[1]))
                if not guard:
                    self.opening[row] = row
                stack.append((row, written, guard, [row, (written,)]))
                continue
            if not stack:
                continue   # an #else or #endif without its #if
            if_row, if_written, guard, branch = stack[-1]
            if not guard:
                spans.append((branch[0] + 1, row - 1, branch[1]))
            if directive == "endif":
                stack.pop()
            else:
                branch[:] = [row, (written, if_written)]
                if not guard:
                    self.opening[row] = if_row
        for _if_row, _written, guard, branch in stack:   # groups the file leaves open
            if not guard:
                spans.append((branch[0] + 1, len(lines) - 1, branch[1]))
        spans = sorted(span for span in spans if span[0] <= span[1])
        self.spans = spans
        self.starts = [span[0] for span in spans]
        # each branch's innermost enclosing branch (-1 for none): branches nest or are apart
        self.parents: list[int] = []
        open_: list[int] = []
        for index, (first, _last, _condition) in enumerate(spans):
            while open_ and spans[open_[-1]][1] < first:
                open_.pop()
            self.parents.append(open_[-1] if open_ else -1)
            open_.append(index)

    def opened_by(self, row: int) -> int | None:
        """The row of the ``#if`` whose group's branch the directive on ``row`` opens, if it does."""
        return self.opening.get(row)

    def condition(self, row: int) -> tuple[str, ...]:
        """The innermost branch ``row`` is in, as its directive (and its group's ``#if`` for an
        ``#elif`` or ``#else``); () outside every branch."""
        index = bisect.bisect_right(self.starts, row) - 1
        while index >= 0:
            _first, last, condition = self.spans[index]
            if last >= row:
                return condition
            index = self.parents[index]   # a branch holding ``row`` holds this one too
        return ()


_BLOCK_OPENER = re.compile(r"^[ \t]*/\*+!?")


def _dedent(lines: list[str]) -> list[str]:
    """The lines without the indentation all those that are not blank share."""
    cut = min([len(line) - len(stripped) for line in lines if (stripped := line.lstrip())], default=0)
    return [line[cut:] for line in lines] if cut else lines


def _doc_text(block: list[str]) -> str:
    """The lines of a comment (markers gone) as documentation: common indentation removed,
    rules (``-----``) dropped; "" for a licence notice."""
    kept = [line.rstrip() if line.strip(_RULE_CHARACTERS) and not not_doc.is_divider(line)
            and not not_doc.is_note(line) else "" for line in block[:MAX_DOC_LINES]]
    body = "\n".join(_dedent(kept)).strip()
    if not body or not_doc.is_licence(body.partition("\n\n")[0]):
        return ""   # a licence notice (documentation may name its licence further down)
    return body


# --- without a parse tree -----------------------------------------------------

_DIRECTIVE = re.compile(
    r'\n[ \t]*+(?P<hash>#)[ \t]*+(?:define[ \t]+(?P<macro>[A-Za-z_]\w*)(?P<params>\([^)\n]*\))?'
    r'|include[ \t]*(?P<header><[^>\n]+>|"[^"\n]+"))')


def scan_preprocessor(text: str, dead: list[tuple[int, int]] | None = None, known: Container[int] = ()
                      ) -> Iterator[tuple[int, int, re.Match[str]]]:
    """``#define``/``#include`` found line by line, as ``(line, column of #,
    match)``: the fallback for unparsed files, and the directives inside
    function bodies that the tree walk does not enter.  Those inside ``dead``
    stretches (offsets in ``"\n" + text``) and those on ``known`` lines are skipped."""
    padded = "\n" + text
    line, position = 0, 0
    for match in _DIRECTIVE.finditer(padded):
        line += padded.count("\n", position, match.start() + 1)
        position = match.start() + 1
        if line in known:
            continue   # the tree walk's already: most of them
        if dead and any(start <= position < end for start, end in dead):
            continue
        yield line, match.start("hash") - position, match


def _add_directive(line: int, match: re.Match[str], docs: _DocComments, symbols: list[dict],
                   imports: list[dict]) -> None:
    """Add a scanned directive's symbol (a macro with the doc comment above it) and its include."""
    symbol, include = _directive_facts(line, match)
    if include is None and (doc := docs.above(line - 1)):
        symbol["doc"] = doc
    if include is None and (condition := docs.branches.condition(line - 1)):
        symbol["condition"] = list(condition)
    symbols.append(symbol)
    if include:
        imports.append(include)


def _directive_facts(line: int, match: re.Match[str]) -> tuple[dict, dict | None]:
    """The symbol (and for an include, the import) of one scanned directive."""
    if match.group("macro"):
        symbol = {"name": match.group("macro"), "kind": "macro", "line": line}
        if match.group("params"):
            symbol["signature"] = _squeeze(match.group("params"))
        return symbol, None
    header = match.group("header")[1:-1]
    return {"name": header, "kind": "include", "line": line}, {
        "module": header, "line": line, "kind": "include",
        "system": match.group("header").startswith("<")}


# --- the leading comment ------------------------------------------------------

_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)


def leading_comment(text: str, lines: list[str] | None = None) -> str:
    """First comment before the code that is not a licence notice, cleaned.

    Preprocessor lines (include guards, ``#pragma once``, includes) may come
    between comments; a run of ``//`` lines ends at a blank line or where the
    comment style changes (``//`` licence lines followed by ``///`` docs).
    ``lines``, when given, is ``text.split("\n")``.
    """
    lines = (text.split("\n", 400) if lines is None else lines)[:400]
    index = 0
    after_code = False      # includes came first: a comment on the next declaration is its own
    while index < len(lines):
        stripped = lines[index].strip()
        if not stripped or stripped.startswith("#"):
            after_code = after_code or stripped.startswith("#")
            while stripped.endswith("\\") and index + 1 < len(lines):
                index += 1
                stripped = lines[index].strip()
            index += 1
            continue
        if stripped.startswith("/*"):
            match = _BLOCK_COMMENT.match("\n".join(lines[index:]).lstrip())
            if not match:
                return ""
            comment = match.group()
            index += comment.count("\n") + 1
        elif stripped.startswith("//"):
            style = _line_comment_style(stripped)
            run = []
            while index < len(lines):
                stripped = lines[index].strip()
                if not stripped.startswith("//") or _line_comment_style(stripped) != style:
                    break
                run.append(stripped)
                index += 1
            comment = "\n".join(run)
        else:
            return ""
        cleaned = _clean_comment(comment)
        if cleaned and not not_doc.is_licence(cleaned):
            if after_code and not _FILE_TAG.search(comment) and _documents_next(lines, index):
                return ""
            return cleaned
    return ""


_FILE_TAG = re.compile(r"[@\\]file\b")     # Doxygen's mark of the file's own comment


def _documents_next(lines: list[str], index: int) -> bool:
    """Does the comment ending before ``lines[index]`` sit right on a declaration (``/* objToJSON */``
    after the includes)?  Then it is that declaration's, not the file's."""
    following = lines[index].strip() if index < len(lines) else ""
    return bool(following) and not following.startswith(("#", "//", "/*", "namespace", "extern", "using"))


def _line_comment_style(line: str) -> str:
    return line[:3] if line[:3] in ("///", "//!") else "//"


_NOT_OVERVIEW = re.compile(r"(?:TODO|FIXME|XXX|HACK|NOLINT|clang-format|@lint|\$\{)", re.I)
_DOXYGEN_LINE = re.compile(r"^[@\\](?:file|author|date|copyright|version)\b|^Author:", re.I)
_DOXYGEN_TAG = re.compile(r"^[@\\](?:brief|short|details)\s+")
_BANNER = re.compile(r"-\*-.*?-\*-|^[=\-]+|[=\-]+(?://)?$")
_COMMENT_OPENER = re.compile(r"^(?:/\*+!?|//[/!]?|\*+/?)")
_COMMENT_CLOSER = re.compile(r"\*+/$")
_RULE = re.compile(r"[-=*/#~_ ]+")


def _clean_comment(comment: str) -> str:
    """The comment's first paragraph as plain text; empty for tool notes
    (``TODO``, ``clang-format off``) that say nothing about the file."""
    paragraph: list[str] = []
    for line in comment.strip().split("\n"):
        line = _COMMENT_OPENER.sub("", line.strip())
        line = _COMMENT_CLOSER.sub("", line).strip()
        if not_doc.is_note(line):
            continue    # a pragma or an author line says nothing about the file
        if not_doc.is_divider(line):
            line = ""   # nor does a section's banner (``---- Errors ----``)
        line = _BANNER.sub("", line).strip()
        if not line:
            if paragraph:
                break
            continue
        if _DOXYGEN_LINE.match(line) or _RULE.fullmatch(line):
            continue
        paragraph.append(_DOXYGEN_TAG.sub("", line))
    cleaned = " ".join(paragraph)
    if not cleaned or _NOT_OVERVIEW.match(cleaned):
        return ""
    if len(cleaned) > MAX_DOCSTRING:
        cleaned = cleaned[:MAX_DOCSTRING - 3].rstrip() + "..."
    return cleaned


# --- entry point ----------------------------------------------------------------


def extract(text: str, path: str) -> dict[str, Any]:
    """Symbols, includes and the leading comment of one C/C++/CUDA file."""
    cuda = path.lower().endswith(CUDA_SUFFIXES)
    prepared, dead = _prepare(text, cuda)
    docs = _DocComments(text, prepared)
    result: dict[str, Any] = {"docstring": leading_comment(text, docs.lines), "problems": [], "parsed": True}
    source = prepared.encode("utf-8", "surrogatepass")
    symbols: list[dict] = []
    imports: list[dict] = []
    tree = None
    if len(source) > MAX_PARSE_BYTES:
        reason = f"too large to parse ({len(source):,} bytes)"
    elif len(source) > MAX_PARSE_MARKS and (
            marks := len(source) - len(source.translate(None, _MARKS))) > MAX_PARSE_MARKS:
        reason = f"too complex to parse ({marks:,} operators and brackets)"
    else:
        tree = _parse(_parser(cuda), source)
        reason = "parsing ran past its budget"
    if tree is None:
        for line, _column, match in scan_preprocessor(text, dead):
            _add_directive(line, match, docs, symbols, imports)
        result["problems"].append(
            {"message": f"{reason}; only #define and #include were scanned"})
        result["parsed"] = False
        return _finish(result, symbols, imports)
    root = tree.root_node
    # an HTML build: its highlighting from this tree, not a second parse
    treesitter.parsed(text, root, source, "tree_sitter_cuda" if cuda else "tree_sitter_cpp", "language", True)
    walker = _Walker(source, _fields(cuda), docs)
    walker.walk(root)
    walker.finish()
    symbols, imports = walker.symbols, walker.imports
    for line, column, match in scan_preprocessor(text, dead, walker.preproc_lines):
        if _is_directive(root, line, column):
            _add_directive(line, match, docs, symbols, imports)
    if root.type == "ERROR" or walker.damage is not None:
        line = walker.damage or _first_error_line(root)
        result["problems"].append({"line": line, "message": "C/C++ syntax not understood from"
                                   " here on; some declarations may be missing"})
    return _finish(result, symbols, imports)


def _parse(parser: Parser, source: bytes) -> Tree | None:
    """The tree, or None when parsing runs past ``PARSE_CHECKS`` (some inputs
    make the parser's error recovery crawl)."""
    checks = count(1)
    # the tree keeps this reader for a node's text, which a highlight query's predicates read:
    # large chunks while parsing, a name's worth after
    chunk = [65536]
    buffer, view = _read_buffer(), memoryview(source)

    def read(offset: int, _point: object) -> bytearray:
        buffer[:] = view[offset:offset + chunk[0]]     # copied from the view: no slice made first
        return buffer

    try:
        return parser.parse(read, progress_callback=lambda _offset, _error: next(checks) > PARSE_CHECKS)
    except ValueError:  # cancelled
        parser.reset()
        return None
    finally:
        chunk[0] = 256


# tree-sitter 0.26.1 keeps a reference to every object a read callable returns (its parse wrapper
# never releases it): slices of the source kept each parsed file's bytes for the life of the process.
# So a reader returns its thread's one buffer, refilled per call; the binding releases its view of it
# before the next call, and threads are apart because a parse may switch threads inside the reader.
_READ_BUFFERS = threading.local()


def _read_buffer() -> bytearray:
    """This thread's buffer for tree-sitter's reads (see ``_READ_BUFFERS``)."""
    buffer = getattr(_READ_BUFFERS, "buffer", None)
    if buffer is None:
        buffer = _READ_BUFFERS.buffer = bytearray()
    return buffer


def _is_directive(root: Node, line: int, column: int) -> bool:
    """Is the ``#`` at this place a directive, not text in a comment or string?"""
    node: Node | None = root.descendant_for_point_range((line - 1, column), (line - 1, column))
    while node is not None:
        if node.type in ("comment", "string_literal", "raw_string_literal", "char_literal"):
            return False
        if node.type.startswith("preproc_"):
            return True
        node = node.parent
    return True


def _first_error_line(root: Node) -> int:
    cursor = root.walk()
    while True:
        node = cursor.node
        if node is not None and (node.is_error or node.is_missing):
            return node.start_point[0] + 1
        if node is not None and node.has_error and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return 1


def _finish(result: dict[str, Any], symbols: list[dict], imports: list[dict]) -> dict[str, Any]:
    # A name the parser invented to repair the tree (zero width) is no name.
    result["symbols"] = _unique_sorted(symbols, named=True)
    result["imports"] = _unique_sorted(imports, key="module")
    return result


def _unique_sorted(items: list[dict], key: str = "name", named: bool = False) -> list[dict]:
    """The first of each (line, name, kind, parent), in that order; ``named``: blank names left out.
    A kind or parent is never "", so its absence is keyed as "" and one tuple is both identity and order."""
    first: dict[tuple, dict] = {}
    for item in items:
        name = item[key]
        if named and not name.strip():
            continue
        first.setdefault((item["line"], name, item.get("kind", ""), item.get("parent", "")), item)
    return [first[identity] for identity in sorted(first)]
