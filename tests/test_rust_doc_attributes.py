"""A Rust doc comment that attributes interrupt reads whole, as rustdoc shows it (issue 32: clap's
``Error::new``, ``ColorChoice::Auto`` and 16 more lost their summary and their example's fence)."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import entry_text as _entry, run_kwdocs

ERROR = '''pub struct Error;

impl Error {
    /// Create an error with a pre-defined message
    ///
    /// # Example
    ///
    #[cfg_attr(not(feature = "error-context"), doc = " ```ignore")]
    #[cfg_attr(feature = "error-context", doc = " ```")]
    /// # use clap::error::ErrorKind;
    /// let err = clap::Error::new(ErrorKind::ValueValidation);
    /// err.print();
    /// ```
    pub fn new(kind: u8) -> Self {
        Error
    }

    /// Print the error.
    #[inline]
    #[must_use]
    pub fn print(&self) {}

    /// Said loudly by doc attributes,
    #[doc = " and quoted: \\"yes\\"."]
    #[doc(alias = "shout")]
    pub fn shout(&self) {}
}
'''


def test_a_doc_comment_around_attributes_is_shown_whole(tmp_path: Path):
    src = tmp_path / "src"
    (src / "src").mkdir(parents=True)
    (src / "src" / "lib.rs").write_text(ERROR)
    assert run_kwdocs("build", "--src", str(src), "--out", str(tmp_path / "out"), "-q") == 0
    page = (tmp_path / "out" / "src" / "lib.rs_docs.md").read_text(encoding="utf-8")
    new = _entry(page, "new")
    # the summary above the attributes, the heading, and the example in the fence one of the
    # cfg_attr alternatives opens, without rustdoc's hidden line
    assert "  Create an error with a pre-defined message\n" in new, new
    assert "  #### Example\n" in new
    assert "```rust\nlet err = clap::Error::new(ErrorKind::ValueValidation);\nerr.print();\n```" in new
    assert "use clap::error::ErrorKind" not in new
    # attributes below a whole comment change nothing; doc attributes are lines of the comment
    assert "  Print the error.\n" in _entry(page, "print")
    assert 'Said loudly by doc attributes, and quoted: "yes".' in _entry(page, "shout"), _entry(page, "shout")
