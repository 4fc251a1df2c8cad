""""Original File" links: from file:// they open the source file, and under ``kwdocs serve`` the
server answers them with the documented source (read-only, masked as its page is) and nothing else."""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kwdocs.config import load_config
from kwdocs.webserver import LiveVersion, SourceFiles, make_server
from tests.browser import chromium
from tests.conftest import run_kwdocs
from tests.test_serve import request

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"   # a GitHub token's shape, made up
FILES = {
    "pkg/core.py": '"""Core."""\n\nTOKEN = "' + SECRET + '"\n\n\ndef run():\n    return 1\n',
    "pkg/notes.md": "# Notes\n\nPlain words.\n",
    ".hidden/secret.py": "X = 1\n",
    "ignored.log": "not documented\n",
    ".gitignore": "*.log\n",
}


def _tree(root: Path) -> Path:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@contextmanager
def _serving(src: Path, out: Path) -> Iterator[int]:
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "--html", "-q") == 0
    config = load_config(src, overrides={"output": str(out)})
    server = make_server(out / "site", "127.0.0.1", 0, LiveVersion(), sources=SourceFiles(config))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_original_file_is_served_beside_the_site_and_nothing_else(tmp_path: Path) -> None:
    src = _tree(tmp_path / "src")
    outside = tmp_path / "outside.py"
    outside.write_text("LEAKED = 1\n")
    (src / "pkg" / "link.py").symlink_to(outside)           # a link out of the tree
    out = src / "docs"                                       # the output folder inside the tree
    with _serving(src, out) as port:
        status, headers, body = request(port, "/pkg/core.py")
        assert status == 200 and headers["content-type"] == "text/plain; charset=utf-8"
        assert b"def run():" in body and SECRET.encode() not in body     # masked as on its page
        assert "script-src 'self'" in headers["content-security-policy"]
        assert request(port, "/pkg/notes.md")[2] == FILES["pkg/notes.md"].encode()
        assert request(port, "/pkg/notes.md", method="HEAD")[0] == 200
        for hostile in ["/.hidden/secret.py", "/%2ehidden/secret.py", "/ignored.log", "/.gitignore",
                        "/pkg/link.py", "/pkg/../pkg/core.py", "/pkg/%2e%2e/pkg/core.py", "/docs/.kwdocs/lock",
                        "/docs/pkg/core.py_docs.md", "/pkg//core.py", "/pkg/core.py%00", "/pkg\\core.py",
                        "/../outside.py", "/pkg/missing.py", "/pkg/core.py/"]:
            status, _, body = request(port, hostile)
            assert status in (400, 404), (hostile, status)
            assert b"LEAKED" not in body and b"X = 1" not in body and b"def run" not in body, hostile
        assert request(port, "/index.html")[0] == 200            # the site still comes first


def test_original_file_link_opens_the_source_from_file_and_under_serve(tmp_path: Path) -> None:
    src = _tree(tmp_path / "src")
    out = tmp_path / "elsewhere" / "out"                     # the output folder beside the tree
    with _serving(src, out) as port, chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        for start in (f"http://127.0.0.1:{port}/pkg/core.py_kw.html", (out / "site/pkg/core.py_kw.html").as_uri()):
            page.goto(start)
            page.get_by_role("link", name="pkg/core.py").first.click()
            page.wait_for_load_state()
            assert page.url.endswith("/pkg/core.py"), page.url      # the source itself, not its page
            assert "def run():" in page.locator("body").inner_text(), page.url
            if start.startswith("file:"):
                assert page.url == (src / "pkg/core.py").as_uri()
            else:
                assert SECRET not in page.locator("body").inner_text()
            page.screenshot(path=str(tmp_path / f"original-{start.partition(':')[0]}.png"))
    print("screenshots:", tmp_path)
