"""An HTML build highlights a C/C++/CUDA source from the tree extraction parsed (its tokens kept in
``.kwdocs/tokens``), and the page is the same, byte for byte, when the render step parses it itself:
tokens lost, damaged or made of other text are never used."""
from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

from kwdocs.site import highlight
from tests.conftest import run_kwdocs

HEADER = """// Shapes for the test.
#pragma once
#include <vector>

namespace geo {

class GEO_API Circle {
 public:
  explicit Circle(double radius) : radius_(radius) {}
  GEO_API double area() const { return 3.14159 * radius_ * radius_; }  // "π r²" <not a tag> & more

 private:
  double radius_;
};

#if 0
int ancien(const char* s = "déjà vu");   // dead: blanked before parsing, with its letters beyond ASCII
#endif

inline int after(int x) { return x + 1; }

}  // namespace geo
"""
KERNEL = """#include "shapes.h"

__global__ void scale(float* data, float factor) {
  data[threadIdx.x] *= factor;  /* é */
}
"""
C_SOURCE = """#include <stdio.h>

int new_count(int class) { return class + 1; }
"""


def make_tree(root: Path) -> Path:
    tree = root / "tree"
    (tree / "geo").mkdir(parents=True)
    (tree / "geo" / "shapes.h").write_text(HEADER, encoding="utf-8")
    (tree / "geo" / "kernel.cu").write_text(KERNEL, encoding="utf-8")
    (tree / "geo" / "plain.c").write_text(C_SOURCE, encoding="utf-8")
    (tree / "geo" / "tool.py").write_text("def tool():\n    return 1\n", encoding="utf-8")
    return tree


def build(tree: Path, out: Path, *args: str) -> None:
    assert run_kwdocs("build", "--src", str(tree), "--out", str(out), "-q", *args) == 0


def source_pages(out: Path) -> dict[str, bytes]:
    """Every file's HTML pages (folder and keyword pages are made apart from the sources)."""
    return {path.relative_to(out).as_posix(): path.read_bytes() for path in sorted((out / "site").rglob("*.html"))
            if path.name.endswith(("_docs.html", "_kw.html"))}


def token_shards(out: Path) -> list[Path]:
    folder = out / ".kwdocs" / "tokens"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def source_of(page: str) -> str:
    found = re.search(r'<pre class="kwdocs-numbered" data-lines="\d+"><code>(.*?)\n</code>', page, re.DOTALL)
    assert found, "no source block"
    return found.group(1)


def coloured(cls: str, name: str, source: str) -> bool:
    """Is ``name`` a token of class ``cls`` (linked to its definition or not)?"""
    return re.search(f"<i class={cls}>(?:<a [^>]*>)?{name}(?:</a>)?</i>", source) is not None


@pytest.fixture
def parses(monkeypatch) -> list[str]:
    """The fence infos the highlighter parsed a text as (not given the tokens extraction kept)."""
    seen: list[str] = []
    parse = highlight.source_tokens
    monkeypatch.setattr(highlight, "source_tokens",
                        lambda text, data, info: seen.append(info) or parse(text, data, info))
    return seen


def test_cold_html_build_parses_each_source_once_and_pages_match_those_parsed_again(tmp_path, parses):
    tree = make_tree(tmp_path)
    cold = tmp_path / "cold"
    build(tree, cold, "--html")
    assert token_shards(cold), "the extraction kept no tokens"
    # C++ and CUDA came from extraction's trees; C is highlighted with its own grammar (extraction reads
    # it as C++), so it is parsed again; Python has a lexer of its own and is never parsed
    assert "cpp" not in parses and "cuda" not in parses and "c" in parses and "python" not in parses

    # the same tree documented in Markdown first: its facts are kept, so the HTML build's render parses
    parses.clear()
    later = tmp_path / "later"
    build(tree, later)
    assert token_shards(later) == [], "a Markdown-only build wrote tokens"
    build(tree, later, "--html")
    assert "cpp" in parses and "cuda" in parses
    assert source_pages(cold) == source_pages(later)
    assert len(source_pages(cold)) == 8


def test_every_byte_of_a_prepared_source_is_shown_and_its_names_coloured_where_they_stand(tmp_path):
    tree = make_tree(tmp_path)
    out = tmp_path / "out"
    build(tree, out, "--html")
    page = (out / "site" / "geo" / "shapes.h_docs.html").read_text(encoding="utf-8")
    source = source_of(page)
    assert unescape(re.sub(r"<[^>]+>", "", source)) == HEADER.rstrip("\n")
    # the export macro is blanked for the parser: the class name is coloured, not the macro
    assert "<i class=nc>Circle</i>" in source and "<i class=nc>GEO_API</i>" not in source
    # after a blanked line holding letters beyond ASCII, ranges still fall on the names they colour
    assert coloured("nf", "after", source)
    assert '<i class=c>// &quot;π r²&quot; &lt;not a tag&gt; &amp; more</i>' in source.replace('"', "&quot;")
    kernel = source_of((out / "site" / "geo" / "kernel.cu_docs.html").read_text(encoding="utf-8"))
    assert coloured("nf", "scale", kernel) and "<i class=c>/* é */</i>" in kernel


def _flip_classes(shard: Path) -> None:
    """Change the class bytes of the ranges, keeping the file's length (its seal no longer matches)."""
    data = bytearray(shard.read_bytes())
    body_end = len(data) - 34
    for index in range(body_end - 20, body_end):
        data[index] = (data[index] + 1) % 9
    shard.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["deleted", "truncated", "classes changed"])
def test_lost_or_damaged_tokens_are_not_used_and_pages_stay_the_same(tmp_path, damage, parses):
    tree = make_tree(tmp_path)
    out = tmp_path / "out"
    build(tree, out, "--html")
    shards = token_shards(out)
    assert shards
    for shard in shards:
        if damage == "deleted":
            shard.unlink()
        elif damage == "truncated":
            shard.write_bytes(shard.read_bytes()[:-50])
        else:
            _flip_classes(shard)
    # another setting of the pages, not of the facts: every page is rendered again, nothing extracted
    parses.clear()
    build(tree, out, "--html", "--max-source-bytes", "100000")
    assert "cpp" in parses and "cuda" in parses         # parsed again, not taken from the damaged shard
    fresh = tmp_path / "fresh"
    build(tree, fresh, "--html", "--max-source-bytes", "100000")
    assert source_pages(out) == source_pages(fresh)


def test_tokens_of_other_text_of_the_same_size_are_not_used(tmp_path):
    tree = make_tree(tmp_path)
    header = tree / "geo" / "shapes.h"
    out = tmp_path / "out"
    build(tree, out, "--html")
    # the same length, other tokens; documented in Markdown only, so its kept tokens stay those of the old text
    edited = HEADER.replace("inline int after", "/* inl int after").replace("x + 1; }", "x + 1 */")
    assert len(edited) == len(HEADER) and edited != HEADER
    header.write_text(edited, encoding="utf-8")
    build(tree, out)
    build(tree, out, "--html")
    fresh = tmp_path / "fresh"
    build(tree, fresh, "--html")
    page = (out / "site" / "geo" / "shapes.h_docs.html").read_bytes()
    assert page == (fresh / "site" / "geo" / "shapes.h_docs.html").read_bytes()
    assert "<i class=c>/* inl int after(int x) { return x + 1 */</i>" in source_of(page.decode())


def test_kept_tokens_are_used_only_for_their_own_text(tmp_path):
    """Tokens offered to the highlighter colour a text only when it is exactly what they were made of."""
    from kwdocs.site import tokens

    text = "int a;\n"
    data = text.encode()
    whole = [(0, len(data) - 1, b"c")]          # what no parse gives: the whole line a comment
    entry = tokens.Entry("cpp", len(data), tokens.text_digest(data), tokens.pack(whole))
    with tokens.offered({"a.h": entry}):
        assert highlight.highlighted(text, "cpp") == "<i class=c>int a;</i>"
        assert highlight.highlighted("int b;\n", "cpp") == "<i class=nc>int</i> b;"     # same size, other text
        assert highlight.highlighted(text, "cuda") == "<i class=nc>int</i> a;"          # other grammar
    assert highlight.highlighted(text, "cpp") == "<i class=nc>int</i> a;"


def test_a_source_its_page_shows_cut_keeps_no_tokens_and_is_parsed_as_shown(tmp_path, parses):
    tree = make_tree(tmp_path)
    out = tmp_path / "out"
    build(tree, out, "--html", "--max-source-bytes", "300")      # the header is cut, the kernel is not
    assert parses.count("cpp") == 1 and "cuda" not in parses
    kept = b"".join(shard.read_bytes() for shard in token_shards(out))
    assert b'"geo/kernel.cu"' in kept and b'"geo/shapes.h"' not in kept     # no tokens that could never serve
    page = (out / "site" / "geo" / "shapes.h_docs.html").read_text(encoding="utf-8")
    shown = unescape(re.sub(r"<[^>]+>", "", source_of(page)))
    assert 0 < len(shown) < 300 and HEADER.startswith(shown)
    later = tmp_path / "later"
    build(tree, later, "--max-source-bytes", "300")
    build(tree, later, "--html", "--max-source-bytes", "300")
    assert source_pages(out) == source_pages(later)


def test_tokens_of_a_folder_that_went_away_go_with_it(tmp_path):
    tree = make_tree(tmp_path)
    (tree / "other").mkdir()
    (tree / "other" / "more.h").write_text("int more();\n", encoding="utf-8")
    out = tmp_path / "out"
    build(tree, out, "--html")
    assert len(token_shards(out)) == 2
    (tree / "other" / "more.h").unlink()
    (tree / "other").rmdir()
    build(tree, out, "--html")
    assert len(token_shards(out)) == 1 and b'"geo/shapes.h"' in token_shards(out)[0].read_bytes()
