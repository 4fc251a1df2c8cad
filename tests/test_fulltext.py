"""Full-text search over the documentation text: built with the site, per word bucket, kept up to
date by edits, and found in Chromium from file:// and under ``kwdocs serve``."""
from __future__ import annotations

import threading
from pathlib import Path

from kwdocs.config import load_config
from kwdocs.webserver import LiveVersion, SourceFiles, make_server
from tests.browser import chromium, watch
from tests.conftest import run_kwdocs

SHAPES = '''"""Shapes."""


def area(shape):
    """Measure the surface of a zanzibarish polygon."""
    return 0


class Circle:
    """A round thing."""

    def grow(self):
        """Make it wider, as a quokkaberry does."""
'''
NOTES = "# Notes\n\nIntro words.\n\n## Care\n\nFeed the marmoset twice a day.\n"
FILES = {"pkg/shapes.py": SHAPES, "docs/notes.md": NOTES, "pkg/other.py": "def other():\n    return 1\n"}


def _tree(root: Path) -> Path:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _build(src: Path, out: Path) -> Path:
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "--html", "-q") == 0
    return out / "site" / "_kwdocs" / "fulltext"


def _search(page, query: str) -> list[list[str]]:
    """The text results of a query, as [label, kind, where] each."""
    from playwright.sync_api import expect

    page.fill("#kwdocs-search", query)
    page.locator("#kwdocs-results .result-status").first.wait_for()
    expect(page.locator("#kwdocs-results")).not_to_contain_text("Loading")   # no eval: the CSP forbids it
    return [[text.strip() for text in row.locator("span").all_inner_texts()]
            for row in page.locator("#kwdocs-results a.result").all()
            if row.locator(".result-kind").inner_text() == "text"]


def test_a_word_found_only_in_documentation_is_found_from_file_and_under_serve(tmp_path: Path) -> None:
    src, out = _tree(tmp_path / "src"), tmp_path / "out"
    _build(src, out)
    server = make_server(out / "site", "127.0.0.1", 0, LiveVersion(),
                         sources=SourceFiles(load_config(src, overrides={"output": str(out)})))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with chromium() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            watched = watch(page)
            for start in ((out / "site/pkg/other.py_docs.html").as_uri(),
                          f"http://127.0.0.1:{server.server_address[1]}/pkg/other.py_docs.html"):
                page.goto(start)
                assert _search(page, "zanzibarish") == [["area", "text", "pkg/shapes.py:4"]]
                assert _search(page, "zanzib") == [["area", "text", "pkg/shapes.py:4"]]    # as it is typed
                assert _search(page, "quokkaberry wider") == [["Circle.grow", "text", "pkg/shapes.py:12"]]
                assert _search(page, "quokkaberry zanzibarish") == []      # every word must be there
                assert _search(page, "marmoset") == [["Care", "text", "docs/notes.md:5"]]   # Markdown prose
                page.screenshot(path=str(tmp_path / f"fulltext-{start.partition(':')[0]}.png"))
                page.locator("#kwdocs-results a.result", has_text="Care").click()
                page.wait_for_url("**/docs/notes.md_docs.html#L5")
            assert watched.clean(), watched
    finally:
        server.shutdown()
        server.server_close()
    print("screenshots:", tmp_path)


def test_an_edit_rewrites_only_the_buckets_of_the_words_it_changed(tmp_path: Path) -> None:
    src, out = _tree(tmp_path / "src"), tmp_path / "out"
    buckets = _build(src, out)
    assert "zanzibarish" in (buckets / "za.js").read_text()
    stamps = {path.name: path.stat().st_mtime_ns for path in buckets.iterdir()}
    (src / "pkg/shapes.py").write_text(SHAPES.replace("zanzibarish", "yodelling"))
    _build(src, out)
    assert not (buckets / "za.js").exists()              # no word starts with "za" any more
    assert "yodelling" in (buckets / "yo.js").read_text()
    changed = {path.name for path in buckets.iterdir() if stamps.get(path.name) != path.stat().st_mtime_ns}
    assert changed == {"yo.js", "buckets.js"}                # and the list of buckets: "za" went, "yo" came
    (src / "docs/notes.md").unlink()                     # a gone file's words go with it
    _build(src, out)
    assert "marmoset" not in (buckets / "ma.js").read_text()   # "make" is still there


def test_a_damaged_bucket_script_is_made_again_not_trusted(tmp_path: Path) -> None:
    """A bucket's script holds its units' parts, which an edit's build reads back: one edited
    by hand is made again, as is every other, and the state keeps no second copy of the parts."""
    src, out = _tree(tmp_path / "src"), tmp_path / "out"
    buckets = _build(src, out)
    state = load_config(src, overrides={"output": str(out)}).state / "fulltext"
    assert not list(state.glob("bucket-*.json"))
    script = buckets / "ma.js"
    script.write_text(script.read_text().replace("= [", '= ["someone else",', 1))
    other = buckets / "qu.js"       # "quokkaberry": a bucket the edit below leaves alone
    other.write_text(other.read_text() + "// a hand's note\n")
    (src / "docs/notes.md").write_text(NOTES.replace("marmoset", "lemur"))
    _build(src, out)
    text = script.read_text()
    assert "marmoset" not in text and '"make"' in text and "someone" not in text
    assert "a hand's note" not in other.read_text()
