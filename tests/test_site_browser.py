"""The generated site in headless Chromium, opened from file:// as a reader would.

Screenshots land in each test's temporary folder (the path is printed): a
file page, search results, and the hostile pages.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kwdocs.site import html as site
from kwdocs.config import load_config
from tests.browser import chromium, watch
from tests.conftest import FIXTURES, run_kwdocs

HOSTILE_PY = '''"""<script>alert('module docstring')</script> <img src=x onerror=alert('docstring img')>"""
# [click](javascript:alert('comment link'))


def handler():
    """<svg onload=alert('function docstring')></svg> ``<iframe src=javascript:alert('iframe')>``"""
    return "</code></pre><script>alert('string')</script>"


class Widget:
    """<a href="javascript:alert('class docstring')">x</a> <b onmouseover=alert('bold')>bold</b>"""
'''

HOSTILE_MD = '''# Title <script>alert('heading')</script>

<script>alert('raw block')</script>
<img src=x onerror=alert('raw img')>
<div onclick="alert('raw div')">raw div</div>

## `<img src=x onerror=alert('code heading')>`

[link](javascript:alert('markdown link')) [data](data:text/html,<script>alert('data link')</script>)
<a href="javascript:alert('raw link')">raw link</a>

```html
</code></pre><script>alert('fence')</script>
```

- `NCCL_<script>alert('identifier')</script>`
'''

HOSTILE_C = '''#define EVIL_MACRO "<script>alert('macro')</script>"
/* <img src=x onerror=alert('comment')> */
struct Evil { int x; };
'''

HOSTILE_NAMES = ["<img src=x onerror=alert('name')>.py", "javascript:alert('name').md",
                 "\"><svg onload=alert('quote')>.txt"]

RAW_MARKDOWN_PAGE = """# Raw HTML in a Markdown page

<script>alert('raw page script')</script>
<img src=x onerror=alert('raw page img')>
<iframe src="javascript:alert('raw page iframe')"></iframe>
<object data="javascript:alert('object')"></object>
<a id="kwdocs-search" href="javascript:alert('clobber')">clobber</a>
<a id="KWDOCS_INDEX">clobber the index global</a>
<form action="javascript:alert('form')"><button>go</button></form>
<style>body { display: none }</style>

[js](javascript:alert('md link')) [vb](vbscript:alert('vb'))
"""


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The golden tree plus a folder of hostile files, built with --html; returns the site folder."""
    tree = tmp_path_factory.mktemp("site") / "tree"
    shutil.copytree(FIXTURES / "golden" / "tree", tree)
    hostile = tree / "hostile"
    hostile.mkdir()
    (hostile / "evil.py").write_text(HOSTILE_PY)
    (hostile / "evil.md").write_text(HOSTILE_MD)
    (hostile / "evil.h").write_text(HOSTILE_C)
    for name in HOSTILE_NAMES:
        (hostile / name).write_text("def named_badly():\n    return '<script>alert(1)</script>'\n")
    assert run_kwdocs("build", "--src", str(tree), "-q", "--html") == 0
    config = load_config(tree)
    site.write_site_page(config, "raw-markdown.md", RAW_MARKDOWN_PAGE)
    return site.site_root(config)


@pytest.fixture
def page(browser):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    yield page
    page.close()


def texts(locator) -> list[str]:
    return [text.strip() for text in locator.all_inner_texts()]


def test_navigate_from_the_root_index_to_a_file_page(page, built, tmp_path):
    watched = watch(page)
    page.goto((built / "index.html").as_uri())
    page.locator("article table a", has_text="geometry/").click()
    page.wait_for_url("**/site/geometry/index.html")
    page.locator("article table a", has_text="shapes/").click()
    page.wait_for_url("**/site/geometry/shapes/index.html")
    page.locator("article table a", has_text="circle.py").first.click()
    page.wait_for_url("**/site/geometry/shapes/circle.py_docs.html")

    assert "Documentation: geometry/shapes/circle.py" in page.locator("article h1").inner_text()
    assert texts(page.locator(".kwdocs-breadcrumbs li")) == ["tiny-geometry", "geometry", "shapes", "circle.py"]
    current = page.locator('#kwdocs-tree a[aria-current="page"]')
    assert current.inner_text() == "circle.py" and current.is_visible()
    keyword = page.locator(".codehilite .k").first        # Pygments' colours, from the allowed stylesheet
    assert keyword.inner_text() in ("class", "def", "import", "from", "return")
    assert keyword.evaluate("e => getComputedStyle(e).color") != page.locator("article p").first.evaluate(
        "e => getComputedStyle(e).color")
    shot = tmp_path / "file-page.png"
    page.screenshot(path=str(shot))
    print(f"screenshot of a file page: {shot}")

    page.locator(".kwdocs-tabs a", has_text="Keywords").click()
    page.wait_for_url("**/circle.py_kw.html")
    page.locator("article a", has_text="class, line 9").click()
    page.wait_for_url("**/circle.py_docs.html#l9-class-circle")
    assert page.evaluate("document.querySelector(':target').id") == "l9-class-circle"

    page.locator("#kwdocs-tree summary a", has_text="tests/").evaluate("a => a.closest('details').open = true")
    page.locator("#kwdocs-tree a", has_text="test_circle.py").click()
    page.wait_for_url("**/site/tests/test_circle.py_docs.html")
    assert watched.clean(), watched


def test_search_finds_a_keyword_and_leads_to_its_definition(page, built, tmp_path):
    watched = watch(page)
    page.goto((built / "tools" / "make_shapes.py_docs.html").as_uri())
    page.fill("#kwdocs-search", "Circle")
    page.locator("#kwdocs-results a.result", has_text="circle.py:9").wait_for()   # the keyword index loaded
    first = page.locator("#kwdocs-results a.result").first
    assert texts(first.locator("span")) == ["Circle", "class", "geometry/shapes/circle.py:9"]
    shot = tmp_path / "search-results.png"
    page.screenshot(path=str(shot))
    print(f"screenshot of search results: {shot}")

    first.click()
    page.wait_for_url("**/site/geometry/shapes/circle.py_docs.html#l9-class-circle")
    target = page.locator(":target")
    assert target.get_attribute("id") == "l9-class-circle"
    box = target.locator("xpath=..").bounding_box()     # the definition's line, below the sticky header
    assert box and 40 < box["y"] < 800
    assert page.locator("#kwdocs-results").is_hidden()

    page.fill("#kwdocs-search", "make_sha")               # files are found by name too
    file_hit = page.locator("#kwdocs-results a.result", has_text="make_shapes.py").first
    assert file_hit.locator(".result-kind").inner_text() == "file"
    file_hit.click()
    page.wait_for_url("**/site/tools/make_shapes.py_docs.html")

    page.fill("#kwdocs-search", "area")                   # methods show their class; every kind and line
    page.locator("#kwdocs-results a.result", has_text="area_of").first.wait_for()   # its docstring matches too
    rows = [texts(row.locator("span")) for row in page.locator("#kwdocs-results a.result").all()]
    assert ["Circle.area", "method", "geometry/shapes/circle.py:13"] in rows
    assert ["area_of", "function", "geometry/__init__.py:12"] in rows
    assert watched.clean(), watched


def test_hostile_sources_names_and_markdown_run_no_script(page, built, tmp_path):
    watched = watch(page)
    pages = sorted((built / "hostile").glob("*.html")) + [built / "raw-markdown.html", built / "index.html",
                                                          built / "keywords.html", built / "hostile" / "index.html"]
    assert len(pages) >= 2 * (3 + len(HOSTILE_NAMES)) + 3
    for path in pages:
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        scripts = page.eval_on_selector_all("script", "all => all.map(s => s.getAttribute('src') || 'INLINE')")
        assert scripts and all("_kwdocs/" in src for src in scripts), (path, scripts)
        handlers = page.evaluate("""() => [...document.querySelectorAll('*')].flatMap(
            e => [...e.attributes].filter(a => a.name.startsWith('on') || /^\\s*(javascript|data|vbscript):/i.test(a.value))
                 .map(a => e.tagName + ' ' + a.name + '=' + a.value))""")
        assert handlers == [], (path, handlers)
    page.goto((built / "hostile" / "evil.py_docs.html").as_uri())
    assert "alert('module docstring')" in page.locator("article").inner_text()    # shown as text, not run
    page.screenshot(path=str(tmp_path / "hostile-page.png"), full_page=False)
    for query in ("alert", "javascript:", "svg", "<img"):
        page.fill("#kwdocs-search", query)
        page.locator("#kwdocs-results a.result").first.wait_for()
    assert page.locator("#kwdocs-results a.result", has_text="<img src=x onerror").count() >= 1   # as text
    page.screenshot(path=str(tmp_path / "hostile-search.png"))
    page.locator("#kwdocs-results a.result", has_text="<img").first.click()
    page.wait_for_load_state("load")
    page.wait_for_timeout(200)
    print(f"screenshots of hostile pages: {tmp_path}")
    assert watched.clean(), watched


def test_a_folder_named_like_a_page_shows_its_real_name_everywhere(page, tmp_path):
    """``index.md/`` has its pages in ``index.md~/``; titles, crumbs, tree and search say ``index.md``."""
    tree = tmp_path / "tree"
    (tree / "index.md").mkdir(parents=True)
    (tree / "index.md" / "a.py").write_text('"""A module in an oddly named folder."""\n\n\ndef oddly_placed():\n'
                                            '    return 1\n')
    (tree / "top.py").write_text("def at_the_top():\n    return 2\n")
    assert run_kwdocs("build", "--src", str(tree), "-q", "--html") == 0
    site_folder = tree / "kwdocs-out" / "site"
    watched = watch(page)
    page.goto((site_folder / "index.md~" / "a.py_docs.html").as_uri())
    assert page.title().startswith("index.md/a.py · documentation")
    assert texts(page.locator(".kwdocs-breadcrumbs li")) == ["project", "index.md", "a.py"]   # no name in the tree
    current = page.locator('#kwdocs-tree a[aria-current="page"]')
    assert current.inner_text() == "a.py" and current.is_visible()
    assert "index.md~" not in page.locator("#kwdocs-tree").inner_text()

    page.fill("#kwdocs-search", "oddly_pl")
    hit = page.locator("#kwdocs-results a.result", has_text="oddly_placed").first
    hit.wait_for()
    assert texts(hit.locator("span"))[2] == "index.md/a.py:4"
    page.goto((site_folder / "top.py_docs.html").as_uri())
    page.fill("#kwdocs-search", "oddly_pl")
    page.locator("#kwdocs-results a.result", has_text="oddly_placed").first.click()
    page.wait_for_url("**/site/index.md~/a.py_docs.html#*")

    page.locator(".kwdocs-breadcrumbs a", has_text="index.md").click()
    page.wait_for_url("**/site/index.md~/index.html")
    assert page.title().startswith("index.md · folder index")
    assert watched.clean(), watched


def test_a_definitions_line_link_scrolls_to_that_source_line(page, built, tmp_path):
    watched = watch(page)
    page.goto((built / "geometry" / "shapes" / "circle.py_docs.html").as_uri())
    link = page.locator("article a[href='#L9']", has_text="line 9").first
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    link.click()
    page.wait_for_url("**/circle.py_docs.html#L9")
    line = page.locator("#L9")
    # the line's text follows its anchor, and the anchor is on screen below the sticky header
    source_line = (built.parent.parent / "geometry" / "shapes" / "circle.py").read_text().splitlines()[8]
    assert source_line.strip().startswith("class Circle")
    after = line.evaluate("a => { let t = ''; for (let n = a.nextSibling; n && !(n.nodeName === 'A' && n.id); n = n.nextSibling)"
                          " t += n.textContent; return t; }")
    assert after.split("\n")[0] == source_line
    box = line.bounding_box()
    header = page.locator(".kwdocs-header").bounding_box()
    assert box and header and header["height"] <= box["y"] < 800 - box["height"], box
    page.locator("#L10").click(position={"x": 5, "y": 5})          # a line's number links to the line
    page.wait_for_url("**/circle.py_docs.html#L10")
    page.screenshot(path=str(tmp_path / "line-link.png"))
    print(f"screenshot after following a line link: {tmp_path / 'line-link.png'}")
    assert watched.clean(), watched


def test_dark_mode_follows_the_system_and_the_toggle_and_is_remembered(browser, built, tmp_path):
    path = (built / "geometry" / "shapes" / "circle.py_docs.html").as_uri()
    shots = {}
    for scheme in ("light", "dark"):
        context = browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme=scheme)
        page = context.new_page()
        page.goto(path)
        shots[scheme] = page.screenshot(path=str(tmp_path / f"{scheme}.png"))
        shots[scheme + " background"] = page.evaluate("getComputedStyle(document.body).backgroundColor")
        context.close()
    assert shots["light"] != shots["dark"] and shots["light background"] != shots["dark background"]
    # the toggle turns a light system dark, and the next page remembers it
    context = browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme="light")
    page = context.new_page()
    page.goto(path)
    page.locator("#kwdocs-theme").click()
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == shots["dark background"]
    page.goto((built / "index.html").as_uri())
    page.wait_for_function("document.documentElement.getAttribute('data-theme') === 'dark'")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == shots["dark background"]
    context.close()
    print(f"light and dark screenshots: {tmp_path}")


def test_nothing_is_wider_than_a_phone_and_the_folder_tree_is_a_drawer(browser, built, tmp_path):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    watched = watch(page)
    for name in ("geometry/shapes/circle.py_docs.html", "geometry/shapes/circle.py_kw.html", "index.html"):
        page.goto((built / name).as_uri())
        too_wide = page.evaluate("""() => [...document.querySelectorAll('body *')]
            .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5
                         && !e.closest('pre, table, .kwdocs-tree'))
            .map(e => e.tagName + '.' + e.className)""")
        assert too_wide == [], (name, too_wide)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, name
    page.screenshot(path=str(tmp_path / "mobile.png"))
    tree = page.locator("#kwdocs-tree")
    assert not tree.is_visible()
    page.locator("#kwdocs-drawer").click()
    assert tree.is_visible() and tree.locator("a").count() > 0
    page.screenshot(path=str(tmp_path / "mobile-drawer.png"))
    print(f"mobile screenshots: {tmp_path}")
    assert watched.clean(), watched
    context.close()


def test_a_keywords_source_link_opens_the_docs_page_at_its_line(page, built):
    watched = watch(page)
    page.goto((built / "geometry" / "shapes" / "circle.py_kw.html").as_uri())
    entry = page.locator("article a", has_text="class, line 9")
    entry.locator("xpath=following-sibling::a[1]").click()
    page.wait_for_url("**/circle.py_docs.html#L9")
    assert page.evaluate("document.querySelector(':target').id") == "L9"
    assert page.locator("#L9").is_visible()
    assert watched.clean(), watched


def test_a_name_in_the_source_opens_its_definition_on_its_own_page(page, built):
    """``Shape`` in ``class Circle(Shape):`` opens base.py's page at ``class Shape``; the page then
    lists circle.py among the places it is used."""
    watched = watch(page)
    page.goto((built / "geometry" / "shapes" / "circle.py_docs.html").as_uri())
    line = (built.parent.parent / "geometry" / "shapes" / "base.py").read_text().splitlines().index("class Shape(abc.ABC):") + 1
    page.locator(f"#L9 ~ a[href$='base.py_docs.html#L{line}']", has_text="Shape").first.click()
    page.wait_for_url(f"**/geometry/shapes/base.py_docs.html#L{line}")
    assert page.evaluate("document.querySelector(':target').id") == f"L{line}"
    assert page.locator(f"#L{line}").is_visible()
    assert page.locator("article li", has_text="used in").filter(has_text="circle.py").count() >= 1
    assert watched.clean(), watched
