"""Pages safe in every renderer users use: no script from a docstring or comment ever runs.

A tree of hostile docstrings and doc comments (Python, C++, JavaScript, TypeScript, Rust,
Go, Markdown) is built; every Markdown page is rendered by python-markdown with MkDocs'
usual extensions (with and without pymdownx.superfences), by markdown-it-py (CommonMark) and
by cmarkgfm (GitHub), and the site is built; each result is opened in Chromium, where no
script may run and no element written in a docstring may exist.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest

from kwdocs.config import load_config
from kwdocs.site import html as site
from tests.browser import chromium, watch
from tests.conftest import run_kwdocs
from tests.output_checks import pages

PY = '''"""Module <img src=x onerror=alert('py-module')>.

Examples:
    >>> render("<img src=x onerror=alert('py-module-example')>")
    '<script>alert("py-module-out")</script>'
"""


def render(text="<img src=x onerror=alert('py-default')>", *, link="javascript:alert('py-default-link')"):
    """Render <script>alert('py-summary')</script> text, ``x``{: onclick="alert('py-attr-summary')" }.

    Args:
        text: the <img src=x onerror=alert('py-param')> text, see [here](javascript:alert('py-param-link')).
        link (str): `<img src=x onerror=alert('py-param-code')>`{ onclick="alert('py-attr-param')" }

    Returns:
        str: <b onmouseover=alert('py-returns')>x</b>

    Examples:
        Some prose <img src=x onerror=alert('py-example-prose')>

        >>> render("<img src=x onerror=alert('py-doctest')>")
        <img src=x onerror=alert('py-doctest-out')>

        >>> render(
        ...     "<script>alert('py-doctest-continued')</script>")

    Note:
        <div onclick=alert('py-note')>raw</div>
    """
    return text


def blocks():
    """Blocks of every kind.

    <script>alert('py-raw-block')</script>

    .. code-block:: html

        <script>alert('py-code-block')</script>

    Literal::

        <img src=x onerror=alert('py-literal')>

    ```html
    <img src=x onerror=alert('py-fence')>
    ```

    - bullet <img src=x onerror=alert('py-bullet')>
    - ``<img src=x onerror=alert('py-bullet-code')>``
    - ``x``{: onclick="alert('py-attr-list')" }

    [link](javascript:alert('py-link')) <javascript:alert('py-autolink')>
    """


def styled():
    """A **Markdown** docstring <img src=x onerror=alert('pymd-summary')>.

    # Heading <script>alert('pymd-heading')</script>

    **strong**{: onclick="alert('pymd-attr-strong')" } and *em*{: onclick="alert('pymd-attr-em')" },
    [web](https://example.org){: onclick="alert('pymd-attr-link')" }, [js](javascript:alert('pymd-link')),
    [case](JaVaScRiPt:alert('pymd-link-case')), [`code`](javascript:alert('pymd-code-link')),
    [quote](https://example.org/"onmouseover="alert('pymd-quote')), <javascript:alert('pymd-autolink')>,
    [ref][evil], ![image](https://example.org/x.png){: onerror="alert('pymd-image')" }

    * **item** <img src=x onerror=alert('pymd-item')> wrapped
    onto <script>alert('pymd-item-lazy')</script> a second line

    ```html
    <img src=x onerror=alert('pymd-fence')>
    ```

    [evil]: javascript:alert('pymd-reference')
    """


class Widget:
    """A widget <img src=x onerror=alert('py-class')>.

    Examples
    --------
    >>> Widget().draw("<img src=x onerror=alert('py-numpy-example')>")
    """

    def draw(self, html="<script>alert('py-method-default')</script>"):
        """Draw it.

        Example:
            >>> Widget().draw("<img src=x onerror=alert('py-method-example')>")

        Parameters
        ----------
        html : str
            <img src=x onerror=alert('py-method-param')>
        """
'''

CPP = '''/**
 * @brief Render <img src=x onerror=alert('cpp-brief')>.
 *
 * <script>alert('cpp-prose')</script>
 *
 * @param text the <script>alert('cpp-param')</script> text
 * @return <img src=x onerror=alert('cpp-return')>
 * @code
 * render("<img src=x onerror=alert('cpp-code')>");
 * @endcode
 * \\verbatim
 * <script>alert('cpp-verbatim')</script>
 * \\endverbatim
 */
int render(const char* text = "<img src=x onerror=alert('cpp-default')>");

class Widget {
 public:
  /// Draw <img src=x onerror=alert('cpp-method')> with \\c x{: onclick="alert('cpp-attr')" }.
  ///
  /// @code{.html}
  /// <script>alert('cpp-method-code')</script>
  /// @endcode
  void draw();
};
'''

JS = '''/**
 * Render <img src=x onerror=alert('js-summary')>, {@code x}{: onclick="alert('js-attr')" }.
 * @param {string} [text=<img src=x onerror=alert('js-default')>] the text
 * @returns {string} <script>alert('js-returns')</script>
 * @example
 * render("<img src=x onerror=alert('js-example')>");
 * // <script>alert('js-example-out')</script>
 */
export function render(text = "<img src=x onerror=alert('js-signature')>") {
  return text;
}
'''

TS = '''export class Widget {
  /**
   * Draw <img src=x onerror=alert('ts-method')>.
   * @example
   * new Widget().draw("<img src=x onerror=alert('ts-example')>");
   */
  draw(html: string = "<script>alert('ts-default')</script>"): string {
    return html;
  }
}
'''

RS = '''/// Render <img src=x onerror=alert('rs-summary')> and [`x`]{: onclick="alert('rs-attr')" }.
///
/// # Examples
///
/// ```
/// let s = render("<img src=x onerror=alert('rs-example')>");
/// ```
///
/// <script>alert('rs-raw')</script>
pub fn render(text: &str) -> String {
    text.to_string()
}

/// **Bold <img src=x onerror=alert('rs-strong')>**{: onclick="alert('rs-attr-strong')" },
/// [web](https://example.org){: onclick="alert('rs-attr-link')" }, [js](javascript:alert('rs-link')),
/// [`Widget`][crate::Widget]{: onclick="alert('rs-attr-ref')" } and [`Widget`]{: onclick="alert('rs-attr-own')" }.
///
/// ## Heading <img src=x onerror=alert('rs-heading')>
///
/// ```
/// # use evil::<img src=x onerror=alert('rs-hidden')>;
/// let shown = "<script>alert('rs-shown')</script>";
/// ```
pub fn styled() {}

pub struct Widget;

impl Widget {
    /// Draw.
    ///
    /// ```html
    /// <img src=x onerror=alert('rs-method')>
    /// ```
    pub fn draw(&self) {}
}
'''

GO = '''// Package evil renders <img src=x onerror=alert('go-package')>.
package evil

// Render renders <img src=x onerror=alert('go-summary')> and `x`{: onclick="alert('go-attr')" }.
//
// Example:
//
//	Render("<img src=x onerror=alert('go-example')>")
func Render(text string) string { return text }
'''

MD = '''# Guide <img src=x onerror=alert('md-heading')>

Purpose <script>alert('md-purpose')</script> of this ``guide``{: onclick="alert('md-attr')" }.

<script>alert('md-raw-block')</script>
<img src=x onerror=alert('md-raw-img')>

```html
<img src=x onerror=alert('md-fence')>
```

    <img src=x onerror=alert('md-indented')>

- item <img src=x onerror=alert('md-item')>

  ```
  <script>alert('md-item-fence')</script>
  ```

[link](javascript:alert('md-link'))
'''

README = '''# Evil

The folder's README: ``x``{: onclick="alert('readme-attr')" } &lt;img src=x onerror=alert('readme-entity')&gt;
\\<img src=x onerror=alert('readme-escaped')> <script>alert('readme-script')</script>

<img src=x onerror=alert('readme-raw')>
'''

SOURCES = {"evil/README.md": README, "evil/render.py": PY, "evil/render.cpp": CPP, "evil/render.js": JS, "evil/widget.ts": TS,
           "evil/render.rs": RS, "evil/render.go": GO, "evil/GUIDE.md": MD}


def make_tree(src: Path) -> None:
    """The hostile tree: one file per language, every payload naming where it came from."""
    for rel, text in SOURCES.items():
        path = src / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


# MkDocs' usual extensions; python-markdown reads only fences at a line's start with fenced_code,
# and fences nested in lists too with pymdownx.superfences
MKDOCS_EXTENSIONS = ["toc", "tables", "fenced_code", "admonition", "attr_list", "def_list", "footnotes"]
SUPERFENCES_EXTENSIONS = ["toc", "tables", "admonition", "attr_list", "def_list", "footnotes",
                          "pymdownx.superfences", "pymdownx.highlight"]
# elements and attributes no renderer makes of its own: from a page, only from a docstring
FOREIGN_ELEMENTS = ("img", "script", "svg", "iframe", "object", "embed", "form", "style", "math", "video", "audio")
# the code of docstrings' examples and code blocks, which each renderer must show as code under
# Detailed Analysis (the source above holds the same words); Go's indented example is prose to kwdocs
CODE = {"evil/render.py_docs.md": ["alert('py-doctest')", "alert('py-doctest-continued')", "alert('py-code-block')",
                                   "alert('py-literal')", "alert('py-fence')", "alert('py-method-example')",
                                   "alert('pymd-fence')"],
        "evil/render.cpp_docs.md": ["alert('cpp-code')", "alert('cpp-verbatim')", "alert('cpp-method-code')"],
        "evil/render.js_docs.md": ["alert('js-example')"], "evil/widget.ts_docs.md": ["alert('ts-example')"],
        "evil/render.rs_docs.md": ["alert('rs-example')", "alert('rs-method')", "alert('rs-shown')"]}
# text after a code span, emphasis or link, which python-markdown's attr_list would make its attributes
TEXT = {"evil/render.py_docs.md": ["{: onclick=\"alert('py-attr-list')\" }",
                                   "{: onclick=\"alert('pymd-attr-strong')\" }",
                                   "{: onclick=\"alert('pymd-attr-em')\" }",
                                   "{: onclick=\"alert('pymd-attr-link')\" }"],
        "evil/render.rs_docs.md": ["{: onclick=\"alert('rs-attr-strong')\" }", "{: onclick=\"alert('rs-attr-link')\" }",
                                   "{: onclick=\"alert('rs-attr-ref')\" }", "{: onclick=\"alert('rs-attr-own')\" }"],
        "evil/render.go_docs.md": ["alert('go-example')", "{: onclick=\"alert('go-attr')\" }"]}


def renderers() -> dict[str, Callable[[str], str]]:
    """Markdown -> HTML as users render kwdocs' pages, raw HTML let through where it can be."""
    import cmarkgfm
    import markdown
    from cmarkgfm.cmark import Options
    from markdown_it import MarkdownIt

    commonmark = MarkdownIt("commonmark")
    return {
        "python-markdown": lambda text: markdown.markdown(text, extensions=MKDOCS_EXTENSIONS),
        "python-markdown+superfences": lambda text: markdown.markdown(text, extensions=SUPERFENCES_EXTENSIONS),
        "markdown-it-py": commonmark.render,
        "cmarkgfm": lambda text: cmarkgfm.github_flavored_markdown_to_html(text, options=Options.CMARK_OPT_UNSAFE),
    }


class _Elements(HTMLParser):
    """An HTML page as a browser's parser sees it: elements no renderer makes of its own, all
    its text, and the text inside code elements under each ``h2`` heading."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.foreign: list[str] = []
        self.text: list[str] = []
        self.code: dict[str, list[str]] = {}
        self.heading: list[str] | None = None
        self.section = ""
        self.in_code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in FOREIGN_ELEMENTS:
            self.foreign.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on") or re.match(r"\s*(javascript|vbscript|data):", value or "", re.IGNORECASE):
                self.foreign.append(f"<{tag} {name}={value}>")
        if tag == "h2":
            self.heading = []
        self.in_code += tag == "code"

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2" and self.heading is not None:
            self.section, self.heading = "".join(self.heading).strip(), None
        self.in_code -= tag == "code" and self.in_code > 0

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self.heading is not None:
            self.heading.append(data)
        if self.in_code:
            self.code.setdefault(self.section, []).append(data)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[dict[str, str], Path]:
    """The hostile tree built with --html: its Markdown pages by path, and the site's folder."""
    tree = tmp_path_factory.mktemp("renderers") / "tree"
    make_tree(tree)
    assert run_kwdocs("build", "--src", str(tree), "-q", "--html") == 0
    config = load_config(tree)
    found = {rel: text.decode() for rel, text in pages(config.out).items()
             if rel.endswith(".md") and not rel.startswith(site.SITE_FOLDER + "/")}
    assert set(CODE) | set(TEXT) <= set(found)
    return found, site.site_root(config)


@pytest.fixture(scope="module")
def rendered(built, tmp_path_factory) -> dict[tuple[str, str], Path]:
    """(renderer, page) -> the page rendered to an HTML file."""
    markdown_pages, _ = built
    folder = tmp_path_factory.mktemp("rendered")
    result = {}
    for name, render in renderers().items():
        for rel, text in markdown_pages.items():
            path = folder / name / rel.replace("/", "__").replace(".md", ".html")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f'<!doctype html><meta charset="utf-8"><title>{name}</title><body>{render(text)}</body>')
            result[(name, rel)] = path
    return result


def test_every_renderer_shows_docstring_code_as_code_and_makes_no_element_of_it(rendered):
    problems = []
    for (name, rel), path in sorted(rendered.items()):
        parsed = _Elements()
        parsed.feed(path.read_text())
        problems.extend(f"{name} {rel}: {found}" for found in parsed.foreign)
        code = "".join(parsed.code.get("Detailed Analysis", ()))
        problems.extend(f"{name} {rel}: not code: {marker}" for marker in CODE.get(rel, ()) if marker not in code)
        text = "".join(parsed.text)
        problems.extend(f"{name} {rel}: not shown: {marker}" for marker in TEXT.get(rel, ()) if marker not in text)
    assert problems == []


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


# every way a page could run a script ends in one of these calls: each one counted, none shown
COUNT_CALLS = """window.__kwdocsCalls = [];
for (const name of ['alert', 'confirm', 'prompt', 'print', 'open']) {
  window[name] = (...args) => { window.__kwdocsCalls.push(name + ' ' + args.join(' ')); };
}"""
FOREIGN_IN_DOM = """selector => ({
  elements: [...document.querySelectorAll(selector)].map(e => e.outerHTML.slice(0, 120)),
  handlers: [...document.querySelectorAll('*')].flatMap(e => [...e.attributes]
    .filter(a => a.name.startsWith('on') || /^\\s*(javascript|vbscript|data):/i.test(a.value))
    .map(a => e.tagName + ' ' + a.name + '=' + a.value)),
})"""


def test_no_script_runs_in_chromium_in_any_renderer_or_the_site(browser, built, rendered):
    _, site_folder = built
    site_pages = sorted(site_folder.joinpath("evil").glob("*.html"))
    assert len(site_pages) >= len(CODE)
    opened = [(name, rel, path, ", ".join(FOREIGN_ELEMENTS)) for (name, rel), path in sorted(rendered.items())]
    # the site runs its own scripts and draws its own icons: docstrings are shown in its article
    opened += [("site", path.name, path, ", ".join(f"article {tag}" for tag in FOREIGN_ELEMENTS if tag != "script")
                + ", script:not([src*='_kwdocs/'])") for path in site_pages]
    problems = []
    page = browser.new_page()
    watched = watch(page)
    page.add_init_script(COUNT_CALLS)
    for name, rel, path, selector in opened:
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        page.wait_for_timeout(20)   # an onerror fires after the failed load of its image
        found = page.evaluate(FOREIGN_IN_DOM, selector)
        calls = page.evaluate("window.__kwdocsCalls")
        problems.extend(f"{name} {rel}: {item}" for item in found["elements"] + found["handlers"] + calls)
    page.close()
    assert problems == []
    assert not watched.dialogs and not watched.page_errors, watched
