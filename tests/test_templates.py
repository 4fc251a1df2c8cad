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
