"""Docstrings without sections are read without griffe, and read exactly as griffe reads them."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import griffe
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kwdocs.pages import docstrings


def _through_griffe(text: str, resolve) -> dict:
    """What ``python_doc`` shows when every docstring goes through griffe's parsers."""
    plain = docstrings._ROLE_PREFIX.sub("`", text)
    sections, tail = docstrings._sections(plain)
    assert sections is not None
    markdown = docstrings.is_markdown(text)
    blocks = [block for section in sections for block in docstrings._section_blocks(section, resolve, markdown)]
    blocks += docstrings._prose(tail, resolve, markdown) if tail else []
    summary, body = docstrings._summary(blocks)
    return {"summary": summary, "blocks": docstrings._capped(body)}


def _resolve(name: str) -> str:
    return "#anchor" if name.startswith("T") else ""


# words, punctuation and line shapes sections are made of, so that some draws hold a section and most do not
_PIECES = st.sampled_from(["Args", "Returns", "Note", "Example", "Parameters", "word", "x", ":", "::", "-",
                           "---", "----------", ":param x:", ":class:`Tensor`", "``code``", "`T`", ">>> f()",
                           ".. note::", "* item", " ", "  ", "\t", "\n", "\n\n", "\n    ", "ſ", "\u212a", "é",
                           "\u3000", "\x0c"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
@example("Sum two numbers.")
@example("**Sum** two\nnumbers.\n\n* **x** - a\nnumber.\n")   # Markdown, read as Markdown both ways
@example("Sum.\n\n    Args:\n        x: a number.\n    ")
@example("Sum.\n\nArgumentſ:\n    x: a")           # long s: griffe's patterns ignore case, Unicode's way
@example("Sum.\n\n\u212aeyword args:\n    x: a")   # the Kelvin sign is a k too
@example("Sum.\n\nParameters\n----------\nx : int\n    a number.")
@example("Sum.\n\n:param x: a number.\n:returns: the sum.\n")
@example("\n\nArgs:\n    x: a number.")           # a section on the first line is no section for griffe
@example("Uses :class:`~T.Module` and ``literal``.\n\nExample::\n\n    >>> f()\n")
@example("  \n  ")
@example("Sum.\n\n\u3000Args:\n\u3000    x: a number.")   # indented by other white space than blanks
@example("Sum.\n\n    Keyword\targs:\n        x: a number.")   # a tab, a blank once tabs are expanded
def test_a_docstring_reads_the_same_whether_or_not_griffe_parses_it(text):
    assert docstrings.python_doc(text, _resolve) == _through_griffe(text, _resolve)


def test_a_build_of_docstrings_without_sections_does_not_load_griffe(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "plain.py").write_text(textwrap.dedent('''\
        """A module with plain docstrings."""


        def add(a: int, b: int) -> int:
            """Add two numbers.

            Returns their sum, in a plain paragraph with no section.
            """
            return a + b
        '''), encoding="utf-8")
    out = tmp_path / "out"
    script = ("import sys\nfrom kwdocs.cli import main\n"
              f"code = main(['build', '--src', {str(src)!r}, '--out', {str(out)!r}, '-j', '1', '-q'])\n"
              "print(code, 'griffe' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout.split()[-2:] == ["0", "False"], done.stdout + done.stderr
    page = (out / "plain.py_docs.md").read_text(encoding="utf-8")
    assert "Add two numbers." in page and "Returns their sum, in a plain paragraph with no section." in page
