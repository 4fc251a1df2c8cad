"""A docstring whose only Markdown is a reference link (``[text][0]`` with its ``[0]: url``
line) reads as Markdown, as pdoc shows it, not as escaped brackets (issue 32: httpx's
``Client.send``)."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import run_kwdocs

CLIENT = '''class Client:
    def send(self, request):
        """
        Send a request.

        See also: [Request instances][0] and [the guide][guide].

        [0]: /advanced/clients/#request-instances
        [guide]: https://www.python-httpx.org/advanced/
        """
'''


def test_a_reference_link_makes_a_docstring_markdown(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "client.py").write_text(CLIENT)
    assert run_kwdocs("build", "--src", str(src), "--out", str(tmp_path / "out"), "-q") == 0
    page = (tmp_path / "out" / "client.py_docs.md").read_text(encoding="utf-8")
    send = page[page.index("**`send`**"):page.index("## ", page.index("**`send`**"))]
    # a web address is linked, a path of the project's own site is text; no definition line is left
    assert ("See also: Request instances and [the guide](https://www.python-httpx.org/advanced/)."
            in send), send
    assert "\\[" not in send and "[0]:" not in send
