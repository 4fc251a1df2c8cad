"""A file's page model does each piece of work once: one name resolver per page, a doc or
signature repeated in one scope read once, and signatures and docstrings read as before."""
from __future__ import annotations

import textwrap

from hypothesis import example, given, settings, strategies as st

from kwdocs.extract import extract_text
from kwdocs.pages import docstrings, model

MODULE = textwrap.dedent('''\
    """Shapes."""
    from typing import Optional

    __all__ = ["Shape", "area"]


    class Shape:
        def scale(self, by: "Shape") -> Shape:
            """Scale by another `Shape`."""

        def grow(self, by: "Shape") -> Shape:
            """Scale by another `Shape`."""


    def area(shape: Optional[Shape] = None) -> float:
        """The area of a `Shape`."""
    ''')


def _facts(path: str, text: str) -> dict:
    found, _ = extract_text(path, text)
    return {"path": path, "language": "python", "type_label": "Python", "size": len(text), "sha256": "",
            "lines": text.count("\n"), **found}


def _docs_model(facts: dict) -> dict:
    return model.file_docs_model(facts, project="p", related={"files": [], "more": 0}, links=None,
                                 view=model.SourceView(None), src_link="")


def test_a_page_makes_one_name_resolver_for_its_docs_and_its_all(monkeypatch):
    made = []
    real = model._resolver

    def counted(*args, **kwargs):
        made.append(args[0]["path"])
        return real(*args, **kwargs)

    monkeypatch.setattr(model, "_resolver", counted)
    page = _docs_model(_facts("shapes.py", MODULE))
    assert made == ["shapes.py"]
    assert [row["link"] for row in page["api"]] == ["#l7-class-shape", "#l15-function-area"]


def test_the_summary_for_front_matter_is_made_only_for_pages_that_have_front_matter(tmp_path, monkeypatch):
    """The docs page's front matter describes the file by its summary sentence; without front
    matter (the default) that sentence is not worked out."""
    from kwdocs.config import load_config
    from kwdocs.pages import compose
    from kwdocs.pages.render import Renderer

    summarised: list[str] = []
    real = model.summary_sentence

    def counted(text: str, *args, **kwargs) -> str:
        summarised.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(model, "summary_sentence", counted)
    facts = _facts("shapes.py", MODULE)
    related = {"files": [], "more": 0}
    for front_matter in (False, True):
        summarised.clear()
        config = load_config(tmp_path, overrides={"front_matter": front_matter})
        pages = compose.file_pages(config, Renderer(), facts, None, related, model.SourceView(None))
        assert pages["shapes.py_docs.md"].startswith("---\n" if front_matter else "# Documentation:")
        assert summarised == (["Shapes."] if front_matter else [])


def test_a_doc_and_a_signature_repeated_in_one_class_are_read_once(monkeypatch):
    read: list[str] = []
    walked: list[str] = []
    real_doc, real_spans = docstrings.python_doc, docstrings.signature_spans
    monkeypatch.setitem(docstrings.PARSERS, "python_doc",
                        lambda text, resolve: read.append(text) or real_doc(text, resolve))
    monkeypatch.setattr(docstrings, "signature_spans",
                        lambda signature, resolve: walked.append(signature) or real_spans(signature, resolve))
    page = _docs_model(_facts("shapes.py", MODULE))
    scale, grow = (next(entry for entry in page["structure"] if entry["name"] == name) for name in ("scale", "grow"))
    assert read.count("Scale by another `Shape`.") == 1
    assert scale["doc"] == grow["doc"] and scale["doc"]["summary"][1]["link"] == "#l7-class-shape"
    assert walked.count(scale["signature"]) == 1 and scale["signature"] == grow["signature"]
    assert scale["signature_spans"] == grow["signature_spans"] == [
        {"t": "code", "v": scale["signature"].partition("-> ")[0] + "-> ", "link": ""},
        {"t": "code", "v": "Shape", "link": "#l7-class-shape"}]


def _walked(signature: str, resolve) -> list[dict] | None:
    """``signature_spans`` as it read a signature before, one character at a time."""
    if not any(resolve(name) for name in set(docstrings._IDENTIFIER.findall(signature))):
        return None
    pieces: list[dict] = []
    position = depth = index = 0
    linked = annotation = False
    while index < len(signature):
        char = signature[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == ":" and depth == 1 and not annotation:
            annotation = True
        elif char == "-" and signature.startswith("->", index) and depth == 0:
            annotation = True
            index += 1
        elif (char == "=" or char == ",") and depth == 1:
            annotation = False
        elif annotation and ((char.isascii() and char.isalpha()) or char == "_") and (index == 0 or not (
                signature[index - 1].isalnum() or signature[index - 1] in "_.'\"")):
            match = docstrings._IDENTIFIER.match(signature, index)
            assert match is not None
            name = match.group(0).rstrip(".")
            link = resolve(name)
            if link:
                if index > position:
                    pieces.append({"t": "code", "v": signature[position:index], "link": ""})
                pieces.append({"t": "code", "v": name, "link": link})
                linked = True
                position = index + len(name)
            index += len(name)
            continue
        index += 1
    if not linked:
        return None
    if position < len(signature):
        pieces.append({"t": "code", "v": signature[position:], "link": ""})
    return pieces


def _resolve(name: str) -> str:
    return f"#{name}" if name in {"T", "Tensor", "a.b", "x", "Optional", "aT"} else ""


_SIGNATURE_PIECES = st.sampled_from(["(", ")", "[", "]", "{", "}", ":", "=", ",", "->", "-", ">", " ", ".", "'",
                                     '"', "_", "1", "a", "T", "x", "é", "Tensor", "Optional", "a.b", "x.", "self"])


@settings(max_examples=2000, deadline=None)
@given(st.lists(_SIGNATURE_PIECES, max_size=30).map("".join))
@example("def f(x: Tensor, y: 'Tensor' = None) -> Optional[Tensor]")
@example("def f(a='x:y', b: T = {1: 2}) -> a.b.")
@example("def f(x: Dict[str, T], *args: T, **kwargs: 'T x') -> T")
def test_a_signature_is_linked_as_the_character_walk_linked_it(signature):
    assert docstrings.signature_spans(signature, _resolve) == _walked(signature, _resolve)


_DOC_PIECES = st.sampled_from(["word", " ", "\n", "\n\n", "**", "*", "`", "``", "```", "~~~", "](", "][", "[0]",
                               "[0]: http://x", ":class:`T`", "::", "..", ".. note::", "---", "(", ")", "[", "]"])


@settings(max_examples=1000, deadline=None)
@given(st.lists(_DOC_PIECES, max_size=20).map("".join))
@example("**Parameters:**\n\n* **auth** - a [link](http://x)")
@example("See [the docs][0].\n\n[0]: http://x")
@example("Uses ``literal`` and **strong**.")
def test_a_docstring_is_markdown_exactly_when_it_has_markdowns_marks_and_not_rests(text):
    markdown = docstrings._MARKDOWN_MARKS.search(text) is not None or any(
        use["label"].lower() in {found["label"].lower() for found in docstrings._REFERENCE_DEFINITION.finditer(text)}
        for use in docstrings._REFERENCE_USE.finditer(text))
    # a reST title underlined with ``~`` is no Markdown fence (``_rest_tilde_title``)
    rest = docstrings._REST_MARKS.search(text) is not None or docstrings._rest_tilde_title(text)
    assert docstrings.is_markdown(text) == (markdown and not rest)
