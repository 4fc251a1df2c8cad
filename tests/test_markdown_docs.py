"""Doc comments written in Markdown read as Markdown: a Markdown docstring (pdoc's reading) and
rustdoc's ``///`` comments keep their emphasis, lists, links, headings and code."""
from __future__ import annotations

import re
from pathlib import Path

import cmarkgfm

from tests.conftest import entry_text as _entry, run_kwdocs

CLIENT = '''class Client:
    """
    An HTTP client, with connection pooling, HTTP/2, redirects, cookie persistence, etc.

    It can be shared between threads.

    Usage:

    ```python
    >>> client = Client()
    >>> response = client.get('https://example.org')
    ```

    **Parameters:**

    * **auth** - *(optional)* An authentication class to use when sending
    requests.
    * **verify** - *(optional)* Either `True` to use an SSL context with the
    default CA bundle, or an instance of `ssl.SSLContext`; see
    [the docs](https://www.python-httpx.org/advanced/ssl/) and [this](javascript:alert(1)).
    * **max_redirects** - *(optional)* Counts `*args` and **kwargs-like
      values.
    """


def rest(x):
    """Add *x* to the **total**, see :func:`print` and ``x * 2``.

    Args:
        x (int): the *amount*, wrapped
            onto two lines.
    """


def example():
    """Make a checkpointer.

    Example:
        # Simplest usage - default config
        checkpointer = example()
    """
'''

PARSER = '''/// Parse the command line into a [`Command`] and its matches,
/// reading each argument once.
///
/// When deriving a [`Parser`][crate::Parser], use
/// [`Command::new`](crate::Command::new) instead of <b>this</b>.
///
/// # Examples
///
/// ```
/// # use clap::Command;
/// # fn main() {
/// let m = parse(&["prog", "-v"]);
/// ## not hidden: a comment of the example
/// # }
/// ```
///
/// ```text
/// # shown: not Rust
/// ```
pub fn parse(args: &[&str]) -> Command {
    Command {}
}

/// A command.
pub struct Command {}

impl Command {
    /// Make one: see [`Self::run`] and [`Command::run`], not [`super::run`].
    pub fn make() -> Command {
        Command {}
    }

    /// Run it.
    pub fn run(&self) {}
}
'''


def _build(tmp_path: Path, files: dict[str, str]) -> Path:
    src = tmp_path / "src"
    for name, text in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text, encoding="utf-8")
    assert run_kwdocs("build", "--src", str(src), "--out", str(tmp_path / "out"), "-q") == 0
    return tmp_path / "out"


def _html(markdown: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(markdown)


def test_a_markdown_docstring_shows_its_emphasis_lists_links_and_code_as_markdown(tmp_path):
    page = (_build(tmp_path, {"client.py": CLIENT}) / "client.py_docs.md").read_text(encoding="utf-8")
    client = _entry(page, "Client")
    assert "\n  **Parameters:**\n" in client, client
    # each bullet whole, its wrapped lines joined into it, lazy or indented; after the example's
    # code, which ended the list of definitions on GitHub, bulleted apart from that list
    assert "  * **auth** - *(optional)* An authentication class to use when sending requests.\n" in client
    assert ("  * **verify** - *(optional)* Either `True` to use an SSL context with the default CA bundle, or an "
            "instance of `ssl.SSLContext`; see [the docs](https://www.python-httpx.org/advanced/ssl/) and this.\n"
            in client), client
    assert "  * **max\\_redirects** - *(optional)* Counts `*args` and \\*\\*kwargs-like values.\n" in client
    assert "javascript" not in client
    assert "```python\n>>> client = Client()\n" in client
    html = _html(client)
    assert "<strong>Parameters:</strong>" in html and "<em>(optional)</em>" in html
    assert html.count("<li>") == 3 and "<p>requests.</p>" not in html
    assert '<a href="https://www.python-httpx.org/advanced/ssl/">the docs</a>' in html
    # a reStructuredText docstring's emphasis is emphasis too, as docutils and pdoc show it
    assert "Add *x* to the **total**, see `print` and `x * 2`." in _entry(page, "rest")
    assert "- `x` (`int`): the *amount*, wrapped onto two lines." in _entry(page, "rest")
    # nor is a Google-style docstring whose example holds a comment: it has no Markdown heading
    assert "\\# Simplest usage - default config" in _entry(page, "example") and "##" not in _entry(page, "example")


def test_a_rustdoc_comment_reads_as_rustdoc_shows_it(tmp_path):
    page = (_build(tmp_path, {"src/lib.rs": PARSER}) / "src/lib.rs_docs.md").read_text(encoding="utf-8")
    parse = _entry(page, "parse")
    command = re.search(r'<a id="(l\d+-class-command)"></a>', page)
    assert command, page
    # wrapped lines are one paragraph; an intra-doc link kwdocs resolves is linked to its anchor,
    # one it does not (``crate::``) is code
    assert (f"  Parse the command line into a [`Command`](#{command.group(1)}) and its matches, reading each "
            "argument once.\n" in parse), parse
    assert "  When deriving a `Parser`, use `Command::new` instead of &lt;b&gt;this&lt;/b&gt;.\n" in parse
    assert "crate::" not in parse and "<b>" not in parse
    # ``# Examples`` a heading below the page's own, the example without rustdoc's hidden lines
    assert "  #### Examples\n" in parse
    assert "```rust\nlet m = parse(&[\"prog\", \"-v\"]);\n# not hidden: a comment of the example\n```" in parse
    assert "use clap::Command" not in parse and "fn main" not in parse
    assert "```text\n# shown: not Rust\n```" in parse
    html = _html(parse)
    assert "<h4>Examples</h4>" in html
    # a path to a method of this file is linked to its anchor, one to another module is not
    run = re.search(r'<a id="(l\d+-method-run)"></a>', page)
    assert run, page
    assert (f"Make one: see [`Self::run`](#{run.group(1)}) and [`Command::run`](#{run.group(1)}), "
            "not `super::run`." in _entry(page, "make")), _entry(page, "make")


GO_DOC = """\
// Package a runs commands.
package a

// Command is a command.
type Command struct{}

// Run runs the command.
//
// # Flags
//
// It reads these flags:
//   - verbose: print more
//   - quiet: print less
//
// Example:
//
//	cmd := a.New()
//	cmd.Run(os.Args[1:]...)
//
// See [Command] and [strings.Split]; a*b*c and snake_case are plain text.
//
// - an unindented dash is text, not a list item
func Run() {}
"""


def test_go_doc_comments_are_rendered_as_go_doc_renders_them(tmp_path):
    """go.dev/doc/comment: a ``# `` line alone is a heading, indented lines are a list or a code
    block, ``[Name]`` is a doc link (linked when the name is defined here), and the rest is
    plain text, never Markdown."""
    page = (_build(tmp_path, {"a.go": GO_DOC}) / "a.go_docs.md").read_text(encoding="utf-8")
    run = page[page.index("**`Run`**"):page.index("## Cross-References")]
    assert re.search(r"^\s*#{3,6} Flags$", run, re.MULTILINE)
    assert "- verbose: print more\n  - quiet: print less" in run
    assert "```\ncmd := a.New()\ncmd.Run(os.Args[1:]...)\n```" in run
    assert "[`Command`](#l5-class-command)" in run and "`strings.Split`" in run
    assert "a\\*b\\*c and snake\\_case are plain text" in run
    assert "\\# Flags" not in run and "\\[Command\\]" not in run
    assert "an unindented dash is text, not a list item" in run
    assert "  - an unindented dash" not in run      # only an indented line is a list item in Go


PYDANTIC_LIKE = '''def Field(default=None):
    """!!! abstract "Usage Documentation"
        [Fields](../concepts/fields.md)

    Create a field for **objects** that can be configured.

    Note:
        - Any `_Unset` objects will be replaced by the default of the constructor.

    !!! warning
        Do not pass `extra`.

        ```python
        Field(1)
        ```

    Returns:
        A new field, as [`Decimal`][decimal.Decimal] numbers are.
    """
'''


def test_a_markdown_docstring_with_a_private_code_span_and_admonitions(tmp_path):
    page = (_build(tmp_path, {"fields.py": PYDANTIC_LIKE}) / "fields.py_docs.md").read_text(encoding="utf-8")
    field = _entry(page, "Field")
    # ```_Unset``` is Markdown code, not a reST reference: the docstring stays Markdown
    assert "Create a field for **objects** that can be configured." in field, field
    # MkDocs' admonitions: a bold title, their body read as Markdown, never escaped or code
    assert "  **Usage Documentation**\n\n  Fields\n" in field
    assert "  **Warning**\n\n  Do not pass `extra`.\n" in field
    assert "```python\nField(1)\n```" in field
    assert "!!!" not in field and "\\[" not in field
    # mkdocstrings' cross-reference ``[title][identifier]`` shows its title
    assert "A new field, as `Decimal` numbers are." in field


TRANSPORT = '''class BaseTransport:
    def handle_request(self, request):
        """
        Send a single HTTP request and return a response.

        The response stream should *either* be consumed immediately, or be closed.

        Example usage:

            with httpx.HTTPTransport() as transport:
                resp = transport.handle_request(req)

        Takes either `<host>` or `<host>:<port>` as its netloc, see `port`.
        """

    def port(self):
        """The port."""
'''


def test_a_plain_docstring_reads_as_pdoc_shows_it(tmp_path):
    """pdoc reads a docstring as Markdown: ``*either*`` is emphasis, a block indented under
    ``Example usage:`` is code, and a code span is kept whole, never cut at a ``<name>``."""
    page = (_build(tmp_path, {"base.py": TRANSPORT}) / "base.py_docs.md").read_text(encoding="utf-8")
    entry = _entry(page, "handle_request")
    assert "should *either* be consumed" in entry and "\\*either\\*" not in entry
    assert "```\nwith httpx.HTTPTransport() as transport:\n    resp = transport.handle_request(req)\n```" in entry
    assert "`<host>:<port>` as its netloc" in entry
    html = _html("\n".join(line.strip() for line in entry.split("\n")))
    assert "<em>either</em>" in html and "<code>&lt;host&gt;:&lt;port&gt;</code>" in html
    assert "<pre><code>with httpx.HTTPTransport() as transport:" in html


HINTS = """\
//! Value hints.

/// Provide shell with hint on how to complete an argument.
///
/// | Hint      | zsh | fish[^1]|
/// | --------- | :-: | ------: |
/// | `AnyPath` | Yes | Yes     |
/// | `Url`     | a \\| b |      |
///
/// [^1]: fish completions currently only support named arguments (e.g. -o or --opt), not
///       positional arguments.
pub enum ValueHint {
    /// Any existing path.
    AnyPath,
    /// Complete web address.
    Url,
}
"""


def test_a_rustdoc_table_and_footnote_read_as_rustdoc_shows_them(tmp_path):
    """rustdoc renders GFM tables and footnotes: the table is a table in the Markdown page and the
    site (cells linked and aligned), the footnote's reference a raised number and its text at the
    doc's end, never escaped pipes or ``[^1]``."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "hint.rs").write_text(HINTS, encoding="utf-8")
    assert run_kwdocs("build", "--src", str(src), "--out", str(tmp_path / "out"), "-q", "--html") == 0
    page = (tmp_path / "out/hint.rs_docs.md").read_text(encoding="utf-8")
    entry = _entry(page, "ValueHint")
    assert "\\|" not in entry.replace("a \\| b", "") and "[^1]" not in entry, entry
    html = _html("\n".join(line.strip() for line in entry.split("\n")))
    assert "<th>Hint</th>" in html and '<th align="center">zsh</th>' in html and '<th align="right">fish¹</th>' in html
    assert html.count("<tr>") == 3 and '<td align="center">a | b</td>' in html
    assert re.search(r'<td><a href="#l\d+-constant-anypath"><code>AnyPath</code></a></td>', html), html
    assert "<p>¹ fish completions currently only support named arguments (e.g. -o or --opt), not positional" \
           " arguments.</p>" in html
    site = (tmp_path / "out/site/hint.rs_docs.html").read_text(encoding="utf-8")
    assert '<tr><th>Hint</th><th align="center">zsh</th><th align="right">fish¹</th></tr>' in site
    assert "<p>¹ fish completions currently only support named arguments" in site


FILES = '''class LazyFile:
    """Opens the file on first use."""

    def close(self) -> None:
        """Closes the underlying file, no matter what."""

    def close_intelligently(self) -> None:
        """This function only closes the file if it was opened by the lazy
        file wrapper. For instance this will never close stdin.

        :meta private:
        """


class KeepOpenFile:
    """Keeps the file open across a ``with`` block; an explicit `close` still
    passes through, and so does :meth:`close_intelligently`.

    :meta private:
    """

    def read(self) -> str:
        """Reads, see `close`."""
'''


def test_a_name_in_one_class_doc_is_not_another_class_member_and_meta_fields_are_hidden(tmp_path):
    """As in click's ``utils.py``: ``close`` said in a class's doc links to that class's member only,
    never to another class's that happens to be the file's only ``close``; Sphinx's ``:meta private:``
    is autodoc's metadata, never shown."""
    page = (_build(tmp_path, {"files.py": FILES}) / "files.py_docs.md").read_text(encoding="utf-8")
    keep, read = _entry(page, "KeepOpenFile"), _entry(page, "read")
    assert "an explicit `close` still passes through" in keep, keep
    assert "`close_intelligently`" in keep and "close_intelligently](" not in keep, keep
    assert "Reads, see `close`." in read, read
    # in its own class, the member is linked
    lazy = _entry(page, "close_intelligently")
    assert "This function only closes the file if it was opened by the lazy file wrapper." in lazy
    structure = page[page.index("### Code Structure"):page.index("## Dependencies")]
    assert "meta" not in structure and "private" not in structure, structure
