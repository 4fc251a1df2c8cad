"""The site's file pages are made from the page models (the HTML format), not from the written Markdown."""
from __future__ import annotations

import re
import shutil

import cmarkgfm
from hypothesis import example, given, settings, strategies as st

from kwdocs.site import html
from tests.conftest import REPOSITORY, run_kwdocs

SHAPES = ('import os\n\n\nclass Shape:\n    """A <b>shape</b> & its `area`."""\n\n'
          '    def area(self, r: int) -> float:\n        """Area of ``r``.\n\n        Example::\n\n'
          '            >>> Shape().area(1)\n        """\n        return helper(r)\n\n\n'
          'def helper(r):\n    return 3.14 * r * r  # Shape here is a comment\n')


def test_file_pages_are_rendered_from_their_models_without_parsing_markdown(tmp_path, monkeypatch):
    convert = cmarkgfm.markdown_to_html_with_extensions

    def no_whole_page(text, *args, **kwargs):
        assert not text.lstrip().startswith(("# Documentation:", "# Keyword Index:")), "a file page was parsed"
        return convert(text, *args, **kwargs)

    monkeypatch.setattr(cmarkgfm, "markdown_to_html_with_extensions", no_whole_page)
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "shapes.py").write_text(SHAPES)
    assert run_kwdocs("build", "--src", str(tree), "-q", "--html") == 0
    site = tree / "kwdocs-out" / "site" / "pkg"
    docs = (site / "shapes.py_docs.html").read_text()
    article = docs[docs.index("<article"):docs.index("</article>")]
    assert "<b>" not in article and "&lt;b&gt;shape&lt;/b&gt;" in article        # the docstring stays text
    for heading in ("file-metadata", "original-source", "detailed-analysis", "dependencies", "cross-references"):
        assert f'<h2 id="{heading}">' in article and f'<a href="#{heading}">' in docs   # its line in the contents
    # every "(line N)" of a definition or an import is a link to its source line
    assert not re.search(r"\(line \d+\)", re.sub(r"<a [^>]*>line \d+</a>", "", article))
    assert '<code>area</code></strong> <code>(self, r: int) -&gt; float</code> (<a href="#L7">line 7</a>)' in article
    assert '<a href="./shapes.py_kw.html"><code>shapes.py</code> keywords</a>' in article   # names, not page files
    kw = (site / "shapes.py_kw.html").read_text()
    assert '<a href="./shapes.py_docs.html#l4-class-shape">class, line 4</a>' in kw   # the script adds "source"
    assert '<a href="../../../pkg/shapes.py"><code>pkg/shapes.py</code></a>' in kw   # one more level up


def test_names_link_from_the_source_to_their_definitions(tmp_path):
    """The model's ``source_names`` (made by the link step) link the source's identifiers: an
    imported class to its line on its own file's page, the file's own definitions to their
    entries in Detailed Analysis (whose "line N" leads back); names in strings and comments stay text."""
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "base.py").write_text('"""Base."""\n\n\nclass Module:\n    pass\n')
    (tree / "pkg" / "shapes.py").write_text(SHAPES.replace("import os\n", "from pkg.base import Module\n")
                                            .replace("class Shape:", "class Shape(Module):"))
    assert run_kwdocs("build", "--src", str(tree), "-q", "--html") == 0
    docs = (tree / "kwdocs-out" / "site" / "pkg" / "shapes.py_docs.html").read_text()
    source = re.search(r'<pre class="kwdocs-numbered" data-lines="\d+"><code>(.*?)</code>', docs, re.DOTALL)
    lines = dict(enumerate(source.group(1).split("\n"), 1))     # the script anchors each line
    assert '<a href="./base.py_docs.html#L4">Module</a>' in lines[1]          # the import
    assert '<a href="./base.py_docs.html#L4">Module</a>' in lines[4]          # class Shape(Module):
    assert '<a href="#l4-class-shape">Shape</a>' in lines[4]
    assert '<a href="#l17-function-helper">helper</a>(r)' in lines[14]
    assert '<a id="l17-function-helper"></a>' in docs
    assert "<a " not in lines[18].partition("#")[2] and "<a " not in lines[5]     # comment, docstring
    base = (tree / "kwdocs-out" / "site" / "pkg" / "base.py_docs.html").read_text()
    assert 'used in <a href="./shapes.py_docs.html#L1"><code>pkg/shapes.py</code></a> line 1' in base


def test_a_terminal_sees_progress_while_the_pages_and_the_site_are_made(tmp_path, monkeypatch, capsys):
    from kwdocs.engine import summary

    ticks = iter(range(10**6))
    monkeypatch.setattr(summary, "progress_wanted", lambda stream: True)
    monkeypatch.setattr(summary.time, "monotonic", lambda: float(next(ticks)))   # every line drawn
    tree = tmp_path / "tree"
    for folder in ("a", "b", "c"):
        (tree / folder).mkdir(parents=True)
        (tree / folder / "m.py").write_text(f"def {folder}():\n    return 1\n")
    assert run_kwdocs("build", "--src", str(tree), "--html", "-j", "1") == 0
    lines = capsys.readouterr().err.replace("\x1b[K", "").split("\r")
    assert any(line.startswith("kwdocs: 3/3 files") for line in lines), lines
    rendered = [line for line in lines if line.startswith("kwdocs: pages of ")]
    assert rendered and rendered[-1].startswith("kwdocs: pages of 3/3 files"), lines


def test_folder_and_keyword_pages_are_rendered_from_their_models_without_parsing_markdown(tmp_path, monkeypatch):
    """The site's folder index, folder documentation and keyword index come from the models of
    their Markdown pages, in the same step, never from the written Markdown; names read as
    written, numbers as on the Markdown pages, links lead to the site's pages."""
    convert = cmarkgfm.markdown_to_html_with_extensions

    def no_whole_page(text, *args, **kwargs):
        assert not text.lstrip().startswith(("# Folder Index", "# Folder Documentation", "# Keyword Index of")), \
            "an index page was parsed"
        return convert(text, *args, **kwargs)

    monkeypatch.setattr(cmarkgfm, "markdown_to_html_with_extensions", no_whole_page)
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text('"""Shapes and ``area`` helpers: <b>not bold</b>."""\n')
    (tree / "pkg" / "shapes.py").write_text(SHAPES)
    (tree / "pkg" / "a|b *c*.py").write_text("def odd_one():\n    return 1\n")
    assert run_kwdocs("build", "--src", str(tree), "-q", "--html") == 0
    site = tree / "kwdocs-out" / "site"
    index = (site / "pkg" / "index.html").read_text()
    assert '<a href="./a%7Cb%20%2Ac%2A.py_docs.html"><code>a|b *c*.py</code></a>' in index   # as written, linked
    assert re.search(r'<a href="\./shapes\.py_docs\.html"><code>shapes\.py</code></a> '
                     r'\(<a href="\./shapes\.py_kw\.html">keywords</a>\)</td><td>Python Source</td>', index)
    assert '<h1 id="folder-index-pkg">Folder Index: <code>pkg/</code></h1>' in index
    doc = (site / "pkg" / "doc.html").read_text()
    assert "<b>" not in doc and "&lt;b&gt;not bold&lt;/b&gt;" in doc and "<code>area</code>" in doc
    assert re.search(r'class <a href="\./shapes\.py_docs\.html#l4-class-shape"><code>Shape</code></a>', doc)
    keywords = (site / "keywords.html").read_text()
    assert re.search(r'<tr><td><code>odd_one</code></td><td>function in <a href="[^"]+_docs\.html#[^"]+">'
                     r'<code>pkg/a\|b \*c\*\.py:1</code></a></td></tr>', keywords)
    md_index = (tree / "kwdocs-out" / "pkg" / "index.md").read_text()
    assert "| 18 |" in md_index and "<td>18</td>" in index          # shapes.py's lines, as on the Markdown page


def test_an_edit_renders_again_only_the_keyword_rows_it_changes_and_the_page_is_a_clean_builds(tmp_path, monkeypatch):
    from kwdocs.site import html

    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "shapes.py").write_text(SHAPES)
    (tree / "pkg" / "more.py").write_text("".join(f"def name_{n}():\n    return {n}\n\n\n" for n in range(30)))
    assert run_kwdocs("build", "--src", str(tree), "-q", "--html") == 0
    rendered: list[str] = []
    rows = html.HtmlFormat.rows
    monkeypatch.setattr(html.HtmlFormat, "rows", lambda self, kind, models, page: (
        rendered.extend(model["name"] for model in models if kind == "keyword_row") or rows(self, kind, models, page)))
    shapes = tree / "pkg" / "shapes.py"
    shapes.write_text(shapes.read_text() + "\n\ndef added_later():\n    return 0\n")
    assert run_kwdocs("build", "--src", str(tree), "-q", "--html") == 0
    assert rendered == ["added_later"]           # one new name: one row rendered, the others kept
    edited = (tree / "kwdocs-out" / "site" / "keywords.html").read_bytes()
    assert b"added_later" in edited and b"name_29" in edited
    assert run_kwdocs("build", "--src", str(tree), "--out", str(tmp_path / "clean"), "-q", "--html") == 0
    assert (tmp_path / "clean" / "site" / "keywords.html").read_bytes() == edited


def test_a_files_definitions_cost_its_site_page_no_template_macro_each(tmp_path, monkeypatch):
    """A large file lists hundreds of definitions in Code Structure, each with its docstring: the
    site writes them in one call, not a Jinja macro (its costliest call) per definition and per
    docstring, so the page costs about what its Markdown does."""
    import jinja2.runtime

    from kwdocs.site import html

    calls: list[str] = []
    in_docs_page = []
    call, render = jinja2.runtime.Macro.__call__, html.HtmlFormat.render

    def counted(self, *args, **kwargs):
        if in_docs_page:
            calls.append(self.name)
        return call(self, *args, **kwargs)

    def docs_page(self, kind, model, md_page):
        in_docs_page[:] = [True] if kind == "file_docs" else []
        try:
            return render(self, kind, model, md_page)
        finally:
            in_docs_page.clear()

    monkeypatch.setattr(jinja2.runtime.Macro, "__call__", counted)
    monkeypatch.setattr(html.HtmlFormat, "render", docs_page)

    def macros_for(count: int) -> int:
        tree = tmp_path / f"tree{count}"
        tree.mkdir()
        (tree / "defs.py").write_text("".join(
            f'def f{n}(x):\n    """Double ``x``.\n\n    Args:\n        x: a number.\n    """\n    return 2 * x\n\n\n'
            for n in range(count)))
        calls.clear()
        assert run_kwdocs("build", "--src", str(tree), "-q", "--html") == 0
        page = (tree / "kwdocs-out" / "site" / "defs.py_docs.html").read_text()
        assert all(f"<strong><code>f{n}</code></strong>" in page for n in range(count))
        assert page.count("<li><code>x</code>: a number.</li>") == count      # each docstring's Args
        return len(calls)

    assert macros_for(40) == macros_for(2), calls


# the Markdown of the pages' sentences, and what would break a shortcut around cmark and nh3
_SENTENCE_PIECES = st.sampled_from(["Uses", "word", "x", "1", "2.", "1)", " ", "  ", "\t", "\n", "`", "``", "**", "*",
                                    "_", "__", "\\", "\\_", "\\*", "\\`", "\\<", "&", "&lt;", "&gt;", "&amp;",
                                    "&quot;", "&#39;", "&nbsp;", "<", ">", "<b>", "[", "]", "](x)", "!", "~", "~~",
                                    "#", "-", "+", "=", "(", ")", ".", ",", ":", '"', "'", "é", "\u00a0", "\u3000",
                                    "\x00", "\x0c", "\r", "line 4", "C++", "__init__"])


@settings(max_examples=1500, deadline=None)
@given(st.lists(_SENTENCE_PIECES, max_size=16).map("".join))
@example("Uses **type hints** (`__init__` at line 119, `_done` at line 167 and 37 more).")
@example("Defines **`nn.Module` subclasses** (`FakeRootModule` at line 351).")
@example("Lists its public API in **`__all__`**.")
@example("Defines `group_norm`; `group_norm`: aten::group\\_norm(Tensor? bias=None) -&gt; Tensor")
@example("**Caches** results (`_step_logger` at line 325).")
@example("Uses **C++ templates** (`template` at line 48).")
@example("**`a``b`**")
@example("`` a ``")
def test_a_sentence_reads_the_same_whether_or_not_cmark_and_nh3_convert_it(text):
    simple = html._simple_inline_html(text)
    if simple is not None:
        assert simple == html._inline_html(text, "")


def test_most_sentences_of_kwdocs_own_pages_skip_cmark_and_nh3(tmp_path, monkeypatch):
    """The shortcut is taken, not only right when taken: the sentences of the pages of kwdocs' own package."""
    shortcut = html._simple_inline_html
    tried: dict[str, str | None] = {}

    def recorded(text):
        tried[text] = shortcut(text)
        return tried[text]

    monkeypatch.setattr(html, "_simple_inline_html", recorded)
    html._plain_inline_html.cache_clear()
    src = tmp_path / "src"
    shutil.copytree(REPOSITORY / "kwdocs", src / "kwdocs")
    assert run_kwdocs("build", "--src", str(src), "--out", str(tmp_path / "out"), "-q", "--html") == 0
    taken = {text: made for text, made in tried.items() if made is not None}
    assert len(taken) > 0.9 * len(tried) > 100, [text for text, made in tried.items() if made is None]
    assert all(made == html._inline_html(text, "") for text, made in taken.items())


def test_a_templates_call_of_a_helper_is_a_python_call_whatever_its_arguments(tmp_path):
    """A helper called from a site template (hundreds of times a page) is called as Python calls it,
    with no wrapper of the template engine's around each call; a call Python could not write so
    (a named argument that is a Python keyword, ``*args``, ``**kwargs``) still gets its arguments."""
    from kwdocs.site.html import _environment

    environment = _environment(None)
    environment.globals["show"] = lambda *args, **kwargs: f"{args}{sorted(kwargs.items())}"
    source = ('{{ show() }}|{{ show(1, "<a>") }}|{{ show(1, x=2) }}|{{ show(*[3, 4], y=5) }}|'
              '{{ show(**{"z": 6}) }}|{{ show(1, class=7) }}')
    code = environment.compile(source, raw=True)
    assert code.count("environment.direct(") == 3      # the last three only
    assert environment.from_string(source).render() == (
        "()[]|(1, &#39;&lt;a&gt;&#39;)[]|(1,)[(&#39;x&#39;, 2)]|(3, 4)[(&#39;y&#39;, 5)]|()[(&#39;z&#39;, 6)]"
        "|(1,)[(&#39;class&#39;, 7)]")
