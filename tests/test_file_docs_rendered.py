"""A file's own documentation reads as its style renders it (issue 32): a crate's ``//!`` comment,
a Markdown module docstring and a Go package comment keep their headings, lists and code in
High-Level Overview, and File Purpose quotes their first sentence unescaped; an item's ``///``
comment is never the file's, and a Go field's short comment is its doc, as go doc shows it."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import run_kwdocs

CRATE = '''// Copyright 2020 The Authors. Licensed under the MIT license.

//! > **Command Line Argument Parser** for `Rust`
//!
//! Quick Links:
//! - Derive [tutorial][crate::Parser] and
//!   reference
//! - [Discussions](https://example.org/discussions)
//!
//! ## Example
//!
//! Then define your CLI in `main.rs`:
#![cfg_attr(not(feature = "derive"), doc = " ```ignore")]
#![cfg_attr(feature = "derive", doc = " ```no_run")]
#![doc = include_str!("../examples/demo.rs")]
//! ```
//!
//! And try it out.

/// Parse arguments.
#[derive(Debug)] // requires the `derive` feature
#[non_exhaustive]
pub struct Parser;
'''

ITEM_FIRST = '''/// Violation of [`Parser`][crate::Parser] assumptions
#[derive(Debug)]
pub enum MatchesError {
    Downcast,
}
'''

MARKDOWN_MODULE = '''"""Helpers for **HTTP** clients.

* **auth** - *(optional)* an authentication class
  used on every request.
* **timeout** - seconds to wait.

```python
client = make_client()
```
"""


def make_client():
    """Make a client."""
'''

GO = '''// Package server answers requests.
//
// # Options
//
// A server reads its options once:
//
//	s := server.New()
//	s.Run()
package server

// Server answers requests.
type Server struct {
	// Expected arguments
	Args []string
}
'''


def _build(tmp_path: Path, files: dict[str, str]) -> Path:
    src = tmp_path / "src"
    for name, text in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "--html", "-q") == 0
    return out


def _section(page: str, title: str) -> str:
    start = page.index(f"## {title}\n")
    return page[start:page.index("\n## ", start + 1)]


def test_a_crate_comment_is_rendered_as_rustdoc_renders_it(tmp_path: Path):
    out = _build(tmp_path, {"src/lib.rs": CRATE, "src/error.rs": ITEM_FIRST})
    page = (out / "src" / "lib.rs_docs.md").read_text(encoding="utf-8")
    purpose = _section(page, "File Purpose")
    assert "**Command Line Argument Parser** for `Rust`." in purpose, purpose
    assert "\\*" not in purpose and "&gt;" not in purpose
    overview = _section(page, "High-Level Overview")
    # a list stays a list (wrapped item joined), a heading a heading, link targets are not words
    assert "\n- Derive tutorial and reference\n" in overview, overview
    assert "\n- [Discussions](https://example.org/discussions)\n" in overview
    assert "\n##### Example\n" in overview
    # the fence a cfg_attr doc opens is closed by the comment's own: the text after it is prose
    assert "\nAnd try it out.\n" in overview
    assert "```" not in overview.split("And try it out.")[1]
    assert "\\#" not in overview and "\\[" not in overview
    # the HTML page shows the same structure
    html = (out / "site" / "src" / "lib.rs_docs.html").read_text(encoding="utf-8")
    assert "<li>Derive tutorial and reference</li>" in html
    # the item's comment is the item's, however its attribute line ends
    assert "Parse arguments." in page.split("**`Parser`**")[1]
    # a file opening on an item's ``///`` comment has no words of its own
    error = (out / "src" / "error.rs_docs.md").read_text(encoding="utf-8")
    assert "Violation" not in _section(error, "File Purpose")
    assert "Violation of `Parser` assumptions" in error.split("**`MatchesError`**")[1]


def test_a_markdown_module_docstring_keeps_its_lists_and_code(tmp_path: Path):
    out = _build(tmp_path, {"client.py": MARKDOWN_MODULE})
    page = (out / "client.py_docs.md").read_text(encoding="utf-8")
    assert "Helpers for **HTTP** clients." in _section(page, "File Purpose")
    overview = _section(page, "High-Level Overview")
    assert "- **auth** - *(optional)* an authentication class used on every request.\n" in overview, overview
    assert "```python\nclient = make_client()\n```" in overview


def test_a_go_package_comment_and_a_fields_short_comment(tmp_path: Path):
    out = _build(tmp_path, {"go.mod": "module example.org/server\n", "server.go": GO})
    page = (out / "server.go_docs.md").read_text(encoding="utf-8")
    overview = _section(page, "High-Level Overview")
    assert "\n#### Options\n" in overview, overview
    assert "s := server.New()\ns.Run()" in overview
    assert "Expected arguments" in page.split("**`Args`**")[1].split("\n- ")[0]
