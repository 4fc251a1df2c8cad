"""The MkDocs plugin (issue 34): ``plugins: [kwdocs]`` in a project's ``mkdocs.yml`` puts the
pages into real ``mkdocs build`` and ``mkdocs serve`` runs, in MkDocs' theme and in Material's,
incrementally, with links that resolve and a navigation; the pages' optional front matter."""
from __future__ import annotations

import functools
import http.server
import os
import re
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tests.browser import chromium, watch
from tests.conftest import run_kwdocs

pytest.importorskip("mkdocs")

FILES = {
    "pkg/__init__.py": '''\
        """A tiny package of shapes."""
        from pkg.shapes import Square

        __all__ = ["Square"]
        ''',
    "pkg/shapes.py": '''\
        """Shapes and their areas: squares only, for now."""
        from pkg.units import Metre


        class Square:
            """A square with a side in metres."""

            def __init__(self, side: Metre) -> None:
                self.side = side

            def area(self) -> float:
                """The area."""
                return self.side * self.side
        ''',
    "pkg/units.py": '''\
        """Units of length."""

        Metre = float
        ''',
    "docs/index.md": "# Home\n\nThe project own page.\n",
    ".gitignore": "site/\n",
}
OUT = ".kwdocs-mkdocs"
# Material 9.7's banner about MkDocs 2 on every run, else
ENV = {**os.environ, "DISABLE_MKDOCS_2_WARNING": "true"}


def project(tmp_path: Path, mkdocs_yml: str) -> Path:
    """A project with a package, a docs folder and ``mkdocs_yml``."""
    root = tmp_path / "project"
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
    (root / "mkdocs.yml").write_text(textwrap.dedent(mkdocs_yml), encoding="utf-8")
    return root


def mkdocs(root: Path, *args: str) -> subprocess.CompletedProcess:
    """``mkdocs build --strict`` in ``root`` (any warning, a broken link among them, fails it;
    ``--dirty``, which warns that it is dirty, is not strict)."""
    strict = [] if "--dirty" in args else ["--strict"]
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", *strict, *args], cwd=root,
                          capture_output=True, text=True, timeout=300,
                          env=ENV)


def built(root: Path, *args: str) -> str:
    done = mkdocs(root, *args)
    assert done.returncode == 0, done.stderr
    return done.stderr


def kwdocs_pages(root: Path) -> list[str]:
    """The Markdown pages kwdocs wrote for the plugin, named from its output folder."""
    out = root / OUT
    return sorted(path.relative_to(out).as_posix() for path in out.rglob("*.md") if ".kwdocs" not in path.parts)


def site_page(site: Path, prefix: str, page: str) -> Path:
    """Where MkDocs (directory URLs) puts ``page``: ``a/index.md`` at ``a/index.html``, ``a/b.md``
    at ``a/b/index.html``."""
    stem = page[: -len(".md")]
    return site / prefix / (stem[: -len("index")] if stem == "index" or stem.endswith("/index") else stem + "/") \
        / "index.html"


PLAIN = """\
    site_name: Shapes
    plugins:
      - kwdocs:
          jobs: 1
    """


def test_mkdocs_build_holds_a_page_for_every_kwdocs_page_and_every_link_resolves(tmp_path):
    root = project(tmp_path, PLAIN)
    log = built(root)
    assert "kwdocs: 5 files scanned" in log
    pages = kwdocs_pages(root)
    assert {"index.md", "doc.md", "keywords.md", "pkg/index.md", "pkg/shapes.py_docs.md", "pkg/shapes.py_kw.md",
            "docs/index.md_docs.md", "mkdocs.yml_docs.md"} <= set(pages)
    site = root / "site"
    for page in pages:
        assert site_page(site, "reference", page).is_file(), page
    # the project's own page is untouched, and nothing of kwdocs' state or of the site is documented
    assert "The project own page." in (site / "index.html").read_text(encoding="utf-8")
    assert not (site / "reference" / ".kwdocs").exists() and not any(page.startswith("site/") for page in pages)
    # every link of a kwdocs page leads to a file of the site (--strict already refused a broken one)
    for page in pages:
        html_file = site_page(site, "reference", page)
        for href in re.findall(r'href="([^"#:]+)(?:#[^"]*)?"', html_file.read_text(encoding="utf-8")):
            target = (html_file.parent / href).resolve()
            assert target.is_file() or (target / "index.html").is_file(), f"{page}: {href}"
    shapes = site_page(site, "reference", "pkg/shapes.py_docs.md").read_text(encoding="utf-8")
    # a definition's lines link to the file's source on its own page: the site holds no source files
    assert re.search(r'<a href="\./#original-source">line 5</a>', shapes), shapes
    assert 'id="original-source"' in shapes
    assert 'href="../units.py_docs/#l3-variable-metre"' in shapes


def test_a_second_build_after_one_edit_rewrites_that_files_pages_only(tmp_path):
    root = project(tmp_path, PLAIN)
    built(root)
    out = root / OUT
    before = {page: (out / page).stat().st_mtime_ns for page in kwdocs_pages(root)}
    log = built(root)
    assert "0 pages written, 0 removed" in log
    assert {page: (out / page).stat().st_mtime_ns for page in kwdocs_pages(root)} == before
    shapes = root / "pkg/shapes.py"
    # the same size and lines: the folder's pages, which show both, have nothing new to say
    shapes.write_text(shapes.read_text(encoding="utf-8").replace("self.side * self.side", "abs(self.side) ** 2.0"),
                      encoding="utf-8")
    built(root)
    after = {page: (out / page).stat().st_mtime_ns for page in kwdocs_pages(root)}
    assert after.keys() == before.keys()
    assert {page for page in after if after[page] != before[page]} == {"pkg/shapes.py_docs.md"}
    html_page = root / "site/reference/pkg/shapes.py_docs/index.html"
    assert "abs(self.side) ** 2.0" in html_page.read_text(encoding="utf-8")
    # ``--dirty`` (as ``mkdocs serve --dirty``): MkDocs renders again only the pages kwdocs wrote
    # again (and its 404 page, always)
    html_before = {path: path.stat().st_mtime_ns for path in (root / "site").rglob("*.html")}
    shapes.write_text(shapes.read_text(encoding="utf-8").replace("abs(self.side) ** 2.0", "self.side * self.side"),
                      encoding="utf-8")
    built(root, "--dirty")
    html_after = {path: path.stat().st_mtime_ns for path in (root / "site").rglob("*.html")}
    assert {path.relative_to(root / "site").as_posix() for path in html_after
            if html_after[path] != html_before.get(path)} - {"404.html"} == {"reference/pkg/shapes.py_docs/index.html"}


def test_material_theme_front_matter_and_literate_nav(tmp_path):
    pytest.importorskip("material")
    pytest.importorskip("mkdocs_literate_nav")
    root = project(tmp_path, """\
        site_name: Shapes
        theme:
          name: material
          features: [navigation.indexes]
        plugins:
          - kwdocs:
              jobs: 1
              prefix: api
              front_matter: true
          - literate-nav
        """)
    (root / "docs/SUMMARY.md").write_text("- [Home](index.md)\n- [API](api/)\n", encoding="utf-8")
    built(root)
    shapes = (root / OUT / "pkg/shapes.py_docs.md").read_text(encoding="utf-8")
    assert shapes.startswith("---\ntitle: 'Documentation: pkg/shapes.py'\n"
                             "description: 'Shapes and their areas: squares only, for now.'\n---\n\n"
                             "# Documentation: `pkg/shapes.py`\n")
    html_page = (root / "site/api/pkg/shapes.py_docs/index.html").read_text(encoding="utf-8")
    assert '<meta name="description" content="Shapes and their areas: squares only, for now.">' in html_page
    assert "<title>Documentation: pkg/shapes.py - Shapes</title>" in html_page
    # the navigation from the plugin's SUMMARY.md: the folders as sections, each file's page in its folder's
    home = (root / "site/index.html").read_text(encoding="utf-8")
    nav = re.findall(r'href="(api/[^"]*)" class="md-nav__link', home)
    assert nav[:3] == ["api/", "api/doc/", "api/keywords/"]
    assert nav.index("api/pkg/") < nav.index("api/pkg/__init__.py_docs/") < nav.index("api/pkg/shapes.py_docs/")
    assert "api/pkg/shapes.py_kw/" not in nav and "api/SUMMARY/" not in nav


def test_a_github_repo_url_sends_the_line_links_to_the_forge(tmp_path):
    root = project(tmp_path, """\
        site_name: Shapes
        repo_url: https://github.com/owner/shapes/
        plugins:
          - kwdocs:
              jobs: 1
        """)
    built(root)
    shapes = (root / "site/reference/pkg/shapes.py_docs/index.html").read_text(encoding="utf-8")
    assert '<a href="https://github.com/owner/shapes/blob/HEAD/pkg/shapes.py#L5-L13">line 5</a>' in shapes
    # the theme's edit link edits the source file, not a page that kwdocs writes
    assert 'href="https://github.com/owner/shapes/edit/master/pkg/shapes.py"' in shapes
    keywords = (root / "site/reference/pkg/shapes.py_kw/index.html").read_text(encoding="utf-8")
    assert "/edit/" not in keywords
    assert "./#original-source" not in shapes


def test_output_inside_docs_dir_is_one_line_and_exit_1(tmp_path):
    root = project(tmp_path, """\
        site_name: Shapes
        plugins:
          - kwdocs:
              output: docs/reference
        """)
    done = mkdocs(root)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert re.fullmatch(r"ERROR +- +kwdocs: 'output' \(\S*/docs/reference\) must be outside docs_dir \(\S*/docs\): "
                        r"[^\n]*\n", done.stderr), done.stderr
    assert not (root / "docs/reference").exists()


def test_front_matter_is_a_setting_and_off_by_default(tmp_path):
    root = project(tmp_path, PLAIN)
    out = tmp_path / "out"
    assert run_kwdocs("build", "--src", str(root), "--out", str(out), "-q") == 0
    plain = {path: path.read_text(encoding="utf-8") for path in out.rglob("*.md") if ".kwdocs" not in path.parts}
    assert all(text.startswith("# ") for text in plain.values())
    (root / "pyproject.toml").write_text("[tool.kwdocs]\nfront_matter = true\n", encoding="utf-8")
    assert run_kwdocs("build", "--src", str(root), "--out", str(out), "-q") == 0
    assert (out / "pkg/units.py_docs.md").read_text(encoding="utf-8").startswith(
        "---\ntitle: 'Documentation: pkg/units.py'\ndescription: Units of length.\n---\n\n# ")
    assert (out / "pkg/index.md").read_text(encoding="utf-8").startswith("---\ntitle: 'Folder Index: pkg/'\n---\n")
    assert run_kwdocs("check", "--src", str(root), "--out", str(out)) == 0
    # off again: the pages are as they were, byte for byte (pyproject.toml is a new source file)
    (root / "pyproject.toml").write_text("[tool.kwdocs]\nfront_matter = false\n", encoding="utf-8")
    assert run_kwdocs("build", "--src", str(root), "--out", str(out), "-q") == 0
    for path, text in plain.items():
        if path.name not in ("index.md", "doc.md", "keywords.md"):
            assert path.read_text(encoding="utf-8") == text, path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fetched(url: str, seconds: float, wanted: str = "") -> str:
    """The page at ``url`` once it answers (and holds ``wanted``), within ``seconds``."""
    from urllib.request import urlopen
    deadline = time.monotonic() + seconds
    text = ""
    while time.monotonic() < deadline:
        try:
            with urlopen(url, timeout=5) as answer:
                text = answer.read().decode("utf-8")
            if wanted in text:
                return text
        except OSError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"{url} did not show {wanted!r} within {seconds} s; last: {text[:200]!r}")


def test_mkdocs_serve_rebuilds_the_pages_when_a_source_file_is_saved(tmp_path):
    root = project(tmp_path, PLAIN)
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}"],
                              cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=ENV)
    try:
        url = f"http://127.0.0.1:{port}/reference/pkg/units.py_docs/"
        assert "Units of length." in fetched(url, 60)
        (root / "pkg/units.py").write_text('"""Units of length."""\n\nMetre = float\n\n\n'
                                           'def feet(metres: float) -> float:\n'
                                           '    """Metres in feet."""\n    return metres * 3.28\n', encoding="utf-8")
        assert "Metres in feet." in fetched(url, 60, "Metres in feet.")
        time.sleep(2)   # a rebuild writing into the output folder would set off another, and another
    finally:
        server.terminate()
        log = server.communicate(timeout=30)[0]
    assert log.count("kwdocs: 5 files scanned") == 2, log
    watched = re.search(r"Watching paths for changes: (.*)", log)
    assert watched and "'pkg'" in watched.group(1) and OUT not in watched.group(1), log


@pytest.fixture
def http_site(tmp_path):
    """The plugin's site of the project in MkDocs' theme, served over HTTP (directory URLs need a server)."""
    # no highlight.js from its CDN: the tests have no network
    root = project(tmp_path, """\
        site_name: Shapes
        theme:
          name: mkdocs
          highlightjs: false
        plugins:
          - search
          - kwdocs:
              jobs: 1
        """)
    built(root)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root / "site"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_site_is_browsable_from_one_kwdocs_page_to_another(http_site):
    with chromium() as browser:
        page = browser.new_page()
        watched = watch(page)
        page.goto(f"{http_site}/reference/pkg/shapes.py_docs/")
        assert page.locator("h1").first.inner_text() == "Documentation: pkg/shapes.py"
        content = page.locator('[role="main"]')     # MkDocs' theme: the page, beside the navigation
        content.locator("a", has_text="Metre").first.click()
        page.wait_for_url(re.compile(r"/reference/pkg/units\.py_docs/#l3-variable-metre$"))
        assert page.locator("h1").first.inner_text() == "Documentation: pkg/units.py"
        content.get_by_role("link", name="folder index", exact=True).click()
        page.wait_for_url(re.compile(r"/reference/pkg/$"))
        assert page.locator("h1").first.inner_text() == "Folder Index: pkg/"
        assert watched.clean(), watched
