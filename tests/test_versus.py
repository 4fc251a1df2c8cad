"""bench/versus.py: the comparison of a tool's entities with kwdocs' pages, on a small tree built
here and a hand-written "tool output" (no documentation tool needed)."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPOSITORY

_SPEC = importlib.util.spec_from_file_location("versus", REPOSITORY / "bench" / "versus.py")
assert _SPEC and _SPEC.loader
versus = importlib.util.module_from_spec(_SPEC)
sys.modules["versus"] = versus
_SPEC.loader.exec_module(versus)

SOURCE = '''"""Shapes."""


class Square:
    """A square, of one side.

    **Parameters:**

    * **side** - the length of a side, in the units the caller
      chose.
    """

    def area(self):
        """Area of the square."""
        return 1


def perimeter(side):
    """The perimeter of a square."""
    return 4 * side
'''


def _built(tmp_path: Path) -> dict[str, list]:
    src = tmp_path / "src"
    src.mkdir()
    (src / "shapes.py").write_text(SOURCE)
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "kwdocs", "build", "--src", str(src), "--out", str(out), "-q"],
                   check=True, capture_output=True, cwd=tmp_path)
    return versus.read_pages(out)


def test_a_missing_definition_is_listed_and_a_different_sentence_counted(tmp_path: Path):
    pages = _built(tmp_path)
    tool = [
        versus.Entity("shapes.py", "Square", "class", versus.TYPES, "A square, of one side.", 4),
        versus.Entity("shapes.py", "Square.area", "method", versus.CALLABLES, "Area of the square.", 13),
        # the tool reads another sentence than the file's docstring
        versus.Entity("shapes.py", "perimeter", "function", versus.CALLABLES, "Four times the side.", 18),
        # a definition the page does not have
        versus.Entity("shapes.py", "Circle", "class", versus.TYPES, "A circle.", 30),
        # shown, but as a class, not a function: not the same kind family
        versus.Entity("shapes.py", "Square", "function", versus.CALLABLES, "A square, of one side.", 4),
    ]
    outcome = versus.compare(tool, pages)
    assert (outcome.entities, outcome.shown, outcome.same) == (5, 3, 2)
    misses = {(entity.name, entity.kind): why for entity, why in outcome.misses}
    assert misses[("Circle", "class")] == "not shown"
    assert misses[("Square", "function")] == "not shown"
    assert misses[("perimeter", "function")].startswith("says: the perimeter of a square")


def test_escaped_markdown_and_paragraphs_split_per_line_are_caught():
    page = versus.read_page(
        '## Detailed Analysis\n\n'
        '- <a id="l4-class-square"></a>class **`Square`** ([line 4](shapes.py#L4))\n\n'
        '  A square.\n\n  \\*\\*Parameters:\\*\\*\n\n'
        '  - <a id="l9-method-area"></a>method **`area`** ([line 9](shapes.py#L9))\n\n'
        '    Area of the square, in the units the caller\n\n    chose.\n\n'
        '- <a id="l12-function-side"></a>function **`side`** ([line 12](shapes.py#L12))\n\n'
        '  One side, as `\\*\\*` in code, [a link](x.md) and *emphasis*.\n\n## Dependencies\n', "shapes.py")
    assert [(d.name, d.kind, d.parents) for d in page] == [("Square", "class", ()), ("area", "method", ("Square",)),
                                                           ("side", "function", ())]
    assert versus.rendering_problem(page[0].doc) == "escaped Markdown"
    assert versus.rendering_problem(page[1].doc) == "split per line"
    assert versus.rendering_problem(page[2].doc) == ""
    # code in the tool's doc that the page runs into its prose
    docstring = "Use it so:\n\n        x = 1\n        y = 2\n\n    and so on.\n    "
    assert versus.rendering_problem("Use it so: x = 1 y = 2\n\nAnd so on.", docstring) == "code run into the text"
    assert versus.rendering_problem("Use it so:\n\n```\nx = 1\ny = 2\n```\n\nAnd so on.", docstring) == ""


def test_what_the_tools_doc_shows_literally_is_not_escaped_markdown():
    """An unpaired backtick and a ``[a][b]`` naming no link are literal text in rustdoc and pdoc:
    the page escaping them renders them as the tool does; a link or footnote escaped does not."""
    tool = "The default (i.e. `multiple(false)) throws.\n\n  [scheme] [ host ][port]\n\n[^1]: a note."
    assert versus.rendering_problem("The default (i.e. \\`multiple(false)) throws.", tool) == ""
    assert versus.rendering_problem("\\[scheme\\] \\[ host \\]\\[port\\]", tool) == ""
    assert versus.rendering_problem("\\[^1\\]: a note.", tool) == "escaped Markdown"
    assert versus.rendering_problem("\\[a\\]\\[b\\]", "[a][b]\n\n[b]: https://x.org") == "escaped Markdown"


def test_an_indented_list_shown_as_a_list_is_no_code_run_into_the_text():
    """reST reads an indented bullet list as a list in a quote (pdoc as code): a page listing each
    item on its own is not running code into its prose; the same items joined into a line are."""
    tool = "HTTP status codes.\n\nFrom these RFCs:\n\n    * RFC 7231: HTTP/1.1\n    * RFC 6585: More codes\n"
    listed = "HTTP status codes.\n\nFrom these RFCs:\n\n- RFC 7231: HTTP/1.1\n- RFC 6585: More codes"
    assert versus.rendering_problem(listed, tool) == ""
    joined = "HTTP status codes.\n\nFrom these RFCs: RFC 7231: HTTP/1.1 RFC 6585: More codes"
    assert versus.rendering_problem(joined, tool) == "code run into the text"


def test_the_page_of_a_markdown_docstring_is_measured_as_pdoc_would_show_it(tmp_path: Path):
    """The class docstring's Markdown (bold, a bullet wrapped over two lines) reads well on the
    page kwdocs writes today; a page that escaped it is caught (the test above)."""
    pages = _built(tmp_path)
    doc = versus.Entity("shapes.py", "Square", "class", versus.TYPES, SOURCE.split('"""')[3], 4)
    outcome = versus.compare([doc], pages)
    assert (outcome.shown, outcome.same, outcome.rendered) == (1, 1, 1), outcome.misses


def test_first_sentences_leave_markup_out():
    assert versus.first_sentence("Send a :class:`~httpx.Request`. Then wait.") == ("send", "a", "request")
    assert versus.first_sentence("Send a [`Request`](x.md#l3). Then") == ("send", "a", "request")
    assert versus.first_sentence("Parse {@link ZodType} input.\n@param x") == ("parse", "zodtype", "input")


def test_go_doc_output_is_read_into_entities():
    text = ("package shapes\n\nFUNCTIONS\n\nfunc Area(side int) int\n    Area is the area of a square.\n\n"
            "TYPES\n\ntype Square struct {\n\tSide int\n}\n    Square is a square.\n\n"
            "func (s *Square) Grow(by int)\n    Grow makes it larger.\n\n")
    found = {(e.name, e.kind, versus.first_sentence(e.doc)) for e in versus.godoc_entities(text, "")}
    assert found == {("Area", "function", ("area", "is", "the", "area", "of", "a", "square")),
                     ("Square", "type", ("square", "is", "a", "square")),
                     ("Square.Grow", "method", ("grow", "makes", "it", "larger"))}


def test_marks_a_rendered_tool_doc_shows_as_written_are_no_escaped_markdown():
    """Doxygen's XML is its rendering: a ``[val1*][holder]`` left in it is text there, so the page
    showing it escaped renders it as the tool does; in a tool doc that is source (pdoc's
    docstring), the same marks are markup the page should have rendered."""
    page = "Simple layout, i.e. \\[val1\\*\\]\\[holder\\]. It is \\*always\\* so."
    tool = "Simple layout, i.e. [val1*][holder]. It is always so."
    assert versus.rendering_problem(page, tool, rendered=True) == "escaped Markdown"   # ``*always*`` was markup
    assert versus.rendering_problem(page.replace("\\*always\\*", "*always*"), tool, rendered=True) == ""
    assert versus.rendering_problem(page.replace("\\*always\\*", "*always*"), tool.replace("[holder]", "[holder](x)")
                                    ) == "escaped Markdown"


def test_a_doxygen_list_is_not_part_of_the_paragraph_before_it():
    """``/// Const member function selector\\n///  - regular: ...``: Doxygen's XML nests the list in the
    paragraph; its HTML shows it as a list after the sentence, so the first sentence ends before it."""
    xml = versus.ET.fromstring(
        "<detaileddescription><para>Const member function selector for <ref>overload_cast</ref><itemizedlist>"
        "<listitem><para>regular: static_cast&lt;R (C::*)(A) const&gt;(&amp;C::f)</para></listitem>"
        "</itemizedlist></para></detaileddescription>")
    text = versus._xml_text(xml)
    assert versus.first_sentence(text) == ("const", "member", "function", "selector", "for", "overload", "cast")
    assert "regular: static_cast" in text


def test_a_typescript_override_without_its_own_comment_is_not_counted(tmp_path: Path):
    """TypeDoc shows ``Object.toString``'s comment on an ``override toString()`` with none of its
    own, and records no "overwrites" for it: not a comment the file has, so not counted."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "error.ts").write_text("export class E extends Error {\n  override toString() {\n"
                                               "    return '';\n  }\n  /** The issues. */\n"
                                               "  override get message() {\n    return '';\n  }\n}\n")
    said = {"summary": [{"kind": "text", "text": "Returns a string representation of an object."}]}
    own = {"summary": [{"kind": "text", "text": "The issues."}]}

    def member(name: str, line: int, comment: dict) -> dict:
        return {"name": name, "kind": 2048, "sources": [{"fileName": "src/error.ts", "line": line}],
                "signatures": [{"comment": comment}]}

    project = {"children": [{"name": "E", "kind": 128, "sources": [{"fileName": "src/error.ts", "line": 1}],
                             "children": [member("toString", 2, said), member("message", 6, own)]}]}
    docs = {entity.name: entity.doc for entity in versus.typedoc_entities(tmp_path, project)}
    assert docs == {"E": "", "E.toString": "", "E.message": "The issues."}
