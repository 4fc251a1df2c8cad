"""The HTML site without a browser: conversion, links, sanitizing, CSP, incremental rendering."""
from __future__ import annotations

import posixpath
import re
from html import unescape as html_unescape
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kwdocs.site import html as site
from kwdocs.config import load_config
from tests.conftest import changed_files, run_kwdocs, snapshot
from tests.output_checks import keyword_search


class Collector(HTMLParser):
    """Every start tag with its attributes, and the text of <script> elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if attributes.get("id"):
            self.ids.add(attributes["id"])


def parse(text: str) -> Collector:
    collector = Collector()
    collector.feed(text)
    return collector


def assert_harmless(fragment: str) -> None:
    """What a sanitized body may hold: allowed tags, no handlers, no script URLs, no reserved ids."""
    for tag, attributes in parse(fragment).tags:
        assert tag in site.ALLOWED_TAGS, (tag, fragment)
        for name, value in attributes.items():
            assert not name.startswith("on"), (tag, name, fragment)
            # data-lines: the numbered source's line count, written by kwdocs, never kept from content
            assert name in site.ALLOWED_ATTRIBUTES.get(tag, set()) | {"rel"} | (
                {"data-lines"} if tag == "pre" else set()), (tag, name)
            if name == "href" and value:
                scheme = urlsplit(value).scheme.lower()
                assert scheme in ("", "http", "https", "mailto"), value
            if name == "id":
                assert not value.lower().startswith("kwdocs"), value


# ---------------------------------------------------------------- links

@pytest.mark.parametrize("page, href, expected", [
    ("a/b/c.py_kw.md", "./c.py_docs.md#l9-class-circle", "./c.py_docs.html#l9-class-circle"),
    ("a/b/c.py_docs.md", "../../index.md", "../../index.html"),
    ("a/b/index.md", "./sub%20dir/index.md", "./sub%20dir/index.html"),
    ("keywords.md", "./keywords-A.md", "./keywords-A.html"),
    ("a/c.py_docs.md", "#original-source", "#original-source"),
    ("a/c.py_docs.md", "https://example.org/x.md", "https://example.org/x.md"),
    # links to the repository's files leave the Markdown tree: one more level up from the site
    ("a/b/c.py_kw.md", "../../../a/b/c.py", "../../../../a/b/c.py"),
    ("README.md_kw.md", "../README.md", "../../README.md"),
    ("a/b/c.py_docs.md", "../../../a/b/my file.mdx", "../../../../a/b/my file.mdx"),
    ("a/c.py_docs.md", "mailto:someone@example.org", "mailto:someone@example.org"),
    ("a/c.py_docs.md", "?q=x", "?q=x"),
])
def test_links_between_pages_point_at_html_pages(page, href, expected):
    assert site.site_href(page, href) == expected


def test_html_page_paths_mirror_the_markdown_tree():
    assert site.html_page("a/b/c.py_docs.md") == "a/b/c.py_docs.html"
    assert site.html_page("index.md") == "index.html"
    assert site.root_prefix("index.html") == "./"
    assert site.root_prefix("a/b/c.html") == "../../"


# ---------------------------------------------------------------- conversion

PAGE = """# Documentation: `pkg/mod.py`

## Original Source

```python
def area(radius):
    return 3.14 * radius ** 2
```

## Detailed Analysis

- <a id="l1-function-area"></a>function **`area`** (line 1)

| File | Size |
| --- | ---: |
| [`mod.py`](./mod.py_docs.md) | 10 B |
"""


def test_code_is_highlighted_headings_anchored_tables_aligned():
    body = site.markdown_to_html(PAGE, "pkg/mod.py_docs.md")
    assert '<div class="codehilite">' in body
    assert '<i class=k>def</i>' in body                                # Pygments' token classes
    assert 'id="original-source"' in body and 'id="detailed-analysis"' in body
    assert '<a id="l1-function-area"' in body                          # the definition anchor survives
    assert 'align="right"' in body and "style=" not in body            # CSP forbids inline style
    assert 'href="./mod.py_docs.html"' in body
    assert body == site.markdown_to_html(PAGE, "pkg/mod.py_docs.md")   # stable: same anchors every time
    assert_harmless(body)


HOSTILE = """# Heading <script>alert(1)</script>

<script>alert(2)</script>
<img src=x onerror=alert(3)>
<iframe src="javascript:alert(4)"></iframe>
<svg onload=alert(5)><circle/></svg>
<div onclick="alert(6)" style="position:fixed">raw block</div>
<style>body { display: none }</style>
<form action="https://evil.example"><input name=q></form>
<object data="x.swf"></object><embed src="x.swf">
<base href="https://evil.example/">
<meta http-equiv="refresh" content="0;url=https://evil.example">
<a id="kwdocs-search">clobber</a> <a id="KWDOCS_INDEX">clobber</a>

[link](javascript:alert(7)) [upper](JaVaScRiPt:alert(8)) [data](data:text/html,<script>alert(9)</script>)
[spaced]( javascript:alert(10) ) <a href="&#106;avascript:alert(11)">entity</a>
![img](javascript:alert(12)) <a href="vbscript:msgbox(13)">vb</a>

- item <b onmouseover=alert(14)>bold</b>
"""


def test_hostile_markdown_keeps_no_way_to_run_script():
    body = site.markdown_to_html(HOSTILE, "evil.md_docs.md")
    assert_harmless(body)
    lowered = body.lower()
    for needle in ("<script", "<iframe", "<svg", "<style", "<form", "<object", "<embed", "<base", "<meta",
                   "<img", "javascript:", "vbscript:", "data:text", "onerror", "onclick", "onload", "style="):
        assert needle not in lowered, needle
    assert "raw block" in body and "bold" in body    # harmless text stays readable


FRAGMENTS = ["<script>", "</script>", "<img src=x onerror=alert(1)>", "javascript:alert(1)", "[a](", ")",
             "`", "```", "\n", "<a href=\"", "\">", "<", ">", "&", "&#x3C;", "\"", "'", "<svg/onload=alert(1)>",
             "<!--", "-->", "<![CDATA[", "]]>", "# ", "| a | b |\n| - | - |\n", "<a id=\"kwdocs-x\">", "x"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=30))
def test_any_mix_of_hostile_fragments_is_harmless(parts):
    assert_harmless(site.markdown_to_html("".join(parts), "a/b.py_docs.md"))


# ---------------------------------------------------------------- whole pages and the site

def build_html(tree: Path) -> int:
    return run_kwdocs("build", "--src", str(tree), "-q", "--html")


def test_pages_carry_the_csp_and_no_inline_script(golden_tree):
    assert build_html(golden_tree) == 0
    page = golden_tree / "kwdocs-out" / "site" / "geometry" / "shapes" / "circle.py_docs.html"
    text = page.read_text(encoding="utf-8")
    tags = parse(text).tags
    csp = [attrs["content"] for tag, attrs in tags if tag == "meta" and attrs.get("http-equiv") == "Content-Security-Policy"]
    # its class diagram: Mermaid's SVG styles itself inline; scripts stay the site's own files
    assert csp == [site.DIAGRAM_CSP]
    assert [part.strip() for part in csp[0].split(";") if "script-src" in part] == ["script-src 'self'"]
    plain = (golden_tree / "kwdocs-out" / "site" / "tools" / "make_shapes.py_docs.html").read_text(encoding="utf-8")
    assert f'content="{site.CSP}"' in plain and "unsafe-inline" not in site.CSP
    scripts = [attrs for tag, attrs in tags if tag == "script"]
    assert scripts and all(attrs.get("src", "").startswith("../../_kwdocs/") for attrs in scripts)
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text)
    assert not any(name.startswith("on") for _, attrs in tags for name in attrs)
    assert "<title>geometry/shapes/circle.py · documentation · tiny-geometry</title>" in text


def site_links(site_folder: Path) -> list[tuple[str, str]]:
    links = []
    for page in sorted(site_folder.rglob("*.html")):
        for tag, attrs in parse(page.read_text(encoding="utf-8")).tags:
            if tag == "a" and attrs.get("href"):
                links.append((page.relative_to(site_folder).as_posix(), attrs["href"]))
    return links


def page_ids(text: str) -> set[str]:
    """A page's ids, with the anchors its script gives the lines of its source (L1 ... Ln)."""
    lines = re.search(r'<pre class="kwdocs-numbered" data-lines="(\d+)">', text)
    return parse(text).ids | {f"L{number}" for number in range(1, int(lines.group(1)) + 1 if lines else 1)}


def test_every_link_between_pages_reaches_an_html_page_and_its_anchor(golden_tree):
    assert build_html(golden_tree) == 0
    out = golden_tree / "kwdocs-out"
    site_folder = out / "site"
    md_pages = {path.relative_to(out).as_posix() for path in out.rglob("*.md") if ".kwdocs" not in path.parts}
    html_pages = {path.relative_to(site_folder).as_posix() for path in site_folder.rglob("*.html")}
    assert html_pages == {site.html_page(page) for page in md_pages}
    ids = {page: page_ids((site_folder / page).read_text(encoding="utf-8")) for page in html_pages}
    checked = 0
    for page, href in site_links(site_folder):
        parts = urlsplit(href)
        if parts.scheme or not parts.path:
            assert not parts.fragment or parts.fragment in ids[page], (page, href)
            continue
        target = posixpath.normpath(posixpath.join(posixpath.dirname(page), unquote(parts.path)))
        if target.startswith("../"):    # a source file of the repository, seen from the site
            assert (site_folder / target).resolve().is_file(), (page, href)
            assert (site_folder / target).resolve().is_relative_to(golden_tree)
            continue
        assert not target.endswith(".md"), (page, href)
        assert target in html_pages, (page, href)
        assert not parts.fragment or parts.fragment in ids[target], (page, href)
        checked += 1
    assert checked > 200


def test_only_pages_whose_markdown_changed_are_rendered_again(golden_tree, monkeypatch):
    rendered: list[str] = []
    render = site.render_site_page
    monkeypatch.setattr(site, "render_site_page", lambda config, page, *rest: rendered.append(page) or render(config, page, *rest))
    render_model = site.HtmlFormat.render     # a file's pages, from their models
    monkeypatch.setattr(site.HtmlFormat, "render",
                        lambda self, kind, model, page: rendered.append(page) or render_model(self, kind, model, page))
    out = golden_tree / "kwdocs-out"
    assert build_html(golden_tree) == 0
    assert len(rendered) == len(list(out.rglob("*.md")))
    shards = out / "site" / "_kwdocs" / "keywords"
    before = snapshot(out)
    rendered.clear()
    assert build_html(golden_tree) == 0
    assert changed_files(before, snapshot(out)) == set() and rendered == []   # nothing changed: nothing done

    circle = golden_tree / "geometry" / "shapes" / "circle.py"
    circle.write_text(circle.read_text() + "\n# a comment changes the page, not the keywords\n")
    before = snapshot(out)
    rendered.clear()
    assert build_html(golden_tree) == 0
    changed = changed_files(before, snapshot(out))
    changed_md = {name for name in changed if name.endswith(".md")}
    changed_html = {name for name in changed if name.endswith(".html")}
    assert "geometry/shapes/circle.py_docs.md" in changed_md
    # a file's two pages are made together from its models: the other one is rendered, not written;
    # so is the keyword page of a small tree, made whole with its Markdown whenever keywords are looked at
    assert changed_md <= set(rendered) <= changed_md | {"geometry/shapes/circle.py_kw.md", "keywords.md"}
    assert changed_html == {"site/" + site.html_page(name) for name in changed_md}
    assert not {name for name in changed if name.startswith("site/_kwdocs/")}   # keywords did not change

    circle.write_text(circle.read_text() + "\ndef perimeter(radius):\n    return 2 * radius\n")
    before = snapshot(out)
    assert build_html(golden_tree) == 0
    changed = changed_files(before, snapshot(out))
    # the keyword search: only the shard of circle.py's unit changed, and holds the new keyword
    changed_shards = {name for name in changed if name.startswith("site/_kwdocs/keywords/")}
    assert len(changed_shards) == 1 and '"perimeter"' in (out / changed_shards.pop()).read_text()
    assert len(list(shards.glob("*.js"))) > 2        # a shard list, and more shards than that one
    changed_md = {name for name in changed if name.endswith(".md")}
    assert {name for name in changed if name.endswith(".html")} == {"site/" + site.html_page(n) for n in changed_md}


def test_removed_sources_lose_their_html_and_clean_removes_the_site(golden_tree):
    out = golden_tree / "kwdocs-out"
    assert build_html(golden_tree) == 0
    (golden_tree / "tools" / "make_shapes.py").unlink()
    assert build_html(golden_tree) == 0
    assert not (out / "site" / "tools").exists()
    assert "tools/make_shapes.py" not in (out / "site" / "_kwdocs" / "tree.js").read_text()
    assert (out / "site" / "geometry" / "index.html").is_file()
    (out / "notes-of-mine.txt").write_text("not kwdocs'")
    assert run_kwdocs("clean", "--src", str(golden_tree)) == 0
    assert not (out / "site").exists()
    assert (out / "notes-of-mine.txt").read_text() == "not kwdocs'"


def test_html_config_key_builds_the_site_and_is_validated(golden_tree):
    pyproject = golden_tree / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("[tool.kwdocs]\n", "[tool.kwdocs]\nhtml = true\n"))
    assert load_config(golden_tree).html is True
    assert run_kwdocs("build", "--src", str(golden_tree), "-q") == 0
    assert (golden_tree / "kwdocs-out" / "site" / "index.html").is_file()
    pyproject.write_text(pyproject.read_text().replace("html = true", 'html = "yes"'))
    assert run_kwdocs("build", "--src", str(golden_tree), "-q") == 2


def test_search_data_lists_keywords_with_kind_file_line_and_anchor(golden_tree):
    import json

    assert build_html(golden_tree) == 0
    folder = golden_tree / "kwdocs-out" / "site" / "_kwdocs"
    rows = set(keyword_search(folder.parent))
    assert ("Circle", "class", "geometry/shapes/circle.py", 9, "l9-class-circle", "Circle") in rows
    assert ("area", "method", "geometry/shapes/circle.py", 13, "l13-method-area", "Circle.area") in rows
    tree_text = (folder / "tree.js").read_text()
    tree = json.loads(tree_text[len("window.KWDOCS_TREE = "):].rstrip().rstrip(";"))
    assert "tools/make_shapes.py" in tree["files"] and "geometry/shapes" in tree["folders"]


def _line_of_anchor(page: str, number: int) -> str:
    """Line ``number`` of the numbered source, tags removed (the script anchors each line in the
    browser: tests/test_site_browser.py)."""
    found = re.search(r'<pre class="kwdocs-numbered" data-lines="(\d+)"><code>(.*?)</code>', page, re.DOTALL)
    assert found, "no numbered source"
    lines = html_unescape(re.sub(r"<[^>]+>", "", found.group(2))).split("\n")[:-1]
    assert len(lines) == int(found.group(1)) and number <= len(lines), f"no line {number}"
    return lines[number - 1]


def test_source_lines_are_numbered_anchored_and_definitions_link_to_their_line(tmp_path):
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    small = ("import os\n\n\nclass Shape:\n    \"\"\"A <shape> & 'its' \"area\".\"\"\"\n\n    def area(self, r):\n"
             "        return 3.14 * r * r if r > 0 else '<none>'\n")
    (tree / "pkg" / "shapes.py").write_text(small)
    big = "".join(f"VALUE_{n} = {n}\n" for n in range(site.FOLD_LINES + 10)) + "def last():\n    return 1\n"
    (tree / "pkg" / "big.py").write_text(big)
    assert run_kwdocs("build", "--src", str(tree), "-q", "--html") == 0
    page = (tree / "kwdocs-out" / "site" / "pkg" / "shapes.py_docs.html").read_text()
    for number, line in enumerate(small.splitlines(), 1):   # every line has its anchor, before its text
        assert _line_of_anchor(page, number).rstrip("\n") == line
    assert "<none>" not in page and "<shape>" not in page                # escaped all the same
    # the entries of Detailed Analysis link to their lines
    assert re.search(r'<code>Shape</code></strong>.{0,200}?\(<a href="#L4">line 4</a>\)', page)
    assert re.search(r'<code>area</code></strong>.{0,300}?\(<a href="#L7">line 7</a>\)', page)
    assert '<details class="kwdocs-source" open>' in page        # a small source is shown at once
    big_page = (tree / "kwdocs-out" / "site" / "pkg" / "big.py_docs.html").read_text()
    last = site.FOLD_LINES + 11
    assert _line_of_anchor(big_page, last).startswith("def last")
    assert '<details class="kwdocs-source">' in big_page         # a long one is folded
    assert f'href="#L{last}">line {last}</a>' in big_page


def test_summary_counts_html_pages_written_and_removed(tmp_path, capsys):
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "a.py").write_text("def a():\n    return 1\n")
    (tree / "pkg" / "b.py").write_text("def b():\n    return 2\n")
    site_folder = tree / "kwdocs-out" / "site"

    def summary(*extra: str) -> tuple[int, int]:
        capsys.readouterr()
        assert run_kwdocs("build", "--src", str(tree), "--html", *extra) == 0
        line = capsys.readouterr().out.strip().splitlines()[-1]
        found = re.search(r"HTML: ([\d,]+) written, ([\d,]+) removed", line)
        assert found, line
        return int(found.group(1).replace(",", "")), int(found.group(2).replace(",", ""))

    written, removed = summary()
    pages = [path for path in site_folder.rglob("*.html") if "_kwdocs" not in path.parts]
    assert (written, removed) == (len(pages), 0) and written > 0
    assert summary() == (0, 0)                              # nothing changed, nothing written
    (tree / "pkg" / "b.py").unlink()
    written, removed = summary()
    assert removed == 2 and not (site_folder / "pkg" / "b.py_docs.html").exists()
    assert written >= 1                                      # the folder's pages list one file fewer


def test_site_rendered_in_parallel_is_the_site_rendered_in_one_process(tmp_path):
    tree = tmp_path / "tree"
    for number in range(site.PARALLEL_PAGES // 2 + 4):
        folder = tree / f"p{number % 3}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{number}.py").write_text(f"class C{number}:\n    '''Number {number}.'''\n" * (number + 1))
    sites = []
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        assert run_kwdocs("build", "--src", str(tree), "--out", str(out), "-q", "--html", "-j", jobs) == 0
        sites.append({path.relative_to(out).as_posix(): path.read_bytes()
                      for path in (out / "site").rglob("*") if path.is_file()})
    assert len(sites[0]) > site.PARALLEL_PAGES and sites[0] == sites[1]


def test_the_site_turned_on_later_is_the_site_of_a_cold_html_build(golden_tree, tmp_path):
    """Folder and keyword pages too: their HTML comes from their models either way, never from
    their Markdown (which renders tables and code otherwise)."""
    sites = []
    for steps in (["--html"], [], ["--html"]):
        out = tmp_path / ("later" if sites or not steps else "cold")
        assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q", *steps) == 0
        if steps:
            sites.append({path.relative_to(out / "site").as_posix(): path.read_bytes()
                          for path in (out / "site").rglob("*") if path.is_file()})
    cold, later = sites
    assert any(name.startswith("keywords") for name in cold) and any(name.endswith("index.html") for name in cold)
    assert sorted(name for name in cold if cold[name] != later.get(name)) == [] and cold.keys() == later.keys()


def test_long_pages_have_contents_and_links_name_files_not_page_files(golden_tree):
    assert run_kwdocs("build", "--src", str(golden_tree), "-q", "--html") == 0
    site_folder = golden_tree / "kwdocs-out" / "site"
    docs = (site_folder / "geometry" / "shapes" / "circle.py_docs.html").read_text()
    contents = re.search(r'<details class="kwdocs-toc" open>(.*?)</details>', docs, re.DOTALL)
    assert contents, "a docs page has a table of contents"
    sections = re.findall(r'<a href="#([^"]+)">([^<]+)</a>', contents.group(1))
    headings = re.findall(r'<h2 id="([^"]+)">([^<]+)</h2>', docs)
    assert sections == headings and len(sections) >= site.TOC_MIN_SECTIONS
    for path in site_folder.rglob("*.html"):
        for text in re.findall(r"<a [^>]*>(.*?)</a>", path.read_text(), re.DOTALL):
            assert not re.search(r"(_docs|_kw|index|doc|keywords)\.md\b", text), (path, text)
    kw = (site_folder / "geometry" / "shapes" / "circle.py_kw.html").read_text()
    assert re.search(r'<a href="./circle.py_docs.html"[^>]*><code>circle.py</code></a>', kw)
