"""Source highlighting in the site: tree-sitter's highlight queries, Pygments for the rest."""
from __future__ import annotations

import re
from html import unescape

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kwdocs.languages import Highlight
from kwdocs.site import highlight as hl
from tests.conftest import run_kwdocs

_TAG = re.compile(r"<[^>]*>")


def _text(lines: list[str]) -> str:
    return "".join(unescape(_TAG.sub("", line)) + "\n" for line in lines)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab_1 \n\t\"'#/*<>&{}()[];:=.\\`$@") + ["é", "\u2028", "😀"]),
               max_size=120),
       st.sampled_from(["python", "cpp", "c", "javascript", "go", "rust", "makefile", "ruby", ""]))
def test_any_source_comes_back_whole_escaped_one_line_per_line(text, info):
    lines = hl.highlight(text, info, {"a": "x.html#L1", "b_1": "y.html#L2"})
    expected = text if text.endswith("\n") or not text else text + "\n"
    assert _text(lines) == expected
    assert len(lines) == expected.count("\n")
    joined = "\n".join(lines)    # a span may go on over lines (a docstring); links never do
    assert joined.count("<span") == joined.count("</span>")
    for line in lines:
        assert line.count("<a ") == line.count("</a>"), line
        assert "<" not in _TAG.sub("", line) and "&" not in re.sub(r"&(lt|gt|amp);", "", _TAG.sub("", line))


@pytest.mark.parametrize("others", [0, 2 * hl.MANY_NAMES])     # names found one by one, and all in one scan
def test_known_identifiers_link_to_their_definitions_but_not_inside_strings_or_comments(others):
    source = ('import torch\n\nclass Linear(Module):\n    """Module docs."""\n'
              '    def forward(self):  # Module here\n        return helper("Module")\n')
    links = {"Module": "../module.py_docs.html#L42", "helper": "h.py_docs.html#L3", "torch": "t.html",
             **{f"Modul{index}": "x.html" for index in range(others)}, "Linea": "no.html", "elper": "no.html"}
    lines = hl.highlight(source, "python", links)
    assert '<a href="../module.py_docs.html#L42">Module</a>' in lines[2]         # class Linear(Module):
    assert lines[2].count("<a ") == 1
    assert '<a href="t.html">torch</a>' in lines[0]
    assert '<a href="h.py_docs.html#L3">helper</a>' in lines[5]
    assert "<a " not in lines[3] and "<a " not in lines[4].split("#")[1]         # docstring, comment
    assert '"Module"' in lines[5] and lines[5].count("<a ") == 1                  # the string is text
    assert "<a " not in "".join(hl.highlight(source, "python"))                 # no mapping, no links


def test_sources_with_a_grammar_never_reach_pygments(tmp_path, monkeypatch):
    """Python, C/C++, Go ... are highlighted by their grammar's query (Pygments' lexers took most of
    the site's build time); the classes are Pygments' own, so the one stylesheet colours both."""
    import pygments.lexer

    def refuse(*args, **kwargs):
        raise AssertionError("Pygments used for a language with a grammar")

    monkeypatch.setattr(pygments.lexer.RegexLexer, "get_tokens_unprocessed", refuse)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "shapes.py").write_text('def area(r):\n    """Area."""\n    return 3.14 * r  # pi\n')
    (tree / "vec.h").write_text('#include <vector>\n// a vector\nstruct Vec { int n = 0; };\n')
    (tree / "main.go").write_text('package main\n\nfunc main() { println("hi") }\n')
    assert run_kwdocs("build", "--src", str(tree), "-q", "--html") == 0
    site = tree / "kwdocs-out" / "site"
    python = (site / "shapes.py_docs.html").read_text()
    # the definition's name leads to its entry in Detailed Analysis, whose "line 1" leads back
    assert '<i class=k>def</i> <i class=nf><a href="#l1-function-area">area</a></i>' in python
    assert '<a id="l1-function-area"></a>' in python and '<a href="#L1">' in python
    assert '<i class=c># pi</i>' in python and '<i class=s>"""Area."""</i>' in python
    header = (site / "vec.h_docs.html").read_text()
    assert '<i class=k>struct</i>' in header and '<i class=c>// a vector</i>' in header
    assert '<i class=s>&lt;vector&gt;</i>' in header
    assert '<i class=k>func</i>' in (site / "main.go_docs.html").read_text()
    css = (site / "_kwdocs" / "pygments.css").read_text()
    for cls in ("k", "s", "c", "m", "nf", "nc", "nb", "kc", "nd"):
        assert f".codehilite .{cls} " in css, cls


@pytest.mark.parametrize("info", ["ruby", "unknown-language"])
def test_languages_without_a_grammar_use_pygments_and_large_files_stay_plain(info):
    small = hl.highlight("def x\n  1 # one\nend\n", info)
    assert len(small) == 3
    if info == "ruby":
        assert '<span class="k">def</span>' in small[0]
    big = "def x\n  '<b>'\nend\n" * (hl.PYGMENTS_LIMIT // 10)
    lines = hl.highlight(big, info)
    assert "<span" not in "".join(lines) and lines[1] == "  '&lt;b&gt;'"


# ---------------------------------------------------------------- Python's own lexer

_TOKEN = re.compile(r"<i class=(\w+)>(.*?)</i>", re.DOTALL)
_LINK = re.compile(r"</?a[^>]*>")


def _tokens_at(body: str) -> list[tuple[int, int, str]]:
    """(start, end, class) of each coloured token of ``body``, as offsets of its plain text."""
    found, offset, at = [], 0, 0
    for match in _TOKEN.finditer(body):
        offset += len(unescape(_TAG.sub("", body[at:match.start()])))
        size = len(unescape(_LINK.sub("", match.group(2))))
        found.append((offset, offset + size, match.group(1)))
        offset, at = offset + size, match.end()
    return found


@pytest.fixture(scope="module")
def python_query():
    """tree-sitter's Python highlight query as the highlighter compiled it before the lexer (built
    apart from ``_query``'s cache, and kept alive for the module's tests)."""
    return hl._compiled(Highlight("tree_sitter_python"))


def _tree_sitter_python(text: str, python_query) -> list[tuple[int, int, str]]:
    """(start, end, class) of what tree-sitter's query coloured, as offsets of ``text``."""
    from kwdocs.extract.treesitter import parser

    module, function, query, classes = python_query
    data = text.encode("utf-8")
    char_at = [index for index, char in enumerate(text) for _ in char.encode("utf-8")] + [len(text)]
    root = parser(module, function).parse(data).root_node
    return [(char_at[start], char_at[end], cls.decode()) for start, end, cls in hl._tokens(query, root, classes, data)]


def test_python_lexer_colours_what_the_grammar_coloured(python_query):
    """On kwdocs' own sources, every keyword, constant, string, comment, number, defined function
    and called builtin tree-sitter's query coloured is coloured the same by the lexer, and nothing
    else is, decorators aside (tree-sitter coloured a whole decorator, arguments and all, as one
    function name; the lexer colours ``@name.attr`` as Pygments does, and what follows as code)."""
    from pathlib import Path

    compared = {"k", "kc", "s", "c", "m", "nb", "nf"}
    root = Path(hl.__file__).parents[1]
    checked = 0
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        old = _tree_sitter_python(text, python_query)
        new = _tokens_at(hl.highlighted(text, "python"))
        decorators = [(start, end) for start, end, cls in old if cls == "nf" and text[start] == "@"]
        old = {token for token in old if token[2] in compared and token[:2] not in decorators}
        new = {token for token in new if token[2] in compared
               and not any(start <= token[0] < end for start, end in decorators)}
        assert new == old, (path, sorted(new - old)[:5], sorted(old - new)[:5])
        checked += len(old)
    assert checked > 10_000


def test_python_lexer_colours_names_by_where_they_stand():
    source = ("@dataclass(frozen=True)\nclass Box(Base):\n    size: int = 0\n    items: dict[str, Any] = {}\n"
              "    def lt(self, other: Box, *rest: int) -> Optional[Box]:\n"
              "        d = {key: value, other: lt}\n        match d:\n            case {}: return len(d) if 0x1F &lt; 2 else torch.max(d)\n"
              "        match = re.match(f'{d}')\n        return x < lt\n")
    lines = hl.highlight(source, "python", {"dataclass": "dc.html", "Box": "#box", "lt": "#lt", "torch": "t.html"})
    assert lines[0] == '<i class=nd>@<a href="dc.html">dataclass</a></i>(frozen=<i class=kc>True</i>)'
    assert lines[1] == '<i class=k>class</i> <i class=nc><a href="#box">Box</a></i>(Base):'
    assert lines[2] == "    size: <i class=nc>int</i> = <i class=m>0</i>"                     # an annotation
    assert lines[3] == "    items: dict[<i class=nc>str</i>, <i class=nc>Any</i>] = {}"       # types inside a generic
    assert lines[4] == ('    <i class=k>def</i> <i class=nf><a href="#lt">lt</a></i>(self, other: '
                        '<i class=nc><a href="#box">Box</a></i>, *rest: <i class=nc>int</i>) -&gt; '
                        'Optional[<i class=nc><a href="#box">Box</a></i>]:')
    assert lines[5] == '        d = {key: value, other: <a href="#lt">lt</a>}'            # a dict's values are no types
    assert lines[6] == "        <i class=k>match</i> d:"
    assert lines[7] == ('            <i class=k>case</i> {}: <i class=k>return</i> <i class=nb>len</i>(d) '
                        '<i class=k>if</i> <i class=m>0x1F</i> &amp;<a href="#lt">lt</a>; <i class=m>2</i> '
                        '<i class=k>else</i> <a href="t.html">torch</a>.max(d)')    # not a builtin after a dot
    assert lines[8] == "        match = re.match(<i class=s>f'{d}'</i>)"                  # soft keywords as names
    assert lines[9] == '        <i class=k>return</i> x &lt; <a href="#lt">lt</a>'        # the name, not the entity


def test_a_capture_tested_by_its_text_is_coloured_only_when_the_text_passes():
    """``#match?`` tests on a pattern's one capture are done on the captured text by the highlighter
    (tree-sitter's bindings ran them through Python for every node found): the same colours."""
    cpp = "".join(hl.highlight("Eigen::Matrix m;\nstd::vector<int> v;\n", "cpp"))
    assert "<i class=nc>Eigen</i>" in cpp and "<i class=nc>std</i>" not in cpp     # namespaces named like types
    go = "".join(hl.highlight("package main\n\nfunc f() { s := make([]int, 1); g(s) }\n", "go"))
    assert "<i class=nb>make</i>" in go and "<i class=nb>g</i>" not in go and ">g</i>" not in go
    _, _, query, classes = hl._query("cpp")
    tested = [name for name, (_, _, test) in classes.items() if test is not None]
    assert tested and all(test.search(b"Eigen") and not test.search(b"std")
                          for name, (_, _, test) in classes.items() if name in tested)
