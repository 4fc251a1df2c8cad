"""Source highlighting in the site: tree-sitter's highlight queries, Pygments for the rest."""
from __future__ import annotations

import re
from html import unescape

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
