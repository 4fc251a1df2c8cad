"""The template environment: page models (dicts) read by ``item.name``, compiled to key lookups."""
from __future__ import annotations

from pathlib import Path

import jinja2
import pytest

from kwdocs.pages.render import Renderer


def _render(tmp_path: Path, source: str, model: dict) -> str:
    (tmp_path / "t.md.j2").write_text(source)
    return Renderer(override=tmp_path).render("t.md.j2", model)


def test_model_keys_win_over_dict_methods_and_objects_keep_their_attributes(tmp_path: Path):
    class Point:
        x = 3

    model = {"outer": {"inner": {"items": "key, not dict.items", "name": "n"}}, "point": Point(),
             "rows": [{"keys": 1}, {"keys": 2}]}
    text = _render(tmp_path, "{{ outer.inner.items }}|{{ outer.inner.name }}|{{ point.x }}|"
                             "{% for row in rows %}{{ row.keys }}{{ loop.index }}{% endfor %}|{{ 'ab'.upper() }}",
                   model)
    assert text == "key, not dict.items|n|3|1122|AB"


def test_a_missing_model_key_is_an_error_not_an_empty_string(tmp_path: Path):
    with pytest.raises(jinja2.UndefinedError):
        _render(tmp_path, "{{ item.missing }}", {"item": {"name": "x"}})


def test_an_override_writes_doc_spans_and_name_lists_with_the_shipped_filters(tmp_path: Path):
    # the shipped docs page's filters: a doc's spans (escaped text, linked code, marks, safe
    # links) and a comma-separated list of code spans, a prefix before each
    spans = [{"t": "text", "v": "Wraps *"}, {"t": "code", "v": "Linear", "link": "#l3-class-linear"},
             {"t": "strong", "v": ""}, {"t": "text", "v": "fast"}, {"t": "strong", "v": ""},
             {"t": "text", "v": " (see "}, {"t": "link", "v": "docs", "link": "https://x.org/a"},
             {"t": "text", "v": ")"}, {"t": "code", "v": "a`b", "link": ""}]
    text = _render(tmp_path, "{{ doc | spans }}|{{ names | code_list('@') }}|{{ names | code_list }}|"
                             "{{ [] | code_list }}", {"doc": spans, "names": ["cache", "x`y"]})
    assert text == ("Wraps \\*[`Linear`](#l3-class-linear)**fast** (see [docs](https://x.org/a))``a`b``|"
                    "`@cache`, ``@x`y``|`cache`, ``x`y``|")


def test_blocks_and_a_root_render_one_piece_each_and_as_stock_jinja_renders_them(tmp_path: Path):
    # kwdocs' code generator gathers a block's (and an unextended root's) output into a list
    # yielded once; what a page says must not change: every construct an override may use
    templates = {
        "base.md.j2": "{% block head %}H{{ title }}{% endblock %}|{% for s in sections %}"
                      "[{{ self[s]() }}]{% endfor %}|{% block a %}A{% endblock %}{% block b %}{% endblock %}",
        "lib.md.j2": "{% macro item(x) %}<{{ x }}>{% endmacro %}"
                     "{% macro wrap(x) %}<{{ x }}{{ caller() }}>{% endmacro %}",
        "part.md.j2": "inc{{ title }}{% if title %}!{% endif %}",
        "child.md.j2": "{% extends 'base.md.j2' %}{% import 'lib.md.j2' as lib %}"
                       "{% block a %}{{ super() }}a{% for r in rows %}{{ loop.index }}{{ lib.item(r) }}"
                       "{% call lib.wrap(r) %}c{% endcall %}{% endfor %}{% set t %}s{{ title }}{% endset %}{{ t }}"
                       "{% filter upper %}f{{ title }}{% endfilter %}{% include 'part.md.j2' %}{% endblock %}"
                       "{% block b %}{% set n = namespace(k=0) %}{% for r in rows if r %}{% set n.k = n.k + 1 %}"
                       "{% endfor %}{{ n.k }}{% block inner %}I{% endblock %}{% endblock %}",
        "flat.md.j2": "{% from 'lib.md.j2' import item %}{{ item(title) }}{% for r in rows %}{{ r }},{% endfor %}"
                      "{% include 'part.md.j2' %}",
    }
    for name, source in templates.items():
        (tmp_path / name).write_text(source)
    model = {"title": "T", "rows": ["x", "", "y"], "sections": ["a", "inner"]}
    stock = jinja2.Environment(loader=jinja2.FileSystemLoader(str(tmp_path)), undefined=jinja2.StrictUndefined,
                               keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    renderer = Renderer(override=tmp_path)
    for name in ("child.md.j2", "flat.md.j2"):
        assert renderer.render(name, model) == stock.get_template(name).render(model)
    for name in ("child.md.j2", "flat.md.j2"):
        template = renderer.env.get_template(name)
        assert list(template.root_render_func(template.new_context(model))) == [renderer.render(name, model)]


def test_a_keyword_row_escapes_a_bar_in_every_cell_code_span():
    # GFM ends a table cell at a bar even inside a code span: C++'s operator| and a path with one
    row = Renderer().macro("keyword_row.md.j2", "row")
    text = str(row("operator|", [("function", "operator|", "a|b.h", 3, "a_b.h.md#l3", True),
                                 ("method", "X::operator|", "c.h", 9, "c.h.md#l9", False)]))
    assert text == ("| `operator\\|` | function in [`a\\|b.h:3`](a_b.h.md#l3); "
                    "method `X::operator\\|` in [`c.h:9`](c.h.md#l9) |")
