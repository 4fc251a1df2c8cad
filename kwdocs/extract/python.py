"""Python: classes, functions, methods, constants, imports and calls.

The standard library's ``ast`` is the parser: it is exact and fast enough.  Syntax newer than
the running Python (up to 3.14: type parameters and ``type`` aliases, f-strings nesting the
same quotes, ``except A, B:``) is rewritten, where tree-sitter-python finds it, into older
syntax on the same lines and parsed again, so that a file gives the same facts on every
Python that runs kwdocs (see ``_older_syntax``).  Code that still does not parse (a broken
file) gets a keyword page all the same: the tolerant tree-sitter-python grammar takes over,
and a line regex if even that is unavailable; ``parsed`` is then False and the problem says why.

What is listed: module-level classes and functions, classes nested in classes,
and methods (kind ``method``, ``parent`` the dotted class path), including
those under ``if``/``try``/``with`` blocks, each with its docstring (``doc``).
Classes and functions local to a function body are listed under it, as Python
names them (``parent`` ``test_x.<locals>``): a test's ``ToyModel`` is worth
finding.  Imports and calls are taken from the whole file, since a lazy import
inside a function is a dependency too; an imported module's dotted path is a
keyword beside the name it binds.

Memory stays bounded whatever the file: an ``ast`` tree costs up to 1 KB per operator,
bracket or quote, so a file with more than ``PART_WEIGHT`` of them (or longer than
``PART_MOST``) is parsed a run of whole top-level statements at a time (calls are then
resolved against the imports above them), and
the tolerant parser, whose tree of pathological code costs more still, takes at most
``TOLERANT_LIMIT`` bytes; beyond that the line regex finds the definitions.
"""
from __future__ import annotations

import ast
import bisect
import inspect
import operator
import re
import string
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from operator import attrgetter, itemgetter
from pathlib import PurePosixPath
from typing import Any, NamedTuple, cast, overload

from kwdocs.extract.text import leading_comment

_CONSTANT_NAME = re.compile(r"_*[A-Z][A-Z0-9_]*")
_TYPE_FACTORIES = frozenset({"TypeVar", "ParamSpec", "TypeVarTuple", "NewType"})
# ``X = Union[...]``: a subscript of one of these is a type alias, as pdoc and mypy read it
_TYPE_FORMS = frozenset({"Union", "Optional", "Callable", "Literal", "Annotated", "Type", "Dict", "List",
                         "Tuple", "Set", "FrozenSet", "Mapping", "MutableMapping", "Sequence",
                         "MutableSequence", "Iterable", "Iterator", "AsyncIterable", "AsyncIterator",
                         "Generator", "AsyncGenerator", "Awaitable", "Coroutine", "IO", "Pattern"})
MAX_VALUE_TEXT = 80   # longest value or annotation a variable's entry shows
# A class body's assignments are members when the class is one of these: enum members (kind
# ``constant``, detail ``enum``, as C++ enumerators) or record fields (``variable``, ``field``)
_ENUM_BASES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "ReprEnum"})
_RECORD_BASES = frozenset({"NamedTuple", "TypedDict"})
_RECORD_DECORATORS = frozenset({"dataclass", "dataclasses.dataclass", "attr.s", "attr.attrs", "attrs.define",
                                "attrs.frozen", "attrs.mutable", "attr.define", "attr.frozen", "define", "frozen"})
_CLASS_SCOPES = frozenset({"class", "enum", "record"})
_PROPERTY_DECORATORS = frozenset({"property", "cached_property"})
MAX_SOURCE_TEXT = 200  # longest source snippet kept for a call argument
# A Sphinx doc comment: a line's whole text (``#: text``) or what follows an assignment (``X = 1  #: text``)
_DOC_COMMENT = re.compile(r"\s*#: ?(.*)")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")   # the line ends ``ast`` counts lines by


PART_MOST = 1024 * 1024      # source longer than this is not given to one ``ast.parse`` ...
PART_WEIGHT = 150_000        # ... nor source with more marks than this: its tree costs up to 1 KB per mark
PARSE_PART = 128 * 1024      # the characters of each part of a file that passes those, where statements allow
PART_TRIES = 8               # cuts tried for one run (a cut may fall inside a string or brackets)
TOLERANT_LIMIT = 256 * 1024  # characters the tolerant parser is given
_MARKS = string.punctuation.replace("_", "").encode()   # marks: operators, brackets, quotes

# Where a top-level statement may start: a cut there is tried, and kept if the run before it parses.
_PART_START = re.compile(r"^(?:@|(?:async +)?def |class |import |from |if |try:|for |with |while |"
                         r"[A-Za-z_][\w.]*[ \t]*(?::[^=\n]*)?=[^=])", re.MULTILINE)


def extract(text: str, path: str) -> dict:
    """Facts of one Python file (see ``kwdocs.extract``); never raises for bad code."""
    try:
        if _too_heavy(text):
            return _AstReader(path).read_parts(_parsed_parts(text, path), text)
        tree = ast.parse(text, filename=path)
    except SyntaxError as error:  # also IndentationError, TabError
        newer = _read_newer_syntax(text, path)
        if newer is not None:
            return newer
        where = f" at line {error.lineno}" if error.lineno else ""
        problem: dict[str, int | str] = {"message": f"syntax error{where}: {error.msg}"}
        if error.lineno:
            problem = {"line": error.lineno, **problem}
        return _fallback(text, path, problem)
    except _TooLarge as error:
        return _fallback(text, path, {"line": error.line, "message": "a statement too large for Python's parser"})
    except (RecursionError, MemoryError):  # absurd nesting: the parser's own stack runs out
        return _fallback(text, path, {"message": "too deeply nested for Python's parser"})
    except ValueError as error:  # NUL bytes
        return _fallback(text, path, {"message": f"Python parser failed: {_describe(error)}"})
    try:
        return _AstReader(path).read(tree, text)
    except RecursionError:
        return _fallback(text, path, {"message": "too deeply nested for the ast analysis"})


class _TooLarge(Exception):
    """A run of statements (starting at ``line``) too large for ``ast.parse`` within the bounds."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


def _too_heavy(text: str) -> bool:
    """Whether one ``ast.parse`` of ``text`` could pass the memory bound (``PART_MOST``, ``PART_WEIGHT``)."""
    return len(text) > PART_WEIGHT and (len(text) > PART_MOST or _marks(text) > PART_WEIGHT)


def _marks(text: str) -> int:
    """How many marks ``text`` holds, counted in its UTF-8 bytes, where each ASCII character is
    one byte of its own (``bytes.translate`` deletes by a table; ``str.translate`` looks each
    character up in a dict, many times slower)."""
    data = text.encode("utf-8", "surrogatepass")   # any str: lone surrogates too
    return len(data) - len(data.translate(None, _MARKS))


def _part_ends(text: str) -> list[int]:
    """Offsets where a run of top-level statements may end: each possible statement start (the
    first of a line's decorators, not the definition under them) and the end of the text."""
    ends = []
    for match in _PART_START.finditer(text, 1):
        start = match.start()
        if text[start] != "@" and text.startswith("@", text.rfind("\n", 0, start - 1) + 1):
            continue    # a definition under a decorator
        ends.append(start)
    ends.append(len(text))
    return ends


def _parsed_parts(text: str, path: str) -> Iterator[ast.Module]:
    """The file parsed a run of top-level statements at a time, each run at most ``PARSE_PART``
    characters where the code allows and never more than ``PART_MOST``, with the file's line
    numbers.  Raises SyntaxError (line numbers of the file) when a run cannot be parsed."""
    ends = _part_ends(text)
    begin = line = 0
    while begin < len(text):
        first = bisect.bisect_right(ends, begin)           # the nearest end after ``begin``
        index = max(first, bisect.bisect_right(ends, begin + PARSE_PART) - 1)
        for _ in range(PART_TRIES):
            end = ends[index]
            part = text[begin:end]
            if _too_heavy(part):
                raise _TooLarge(line + 1)
            try:
                # blank lines before it give the file's line numbers (``ast.increment_lineno``, a walk
                # in Python over every node, cost as much as parsing)
                tree = ast.parse("\n" * line + part, filename=path)
                break
            except SyntaxError as error:
                if end == len(text):
                    raise
                failure = error
                # the cut fell inside a statement, a string or brackets: cut further on, ever further
                index = max(index + 1, bisect.bisect_right(ends, end + (end - begin) // 2) - 1)
        else:
            raise failure
        yield tree
        line += text.count("\n", begin, end)
        begin = end


def package_of(path: str) -> list[str]:
    """The package a module sits in, from its path: its folder, for ``__init__.py`` too.

    In a ``src/`` layout the package starts below ``src``, as it is installed."""
    parts = list(PurePosixPath(path).parent.parts)
    return parts[parts.index("src") + 1:] if "src" in parts else parts


def resolve_relative(module: str | None, level: int, package: list[str]) -> str:
    """Absolute module of ``from <level dots><module> import ...``.

    ``from .module import X`` in ``pkg/nn/modules/linear.py`` is
    ``pkg.nn.modules.module``; ``from .. import init`` is ``pkg.nn``.
    A relative import that climbs above the source root is kept as written.
    """
    if level == 0:
        return module or ""
    base = package[: len(package) - (level - 1)] if level - 1 <= len(package) else []
    if not base:
        return "." * level + (module or "")
    return ".".join(base + ([module] if module else []))


class CallRecord(Mapping):
    """One call, read as a mapping with the keys ``name``, ``line``, ``kwargs`` and ``args``.

    The argument texts are cut from the source when first read, not before: a
    large tree has 300,000 calls and the rules read the arguments of a handful.
    """

    __slots__ = ("_arguments", "_node", "_text_of", "line", "name")
    KEYS = ("name", "line", "kwargs", "args")

    def __init__(self, name: str, line: int, node: ast.Call | None = None,
                 text_of: Callable[[ast.expr], str] | None = None,
                 arguments: tuple[dict[str, str], list[str]] | None = None) -> None:
        self.name = name
        self.line = line
        self._node = node          # with ``text_of``, what the arguments are cut from
        self._text_of = text_of
        self._arguments = arguments

    def arguments(self) -> tuple[dict[str, str], list[str]]:
        """(keyword arguments, positional arguments) as source texts."""
        if self._arguments is None:
            node, text_of = self._node, self._text_of
            assert node is not None and text_of is not None
            self._arguments = ({keyword.arg or "**": text_of(keyword.value) for keyword in node.keywords},
                               [text_of(arg) for arg in node.args])
            self._node = self._text_of = None
        return self._arguments

    def __getitem__(self, key: str) -> Any:
        if key == "name":
            return self.name
        if key == "line":
            return self.line
        if key == "kwargs":
            return self.arguments()[0]
        if key == "args":
            return self.arguments()[1]
        raise KeyError(key)

    # Mapping's own get and ``in`` would go through __getitem__, cutting the arguments
    def get(self, key: str, default: Any = None) -> Any:
        if key == "name":  # what the rules ask of every call
            return self.name
        return self[key] if key in self.KEYS else default

    def __contains__(self, key: object) -> bool:
        return key in self.KEYS

    def __iter__(self) -> Iterator[str]:
        return iter(self.KEYS)

    def __len__(self) -> int:
        return len(self.KEYS)

    def __repr__(self) -> str:
        return repr(dict(self))

    def __reduce__(self) -> tuple:
        return dict, (dict(self),)  # pickled (sent to another process) as the plain dict it reads as


class CallTable(Sequence[CallRecord]):
    """The calls found in a file's ast, kept by called name until asked for: the rules ask
    about each name once (``names``), and only the calls of the few names a rule matches
    become records (``named``); a tree has 300,000 calls.  As a sequence: every call's
    record, in the order of their lines and names (those of one line and name as found)."""

    def __init__(self, nodes: dict[str, list[ast.Call]], text_of: Callable[[ast.expr], str] | None) -> None:
        self._nodes = nodes
        self._text_of = text_of
        self._made: dict[str, list[CallRecord]] = {}
        self._sorted: list[CallRecord] | None = None
        self._count = sum(map(len, nodes.values()))

    def names(self) -> Iterable[str]:
        """The called names, each once."""
        return self._nodes.keys()

    def named(self, name: str) -> list[CallRecord]:
        """The records of the calls of ``name`` (none for a name not called)."""
        made = self._made.get(name)
        if made is None:
            text_of = self._text_of
            made = self._made[name] = [CallRecord(name, node.lineno, node, text_of)
                                       for node in self._nodes.get(name, ())]
        return made

    def _records(self) -> list[CallRecord]:
        if self._sorted is None:
            self._sorted = sorted((record for name in self._nodes for record in self.named(name)),
                                  key=attrgetter("line", "name"))
        return self._sorted

    @overload
    def __getitem__(self, index: int) -> CallRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[CallRecord]: ...

    def __getitem__(self, index: int | slice) -> CallRecord | list[CallRecord]:
        return self._records()[index]

    def __iter__(self) -> Iterator[CallRecord]:
        return iter(self._records())

    def __len__(self) -> int:
        return self._count

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (CallTable, list)) and list(self) == list(other)

    __hash__ = None   # type: ignore[assignment]   # compared by content, as the list it reads as

    def __reduce__(self) -> tuple:
        return list, (list(self),)   # pickled as the list it reads as


class _Collector:
    """Accumulates facts in one shape, whichever parser found them."""

    def __init__(self, path: str) -> None:
        self.package = package_of(path)
        self.symbols: list[dict] = []
        self.imports: list[dict] = []
        self.calls: list[CallRecord] = []
        self.call_nodes: dict[str, list[ast.Call]] = {}   # the ast's calls by resolved name (``ast_calls``)
        self.text_of: Callable[[ast.expr], str] | None = None
        self.aliases: dict[str, str] = {}  # bound name -> dotted target, for calls
        self.uses: set[str] = set()   # called names reached through an import: what the file uses of others
        self.exports: list[str] = []  # the names of ``__all__``, in its order: the module's public API

    def definition(self, name: str, kind: str, line: int, *, parents: Iterable[str] = (),
                   signature: str = "", decorators: list[str] | None = None,
                   is_async: bool = False, doc: str | None = None, detail: str = "", end: int = 0) -> None:
        symbol: dict[str, Any] = {"name": name, "kind": kind, "line": line}
        if end > line:      # its last line: a page links the definition's lines in the source
            symbol["end"] = end
        parent = ".".join(parents)
        if signature:
            symbol["signature"] = signature
        if parent:
            symbol["parent"] = parent
        if is_async or detail:
            symbol["detail"] = detail or "async"
        if decorators:
            symbol["decorators"] = decorators
        if doc:
            symbol["doc"] = doc
        self.symbols.append(symbol)

    def plain_import(self, module: str, bound: str | None, line: int) -> None:
        """``import module`` or ``import module as bound``."""
        self.imports.append({"module": module, "line": line, "kind": "import", "level": 0})
        if bound:
            self._bind(bound, module, line, signature=module)
            self.symbols.append({"name": module, "kind": "import", "line": line})
        else:
            self._bind(module.split(".")[0], module.split(".")[0], line, signature="")
            self.symbols.append({"name": module, "kind": "import", "line": line})

    def from_import(self, written: str | None, level: int, names: list[tuple[str, str, int]],
                    line: int) -> None:
        """``from written import name as bound, ...``; ``names`` holds (name, bound, line)."""
        module = resolve_relative(written, level, self.package)
        self.imports.append({"module": module, "names": [name for name, _, _ in names],
                             "line": line, "kind": "from", "level": level})
        if module == "__future__":
            return
        if module and level == 0:
            self.symbols.append({"name": module, "kind": "import", "line": line})
        elif written:   # a relative one as written on its line (``.checkpoint_activation``)
            self.symbols.append({"name": "." * level + written, "kind": "import", "line": line})
        for name, bound, name_line in names:
            if name != "*":
                target = f"{module}.{name}" if module else name
                self._bind(bound, target, name_line, signature=target)

    def _bind(self, bound: str, target: str, line: int, *, signature: str) -> None:
        self.aliases.setdefault(bound, target)
        if signature:
            self.symbols.append({"name": bound, "kind": "import", "line": line, "signature": signature})

    def call(self, name: str, line: int, kwargs: dict[str, str], args: list[str]) -> None:
        self.calls.append(CallRecord(self._resolved(name), line, arguments=(kwargs, args)))

    def ast_calls(self, calls: dict[str, list[ast.Call]], text_of: Callable[[ast.expr], str]) -> None:
        """Calls of the ast by called name as written, kept by the name each resolves to (once per
        name: a file calls the same few names over and over); no record is made yet (``CallTable``)."""
        self.text_of = text_of
        kept = self.call_nodes
        for name, nodes in calls.items():
            full = self._resolved(name)
            known = kept.get(full)
            if known is None:
                kept[full] = nodes
            else:
                known.extend(nodes)

    def ast_call_records(self, calls: dict[str, list[ast.Call]], text_of: Callable[[ast.expr], str]) -> None:
        """``ast_calls`` as records with their arguments cut now, so that the tree can go (``read_parts``)."""
        for name, nodes in calls.items():
            full = self._resolved(name)
            for node in nodes:
                record = CallRecord(full, node.lineno, node, text_of)
                record.arguments()
                self.calls.append(record)

    def _resolved(self, name: str) -> str:
        """The called name with an imported alias replaced by what it stands for."""
        head, _, rest = name.partition(".")
        target = self.aliases.get(head)
        if target and target != head:
            name = f"{target}.{rest}" if rest else target
        if target:
            self.uses.add(name)
        return name

    def facts(self, docstring: str) -> dict:
        found = {
            "symbols": _sorted_unique(self.symbols),
            "imports": sorted(self.imports, key=itemgetter("line", "module")),
            "calls": (CallTable(self.call_nodes, self.text_of) if self.call_nodes
                      else sorted(self.calls, key=attrgetter("line", "name"))),
            "docstring": docstring,
            "uses": sorted(self.uses),
        }
        if self.exports:   # only then: the facts of a module without ``__all__`` stay as they were
            exports = list(dict.fromkeys(self.exports))
            found["exports"] = exports
            found["uses"] = sorted(self.uses | self._star_exports(exports))
        return found

    def _star_exports(self, exports: list[str]) -> set[str]:
        """``m.name`` for each name of ``__all__`` this file neither defines nor binds, and each
        module it star-imports (``from ._api import *``): a re-export is a use, and the link
        step then finds where each name is defined, so the Public API links to it."""
        starred = [record["module"] for record in self.imports
                   if record.get("names") == ["*"] and record["module"]]
        known = self.aliases.keys() | {symbol["name"] for symbol in self.symbols if symbol["kind"] != "import"}
        return {f"{module}.{name}" for module in starred for name in exports if name not in known}


def _sorted_unique(symbols: list[dict]) -> list[dict]:
    """Sorted by (line, name); exact duplicates dropped, and an import name kept once."""
    seen: set[str] = set()
    unique_imports: list[dict] = []
    others: list[dict] = []
    for symbol in sorted(symbols, key=itemgetter("line", "name", "kind")):
        if symbol["kind"] != "import":
            others.append(symbol)
        elif symbol["name"] not in seen:
            seen.add(symbol["name"])
            unique_imports.append(symbol)
    result: list[dict] = []
    for symbol in sorted(others + unique_imports, key=itemgetter("line", "name")):
        if not result or result[-1] != symbol:
            result.append(symbol)
    return result


# ---------------------------------------------------------------------------
# ast


class _AstReader:
    def __init__(self, path: str) -> None:
        self.found = _Collector(path)
        self.source: _Source | None = None   # the text of a node as written, once the file is known
        self.variables: set[str] = set()   # lower-case names listed once: the first assignment defines
        self.definition_lines: list[int] = []   # where the tree's defs, classes and type aliases start, sorted
        self.lines: list[str] | None = None   # the file's lines, only when it holds a ``#:`` doc comment
        self.attributes: dict[tuple[str, ...], set[str]] = {}   # a class's attributes listed, by its parents

    def _comment_lines(self, text: str) -> None:
        """Keep the lines of a file holding ``#:``, where variables' doc comments are looked up;
        most files hold none and are not split."""
        self.lines = _LINE_BREAK.split(text) if "#:" in text else None

    def read(self, tree: ast.Module, text: str) -> dict:
        self._comment_lines(text)
        calls, imports, self.definition_lines, formatted = _calls_and_imports(tree)
        self._imports(imports)
        text_of = _SourceSlicer(text).of
        self.source = text_of if formatted else None   # only an f-string's text is cut from the source
        self._body(tree.body, (), "module")
        self.found.ast_calls(calls, text_of)  # after the imports, so aliases resolve
        docstring = _docstring(tree) or leading_comment(text)
        return {**self.found.facts(docstring), "parsed": True}

    def read_parts(self, trees: Iterable[ast.Module], text: str) -> dict:
        """``read`` over a file parsed in parts (``_parsed_parts``), one part's tree held at a time."""
        text_of = _SourceSlicer(text).of
        self._comment_lines(text)
        docstring = None
        for tree in trees:
            calls, imports, self.definition_lines, formatted = _calls_and_imports(tree)
            self.source = text_of if formatted else None
            self._imports(imports)
            self._body(tree.body, (), "module")
            self.found.ast_call_records(calls, text_of)   # cut now, so the records let the part's tree go
            if docstring is None:
                docstring = _docstring(tree) or ""
        return {**self.found.facts(docstring or leading_comment(text)), "parsed": True}

    def _imports(self, imports: list[ast.Import | ast.ImportFrom]) -> None:
        for node in sorted(imports, key=lambda node: (node.lineno, node.col_offset)):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    self.found.plain_import(alias.name, alias.asname, alias.lineno)
            else:
                names = [(alias.name, alias.asname or alias.name, alias.lineno) for alias in node.names]
                self.found.from_import(node.module, node.level, names, node.lineno)

    def _body(self, body: list[ast.stmt], parents: tuple[str, ...], scope: str) -> None:
        """Definitions of a statement list; ``scope``: ``module``, ``class`` or ``function``
        (whose definitions are its locals, under ``<name>.<locals>``)."""
        for index, node in enumerate(body):
            kind = node.__class__
            if kind is ast.ClassDef:
                cdef = cast(ast.ClassDef, node)
                self.found.definition(cdef.name, "class", cdef.lineno, parents=parents,
                                      signature=_type_parameters(cdef) + _class_signature(cdef, self.source),
                                      decorators=_decorators(cdef, self.source), doc=_docstring(cdef),
                                      end=cdef.end_lineno or 0)
                scope_of_class = _class_scope(cdef)
                self._body(cdef.body, parents + (cdef.name,), scope_of_class)
                if scope_of_class == "class":
                    self._init_attributes(cdef, parents + (cdef.name,))
            elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                fdef = cast("ast.FunctionDef | ast.AsyncFunctionDef", node)
                self.found.definition(fdef.name, "method" if scope in _CLASS_SCOPES else "function",
                                      fdef.lineno, parents=parents,
                                      signature=_type_parameters(fdef) + _function_signature(fdef, self.source),
                                      decorators=_decorators(fdef, self.source) if fdef.decorator_list else None,
                                      is_async=kind is ast.AsyncFunctionDef, doc=_docstring(fdef),
                                      detail="property" if scope in _CLASS_SCOPES and _is_property(fdef) else "",
                                      end=fdef.end_lineno or 0)
                if self._holds_definitions(fdef):   # most function bodies define nothing: not read
                    self._body(fdef.body, parents + (fdef.name, "<locals>"), "function")
            elif scope == "module" and (kind is ast.Assign or kind is ast.AnnAssign):
                self._assignment(cast("ast.Assign | ast.AnnAssign", node), body, index)
            elif (scope == "enum" or scope == "record") and (kind is ast.Assign or kind is ast.AnnAssign):
                self._member(cast("ast.Assign | ast.AnnAssign", node), body, index, parents, scope)
            elif scope == "class" and (kind is ast.Assign or kind is ast.AnnAssign):
                self._class_attribute(cast("ast.Assign | ast.AnnAssign", node), body, index, parents)
            elif scope == "module" and kind is ast.AugAssign:   # ``__all__ += [...]``
                augmented = cast(ast.AugAssign, node)
                if isinstance(augmented.target, ast.Name) and augmented.target.id == "__all__":
                    self.found.exports += _string_items(augmented.value)
            elif kind is _TYPE_ALIAS or kind is _Alias:   # ``type X[T] = ...``: a definition, like a class
                alias: Any = node
                value = _cut(_unparse(alias.value, self.source))
                self.found.definition(alias.name.id, "type", alias.lineno, parents=parents,
                                      signature=f"{_type_parameters(alias)} = {value}".lstrip(),
                                      doc=self._variable_doc(alias, body, index))
            else:
                fields = _BLOCK_FIELDS.get(kind)   # only these hold statements: most of a function body does not
                if fields is not None:
                    for field in fields:
                        block = getattr(node, field)
                        if block:
                            self._body(block, parents, scope)
                    if kind in _HANDLED:
                        for handler in cast("ast.Try | ast.TryStar", node).handlers:
                            self._body(handler.body, parents, scope)
                    elif kind is _MATCH:
                        for case in cast(ast.Match, node).cases:
                            self._body(case.body, parents, scope)

    def _holds_definitions(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Whether a def, class or type alias starts in the lines of ``node``'s body: the only
        statements a function's body is read for (its locals)."""
        lines = self.definition_lines
        after = bisect.bisect_right(lines, node.lineno)
        return after < len(lines) and (node.end_lineno is None or lines[after] <= node.end_lineno)

    def _member(self, node: ast.Assign | ast.AnnAssign, body: list[ast.stmt], index: int,
                parents: tuple[str, ...], scope: str) -> None:
        """An enum's member (``RED = 1``) or a record's field (``name: str = ""``), under its class."""
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else (
            node.target if isinstance(node, ast.AnnAssign) else None)
        if not isinstance(target, ast.Name) or target.id.startswith("_"):
            return
        if scope == "enum":
            if node.value is not None:
                self.found.definition(target.id, "constant", target.lineno, parents=parents, detail="enum",
                                      signature="= " + _short_value(node.value, self.source),
                                      doc=self._variable_doc(node, body, index))
        elif isinstance(node, ast.AnnAssign) and "ClassVar" not in _unparse(node.annotation, self.source):
            signature = ": " + _short(_unparse(node.annotation, self.source))
            if node.value is not None:
                signature += " = " + _short_value(node.value, self.source)
            self.found.definition(target.id, "variable", target.lineno, parents=parents, detail="field",
                                  signature=signature, doc=self._variable_doc(node, body, index))

    def _class_attribute(self, node: ast.Assign | ast.AnnAssign, body: list[ast.stmt], index: int,
                         parents: tuple[str, ...]) -> None:
        """A public name a class body assigns or annotates (``in_features: int``), once, as pdoc
        lists a class's variables: shown as a record's field is, under its class."""
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [element for target in targets for element in _assigned_names(target)]
        alone = len(names) == 1   # ``a, b = f()``: no one value or docstring is each name's
        for name in names:
            self._attribute(name.id, name.lineno, parents, node if alone else None, body, index)

    def _init_attributes(self, cdef: ast.ClassDef, parents: tuple[str, ...]) -> None:
        """The attributes ``__init__`` sets on ``self`` in its own statements (``self.x: T = ...``),
        those with an annotation or a doc only, as pdoc inlines ``__init__`` into the class."""
        init = next((node for node in cdef.body if isinstance(node, ast.FunctionDef) and node.name == "__init__"), None)
        if init is None:
            return
        listed = self.attributes.setdefault(parents, set())
        # a method or property of the same name is listed as such
        listed.update(node.name for node in cdef.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))
        body = init.body
        for index, node in enumerate(body):
            if isinstance(node, ast.AnnAssign):
                target: ast.expr = node.target
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
            else:
                continue
            if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"
                    and target.attr not in listed and not target.attr.startswith("_")
                    and (isinstance(node, ast.AnnAssign) or self._variable_doc(node, body, index) is not None)):
                self._attribute(target.attr, target.lineno, parents, node, body, index)

    def _attribute(self, name: str, line: int, parents: tuple[str, ...], node: ast.Assign | ast.AnnAssign | None,
                   body: list[ast.stmt], index: int) -> None:
        """List a class's attribute ``name`` unless private, a dunder or listed already; ``node``:
        the assignment that shows its annotation or value and gives its doc (None: neither)."""
        listed = self.attributes.setdefault(parents, set())
        if name.startswith("_") or name in listed:
            return
        listed.add(name)
        if isinstance(node, ast.AnnAssign):   # as a record's field: its annotation, and its default in the body
            signature = ": " + _short(_unparse(node.annotation, self.source))
            if node.value is not None and node.target.__class__ is ast.Name:
                signature += " = " + _short_value(node.value, self.source)
        else:
            signature = "= " + _short_value(node.value, self.source) if node is not None else ""
        self.found.definition(name, "variable", line, parents=parents, detail="attribute", signature=signature,
                              doc=self._variable_doc(node, body, index) if node is not None else None)

    def _assignment(self, node: ast.Assign | ast.AnnAssign, body: list[ast.stmt], index: int) -> None:
        """A module variable, constant or type alias, shown by its annotation or its value, with
        its docstring or ``#:`` doc comment (``_variable_doc``)."""
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [element for target in targets for element in _assigned_names(target)]
        if not names:
            return
        if names[0].id == "__all__" and node.value is not None:
            self.found.exports = _string_items(node.value)
        is_type = _is_type_definition(node)
        alone = len(names) == 1   # ``a, b = f()``: no one value or docstring is each name's
        doc = self._variable_doc(node, body, index) if alone else None
        for name in names:
            if is_type:
                kind = "type"
            elif _CONSTANT_NAME.fullmatch(name.id):
                kind = "constant"
            elif name.id not in self.variables and _public_variable(name.id, self.found.aliases):
                self.variables.add(name.id)
                kind = "variable"
            else:
                continue   # not listed: its value is not written out (``__all__``'s can be long)
            self.found.definition(name.id, kind, name.lineno,
                                  signature=_variable_signature(node, self.source) if alone else "",
                                  doc=doc)

    def _variable_doc(self, node: ast.stmt, body: list[ast.stmt], index: int) -> str | None:
        """An assignment's or ``type`` alias's doc as Sphinx autodoc reads it: the string literal
        after it, else a ``#:`` comment after its last line's code, else the ``#:`` lines above it."""
        doc = _attribute_docstring(body, index)
        if doc is None and self.lines is not None:
            doc = _doc_comment(self.lines, node)
        return doc


# The statement lists of each compound statement that is not a def or class, in the order they
# are read; a ``try``'s handlers and a ``match``'s cases hold more, after these.
_MATCH = ast.Match
_HANDLED = frozenset({ast.Try, ast.TryStar})
_BLOCK_FIELDS: dict[type, tuple[str, ...]] = {
    ast.If: ("body", "orelse"), ast.For: ("body", "orelse"), ast.AsyncFor: ("body", "orelse"),
    ast.While: ("body", "orelse"), ast.With: ("body",), ast.AsyncWith: ("body",),
    ast.Try: ("body", "orelse", "finalbody"), ast.TryStar: ("body", "orelse", "finalbody"), _MATCH: (),
}


def _docstring(node: ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """``ast.get_docstring(node)``, by class identity (the parser makes no subclasses), and a
    one-line docstring that ``inspect.cleandoc`` would leave as it is returned as it is."""
    body = node.body
    if not body or body[0].__class__ is not ast.Expr:
        return None
    value = body[0].value
    if value.__class__ is not ast.Constant or value.value.__class__ is not str:
        return None
    text = value.value
    if "\n" in text or "\t" in text or text[:1].isspace():
        return inspect.cleandoc(text)
    return text


def _assigned_names(target: ast.expr) -> list[ast.Name]:
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _assigned_names(element)]
    return []


def _is_type_definition(node: ast.Assign | ast.AnnAssign) -> bool:
    """``T = TypeVar("T")``, ``UserId = NewType(...)``, ``Alias: TypeAlias = ...``,
    ``Alias = Union[...]`` (a subscript of a typing form)."""
    if isinstance(node, ast.AnnAssign) and _dotted_name(node.annotation) in ("TypeAlias", "typing.TypeAlias"):
        return True
    value = node.value
    if isinstance(value, ast.Subscript):
        return (isinstance(node, ast.Assign)
                and (_dotted_name(value.value) or "").rpartition(".")[2] in _TYPE_FORMS)
    return (isinstance(value, ast.Call)
            and (_dotted_name(value.func) or "").rpartition(".")[2] in _TYPE_FACTORIES)


def _variable_signature(node: ast.Assign | ast.AnnAssign, source: _Source | None) -> str:
    """``: int`` of an annotated name (``: TypeAlias`` shows its value instead), else ``= value``; each cut short."""
    if isinstance(node, ast.AnnAssign):
        annotation = _unparse(node.annotation, source)
        if annotation not in ("TypeAlias", "typing.TypeAlias") or node.value is None:
            return ": " + _short(annotation)
    return "= " + _short_value(node.value, source) if node.value is not None else ""


def _is_property(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A getter decorated ``@property`` or ``@cached_property`` (``functools.`` too)."""
    return any((_dotted_name(decorator) or "").rpartition(".")[2] in _PROPERTY_DECORATORS
               for decorator in node.decorator_list)


def _class_scope(node: ast.ClassDef) -> str:
    """``enum``, ``record`` (dataclass, attrs, NamedTuple, TypedDict) or ``class``: what the
    assignments of its body are."""
    bases = {(_dotted_name(base) or "").rpartition(".")[2] for base in node.bases}
    if bases & _ENUM_BASES:
        return "enum"
    if bases & _RECORD_BASES:
        return "record"
    for decorator in node.decorator_list:
        called = decorator.func if isinstance(decorator, ast.Call) else decorator
        if _dotted_name(called) in _RECORD_DECORATORS:
            return "record"
    return "class"


def _string_items(node: ast.expr) -> list[str]:
    """The strings of a list or tuple display (``__all__``'s names); other items are skipped."""
    if not isinstance(node, (ast.List, ast.Tuple)):
        return []
    return [item.value for item in node.elts if isinstance(item, ast.Constant) and isinstance(item.value, str)]


def _public_variable(name: str, imported: Mapping[str, str]) -> bool:
    """A lower-case module variable worth listing: not ``_private`` (pdoc's rule; a dunder such
    as ``__version__`` is public, ``__all__`` is the Public API), nor the fallback of an import
    (``except ImportError: brotli = None``)."""
    if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
        return False
    return name != "__all__" and name not in imported


def _short(text: str) -> str:
    text = _collapse(text)
    return text if len(text) <= MAX_VALUE_TEXT else text[:MAX_VALUE_TEXT] + "…"


def _short_value(node: ast.expr, source: _Source | None) -> str:
    """``_short(_unparse(node, source))``, without writing out the whole of a long literal (a
    table of hundreds of entries) to show its first ``MAX_VALUE_TEXT`` characters: its displays
    and calls are written from their first items only, each of which writes at least a
    character and a comma, so the text shown is the same."""
    shown = _first_items(node, MAX_VALUE_TEXT)
    if shown is node:
        return _short(_unparse(node, source))
    if source is not None and any(isinstance(inner, _FORMATTED) for inner in ast.walk(node)):
        return _short(_collapse(source(node)))   # as ``_unparse`` does: the whole value decides
    text = _plain_text(shown)
    return _short(ast.unparse(shown) if text is None else text)


def _first_items(node: ast.expr, most: int) -> ast.expr:
    """``node`` with each list, tuple, set, dict and call display in it (directly or in one
    another) cut to its first ``most`` items, new nodes; ``node`` itself when none is longer."""
    cls = node.__class__
    if cls is ast.List or cls is ast.Tuple or cls is ast.Set:
        items = cast("ast.List | ast.Tuple | ast.Set", node).elts
        elts = [_first_items(item, most) for item in items[:most]]
        if len(items) <= most and all(map(operator.is_, elts, items)):
            return node
        if cls is ast.Set:
            return ast.Set(elts=elts)
        return ast.List(elts=elts, ctx=ast.Load()) if cls is ast.List else ast.Tuple(elts=elts, ctx=ast.Load())
    if cls is ast.Dict:
        table = cast(ast.Dict, node)
        keys = [None if key is None else _first_items(key, most) for key in table.keys[:most]]
        values = [_first_items(value, most) for value in table.values[:most]]
        if (len(table.keys) <= most and all(map(operator.is_, keys, table.keys))
                and all(map(operator.is_, values, table.values))):
            return node
        return ast.Dict(keys=keys, values=values)
    if cls is ast.Call:
        call = cast(ast.Call, node)
        args = [_first_items(arg, most) for arg in call.args[:most]]
        keywords = [ast.keyword(arg=keyword.arg, value=_first_items(keyword.value, most))
                    for keyword in call.keywords[:most - len(args)]]
        if (len(call.args) + len(call.keywords) <= most and all(map(operator.is_, args, call.args))
                and all(kept.value is keyword.value for kept, keyword in zip(keywords, call.keywords))):
            return node
        return ast.Call(func=call.func, args=args, keywords=keywords)
    return node


def _attribute_docstring(body: list[ast.stmt], index: int) -> str | None:
    """The string literal right after an assignment: its docstring, cleaned like a def's."""
    if index + 1 >= len(body):
        return None
    following = body[index + 1]
    if not isinstance(following, ast.Expr) or not isinstance(following.value, ast.Constant):
        return None
    text = following.value.value
    return inspect.cleandoc(text) or None if isinstance(text, str) else None


def _doc_comment(lines: list[str], node: ast.stmt) -> str | None:
    """The ``#:`` doc comment of the assignment ``node``: the one after its code on its last line
    (it wins, as in Sphinx), else the ``#:`` lines directly above it, with no blank line between."""
    end_line, end_column = node.end_lineno or node.lineno, node.end_col_offset
    if end_line <= len(lines) and end_column is not None:
        line = lines[end_line - 1]
        # ``ast`` columns count UTF-8 bytes
        tail = line[end_column:] if line.isascii() else line.encode("utf-8", "surrogatepass")[end_column:].decode(
            "utf-8", "replace")
        after = _DOC_COMMENT.fullmatch(tail)
        if after is not None:
            return after.group(1).strip() or None
    if node.lineno > len(lines) or lines[node.lineno - 1][:node.col_offset].strip():
        return None   # ``x = 1; y = 2``: only a statement that starts its line has lines above it
    above: list[str] = []
    number = node.lineno - 2
    while number >= 0 and (match := _DOC_COMMENT.fullmatch(lines[number])) is not None:
        above.append(match.group(1))
        number -= 1
    return inspect.cleandoc("\n".join(reversed(above))) or None if above else None


def _function_signature(node: ast.FunctionDef | ast.AsyncFunctionDef, source: _Source | None = None) -> str:
    signature = f"({_format_arguments(node.args, source)})"
    if node.returns is not None:
        signature += f" -> {_unparse(node.returns, source)}"
    return signature


def _format_arguments(arguments: ast.arguments, source: _Source | None = None) -> str:
    """Parameters as PEP 8 writes them (``x: int = 1`` but ``x=1``)."""
    posonly = arguments.posonlyargs
    positional = posonly + arguments.args if posonly else arguments.args
    defaults = arguments.defaults
    plain = len(positional) - len(defaults)   # the first ones have no default
    # most parameters are a bare name: written without a call
    parts = [argument.arg if argument.annotation is None else _format_parameter(argument, None, source)
             for argument in (positional[:plain] if defaults else positional)]
    if defaults:
        parts += [_format_parameter(argument, default, source)
                  for argument, default in zip(positional[plain:], defaults)]
    if posonly:
        parts.insert(len(posonly), "/")
    if arguments.vararg:
        parts.append("*" + _format_parameter(arguments.vararg, None, source))
    elif arguments.kwonlyargs:
        parts.append("*")
    for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults):
        parts.append(_format_parameter(argument, default, source))
    if arguments.kwarg:
        parts.append("**" + _format_parameter(arguments.kwarg, None, source))
    return ", ".join(parts)


def _format_parameter(argument: ast.arg, default: ast.expr | None, source: _Source | None = None) -> str:
    text = argument.arg
    if argument.annotation is not None:
        text += f": {_unparse(argument.annotation, source)}"
    if default is not None:
        text += (" = " if argument.annotation is not None else "=") + _unparse(default, source)
    return text


def _class_signature(node: ast.ClassDef, source: _Source | None = None) -> str:
    parts = [_unparse(base, source) for base in node.bases]
    parts += [f"{keyword.arg}={_unparse(keyword.value, source)}" if keyword.arg
              else f"**{_unparse(keyword.value, source)}" for keyword in node.keywords]
    return f"({', '.join(parts)})" if parts else ""


class _Param(NamedTuple):
    """One type parameter (``T: int = str``, ``*Ts``, ``**P``), whichever parser read it."""

    prefix: str                # "", "*" (a TypeVarTuple) or "**" (a ParamSpec)
    name: str
    bound: ast.expr | None
    default: ast.expr | None


_PARAM_PREFIXES = {"TypeVarTuple": "*", "ParamSpec": "**"}


class _Alias(ast.stmt):
    """``type name[params] = value`` as read through ``_older_syntax`` (``ast.TypeAlias`` needs 3.12)."""

    _fields = ("name", "type_params", "value")
    name: ast.Name
    type_params: list[_Param]
    value: ast.expr


_TYPE_ALIAS: type = getattr(ast, "TypeAlias", _Alias)


def _type_parameters(node: Any) -> str:
    """``[T: int = str, *Ts, **P]`` of a def, class or type alias; "" without any.

    The same text whether Python's parser read them (3.12 and later) or ``_older_syntax``."""
    params = getattr(node, "type_params", None)
    if not params:
        return ""
    texts = []
    for param in params:
        if not isinstance(param, _Param):
            param = _Param(_PARAM_PREFIXES.get(type(param).__name__, ""), param.name,
                           getattr(param, "bound", None), getattr(param, "default_value", None))
        text = param.prefix + param.name
        if param.bound is not None:
            text += f": {_unparse(param.bound)}"
        if param.default is not None:
            text += f" = {_unparse(param.default)}"
        texts.append(text)
    return f"[{', '.join(texts)}]"


_REPR_CONSTANTS = (str, bytes, int, type(None))  # bool is an int
_SIGNS = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}


_Source = Callable[[ast.expr], str]
# f-strings (and 3.14's t-strings) as Python's parser and ``_Rewrite.restored`` give them
_FORMATTED = tuple(getattr(ast, name) for name in ("JoinedStr", "TemplateStr") if hasattr(ast, name))


def _unparse(node: ast.expr, source: _Source | None = None) -> str:
    """``ast.unparse``, without building its visitor for the shapes most annotations,
    defaults, bases and decorators have (see ``_plain_text``).

    With ``source``, an expression holding an f-string is its source text: ``ast.unparse``
    quotes f-strings differently from one Python to the next (3.12 nests the same quotes),
    and those an older Python refuses reach this as ``_older_syntax``'s tuples."""
    text = _plain_text(node)
    if text is not None:
        return text
    if source is not None and any(isinstance(inner, _FORMATTED) for inner in ast.walk(node)):
        return _collapse(source(node))
    return ast.unparse(node)


def _plain_text(node: ast.expr) -> str | None:
    """What ``ast.unparse`` writes for a name, a dotted name, a plain constant (``-1`` too),
    ``X | Y`` of such, a subscript of them (``Optional[int]``, ``Dict[str, Any]``), a call of
    a dotted name (``lru_cache(256)``, ``field(default_factory=list)``), a tuple or a list;
    None for any other shape.  The same text: such a constant is its ``repr`` (a float's
    too, but for infinities and NaN), ``|`` chains to the left without parentheses, a sign
    binds tighter than anything around it here, and a tuple is written in parentheses but
    as a subscript's index."""
    if type(node) is ast.Name:
        return node.id
    if type(node) is ast.Attribute:
        return _dotted_name(node)
    if type(node) is ast.Constant:
        value = node.value
        if node.kind is None and isinstance(value, _REPR_CONSTANTS):
            return repr(value)
        if value.__class__ is float:
            text = repr(value)
            return None if "n" in text else text  # ``inf`` and ``nan`` become expressions
        return "..." if value is Ellipsis else None
    if type(node) is ast.BinOp and node.op.__class__ is ast.BitOr and node.right.__class__ is not ast.BinOp:
        left, right = _plain_text(node.left), _plain_text(node.right)
        return None if left is None or right is None else f"{left} | {right}"
    if type(node) is ast.Subscript and node.value.__class__ in (ast.Name, ast.Attribute):
        value = _dotted_name(node.value)
        index = node.slice
        inside: str | None
        if index.__class__ is ast.Tuple:
            items = _plain_items(index.elts)
            if not items:
                return None
            inside = items[0] + "," if len(items) == 1 else ", ".join(items)
        else:
            inside = _plain_text(index)
        return None if value is None or inside is None else f"{value}[{inside}]"
    if type(node) is ast.Call:
        function = _dotted_name(node.func)
        items = _plain_items(node.args)
        if function is None or items is None:
            return None
        for keyword in node.keywords:
            value = _plain_text(keyword.value)
            if value is None:
                return None
            items.append(f"{keyword.arg}={value}" if keyword.arg else f"**{value}")
        return f"{function}({', '.join(items)})"
    if type(node) is ast.Tuple:
        items = _plain_items(node.elts)
        if items is None:
            return None
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    if type(node) is ast.List:
        items = _plain_items(node.elts)
        return None if items is None else f"[{', '.join(items)}]"
    if type(node) is ast.UnaryOp and node.operand.__class__ is ast.Constant:
        sign = _SIGNS.get(node.op.__class__)
        operand = _plain_text(node.operand)
        return None if sign is None or operand is None else sign + operand
    return None


def _plain_items(nodes: list[ast.expr]) -> list[str] | None:
    """The plain texts of the elements, or None if one has no plain text."""
    items = [_plain_text(item) for item in nodes]
    return None if None in items else cast("list[str]", items)


def _dotted_name(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of attributes on a name, else None.

    Class identity, not ``isinstance``: the parser makes no subclasses, and this
    runs for every call and most of their arguments.  ``type(node) is`` costs no more
    than comparing a saved ``node.__class__``, and mypy narrows ``node`` by it."""
    if type(node) is ast.Name:
        return node.id
    if type(node) is not ast.Attribute:
        return None
    parts: list[str] = []
    while node.__class__ is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if node.__class__ is not ast.Name:
        return None
    parts.append(node.id)
    parts.reverse()
    return ".".join(parts)


class _SourceSlicer:
    """Source text of a node, cut to MAX_SOURCE_TEXT.

    Slicing the file by the node's offsets costs the same for any node, where
    ``ast.unparse`` of every argument of nested calls grows quadratically
    (one generated test file spent seconds there).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.data = b""
        self.line_starts: list[int] = []

    def of(self, node: ast.expr) -> str:
        if type(node) is ast.Name:
            return node.id
        if type(node) is ast.Constant:
            return _cut(repr(node.value))
        dotted = _dotted_name(node) if type(node) is ast.Attribute else None
        if dotted:
            return dotted
        if not self.line_starts:
            self.data = self.text.encode("utf-8", "surrogatepass")
            self.line_starts = [0] + [match.end() for match in re.finditer(b"\n", self.data)]
        start = self.line_starts[node.lineno - 1] + node.col_offset
        end_line, end_column = node.end_lineno, node.end_col_offset   # both set by the parser
        end = self.line_starts[end_line - 1] + end_column if end_line and end_column is not None else start
        piece = self.data[start:min(end, start + 4 * MAX_SOURCE_TEXT)].decode("utf-8", "ignore")
        return _cut(" ".join(piece.split()))


def _decorators(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
                source: _Source | None = None) -> list[str]:
    return [_cut(_unparse(decorator, source)) for decorator in node.decorator_list]


# Fields that never hold child nodes, and nodes without children: skipping them
# makes this walk about three times faster than ``ast.walk``.
_NOT_CHILDREN = frozenset(
    "ctx op ops name id attr arg module level names kind type_comment kwd_attrs conversion"
    " is_async simple asname rest tag"
    # a type parameter's bound or default is not walked for calls: the rewrite of ``_older_syntax``
    # keeps no tree of it, and the facts must be the same on every Python
    " type_params".split())
_LEAVES = (ast.Name, ast.Constant, ast.MatchSingleton, ast.expr_context, ast.operator, ast.unaryop,
           ast.cmpop, ast.boolop, ast.Pass, ast.Break, ast.Continue, ast.alias)


def _child_fields(cls: type[ast.AST]) -> tuple[str, ...]:
    """The fields of a node class that may hold child nodes."""
    return () if issubclass(cls, _LEAVES) else tuple(field for field in cls._fields if field not in _NOT_CHILDREN)


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
# Statements whose lines the walk notes (``_AstReader._holds_definitions``): they stay out of
# ``_CHILD_FIELDS``, so the walk's rarer branch sees each of them, and their fields are here.
_DEFINITION_FIELDS: dict[type, tuple[str, ...]] = {
    cls: _child_fields(cls) for cls in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, _TYPE_ALIAS, _Alias)}
# And the f-strings (t-strings), which the walk notes in the same branch.
_FORMATTED_FIELDS: dict[type, tuple[str, ...]] = {cls: _child_fields(cls) for cls in _FORMATTED}


def _calls_and_imports(tree: ast.AST) -> tuple[dict[str, list[ast.Call]],
                                                 list[ast.Import | ast.ImportFrom], list[int], bool]:
    """Every call of a dotted name (by that name), every import statement of the tree,
    the sorted lines where its defs, classes and type aliases start, and whether it holds an
    f-string (else no expression of it is read from the source: ``_unparse``), by an iterative walk.

    A callee that is a dotted name (``f``, ``torch.nn.functional.relu``: half the
    attribute nodes of a tree) is read here and not walked, since it holds no call."""
    calls: dict[str, list[ast.Call]] = {}
    named = calls.get
    imports: list[ast.Import | ast.ImportFrom] = []
    definitions: list[int] = []
    formatted = False
    stack: list[Any] = [tree]
    push, extend, pop = stack.append, stack.extend, stack.pop
    # the node classes as locals: this loop runs once per node, millions of times in a large tree
    Call, Import, ImportFrom, Name, Constant = ast.Call, ast.Import, ast.ImportFrom, ast.Name, ast.Constant
    child_fields = _CHILD_FIELDS
    while stack:
        node = pop()
        cls = node.__class__
        if cls is Call:
            name = _dotted_name(node.func)
            if name is None:
                push(node.func)  # ``f(x).y()``, ``fs[0]()``: the callee may hold calls
            elif (nodes := named(name)) is None:
                calls[name] = [node]
            else:
                nodes.append(node)
            extend(node.args)
            extend(node.keywords)
            continue
        fields = child_fields.get(cls)
        if fields is None:   # the rarer cases, tested only for classes without an entry
            if cls is Import or cls is ImportFrom:
                imports.append(node)
                continue
            if node is None:  # the holes of ``{**a}`` keys and keyword-only defaults
                continue
            fields = _DEFINITION_FIELDS.get(cls)
            if fields is not None:
                definitions.append(node.lineno)
            elif (fields := _FORMATTED_FIELDS.get(cls)) is not None:
                formatted = True
            else:
                fields = child_fields[cls] = _child_fields(cls)
        for field in fields:
            value: Any = getattr(node, field, None)   # a node, a list of them, a name or None
            kind = value.__class__
            if kind is list:
                extend(value)
            elif kind is not Name and kind is not Constant and value is not None:
                push(value)  # names and constants (a third of all nodes) are leaves: not pushed
    definitions.sort()
    return calls, imports, definitions, formatted


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


# ---------------------------------------------------------------------------
# Syntax newer than the running Python


def _read_newer_syntax(text: str, path: str) -> dict | None:
    """The facts of a file that the running Python's parser refused, read through
    ``_older_syntax``; None when that changes nothing or the result does not parse either."""
    if len(text) > TOLERANT_LIMIT:   # the tolerant parser's bound, for its memory
        return None
    try:
        older = _older_syntax(text)
    except Exception:  # noqa: BLE001 - broken code in a shape the rewrite did not foresee: the fallback's
        return None
    if older is None:
        return None
    reader = _AstReader(path)
    try:
        if _too_heavy(older.text):
            return reader.read_parts((older.restored(tree) for tree in _parsed_parts(older.text, path)), text)
        tree = older.restored(ast.parse(older.text, filename=path))
        return reader.read(tree, text)   # the source as written: a call's arguments are cut from it
    except (SyntaxError, ValueError, RecursionError, MemoryError, _TooLarge):
        return None   # not (only) newer syntax: the fallback reports the error


Place = tuple[int, int]   # (line, UTF-8 column) where a node starts, as ``ast`` gives it


class _Rewrite(NamedTuple):
    """A source in older syntax (``_older_syntax``) and what it holds that the syntax lost."""

    text: str
    generics: dict[Place, list[_Param]]   # the type parameters of defs and classes, by where they start
    aliases: dict[Place, list[_Param]]    # those of type aliases (assignments in ``text``)
    strings: set[Place]                   # where f-strings rewritten as tuples start

    def restored(self, tree: ast.Module) -> ast.Module:
        """The tree of ``text`` with what was rewritten put back: each def's and class's
        ``type_params``, each alias an ``_Alias``, each f-string a ``JoinedStr`` of its
        expressions (the node Python's own parser makes, read the same by the rest)."""
        stack: list[ast.AST] = [tree]
        while stack:
            node = stack.pop()
            for field, value in ast.iter_fields(node):
                if isinstance(value, list):
                    for index, item in enumerate(value):
                        if isinstance(item, ast.AST):
                            value[index] = item = self._put_back(item)
                            stack.append(item)
                elif isinstance(value, ast.AST):
                    value = self._put_back(value)
                    setattr(node, field, value)
                    stack.append(value)
        return tree

    def _put_back(self, node: ast.AST) -> ast.AST:
        """``node``, or what stands for it in newer syntax."""
        place = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        if place in self.generics and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            setattr(node, "type_params", self.generics[place])   # noqa: B010 - no field before 3.12
        elif place in self.aliases and isinstance(node, ast.Assign):
            alias = _Alias()
            alias.name, alias.value = cast(ast.Name, node.targets[0]), node.value
            alias.type_params = self.aliases[place]
            return ast.copy_location(alias, node)
        elif place in self.strings and isinstance(node, ast.Tuple):
            values: list[ast.expr] = [ast.FormattedValue(value=element, conversion=-1, format_spec=None)
                                      for element in node.elts]
            return ast.copy_location(ast.JoinedStr(values=values), node)
        return node


def _older_syntax(text: str) -> _Rewrite | None:
    """``text`` with the syntax of Python 3.12 to 3.14 rewritten into that of 3.8, each line
    kept where it is, with what that loses.  None without tree-sitter or when nothing is new.

    - ``def f[T](...)``, ``class C[T]``: the brackets become blanks;
    - ``type X[T] = v``: ``X = v``, turned back into an alias by ``_Rewrite.restored``;
    - an f-string (or 3.14 t-string) the running Python refuses (quotes, comments, line breaks
      inside its braces), with the strings it is concatenated to: the tuple of its expressions,
      in place, so calls in it are still read;
    - ``except A, B:``: ``except (A, B):``.

    Blanks keep every column but in ``except`` lines; a line break inside blanked brackets is
    preceded by a backslash, which joins the lines as the brackets did."""
    parser = _tree_sitter_parser()
    if parser is None:
        return None
    source = text.encode("utf-8", "surrogatepass")
    out = bytearray(source)
    inserts: list[tuple[int, bytes]] = []      # (offset in source, text put there): ``except`` only
    generics: dict[Place, list[_Param]] = {}
    aliases: dict[Place, list[_Param]] = {}
    strings: set[Place] = set()
    # tree-sitter-python 0.25 knows no type parameter defaults (3.13): a starred one
    # (``*Ts = *tuple[int]``) wrecks the statement around it, so the grammar is shown a blank
    # for that star (the rest recovers); the parameters are read from ``source`` as written
    stack = [parser.parse(_STARRED_VALUE.sub(rb"=\1 ", source)).root_node]
    while stack:
        node = stack.pop()
        kind = node.type
        if kind == "string" or kind == "concatenated_string":
            parts = [node] if kind == "string" else [child for child in node.children if child.type == "string"]
            if any(_refused_string(source, part) for part in parts):
                strings.add(_place(node))
                stack.extend(_string_to_tuple(source, out, node, parts))   # an f-string inside may be refused too
            continue   # a string that parses parses with all it holds
        children = node.children
        if kind in ("function_definition", "class_definition"):
            brackets = node.child_by_field_name("type_parameters")
            if brackets is not None:
                generics[_place(node)] = _params(source, brackets)
                _blank(out, brackets.start_byte, brackets.end_byte)
                children = [child for child in children if child != brackets]
        elif kind == "type_alias_statement":
            head = node.child_by_field_name("left")
            name = _first_identifier(head)
            equals = next((child for child in children if child.type == "="), None)
            if name is None or equals is None:
                continue
            brackets = next((child for child in _descendants(head) if child.type == "type_parameter"), None)
            aliases[_place(node)] = _params(source, brackets) if brackets is not None else []
            _blank(out, node.start_byte, equals.start_byte)
            out[node.start_byte:node.start_byte + name.end_byte - name.start_byte] = \
                source[name.start_byte:name.end_byte]
            children = [child for child in children if child.start_byte >= equals.end_byte]
        elif kind in ("except_clause", "except_group_clause") and any(c.type == "," for c in children):
            inserts += _parenthesized_exceptions(source, out, children)
        stack.extend(reversed(children))
    if out == source and not inserts:
        return None
    for offset, piece in sorted(inserts, reverse=True):
        out[offset:offset] = piece
    return _Rewrite(out.decode("utf-8", "surrogatepass"), generics, aliases, strings)


_STARRED_VALUE = re.compile(rb"(?<![=!<>:])=([ \t]*)\*(?![*=])")


def _place(node: Any) -> Place:
    return node.start_point[0] + 1, node.start_point[1]


def _descendants(node: Any) -> Iterator[Any]:
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def _first_identifier(node: Any) -> Any:
    return next((child for child in _descendants(node) if child.type == "identifier"), None) if node else None


def _blank(out: bytearray, start: int, end: int) -> None:
    """Blanks over ``out[start:end]`` but its line breaks, each after a backslash that joins
    the line to the next (``start`` is never a line break here: it is a bracket or a keyword)."""
    piece = out[start:end]
    lines = piece.split(b"\n")
    blanked = bytearray(b"\n".join(b" " * len(line) for line in lines))
    for index in range(len(blanked)):
        if blanked[index] == ord("\n"):
            before = index - 1 if index >= 2 and piece[index - 1] == ord("\r") else index
            blanked[before - 1] = ord("\\")
            if before != index:
                blanked[index - 1] = ord("\r")
    out[start:end] = blanked


_STRING_PREFIX = re.compile(rb"[A-Za-z]*")


def _refused_string(source: bytes, node: Any) -> bool:
    """Whether the running Python refuses this f-string or t-string (a plain string is
    the same in every version; one with no braces too)."""
    prefix = _STRING_PREFIX.match(source, node.start_byte)
    if prefix is None or not any(letter in prefix.group().lower() for letter in b"ft"):
        return False
    if not any(child.type == "interpolation" for child in node.children):
        return False
    try:
        ast.parse(source[node.start_byte:node.end_byte], mode="eval")
    except SyntaxError:
        return True
    return False


def _string_to_tuple(source: bytes, out: bytearray, node: Any, parts: list[Any]) -> list[Any]:
    """Rewrites the string ``node`` (its ``parts`` concatenated) in ``out`` as the tuple of their
    expressions (those of format specifications too), each where it was and followed by a comma;
    returns them."""
    if node.has_error:
        raise SyntaxError("a broken f-string")
    kept = []
    stack = list(reversed(parts))
    while stack:
        holder = stack.pop()
        for child in holder.children:
            if child.type in ("interpolation", "format_expression"):
                expression = child.child_by_field_name("expression")
                conversion = next((sub for sub in child.children if sub.type == "type_conversion"), None)
                written = source[conversion.start_byte:conversion.end_byte] if conversion is not None else b"!r"
                if expression is None or written not in (b"!r", b"!s", b"!a"):
                    raise SyntaxError("an f-string's braces hold no expression or an unknown conversion")
                kept.append(expression)
                stack.extend(sub for sub in child.children if sub.type == "format_specifier")
    start, end = node.start_byte, node.end_byte
    out[start:end] = bytes(byte if byte in b"\r\n" else 32 for byte in source[start:end])
    out[start] = ord("(")
    out[end - 1] = ord(")")
    for expression in kept:
        out[expression.start_byte:expression.end_byte] = source[expression.start_byte:expression.end_byte]
        after = expression.end_byte   # a brace, ``!``, ``:``, ``=`` or blanks follow it: now blanks
        while out[after] in b"\r\n":
            after += 1
        out[after] = ord(",")
    return kept


def _params(source: bytes, brackets: Any) -> list[_Param]:
    """The type parameters of ``[...]``, each parsed as a parameter of a def: its bound as an
    annotation, its default as a default.  Raises SyntaxError for what is none.

    They are split by the text, not by the tree: tree-sitter-python 0.25 knows no defaults (3.13),
    and the error nodes it makes of them may swallow the commas."""
    inside = source[brackets.start_byte + 1:brackets.end_byte - 1].decode("utf-8", "surrogatepass")
    params: list[_Param] = []
    for written in _top_level_items(inside):
        match = re.match(r"(\*{0,2})\s*([^\W\d]\w*)\s*", written)
        if match is None:
            raise SyntaxError(f"not a type parameter: {written}")
        prefix, name, rest = match.group(1), match.group(2), written[match.end():]
        starred = prefix == "*" and re.match(r"=\s*\*", rest) is not None   # ``*Ts = *tuple[int]``
        if starred:
            rest = "=" + rest.lstrip("=").lstrip()[1:]
        function = ast.parse(f"def _({name}{rest}): pass").body[0]
        arguments = cast(ast.FunctionDef, function).args
        bound = arguments.args[0].annotation if arguments.args else None
        default = arguments.defaults[0] if arguments.defaults else None
        if starred and default is not None:
            default = ast.Starred(value=default, ctx=ast.Load())
        params.append(_Param(prefix, name, bound, default))
    if not params:
        raise SyntaxError("type parameter brackets hold none")
    return params


# brackets, commas, comments and strings (whose brackets and commas do not count)
_ITEM_TOKENS = re.compile(r"[\[({]|[\])}]|,|#[^\n]*"
                          r"|'''(?:\\.|[^\\])*?'''|" + '"' * 3 + r"(?:\\.|[^\\])*?" + '"' * 3
                          + r"|'(?:\\.|[^'\\\n])*'" + r'|"(?:\\.|[^"\\\n])*"')


def _top_level_items(text: str) -> list[str]:
    """The comma-separated items of ``text`` outside brackets, strings and comments, stripped,
    comments blanked; an empty last item (a trailing comma) left out."""
    items: list[str] = []
    depth = start = 0
    blanked = text
    for match in _ITEM_TOKENS.finditer(text):
        token = match.group()
        if token in "[({":
            depth += 1
        elif token in "])}":
            depth -= 1
        elif token == "," and depth == 0:
            items.append(blanked[start:match.start()])
            start = match.end()
        elif token.startswith("#"):
            blanked = blanked[:match.start()] + " " * len(token) + blanked[match.end():]
    items.append(blanked[start:])
    items = [item.strip() for item in items]
    return items[:-1] if items and not items[-1] else items


def _parenthesized_exceptions(source: bytes, out: bytearray, children: list[Any]) -> list[tuple[int, bytes]]:
    """``except A, B:`` (3.14) as ``except(A, B):``: a blank before ``A`` and one after ``B``
    (or after the colon) become the brackets where there are, else they are inserted."""
    named = [child for child in children if child.type not in ("except", "*", ",", ":", "block", "comment")]
    colon = next((child for child in children if child.type == ":"), None)
    if not named or colon is None or any(child.type == "as" for child in children):
        return []
    inserts = []
    first, last = named[0].start_byte, named[-1].end_byte
    if source[first - 1:first] in (b" ", b"\t"):
        out[first - 1] = ord("(")
    else:
        inserts.append((first, b"("))
    if source[last:last + 1] in (b" ", b"\t"):
        out[last] = ord(")")
    elif last == colon.start_byte and source[last + 1:last + 2] in (b" ", b"\t"):
        out[last:last + 2] = b"):"
    else:
        inserts.append((last, b")"))
    return inserts


# ---------------------------------------------------------------------------
# Fallbacks for code ast cannot read


def _fallback(text: str, path: str, problem: dict) -> dict:
    """Definitions found by tree-sitter-python, or by a line regex without it."""
    problems = [problem]
    parser = _tree_sitter_parser() if len(text) <= TOLERANT_LIMIT else None
    found: dict | None = None
    if parser is not None:
        try:
            found = _TreeSitterReader(path, text).read(parser)
        except Exception as error:  # noqa: BLE001 - a fallback must not sink the file
            problems.append({"message": f"tolerant parser failed: {_describe(error)}"})
    if found is None:
        found = _regex_facts(text, path)
    return {**found, "problems": problems, "parsed": False}


_PARSER: Any = None


def _tree_sitter_parser() -> Any:
    """A tree-sitter parser for Python, or None when the package is unusable."""
    global _PARSER
    if _PARSER is None:
        try:
            # only for a file Python's ast cannot parse (a newer syntax)
            import tree_sitter
            import tree_sitter_python
            _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_python.language()))
        except Exception:  # noqa: BLE001 - not installed, or an incompatible version
            _PARSER = False
    return _PARSER or None


_TS_CONTAINERS = frozenset({
    "block", "if_statement", "elif_clause", "else_clause", "try_statement", "except_clause",
    "except_group_clause", "finally_clause", "with_statement", "for_statement", "while_statement",
    "match_statement", "case_clause", "ERROR",
})


class _TreeSitterReader:
    """The same facts as ``_AstReader`` from a tree-sitter tree (tolerates errors)."""

    def __init__(self, path: str, text: str) -> None:
        self.found = _Collector(path)
        self.source = text.encode("utf-8", "surrogatepass")

    def text_of(self, node: Any) -> str:
        return self.source[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def read(self, parser: Any) -> dict:
        root = parser.parse(self.source).root_node
        calls: list[Any] = []
        stack = [root]
        while stack:  # iterative: deeply nested code must not exhaust the Python stack
            node = stack.pop()
            if node.type == "call":
                calls.append(node)
            elif node.type in ("import_statement", "import_from_statement", "future_import_statement"):
                self._import(node)
            stack.extend(node.children)
        self._body(root, ())
        for call in sorted(calls, key=lambda node: node.start_byte):
            self._call(call)
        return self.found.facts(self._docstring(root))

    def _body(self, container: Any, classes: tuple[str, ...]) -> None:
        stack = [(container, classes)]
        while stack:
            node, classes = stack.pop()
            for child in node.children:
                decorators: list[str] = []
                definition = child
                if child.type == "decorated_definition":
                    decorators = [self.text_of(d).lstrip("@").strip()
                                  for d in child.children if d.type == "decorator"]
                    definition = child.child_by_field_name("definition") or child
                name_node = definition.child_by_field_name("name")
                if definition.type == "class_definition" and name_node is not None:
                    name = self.text_of(name_node)
                    bases = definition.child_by_field_name("superclasses")
                    self.found.definition(name, "class", name_node.start_point[0] + 1, parents=classes,
                                          signature=self.text_of(bases) if bases else "",
                                          decorators=decorators, end=_last_line(definition))
                    body = definition.child_by_field_name("body")
                    if body is not None:
                        stack.append((body, classes + (name,)))
                elif definition.type == "function_definition" and name_node is not None:
                    self._function(definition, name_node, classes, decorators)
                elif definition.type == "type_alias_statement" and not classes:
                    self._type_alias(definition)
                elif definition.type == "expression_statement" and not classes:
                    self._assignment(definition)
                elif definition.type in _TS_CONTAINERS:
                    stack.append((definition, classes))

    def _function(self, node: Any, name_node: Any, classes: tuple[str, ...], decorators: list[str]) -> None:
        parameters = node.child_by_field_name("parameters")
        returns = node.child_by_field_name("return_type")
        signature = _collapse(self.text_of(parameters)) if parameters else "()"
        if returns is not None:
            signature += f" -> {_collapse(self.text_of(returns))}"
        self.found.definition(self.text_of(name_node), "method" if classes else "function",
                              name_node.start_point[0] + 1, parents=classes, signature=signature,
                              decorators=decorators, is_async=node.children[0].type == "async",
                              end=_last_line(node))

    def _type_alias(self, node: Any) -> None:
        name = _first_identifier(node.child_by_field_name("left"))   # ``X`` of ``X[T]`` too
        if name is not None:
            self.found.definition(self.text_of(name), "type", name.start_point[0] + 1)

    def _assignment(self, statement: Any) -> None:
        for assignment in statement.named_children:
            if assignment.type != "assignment":
                continue
            left = assignment.child_by_field_name("left")
            right = assignment.child_by_field_name("right")
            is_type = right is not None and right.type == "call" and self.text_of(
                right.child_by_field_name("function")).rpartition(".")[2] in _TYPE_FACTORIES
            targets = [left] if left is not None and left.type == "identifier" else (
                [n for n in left.named_children if n.type == "identifier"] if left is not None else [])
            for target in targets:
                name = self.text_of(target)
                if is_type:
                    self.found.definition(name, "type", target.start_point[0] + 1)
                elif _CONSTANT_NAME.fullmatch(name):
                    self.found.definition(name, "constant", target.start_point[0] + 1)

    def _import(self, node: Any) -> None:
        line = node.start_point[0] + 1
        if node.type == "import_statement":
            for child in node.named_children:
                module, bound = self._aliased(child)
                if module:
                    self.found.plain_import(module, bound, child.start_point[0] + 1)
            return
        written, level = ("__future__", 0) if node.type == "future_import_statement" else (None, 0)
        module_node = node.child_by_field_name("module_name")
        if module_node is not None:
            written, level = self._module_name(module_node)
        names: list[tuple[str, str, int]] = []
        for child in node.named_children:
            if child is module_node or child == module_node:
                continue
            if child.type == "wildcard_import":
                names.append(("*", "*", child.start_point[0] + 1))
            else:
                name, bound = self._aliased(child)
                if name:
                    names.append((name, bound or name, child.start_point[0] + 1))
        self.found.from_import(written, level, names, line)

    def _module_name(self, node: Any) -> tuple[str | None, int]:
        if node.type != "relative_import":
            return self.text_of(node), 0
        level = sum(self.text_of(part).count(".") for part in node.children if part.type == "import_prefix")
        dotted = [part for part in node.children if part.type == "dotted_name"]
        return (self.text_of(dotted[0]) if dotted else None), level

    def _aliased(self, node: Any) -> tuple[str | None, str | None]:
        """(dotted name, alias) of ``a.b`` or ``a.b as c``."""
        if node.type == "dotted_name":
            return _collapse(self.text_of(node)).replace(" ", ""), None
        if node.type == "aliased_import":
            name = node.child_by_field_name("name")
            alias = node.child_by_field_name("alias")
            return (self.text_of(name).replace(" ", "") if name else None,
                    self.text_of(alias) if alias else None)
        return None, None

    def _call(self, node: Any) -> None:
        function = node.child_by_field_name("function")
        if function is None or function.type not in ("identifier", "attribute"):
            return
        name = re.sub(r"\s+", "", self.text_of(function))
        if not re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*", name):
            return
        kwargs: dict[str, str] = {}
        args: list[str] = []
        arguments = node.child_by_field_name("arguments")
        for argument in arguments.named_children if arguments is not None else ():
            if argument.type == "keyword_argument":
                key = argument.child_by_field_name("name")
                value = argument.child_by_field_name("value")
                if key is not None and value is not None:
                    kwargs[self.text_of(key)] = _cut(_collapse(self.text_of(value)))
            elif argument.type == "dictionary_splat":
                kwargs["**"] = _cut(_collapse(self.text_of(argument)[2:]))
            elif argument.type != "comment":
                args.append(_cut(_collapse(self.text_of(argument))))
        self.found.call(name, node.start_point[0] + 1, kwargs, args)

    def _docstring(self, root: Any) -> str:
        first = next((child for child in root.named_children if child.type != "comment"), None)
        if first is not None and first.type == "expression_statement" and first.named_children:
            literal = first.named_children[0]
            if literal.type == "string":
                try:
                    value = ast.literal_eval(self.text_of(literal))
                except (ValueError, SyntaxError, MemoryError, RecursionError):
                    value = None
                if isinstance(value, str):
                    return inspect.cleandoc(value)
        return leading_comment(self.source.decode("utf-8", "replace"))


def _collapse(text: str) -> str:
    """One line: signatures spanning lines read as one."""
    text = re.sub(r"\s*\n\s*", " ", text)
    return re.sub(r"([(\[]) ", r"\1", re.sub(r",? ([)\]])", r"\1", text))


def _cut(text: str) -> str:
    return text if len(text) <= MAX_SOURCE_TEXT else text[:MAX_SOURCE_TEXT] + "…"


_DEF_LINE = re.compile(r"^([ \t]*)(async[ \t]+)?def[ \t]+([A-Za-z_]\w*)[ \t]*(\([^)\n]*\))?", re.MULTILINE)
_CLASS_LINE = re.compile(r"^([ \t]*)class[ \t]+([A-Za-z_]\w*)[ \t]*(\([^)\n]*\))?", re.MULTILINE)
_IMPORT_LINE = re.compile(r"^[ \t]*import[ \t]+([\w.]+)(?:[ \t]+as[ \t]+(\w+))?", re.MULTILINE)
_FROM_LINE = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+\(?([\w \t,*]+)", re.MULTILINE)


def _regex_facts(text: str, path: str) -> dict:
    """Last resort: ``def``/``class``/``import`` lines, nesting by indentation."""
    found = _Collector(path)
    line_starts = [0] + [match.end() for match in re.finditer("\n", text)]

    def line_of(offset: int) -> int:
        return bisect.bisect_right(line_starts, offset)

    scopes: list[tuple[int, str, str]] = []  # (indent, kind, name) of open defs and classes
    matches = sorted([(m.start(), "def", m) for m in _DEF_LINE.finditer(text)]
                     + [(m.start(), "class", m) for m in _CLASS_LINE.finditer(text)],
                     key=lambda item: item[0])
    for offset, kind, match in matches:
        line = line_of(offset)
        indent = len(match.group(1).expandtabs())
        while scopes and scopes[-1][0] >= indent:
            scopes.pop()
        if any(scope_kind == "def" for _, scope_kind, _ in scopes):
            scopes.append((indent, kind, ""))
            continue  # local to a function
        classes = [name for _, _, name in scopes]
        if kind == "class":
            name = match.group(2)
            found.definition(name, "class", line, parents=classes, signature=match.group(3) or "")
        else:
            name = match.group(3)
            found.definition(name, "method" if classes else "function", line, parents=classes,
                             signature=match.group(4) or "", is_async=bool(match.group(2)))
        scopes.append((indent, kind, name))
    for match in _IMPORT_LINE.finditer(text):
        found.plain_import(match.group(1), match.group(2), line_of(match.start()))
    for match in _FROM_LINE.finditer(text):
        line = line_of(match.start())
        names = []
        for item in match.group(3).split(","):
            words = item.split()
            if words:
                names.append((words[0], words[-1], line))
        found.from_import(match.group(2) or None, len(match.group(1)), names, line)
    return found.facts(leading_comment(text))


def _last_line(node: Any) -> int:
    """The 1-based line a tree-sitter node ends on (not the next line's column 0 after its line break)."""
    row, column = node.end_point
    return row + 1 if column else row
