"""The Python extractor: what a reader of a keyword page checks against the source."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from kwdocs.extract import extract_bytes
from kwdocs.extract import python as python_extractor
from kwdocs.extract.python import extract, resolve_relative
from tests.conftest import entry_text, run_kwdocs

FIXTURES = Path(__file__).parent / "fixtures" / "python"
CORPUS = Path("/work/corpus/full")
REAL_FILES = ["torch/nn/modules/linear.py", "functorch/dim/magic_trace.py", "functorch/dim/_tensor_info.py"]


def extract_fixture(relative: str, path: str | None = None) -> dict:
    return extract((FIXTURES / relative).read_text(encoding="utf-8"), path or relative)


def by_name(facts: dict, kind: str) -> dict[str, dict]:
    return {symbol["name"]: symbol for symbol in facts["symbols"] if symbol["kind"] == kind}


def definitions_by_ast_walk(text: str) -> set[tuple[str, str, int, str]]:
    """Independent truth: (kind, name, line, parent) of every def and class, the parent as
    Python's ``__qualname__`` spells it (``f.<locals>`` for one local to ``f``)."""
    found = set()

    def visit(node: ast.AST, qualname: list[str], in_class: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                is_class = isinstance(child, ast.ClassDef)
                kind = "class" if is_class else ("method" if in_class else "function")
                found.add((kind, child.name, child.lineno, ".".join(qualname)))
                visit(child, qualname + ([child.name] if is_class else [child.name, "<locals>"]), is_class)
            else:
                visit(child, qualname, in_class and not isinstance(child, ast.Lambda))

    visit(ast.parse(text), [], False)
    return found


def definitions_extracted(facts: dict) -> set[tuple[str, str, int, str]]:
    return {(s["kind"], s["name"], s["line"], s.get("parent", "")) for s in facts["symbols"]
            if s["kind"] in ("class", "function", "method")}


@pytest.mark.parametrize("relative", REAL_FILES + ["features.py"])
def test_definitions_agree_with_an_independent_ast_walk(relative):
    text = (FIXTURES / relative).read_text(encoding="utf-8")
    assert definitions_extracted(extract(text, relative)) == definitions_by_ast_walk(text)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the PyTorch corpus is not on this machine")
def test_definitions_agree_with_ast_walk_on_a_corpus_sample():
    paths = sorted(CORPUS.rglob("*.py"))[::25]
    assert len(paths) > 50
    for path in paths:
        text = path.read_text(encoding="utf-8")
        facts = extract(text, path.relative_to(CORPUS).as_posix())
        if facts["parsed"]:
            assert definitions_extracted(facts) == definitions_by_ast_walk(text), path


def test_classes_methods_and_signatures_of_linear():
    facts = extract_fixture("torch/nn/modules/linear.py")
    classes = by_name(facts, "class")
    assert {name: (s["line"], s["signature"]) for name, s in classes.items()} == {
        "Identity": (22, "(Module)"),
        "Linear": (53, "(Module)"),
        "NonDynamicallyQuantizableLinear": (148, "(Linear)"),
        "Bilinear": (162, "(Module)"),
        "LazyLinear": (259, "(LazyModuleMixin, Linear)"),
    }
    init = next(s for s in facts["symbols"] if s["name"] == "__init__" and s.get("parent") == "Linear")
    assert init == {"name": "__init__", "kind": "method", "line": 96, "end": 115, "parent": "Linear",
                    "signature": "(self, in_features: int, out_features: int, bias: bool = True, "
                                 "device=None, dtype=None) -> None"}
    assert facts["parsed"] is True and "problems" not in facts


ANNOTATIONS = ["x[()]", "x[a,]", "a | (b | c)", "(a | b) | c", "Tuple[int, ...]", "x[-1]", "Literal[\"a'b\"]",
               "Literal[u'x']", "a.b[c.d, e][f]", "x[a:b]", "Dict[str, int | None]", "x[(a, b), c]", "x[*a]",
               "b'x' | None", "x[1, 2.5]", "A[B[C[D]]]", "f()[a]", "(a)[b]", "Callable[[int], str]", "'Fwd'",
               "-1", "+1.5", "~0", "-x", "not a", "1e999", "-1e999 | None", "()", "(a,)", "(a, -1) | b",
               "[a, (b,), []]", "f(a, b=1, **c)", "f(*a)", "a.b(c, d=[1, -2.5])", "f(x)(y)", "f(u'x')"]


@pytest.mark.parametrize("annotation", ANNOTATIONS)
def test_signatures_write_annotations_and_defaults_as_ast_unparse_does(annotation):
    """Annotations and defaults are written without ast's unparser where their shape is simple: the same text."""
    source = f"def f(p: {annotation} = {annotation}) -> {annotation}:\n    pass\n"
    expected = ast.unparse(ast.parse(source).body[0].args.args[0].annotation)
    symbol = extract(source, "m.py")["symbols"][0]
    assert symbol["signature"] == f"(p: {expected} = {expected}) -> {expected}"


def test_nested_classes_async_decorators_and_constants():
    facts = extract_fixture("features.py", "jobs/features.py")
    symbols = {(s["kind"], s["name"]): s for s in facts["symbols"]}
    assert symbols[("class", "Scheduler")]["signature"] == "(Base, metaclass=Registry)"
    assert symbols[("class", "Job")]["parent"] == "Scheduler"
    assert symbols[("class", "Result")]["parent"] == "Scheduler.Job"
    assert symbols[("method", "ok")]["parent"] == "Scheduler.Job.Result"
    assert symbols[("method", "state")]["decorators"] == ["property"]
    parse = symbols[("method", "parse")]
    assert parse["decorators"] == ["staticmethod", "functools.lru_cache(maxsize=8)"]
    assert parse["signature"] == "(text: str, *, strict: bool = False, **options: Any) -> dict[str, Any]"
    run = symbols[("method", "run")]
    assert (run["detail"], run["signature"]) == ("async", "(self, command, /, retries=MAX_RETRIES, *args) -> int")
    assert symbols[("function", "main")]["detail"] == "async"
    assert symbols[("function", "fallback_device")]["line"] == 27  # defined under except ImportError
    assert symbols[("function", "helper")]["parent"] == "Scheduler.parse.<locals>"  # local to a method
    constants = sorted(name for kind, name in symbols if kind == "constant")
    assert constants == ["DEFAULT_TIMEOUT", "HAS_TORCH", "LOG_LEVEL", "MAX_RETRIES", "_CACHE_DIR"]
    assert symbols[("type", "T")]["line"] == 16
    assert facts["docstring"].startswith("Scheduling helpers for a job runner.")


def test_imports_as_dependencies_and_keywords():
    facts = extract_fixture("features.py", "jobs/features.py")
    imports = [(i["module"], i.get("names"), i["line"], i["kind"]) for i in facts["imports"]]
    assert ("numpy", None, 8, "import") in imports
    assert ("os.path", None, 9, "import") in imports
    assert ("typing", ["Any", "TypeVar"], 10, "from") in imports
    assert ("yaml", ["load"], 14, "from") in imports
    assert ("pickle", None, 60, "import") in imports  # a lazy import is a dependency too
    keywords = by_name(facts, "import")
    assert keywords["np"] == {"name": "np", "kind": "import", "line": 8, "signature": "numpy"}
    assert keywords["os.path"]["line"] == 9
    assert keywords["TypeVar"]["line"] == 12  # the line of the name in a parenthesised import
    assert keywords["yaml_load"]["signature"] == "yaml.load"
    assert "annotations" not in keywords  # __future__ switches are not keywords


def test_relative_imports_resolve_against_the_package():
    linear = extract_fixture("torch/nn/modules/linear.py")
    assert {"module": "torch.nn.modules.module", "names": ["Module"], "line": 11, "kind": "from",
            "level": 1} in linear["imports"]
    assert by_name(linear, "import")["Module"]["signature"] == "torch.nn.modules.module.Module"
    info = extract_fixture("functorch/dim/_tensor_info.py")
    modules = {(i["module"], tuple(i["names"]), i["level"]) for i in info["imports"] if i["kind"] == "from"}
    assert ("functorch.dim._dim_entry", ("DimEntry",), 1) in modules
    assert ("functorch.dim", ("Dim", "DimEntry", "Tensor"), 1) in modules

    parent = extract("from .. import init\nfrom ..utils import fuse\n", "torch/nn/modules/__init__.py")
    assert [(i["module"], i["names"], i["level"]) for i in parent["imports"]] == [
        ("torch.nn", ["init"], 2), ("torch.nn.utils", ["fuse"], 2)]


@pytest.mark.parametrize("module, level, expected", [
    ("module", 1, "torch.nn.modules.module"),
    (None, 1, "torch.nn.modules"),
    (None, 2, "torch.nn"),
    ("utils.fusion", 2, "torch.nn.utils.fusion"),
    ("x", 4, "....x"),  # above the source root: kept as written
    ("os", 0, "os"),
])
def test_resolve_relative(module, level, expected):
    assert resolve_relative(module, level, ["torch", "nn", "modules"]) == expected


def test_calls_resolve_aliases_and_keep_keyword_arguments():
    facts = extract_fixture("features.py", "jobs/features.py")
    calls = {(c["name"], c["line"]): c for c in facts["calls"]}
    assert calls[("subprocess.run", 54)]["kwargs"] == {"shell": "True", "check": "False"}
    assert calls[("yaml.load", 51)]["kwargs"] == {"Loader": "yaml.SafeLoader"}  # via `load as yaml_load`
    assert calls[("numpy.load", 55)]["args"] == ["'weights.npy'"]  # np -> numpy
    assert ("eval", 56) in calls and ("pickle.loads", 61) in calls
    magic = extract_fixture("functorch/dim/magic_trace.py")
    popen = next(c for c in magic["calls"] if c["name"] == "subprocess.Popen")
    assert popen["kwargs"] == {"stderr": "subprocess.PIPE", "encoding": "'utf-8'"}


def test_licence_header_is_not_the_overview():
    assert extract_fixture("functorch/dim/magic_trace.py")["docstring"] == ""
    assert extract("# mypy: allow-untyped-defs\n# Helpers for tensor layouts.\nx = 1\n", "m.py")[
        "docstring"] == "Helpers for tensor layouts."


def test_a_local_generic_function_of_python_3_12_is_read_by_the_parser():
    facts = extract_fixture("torch/testing/_internal/py312_intrinsics.py")
    assert facts["parsed"] is True and "problems" not in facts
    local = next(s for s in facts["symbols"] if s["name"] == "f")
    assert (local["kind"], local["line"], local["parent"], local["signature"], local["doc"]) == (
        "function", 11, "Foo._default_update.<locals>", "[T](a: 'This is a new annotation')", "This is a test")


def test_syntax_error_falls_back_and_still_lists_definitions():
    text = (FIXTURES / "torch/testing/_internal/py312_intrinsics.py").read_text(encoding="utf-8")
    broken = text.replace("def f[T](a", "def f[T](a, oops oops", 1)   # line 11, in any Python
    facts = extract(broken, "torch/testing/_internal/py312_intrinsics.py")
    assert facts["parsed"] is False
    assert facts["problems"][0]["line"] == 11
    assert facts["problems"][0]["message"].startswith("syntax error at line 11:")
    assert definitions_extracted(facts) == {
        ("class", "Foo", 8, ""), ("method", "_default_update", 10, "Foo"),
        ("method", "test_default_update", 22, "Foo")}
    assert by_name(facts, "method")["_default_update"]["decorators"] == ["classmethod"]
    compile_call = next(c for c in facts["calls"] if c["name"] == "torch.compile")
    assert compile_call["kwargs"] == {"backend": '"eager"', "fullgraph": "True"}


def test_pep695_file_is_read_fully_on_any_python():
    facts = extract_fixture("pep695.py", "geometry/pep695.py")
    assert facts["parsed"] is True and "problems" not in facts
    symbols = {(s["kind"], s["name"]): s for s in facts["symbols"]}
    assert symbols[("type", "Point")] == {"name": "Point", "kind": "type", "line": 5,
                                          "signature": "= tuple[float, float]"}
    assert symbols[("constant", "ORIGIN")]["line"] == 6
    assert symbols[("function", "midpoint")]["signature"] == "[T](a: T, b: T) -> T"
    assert symbols[("class", "Box")] == {"name": "Box", "kind": "class", "line": 14, "end": 18,
                                         "signature": "[T](Shape)", "decorators": ["dataclass"]}
    area = symbols[("method", "area")]
    assert (area["parent"], area["detail"], area["signature"]) == (
        "Box", "async", "(self, scale: float = 1.0) -> float")
    assert {"module": "geometry.base", "names": ["Shape"], "line": 3, "kind": "from", "level": 1} in facts["imports"]
    assert facts["docstring"] == "Geometry types written with Python 3.12 syntax."
    assert any(c["name"] == "eval" for c in facts["calls"])


def test_syntax_of_python_3_12_to_3_14_is_read_fully_on_any_python():
    facts = extract_fixture("py314.py", "shapes/py314.py")
    assert facts["parsed"] is True and "problems" not in facts
    assert [(s["kind"], s["name"], s["line"], s.get("parent", ""), s.get("signature", ""))
            for s in facts["symbols"] if s["kind"] != "import"] == [
        ("type", "Point", 6, "", "= tuple[float, float]"),
        ("type", "Pair", 7, "", "[T] = tuple[T, T]"),
        ("type", "Table", 8, "", "[K, V = list[K]] = dict[K, V]"),
        ("type", "Hooks", 9, "", "[*Ts = *tuple[int, str], **P = [int]] = Callable[P, tuple[*Ts,]]"),
        ("function", "midpoint", 12, "", """[T: (int, float)](a: Pair[T], label: str = f"{'mid'}") -> T"""),
        ("class", "Cache", 17, "", "[K, V = str](dict[K, V], metaclass=type)"),
        ("type", "Entry", 20, "Cache", "= tuple[K, V]"),
        ("method", "describe", 22, "Cache", "[**P](self, key: K, *args: P.args) -> str"),
        ("method", "load", 26, "Cache", "(self, text: str) -> None"),
        ("function", "pairs", 35, "", "[K, V: (int, str) = int](table: Table[K, V]) -> list[Pair[K]]")]
    assert by_name(facts, "class")["Cache"]["doc"] == "Shapes by name."
    calls = {(c["name"], c["line"]): c for c in facts["calls"]}
    assert calls[("json.dumps", 24)]["args"] == ['row["size"]']   # inside an f-string of the same quotes
    assert calls[("json.dumps", 24)]["kwargs"] == {"indent": 'f"{" " * 2}"'}
    assert ("json.loads", 28) in calls and ("print", 30) in calls   # in the try of ``except A, B:``


@pytest.mark.skipif(sys.version_info < (3, 12), reason="Python's own parser knows type parameters from 3.12")
@pytest.mark.parametrize("relative", ["pep695.py", "torch/testing/_internal/py312_intrinsics.py"])
def test_the_rewrite_for_older_pythons_reads_as_pythons_own_parser(relative):
    """What an older Python reads through ``_older_syntax`` is what a newer one reads itself."""
    text = (FIXTURES / relative).read_text(encoding="utf-8")
    native = extract(text, relative)
    assert native["parsed"] is True
    assert python_extractor._read_newer_syntax(text, relative) == native


def test_line_regex_when_tree_sitter_is_unusable(monkeypatch):
    monkeypatch.setattr(python_extractor, "_tree_sitter_parser", lambda: None)
    text = (FIXTURES / "pep695.py").read_text(encoding="utf-8") + "unclosed = (\n"   # broken in any Python
    facts = extract(text, "geometry/pep695.py")
    assert facts["parsed"] is False
    assert definitions_extracted(facts) == {
        ("function", "midpoint", 9, ""), ("class", "Box", 14, ""), ("method", "area", 17, "Box")}
    assert by_name(facts, "method")["area"]["detail"] == "async"
    assert [(i["module"], i["level"]) for i in facts["imports"]] == [("dataclasses", 0), ("geometry.base", 1)]


@pytest.mark.parametrize("text", [
    "x = " + "+".join(["1"] * 100_000) + "\ndef after(): pass\n",    # RecursionError in the parser
    "x = " + "-" * 100_000 + "1\ndef after(): pass\n",             # MemoryError in the parser
    "def after(x=" + "-" * 1_000 + "1): pass\n",                   # parses, too deep to unparse
    "def after(): pass\n" + "".join(" " * i + "if x:\n" for i in range(120)) + " " * 120 + "pass\n",
    "def after(): pass\nx = '\0'\n",
])
def test_pathological_code_is_a_problem_not_a_crash(text):
    facts = extract(text, "m.py")
    assert facts["parsed"] is False and facts["problems"]
    assert "after" in by_name(facts, "function")


@pytest.mark.parametrize("text", [
    "type Table[, V = list[K]] = dict[K, V]\ndef after(): pass\n",        # no type parameter to read
    "type Tab[le[K, V = list[K]] = dict[K, V]\ndef after(): pass\n",      # brackets that do not pair
    "def after[T](x):\n    return f'{x[\"k\"]\n",                      # an f-string left open
])
def test_broken_newer_syntax_is_a_problem_not_a_crash(text):
    facts = extract(text, "m.py")
    assert facts["parsed"] is False and facts["problems"]
    assert "after" in by_name(facts, "function")


@pytest.mark.parametrize("line", [
    'x = f"{}"', 'x = f"{x["a"]!z}"', "def f[](): pass", "try: pass\nexcept A, B as e: pass",
])
def test_code_no_python_accepts_is_still_a_syntax_error(line):
    facts = extract(line + "\n", "m.py")
    assert facts["parsed"] is False and facts["problems"][0]["message"].startswith("syntax error")


def test_latin1_file_through_extract_bytes():
    data = (FIXTURES / "latin1.py").read_bytes()
    facts, text, _ = extract_bytes("pkg/latin1.py", data)
    assert facts["encoding"] == "iso8859-1"
    assert facts["docstring"] == "Café: un module écrit en Latin-1."
    assert [(s["kind"], s["name"], s["line"]) for s in facts["symbols"]] == [
        ("constant", "GREETING", 4), ("function", "café", 7)]
    assert by_name(facts, "function")["café"]["signature"] == "(crème: str) -> str"


@pytest.mark.parametrize("relative", REAL_FILES + ["features.py", "pep695.py", "py314.py",
                                                   "torch/testing/_internal/py312_intrinsics.py"])
def test_symbols_are_on_their_lines_sorted_and_unique(relative):
    text = (FIXTURES / relative).read_text(encoding="utf-8")
    facts = extract(text, relative)
    lines = text.split("\n")
    for symbol in facts["symbols"]:
        assert symbol["name"] in lines[symbol["line"] - 1], symbol
    keys = [(s["line"], s["name"]) for s in facts["symbols"]]
    assert keys == sorted(keys)
    assert len({repr(s) for s in facts["symbols"]}) == len(facts["symbols"])
    assert extract(text, relative) == facts


EVERY_BLOCK = '''\
if A:
    def in_if(): pass
elif B:
    def in_elif(): pass
else:
    def in_else(): pass
for x in y:
    def in_for(): pass
else:
    def in_for_else(): pass
while z:
    def in_while(): pass
else:
    def in_while_else(): pass
with open(p) as f:
    def in_with(): pass
try:
    def in_try(): pass
except ValueError:
    def in_except(): pass
else:
    def in_try_else(): pass
finally:
    def in_finally(): pass
try:
    pass
except* OSError:
    def in_except_star(): pass
match command:
    case [one]:
        def in_case(): pass
    case _:
        class InDefault:
            def method(self): pass
async def outer():
    async for item in source:
        def in_async_for(): pass
    async with lock:
        def in_async_with(): pass
'''


def test_definitions_in_every_kind_of_block_are_listed():
    """A definition under any compound statement (each branch of if, for, while, with, try,
    try/except*, match) is listed, on its line and under its enclosing definition."""
    facts = extract(EVERY_BLOCK, "blocks.py")
    assert definitions_extracted(facts) == definitions_by_ast_walk(EVERY_BLOCK)
    assert len(definitions_extracted(facts)) == EVERY_BLOCK.count("def ") + EVERY_BLOCK.count("class ")


def test_a_function_body_is_read_for_locals_only_when_it_defines_something(monkeypatch):
    """Extraction reads a function's statements again only to find its local definitions: a
    body without any (most of them) is skipped, one with a local class deep in a block is not."""
    source = ("def plain(x):\n    if x:\n        return [y for y in x]\n    return x\n\n"
              "def factory():\n    with ctx():\n        if True:\n            class Local:\n                pass\n"
              "    return Local\n\n"
              "def last():\n    pass\n")
    read: list[str] = []
    body = python_extractor._AstReader._body

    def spy(self, statements, parents, scope):
        read.append(".".join(parents))
        return body(self, statements, parents, scope)

    monkeypatch.setattr(python_extractor._AstReader, "_body", spy)
    facts = extract(source, "m.py")
    assert definitions_extracted(facts) == definitions_by_ast_walk(source)
    assert ("class", "Local", "factory.<locals>") in {(s["kind"], s["name"], s.get("parent")) for s in facts["symbols"]}
    assert not [parents for parents in read if parents.startswith(("plain", "last"))]


@pytest.mark.parametrize("docstring", [
    "One line.", "  Leading blanks.", "\tA leading tab.", "Trailing blanks.  ", "A\ttab inside.",
    "Two\n    lines.", "\n    Starts on the second line.\n    ", "", " ", "Ends with a form feed\x0c",
])
def test_each_definition_documents_itself_with_its_docstring_as_python_cleans_it(docstring):
    """A definition's ``doc`` is its docstring as ``inspect.getdoc`` shows it (``ast.get_docstring``),
    whatever blanks and tabs it starts or ends with; an empty one is no documentation."""
    source = f"def f():\n    {docstring!r}\n\nclass C:\n    {docstring!r}\n"
    tree = ast.parse(source)
    expected = ast.get_docstring(tree.body[0])
    assert expected == ast.get_docstring(tree.body[1])
    for symbol in extract(source, "m.py")["symbols"]:
        assert symbol.get("doc") == (expected or None), symbol
    assert extract(f"{docstring!r}\n", "m.py")["docstring"] == expected


@pytest.mark.parametrize("parameters, written", [
    ("a, /", "(a, /)"),
    ("a=1, /", "(a=1, /)"),
    ("a, b=2, /, c=3", "(a, b=2, /, c=3)"),
    ("a: int = 1, /, b: str = 'x', *, c", "(a: int = 1, /, b: str = 'x', *, c)"),
    ("a, b, *args, c=1, d: int, **kw", "(a, b, *args, c=1, d: int, **kw)"),
    ("self, x: 'T', y=None", "(self, x: 'T', y=None)"),
    ("", "()"),
])
def test_signatures_place_slash_and_defaults_as_written(parameters, written):
    assert extract(f"def f({parameters}): pass\n", "m.py")["symbols"][0]["signature"] == written


BIG = 3000   # items of a long literal: a table of thousands of entries is common in generated modules


@pytest.mark.parametrize("value", [
    "{" + ", ".join(f"'k{i}': {i}" for i in range(BIG)) + "}",
    "{" + ", ".join(f"'k{i}': {{'a': [{i}, {i + 1}], **base}}" for i in range(BIG)) + "}",
    "[" + ", ".join(f"({i}, 'x')" for i in range(BIG)) + ", lambda: 1]",
    "frozenset({" + ", ".join(str(i) for i in range(BIG)) + "})",
    "dict(" + ", ".join(f"k{i}={i}" for i in range(BIG)) + ")",
    "(" + ", ".join(f"'{i}'" for i in range(BIG)) + ", f'{name}!')",
    "[\n    " + ",\n    ".join(f"'''line\n{i}'''" for i in range(BIG)) + "\n]",
])
def test_a_long_value_shows_its_first_characters_without_being_written_out_whole(monkeypatch, value):
    """A module constant's value is shown as its first ``MAX_VALUE_TEXT`` characters, the same
    as writing the whole value out and cutting it, but only its first items are written out."""
    source = f"TABLE = {value}\n"
    node = ast.parse(source).body[0].value
    whole = ast.unparse(node) if "f'" not in value else " ".join(source[8:].split())
    expected = python_extractor._short(whole)
    written: list[int] = []
    unparse = ast.unparse

    def counting(tree: ast.AST) -> str:
        text = unparse(tree)
        written.append(len(text))
        return text

    monkeypatch.setattr(python_extractor.ast, "unparse", counting)
    (symbol,) = extract(source, "table.py")["symbols"]
    assert symbol["signature"] == "= " + expected
    assert expected.endswith("…") and len(expected) == python_extractor.MAX_VALUE_TEXT + 1
    assert max(written, default=0) < 50 * python_extractor.MAX_VALUE_TEXT   # the whole: over 30,000


def test_expressions_are_searched_for_f_strings_only_in_a_file_holding_one(monkeypatch):
    """An expression holding an f-string is shown as written (``ast.unparse`` quotes them
    differently from one Python to the next); the walk that finds the file's calls says whether
    it holds any, so the values and signatures of a file without one are not walked again."""
    walked: list[object] = []
    real_walk = ast.walk
    monkeypatch.setattr(python_extractor.ast, "walk", lambda node: walked.append(node) or real_walk(node))
    table = "TABLE = {" + ", ".join(f"'k{n}': [{n}, {n} + 1]" for n in range(200)) + "}\n"
    plain = table + "def f(a: int = 1 + 2, *, b: dict = {'x': 1}) -> list[int]:\n    return [a]\n"
    facts = extract(plain, "m.py")
    assert walked == []
    assert [s["signature"] for s in facts["symbols"]] == [
        "= {'k0': [0, 0 + 1], 'k1': [1, 1 + 1], 'k2': [2, 2 + 1], 'k3': [3, 3 + 1], 'k4': […",
        "(a: int = 1 + 2, *, b: dict = {'x': 1}) -> list[int]"]
    quoted = table.replace("'k0'", "f'k{0}'") + "def g(a: str = f'{1 + 1}') -> None:\n    pass\n"
    facts = extract(quoted, "m.py")
    assert facts["symbols"][0]["signature"].startswith("= {f'k{0}': [0, 0 + 1], 'k1'")
    assert facts["symbols"][1]["signature"] == "(a: str = f'{1 + 1}') -> None"


DOC_COMMENTS = '''"""Settings."""
import enum
from dataclasses import dataclass
from typing import TypeAlias

#: The answer, as Sphinx reads it.
#: Can span **lines**.
ANSWER = 42

LIMIT = 10  #: A trailing one.

#: Cut off by the blank line below.

LONELY = 1
# A plain comment, no doc.
PLAIN = 2
#: Above, where the trailing one wins.
BOTH = 3  #: The trailing one.
#: Above, where the docstring wins.
WINS = 4
"""The docstring."""
#: A type alias.
Alias: TypeAlias = "int | str"
greeting: str = "¡hola!"  #: After non-ASCII text (columns count UTF-8 bytes).
TABLE = {
    "a": 1,  #: inside the value: no doc
}  #: After the statement's last line.


class Color(enum.Enum):
    #: The red one.
    RED = 1
    GREEN = 2  #: The green one.


@dataclass
class Row:
    #: The row's size.
    size: int = 0
'''

DOC_COMMENTED = {
    "ANSWER": "The answer, as Sphinx reads it.\nCan span **lines**.", "LIMIT": "A trailing one.",
    "LONELY": None, "PLAIN": None, "BOTH": "The trailing one.", "WINS": "The docstring.",
    "Alias": "A type alias.", "greeting": "After non-ASCII text (columns count UTF-8 bytes).",
    "TABLE": "After the statement's last line.", "Color.RED": "The red one.", "Color.GREEN": "The green one.",
    "Row.size": "The row's size.",
}


def _variable_docs(facts: dict) -> dict[str, str | None]:
    return {(f"{s['parent']}.{s['name']}" if s.get("parent") else s["name"]): s.get("doc")
            for s in facts["symbols"] if s["kind"] in ("constant", "variable", "type")}


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_sphinx_doc_comments_document_variables_enum_members_and_fields(newline):
    """``#:`` lines right above an assignment, or a ``#:`` after its code, are its doc, as Sphinx
    autodoc reads them: the docstring after it wins, then the trailing comment; a blank line
    between, or a plain ``#``, is no doc."""
    assert _variable_docs(extract(DOC_COMMENTS.replace("\n", newline), "settings.py")) == DOC_COMMENTED


def test_doc_comments_read_the_same_through_the_rewrite_for_newer_syntax():
    """A file with syntax newer than the running Python (read through ``_older_syntax``) gets
    the same docs as Python's own parser gives the file without that line."""
    newer = DOC_COMMENTS + "\n#: A point.\ntype Point[T] = tuple[T, T]\nORIGIN = (0, 0)  #: The origin.\n"
    older = DOC_COMMENTS + "\n#: A point.\nPoint: TypeAlias = tuple\nORIGIN = (0, 0)  #: The origin.\n"
    expected = {**DOC_COMMENTED, "Point": "A point.", "ORIGIN": "The origin."}
    assert _variable_docs(extract(older, "settings.py")) == expected
    rewritten = python_extractor._read_newer_syntax(newer, "settings.py")
    assert rewritten is not None and rewritten["parsed"] is True
    assert _variable_docs(rewritten) == expected
    assert _variable_docs(extract(newer, "settings.py")) == expected   # Python's own parser from 3.12


def test_a_doc_comment_shows_on_the_page_in_show_and_in_coverage(tmp_path, capsys):
    """What a user sees: the ``#:`` text under the entry, ``kwdocs show`` quoting it, and every
    variable documented that way counted documented."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "settings.py").write_text(DOC_COMMENTS, encoding="utf-8")
    assert run_kwdocs("build", "--src", str(src), "--out", str(tmp_path / "out"), "-q") == 0
    page = (tmp_path / "out" / "settings.py_docs.md").read_text(encoding="utf-8")
    assert "The answer, as Sphinx reads it. Can span **lines**." in entry_text(page, "ANSWER")
    assert "The red one." in entry_text(page, "RED")
    assert "Cut off" not in entry_text(page, "LONELY")
    # the 14 variables, constants, enum members, fields and classes; all but LONELY, PLAIN and
    # the undocumented classes Color and Row documented (by ``#:``, a docstring, or a trailing ``#:``)
    assert "*Documentation coverage: 10 of 14 public definitions documented (71.4%).*" in page
    capsys.readouterr()
    assert run_kwdocs("show", "settings.py", "--src", str(src), "--out", str(tmp_path / "out")) == 0
    shown = capsys.readouterr().out.splitlines()
    assert "settings.py:8 constant ANSWER  The answer, as Sphinx reads it." in shown
    assert "settings.py:10 constant LIMIT  A trailing one." in shown
    assert "settings.py:23 type Alias  A type alias." in shown
    assert "settings.py:14 constant LONELY" in shown


ATTRIBUTES = '''"""Layers."""
from typing import ClassVar


class Linear(Module):
    """Applies a linear transformation; `in_features` is the input's size."""
    __constants__ = ["in_features", "out_features"]
    in_features: int
    out_features: int
    weight: Tensor
    #: Layers made so far.
    made: ClassVar[int] = 0
    mode = "fast"
    """How it runs."""
    _cache = None

    def __init__(self, in_features: int, bias: bool = True) -> None:
        self.in_features = in_features
        self.scale: float = 1.0
        self.plain = 3
        self.noted = 4
        """Said after it."""
        self._private: int = 2
        if bias:
            self.nested: int = 1
        self.forward: Callable = print

    def forward(self, x):
        """Runs it."""


class Other:
    """Mentions `weight`, which is not its own."""
'''

ATTRIBUTES_LISTED = {   # name -> (line, signature, doc), each under ``Linear``
    "in_features": (8, ": int", None), "out_features": (9, ": int", None), "weight": (10, ": Tensor", None),
    "made": (12, ": ClassVar[int] = 0", "Layers made so far."), "mode": (13, "= 'fast'", "How it runs."),
    "scale": (19, ": float", None), "noted": (21, "= 4", "Said after it."),
}


def _attributes(facts: dict) -> dict[str, tuple]:
    return {symbol["name"]: (symbol["line"], symbol.get("signature", ""), symbol.get("doc"))
            for symbol in facts["symbols"] if symbol.get("detail") == "attribute" and symbol["parent"] == "Linear"}


def test_a_class_lists_its_public_variables_and_the_instance_attributes_init_annotates_or_documents():
    """As pdoc lists a class's variables: the public names its body assigns or annotates (with
    annotation or value and doc), then those ``__init__`` sets on ``self`` with an annotation or
    a doc, once each, the class body's declaration first; no ``_private``, no dunder, nothing
    from a nested block of ``__init__``, nothing named as a method is."""
    facts = extract(ATTRIBUTES, "layers.py")
    assert _attributes(facts) == ATTRIBUTES_LISTED
    assert {symbol["kind"] for symbol in facts["symbols"] if symbol.get("detail") == "attribute"} == {"variable"}


def test_attributes_read_the_same_through_the_rewrite_for_newer_syntax():
    """A generic class (``class Linear[T]``) read on a Python that refuses its syntax."""
    newer = ATTRIBUTES.replace("class Linear(Module):", "class Linear[T](Module):")
    rewritten = python_extractor._read_newer_syntax(newer, "layers.py")
    assert rewritten is not None and rewritten["parsed"] is True
    assert _attributes(rewritten) == ATTRIBUTES_LISTED
    assert _attributes(extract(newer, "layers.py")) == ATTRIBUTES_LISTED


def test_attributes_show_under_their_class_in_the_keyword_page_and_in_coverage(tmp_path):
    """What a user sees: each attribute under its class with its label, annotation and doc; the
    keyword page naming it ``Linear.in_features`` and linking its anchor; a doc naming it in its
    own class linked, another class's mention of the same name not; coverage counting them."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "layers.py").write_text(ATTRIBUTES, encoding="utf-8")
    assert run_kwdocs("build", "--src", str(src), "--out", str(tmp_path / "out"), "-q") == 0
    page = (tmp_path / "out" / "layers.py_docs.md").read_text(encoding="utf-8")
    assert '<a id="l8-variable-in_features"></a>attribute **`in_features`** `: int`' in page
    assert "Layers made so far." in entry_text(page, "made")
    assert "[`in_features`](#l8-variable-in_features) is the input's size" in page
    assert "Mentions `weight`, which is not its own." in page
    listed = {line.split("**`")[1].split("`**")[0] for line in page.splitlines() if "attribute **`" in line}
    assert listed == {"in_features", "out_features", "weight", "made", "mode", "scale", "noted"}
    # Linear, forward and Other (documented), the 7 attributes (made, mode and noted documented)
    assert "*Documentation coverage: 6 of 10 public definitions documented (60.0%).*" in page
    keywords = (tmp_path / "out" / "layers.py_kw.md").read_text(encoding="utf-8")
    assert "- **`Linear.in_features`**: [attribute, line 8](./layers.py_docs.md#l8-variable-in_features)" in keywords
    assert "**`Linear.noted`**: [attribute, line 21](./layers.py_docs.md#l21-variable-noted)" in keywords
