"""End-to-end builds of a temporary tree: which pages each kind of change rewrites."""
from __future__ import annotations

import functools
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from kwdocs import layout
from kwdocs.store import writer as output
from kwdocs.context import drop_contexts
from tests.conftest import changed_after_extraction, changed_files, run_kwdocs, snapshot
from tests.output_checks import pages

FILE_PAGES = ("_docs.md", "_kw.md")


@pytest.fixture
def built(golden_tree: Path):
    """A tree built once; returns (tree, out, build function)."""
    out = golden_tree.parent / "out"

    def build(*extra: str) -> dict:
        before = snapshot(out) if out.exists() else {}
        time.sleep(0.01)  # distinct mtimes for pages rewritten now
        assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q", *extra) == 0
        return changed_files(before, snapshot(out))

    build()
    return golden_tree, out, build



def state_json(path: Path) -> object:
    """A state file's JSON (its last line seals it)."""
    return json.loads(output.unsealed(path.read_bytes()))

def test_first_build_writes_every_page(built):
    tree, out, _ = built
    pages = {p.relative_to(out).as_posix() for p in out.rglob("*.md")}
    for source in ("README.md", "geometry/__init__.py", "geometry/shapes/circle.py", "docs/guide.rst",
                   "docs/notes.txt", "docs/logo.png", "tools/make_shapes.py", "pyproject.toml"):
        assert source + "_docs.md" in pages and source + "_kw.md" in pages
    for folder in ("", "geometry/", "geometry/shapes/", "docs/", "tools/", "tests/"):
        assert folder + "index.md" in pages and folder + "doc.md" in pages
    assert not any(page.startswith(("build/", "debug.log")) for page in pages), "ignored files documented"


def test_noop_and_touch_write_nothing(built):
    tree, out, build = built
    assert build() == set()
    os.utime(tree / "geometry/shapes/circle.py")
    assert build() == set()


def test_edit_changing_keywords_rewrites_own_pages_and_folder_pages(built):
    tree, out, build = built
    with open(tree / "geometry/shapes/circle.py", "a") as handle:
        handle.write("\n\ndef unit_circle() -> Circle:\n    return Circle()\n")
    assert build() == {"geometry/shapes/circle.py_docs.md", "geometry/shapes/circle.py_kw.md",
                       "geometry/shapes/index.md", "geometry/shapes/doc.md", "keywords.md"}
    assert "unit_circle" in (out / "geometry/shapes/circle.py_kw.md").read_text()
    assert "unit_circle" in (out / "keywords.md").read_text()


def test_edit_changing_no_keyword_keeps_keyword_page(built):
    tree, out, build = built
    path = tree / "geometry/shapes/circle.py"
    path.write_text(path.read_text().replace('"""Circles."""', '"""Circles of any radius."""'))
    written = build()
    assert "geometry/shapes/circle.py_docs.md" in written
    assert "geometry/shapes/circle.py_kw.md" not in written
    assert not {page for page in written if page.endswith(FILE_PAGES)} - {"geometry/shapes/circle.py_docs.md"}


def test_adding_deleting_renaming(built):
    tree, out, build = built
    (tree / "tools/extra.py").write_text('"""More tools."""\n\ndef helper():\n    pass\n')
    written = build()
    assert {"tools/extra.py_docs.md", "tools/extra.py_kw.md", "tools/index.md"} <= written
    assert not any(page.startswith(("geometry/", "docs/")) for page in written)

    (tree / "tools/extra.py").rename(tree / "tools/renamed.py")
    written = build()
    assert not (out / "tools/extra.py_docs.md").exists() and not (out / "tools/extra.py_kw.md").exists()
    assert (out / "tools/renamed.py_docs.md").exists()

    (tree / "tools/renamed.py").unlink()
    build()
    assert not (out / "tools/renamed.py_docs.md").exists()
    assert "renamed.py" not in (out / "tools/index.md").read_text()

    docs_state = sorted(path.parent.name for path in (out / ".kwdocs").glob(f"*/{layout.state_name('docs')}"))
    assert {"facts", "keyword-entries", "link-inputs", "links", "pages", "rows"} <= set(docs_state)
    shutil.rmtree(tree / "docs")
    build()
    assert not (out / "docs").exists(), "pages of a deleted folder must go"
    assert not list((out / ".kwdocs").glob(f"*/{layout.state_name('docs')}")), "so must its state"
    assert "docs/" not in (out / "index.md").read_text()


def test_template_edit_rewrites_only_pages_of_that_template(built, tmp_path):
    tree, out, build = built
    templates = tmp_path / "templates"
    templates.mkdir()
    shipped = Path(__file__).parent.parent / "templates" / "file_kw.md.j2"
    (templates / "file_kw.md.j2").write_text(shipped.read_text().replace("## File Information", "## About This File"))
    written = build("--templates", str(templates))
    kw_pages = {p.relative_to(out).as_posix() for p in out.rglob("*_kw.md")}
    assert written == kw_pages
    assert "## About This File" in (out / "README.md_kw.md").read_text()


def test_editing_an_included_template_rewrites_the_pages_that_include_it(built, tmp_path):
    """An override may pull in partials; a page depends on every template it names."""
    tree, out, build = built
    templates = tmp_path / "templates"
    templates.mkdir()
    shipped = Path(__file__).parent.parent / "templates" / "folder_doc.md.j2"
    text = shipped.read_text()
    footer = text[text.rindex("---"):]
    (templates / "folder_doc.md.j2").write_text(text.replace(footer, '{%- include "footer.md.j2" %}\n'))
    (templates / "footer.md.j2").write_text("---\n\n*Documented by kwdocs*\n")
    build("--templates", str(templates))
    assert "*Documented by kwdocs*" in (out / "doc.md").read_text()
    (templates / "footer.md.j2").write_text("---\n\n*Documented by kwdocs, with a partial*\n")
    drop_contexts()    # these builds share one process: forget the templates, as a restarted watch does
    written = build("--templates", str(templates))
    doc_pages = {p.relative_to(out).as_posix() for p in out.rglob("doc.md")}
    assert written == doc_pages
    assert "*Documented by kwdocs, with a partial*" in (out / "geometry/doc.md").read_text()


def test_configuration_change_rewrites_affected_pages(built):
    tree, out, build = built
    written = build("--project-name", "Renamed Geometry")
    assert (out / "README.md_docs.md").read_text().count("Renamed Geometry") >= 1
    assert "index.md" in written and "README.md_docs.md" in written


def test_output_inside_source_is_never_an_input(golden_tree):
    out = golden_tree / "kwdocs-out"
    for _ in range(2):
        assert run_kwdocs("build", "--src", str(golden_tree), "-q") == 0
    names = [p.name for p in out.rglob("*")]
    assert not [n for n in names if n.endswith(("_docs.md_docs.md", "_kw.md_docs.md", "_docs.md_kw.md"))]
    assert not (out / "kwdocs-out").exists()


def test_dropping_an_import_updates_only_the_imported_files_page(built):
    tree, out, build = built
    test_file = tree / "tests/test_circle.py"
    test_file.write_text("import math\n\n\ndef test_pi():\n    assert math.pi > 3\n")
    written = build()
    file_pages = {page for page in written if page.endswith(FILE_PAGES)}
    assert file_pages == {"tests/test_circle.py_docs.md", "tests/test_circle.py_kw.md",
                          "geometry/shapes/circle.py_docs.md"}
    circle = (out / "geometry/shapes/circle.py_docs.md").read_text()
    assert "tests/test_circle.py" not in circle


@pytest.mark.parametrize("kind", ["link-inputs", "rows", "folder-parts"])
def test_lost_unit_state_is_rebuilt_from_the_facts(built, tmp_path, kind):
    """Linking keeps each unit's imports, and the folder pages each unit's summary rows, in
    state shards of their own; one lost or damaged must not lose that unit's used-by lists or
    rows when another file changes."""
    tree, out, build = built
    inputs = sorted((out / ".kwdocs" / kind).glob("*.json"))
    assert len(inputs) >= 5, f"one {kind} shard per unit was expected"
    for number, shard in enumerate(inputs):
        if number % 3 == 1:
            shard.write_text("{damaged")
        elif number % 3 == 2:   # well-formed JSON of the wrong shape
            unit = state_json(shard)["unit"]
            shard.write_text(json.dumps({"unit": unit, "rows": 5, "files": 5, "digest": 5, "problems": 5, "part": 5}))
        else:
            shard.unlink()
    (tree / "tests/test_circle.py").write_text("import math\n\n\ndef test_pi():\n    assert math.pi > 3\n")
    (tree / "geometry/shapes/triangle.py").write_text("def area(base, height):\n    return base * height / 2\n")
    build()    # the new file changes the totals on the pages of geometry/ and the root: their rows are read
    cold = tmp_path / "cold"
    assert run_kwdocs("build", "--src", str(tree), "--out", str(cold), "-q") == 0
    assert pages(cold) == pages(out)


def test_lost_keyword_entries_are_made_again_from_the_facts(built, tmp_path):
    """Extraction keeps each unit's keyword index entries in a shard of their own, which the
    keyword step reads for every unit when it makes the index again as a whole (its own state
    lost, new templates): one lost or damaged must not drop that unit's names from the index."""
    tree, out, build = built
    entries = sorted((out / ".kwdocs" / "keyword-entries").glob("*.json"))
    assert len(entries) >= 5, "one keyword-entries shard per unit was expected"
    for number, shard in enumerate(entries):
        if number % 2:
            shard.write_text("{damaged")
        else:
            shard.unlink()
    (out / ".kwdocs" / "keywords" / "meta.json").unlink()
    (tree / "geometry/shapes/triangle.py").write_text("def area(base, height):\n    return base * height / 2\n")
    build()
    assert sorted((out / ".kwdocs" / "keyword-entries").glob("*.json")) == entries
    cold = tmp_path / "cold"
    assert run_kwdocs("build", "--src", str(tree), "--out", str(cold), "-q") == 0
    assert pages(cold) == pages(out)
    assert "`Circle`" in (out / "keywords.md").read_text()


def small_units(monkeypatch, tree: Path, count: int) -> Path:
    """Units of 4 files at most (buckets of about 2), and a folder ``many`` of ``count`` modules:
    a folder split into units, as ``torch/include/ATen/ops`` is, in a tiny tree."""
    from kwdocs.store import state

    monkeypatch.setattr(state, "UNIT_LIMIT", 4)
    monkeypatch.setattr(state, "BUCKET_FILES", 2)
    many = tree / "many"
    many.mkdir(exist_ok=True)
    for index in range(count):
        (many / f"mod{index:02d}.py").write_text(f"def function_{index}():\n    return {index}\n")
    return many


def test_large_folder_is_split_into_units_and_stays_incremental(golden_tree, tmp_path, monkeypatch):
    """A folder of thousands of files is handled in buckets: an edit re-reads only its bucket."""
    from kwdocs.store import state as build_module

    many = small_units(monkeypatch, golden_tree, 12)
    out = tmp_path / "units-out"
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q") == 0
    units = build_module.units_of("many", [f"mod{index:02d}.py" for index in range(12)])
    assert len(units) > 1
    before = snapshot(out)
    time.sleep(0.01)
    (many / "mod05.py").write_text("def renamed_function():\n    return 5\n")
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q") == 0
    written = changed_files(before, snapshot(out))
    assert {"many/mod05.py_docs.md", "many/mod05.py_kw.md", "many/index.md", "many/doc.md"} <= written
    assert not {page for page in written if page.endswith(FILE_PAGES)} - {"many/mod05.py_docs.md", "many/mod05.py_kw.md"}
    assert "renamed_function" in (out / "keywords.md").read_text()
    # every file of the folder is listed once in its index, whatever bucket it lives in
    index = (out / "many/index.md").read_text()
    assert all(index.count(f"[`mod{index_:02d}.py`]") == 1 for index_ in range(12))


def test_folder_losing_its_own_files_updates_its_index(built):
    tree, out, build = built
    for name in ("__init__.py", "broken.py"):
        (tree / "geometry" / name).unlink()
    build()
    index = (out / "geometry/index.md").read_text()
    assert "broken.py" not in index and "shapes/" in index
    assert not (out / "geometry/broken.py_docs.md").exists()


def test_split_keyword_index_incremental_equals_cold(golden_tree, tmp_path, monkeypatch):
    """Letter pages behind a letter bar stay equal to a cold build as letters come and go."""
    from kwdocs.pages import keywords

    monkeypatch.setattr(keywords, "SPLIT_THRESHOLD", 5)
    out = tmp_path / "inc"
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q") == 0
    assert (out / "keywords-C.md").exists() and "keywords-C.md" in (out / "keywords.md").read_text()
    extra = golden_tree / "tools" / "zeta.py"
    for content in ("def zeta_function():\n    pass\n", "def circle_helper():\n    pass\n", None):
        if content is None:
            extra.unlink()
        else:
            extra.write_text(content)
        assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q") == 0
        cold = tmp_path / f"cold-{len(list(tmp_path.iterdir()))}"
        assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(cold), "-q") == 0
        assert pages(out) == pages(cold)
    assert not (out / "keywords-Z.md").exists()


def test_keyword_rows_follow_moved_definitions_and_row_template(golden_tree, tmp_path, monkeypatch):
    """Keyword pages keep rendered rows between builds: rows whose places moved (lines shifted
    above them) are rendered again, and a new row template renders every row again."""
    from kwdocs.pages import keywords

    monkeypatch.setattr(keywords, "SPLIT_THRESHOLD", 5)
    out = tmp_path / "inc"
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q") == 0
    circle = golden_tree / "geometry" / "shapes" / "circle.py"
    circle.write_text('"""Moved down."""\n\n\n' + circle.read_text())
    rendered: list[str] = []
    real_row_model = keywords.row_model
    monkeypatch.setattr(keywords, "row_model", lambda page, name, *rest: rendered.append(name) or real_row_model(
        page, name, *rest))
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q") == 0
    import ast
    defined = {node.name for node in ast.walk(ast.parse(circle.read_text()))
               if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))}
    defined |= {target.id for node in ast.parse(circle.read_text()).body if isinstance(node, ast.Assign)
                for target in node.targets if isinstance(target, ast.Name)}
    assert rendered and set(rendered) <= defined, rendered    # the rows of circle.py's names only
    cold = tmp_path / "cold"
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(cold), "-q") == 0
    assert pages(out) == pages(cold)

    templates = tmp_path / "templates"
    templates.mkdir()
    shipped = Path(__file__).parent.parent / "templates" / "keyword_row.md.j2"
    (templates / "keyword_row.md.j2").write_text(shipped.read_text().replace(" in [", " at ["))
    drop_contexts()
    before = snapshot(out)
    time.sleep(0.01)
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q", "--templates", str(templates)) == 0
    written = changed_files(before, snapshot(out))
    letter_pages = {p.name for p in out.glob("keywords-*.md")}
    assert letter_pages and written == letter_pages
    for name in letter_pages:
        table = [line for line in (out / name).read_text().splitlines() if line.startswith("| `")]
        assert table and all(" at [" in line and " in [" not in line for line in table)


def test_keyword_step_dying_after_its_tables_leaves_no_stale_rows(golden_tree, tmp_path, monkeypatch):
    """A keyword step that dies between updating its letter tables and rendering their pages
    (a kill, a full disk) must not leave the next build trusting rows kept from before."""
    from kwdocs.pages import compose as pages_module
    from kwdocs.pages import keywords

    monkeypatch.setattr(keywords, "SPLIT_THRESHOLD", 5)
    out = tmp_path / "inc"
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q") == 0
    circle = golden_tree / "geometry" / "shapes" / "circle.py"
    circle.write_text('"""Moved down."""\n\n\n' + circle.read_text())

    def dies(*args, **kwargs):
        raise OSError(28, "No space left on device")
        yield

    with monkeypatch.context() as patch:
        patch.setattr(pages_module, "keyword_pages", dies)
        assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q") != 0
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q") == 0
    cold = tmp_path / "cold"
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(cold), "-q") == 0
    assert pages(out) == pages(cold)


@pytest.mark.parametrize("meanwhile", ["other content", "deleted"])
def test_a_source_changed_between_extracting_and_rendering_never_leaves_a_stale_page(golden_tree, tmp_path,
                                                                                    monkeypatch, meanwhile):
    """Issue 31: a checkout while a build runs, between its extract step and its render step (link
    runs between them), then back to the content extracted: the page must not keep the other
    content, and ``check`` must say so the same with and without the state."""
    from kwdocs.engine.steps import link as link_step

    out = tmp_path / "inc"

    def build() -> int:
        return run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q")

    assert build() == 0
    circle = golden_tree / "geometry" / "shapes" / "circle.py"
    master = circle.read_text()
    branch = master + "\n\ndef only_on_the_branch():\n    return 3\n"
    circle.write_text(branch)
    link = link_step.link_tree

    @functools.wraps(link)      # doit passes ``changed`` by the signature
    def checkout_while_linking(*args, **kwargs):
        if meanwhile == "deleted":
            circle.unlink()
        else:
            circle.write_text(master + "\n\ndef only_on_master():\n    return 2\n")
        return link(*args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(link_step, "link_tree", checkout_while_linking)
        assert build() == 0
    circle.write_text(branch)       # back to the content the build extracted
    assert build() == 0
    cold = tmp_path / "cold"
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(cold), "-q") == 0
    assert pages(out) == pages(cold)
    assert run_kwdocs("check", "--src", str(golden_tree), "--out", str(out)) == 0
    shutil.rmtree(out / ".kwdocs")
    assert run_kwdocs("check", "--src", str(golden_tree), "--out", str(out)) == 0


def test_large_folder_index_keeps_its_rows_and_equals_a_cold_build(golden_tree, tmp_path, monkeypatch):
    """A folder split into units keeps its index's rendered file rows, unit by unit: an edit
    renders again the rows of the files it changed and reads no other unit's summary rows,
    and the pages still equal a cold build's, through edits, damaged kept rows, a file added
    and a file removed, and the folder shrinking back to one unit."""
    from kwdocs.engine.steps import assemble
    from kwdocs.pages import model
    from kwdocs.store import state

    many = small_units(monkeypatch, golden_tree, 12)
    out = tmp_path / "inc"
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q") == 0
    kept = out / ".kwdocs" / state.FILE_ROWS
    units = state_json(out / ".kwdocs" / "folders.json")["units"]["many"]
    assert len(units) > 1
    assert sorted(state_json(path)["unit"] for path in kept.iterdir()) == sorted(units)  # other folders: one unit
    rendered: list[str] = []
    real_row_model = model.file_row_model
    monkeypatch.setattr(model, "file_row_model", lambda name, inputs: rendered.append(name) or real_row_model(
        name, inputs))
    rows_read: list[str] = []
    real_stored_rows = assemble._stored_rows
    monkeypatch.setattr(assemble, "_stored_rows", lambda config, unit: rows_read.append(unit) or real_stored_rows(
        config, unit))

    def same_as_cold() -> None:
        cold = tmp_path / f"cold-{len(list(tmp_path.iterdir()))}"
        assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q") == 0
        assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(cold), "-q") == 0
        assert pages(out) == pages(cold)

    (many / "mod05.py").write_text("def function_5():\n    return 5\n\n\ndef another():\n    pass\n")
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q") == 0
    assert rendered == ["mod05.py"]
    assert len(rows_read) == 1 and rows_read[0] in units
    rendered.clear()
    same_as_cold()
    key = state_json(next(kept.iterdir()))["key"]
    damages = (
        lambda stored: '{"key": "k", "unit": "%s", "rows": {' % stored["unit"],            # not JSON
        lambda stored: json.dumps({"key": key, "unit": stored["unit"], "rows": []}),    # no names, no digest
        lambda stored: json.dumps({"key": key, "unit": stored["unit"], "digest": stored["digest"],  # current digest,
                                   "names": [1], "inputs": [[]], "rows": [2]}),                       # rows not text
    )
    for lines, damage in enumerate(damages):
        for path in kept.iterdir():     # damaged: every row rendered again
            path.write_text(damage(state_json(path)))
        (many / "mod06.py").write_text("def function_6():\n    return 6\n" + "\n" * (lines + 1))  # its row changes
        rendered.clear()
        assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q") == 0
        assert sorted(rendered) == sorted(path.name for path in many.iterdir())
        same_as_cold()
    (many / "mod99.py").write_text("x = 1\n")
    (many / "mod00.py").unlink()
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q") == 0
    index = (out / "many/index.md").read_text()
    assert "mod99.py" in index and "mod00.py" not in index
    same_as_cold()
    for path in list(many.iterdir())[3:]:
        path.unlink()
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q") == 0
    assert not kept.exists() or not list(kept.iterdir())   # one unit again: nothing kept
    same_as_cold()


@pytest.mark.parametrize("counts", [(12, 3), (3, 12)], ids=["merged", "split"])
def test_folder_changing_units_keeps_the_pages_of_its_files(golden_tree, tmp_path, monkeypatch, counts):
    """A folder that shrinks back into one unit, or grows into buckets, gets new unit names;
    pruning the old units must not take the pages of files that live on in the new ones."""
    out = tmp_path / "inc"
    for count in counts:
        many = small_units(monkeypatch, golden_tree, count)
        for path in sorted(many.iterdir())[count:]:
            path.unlink()
        assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q") == 0
    cold = tmp_path / "cold"
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(cold), "-q") == 0
    assert pages(out) == pages(cold)
    assert all((out / f"many/mod{index:02d}.py_docs.md").is_file() for index in range(counts[1]))


def test_folder_main_definitions_keep_kind_details_through_edits(tmp_path):
    """Main Definitions of a folder's doc.md come from the rows kept per unit: a CMake macro
    still reads as one, private names stay out, and an edit changes only what it should."""
    src, out = tmp_path / "src", tmp_path / "out"
    (src / "cmake").mkdir(parents=True)
    (src / "cmake" / "utils.cmake").write_text(
        "macro(helper_macro name)\n  set(${name} 1)\nendmacro()\n\n"
        "function(public_function)\nendfunction()\n\nfunction(_private_function)\nendfunction()\n")
    (src / "cmake" / "tools.py").write_text("class Tool:\n    def run(self):\n        pass\n\n\ndef _hidden():\n    pass\n")
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    doc = (out / "cmake" / "doc.md").read_text()
    assert "macro function [`helper_macro`]" in doc
    assert "function [`public_function`]" in doc and "class [`Tool`]" in doc
    assert "_private_function" not in doc and "_hidden" not in doc and "[`run`]" not in doc
    (src / "cmake" / "tools.py").write_text("class Tool:\n    pass\n\n\ndef added():\n    pass\n")
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    doc = (out / "cmake" / "doc.md").read_text()
    assert "function [`added`]" in doc and "macro function [`helper_macro`]" in doc
    cold = tmp_path / "cold"
    assert run_kwdocs("build", "--src", str(src), "--out", str(cold), "-q") == 0
    assert pages(out) == pages(cold)


def test_a_namespace_that_many_files_open_is_listed_once(tmp_path):
    """Every header of a folder like ``torch/include/ATen/ops`` opens ``namespace at``: Main
    Definitions lists it once, where it comes first, with how many other files open it, and
    keeps its room for what the files define; an edit keeps the count right."""
    src, out = tmp_path / "src", tmp_path / "out"
    (src / "ops").mkdir(parents=True)
    for name in ("add", "mul", "sub"):
        (src / "ops" / f"{name}.h").write_text(
            f"#pragma once\nnamespace at {{\nint {name}(int a, int b);\n}}\nnamespace at {{\nint {name}_(int a);\n}}\n"
            f"int {name}_everywhere(void);\n")
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    listed = [line for line in (out / "ops" / "doc.md").read_text().splitlines() if line.startswith("- ")]
    namespaces = [line for line in listed if "[`at`]" in line]
    assert len(namespaces) == 1, listed
    assert "in `add.h` (line 2); opened in 2 other files too" in namespaces[0]
    assert all(any(f"[`{name}_everywhere`]" in line for line in listed) for name in ("add", "mul", "sub"))
    (src / "ops" / "sub.h").unlink()
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    assert "opened in 1 other file too" in (out / "ops" / "doc.md").read_text()


def test_a_build_runs_single_steps_before_rendering_and_a_rebuild_renders_first(built, monkeypatch):
    """On several cores the keyword and folder steps run beside the rendering of file pages; after
    a save, the saved file's own pages are what its user waits for, so they are rendered first."""
    from kwdocs.engine.steps import assemble, extract, keywords, link, prune, render

    tree, out, build = built
    ran: list[str] = []
    def noted(step):
        @functools.wraps(step)      # doit reads the signature: it passes ``changed`` to steps taking it
        def run(*args, **kwargs):
            ran.append(step.__name__)
            return step(*args, **kwargs)
        return run

    for module, name in ((extract, "extract_unit"), (link, "link_tree"), (render, "render_unit"),
                         (keywords, "index_keywords"), (assemble, "assemble"), (prune, "prune")):
        monkeypatch.setattr(module, name, noted(getattr(module, name)))

    def order() -> list[str]:
        seen = list(dict.fromkeys(ran))
        ran.clear()
        return seen

    with open(tree / "geometry/shapes/circle.py", "a") as handle:
        handle.write("\n\ndef unit_circle() -> Circle:\n    return Circle()\n")
    build("-j", "1")   # a few edits: the rebuild path; no unit went away, so nothing to prune
    assert order() == ["extract_unit", "link_tree", "render_unit", "index_keywords", "assemble"]
    shutil.rmtree(out)
    build("-j", "1")   # a whole build
    assert order() == ["extract_unit", "link_tree", "index_keywords", "assemble", "render_unit", "prune"]


def test_folder_pages_do_not_depend_on_how_the_folder_is_split(tmp_path, monkeypatch):
    """A folder's pages are summed from its units' parts (languages, Main Definitions, its
    README), each unit keeping only the definitions that can be shown: split into 2-file units
    or kept whole, the folder's pages read the same, namespaces, order and counts included."""
    from kwdocs.store import state

    src = tmp_path / "src"
    (src / "ops").mkdir(parents=True)
    (src / "ops" / "README.md").write_text("# Ops\n\nThe operators, one header each.\n")
    (src / "ops" / "__init__.py").write_text('"""Not the readme: README.md comes first."""\n')
    for number in range(12):
        functions = "".join(f"int op{number}_{index}(int a);\n" for index in range(45))
        (src / "ops" / f"op{number:02d}.h").write_text(
            f"#pragma once\nnamespace at {{\nint inside{number}(int a);\n}}\nnamespace detail{number % 3} {{\n}}\n"
            f"class Op{number} {{}};\n{functions}")
    whole, split = tmp_path / "whole", tmp_path / "split"
    assert run_kwdocs("build", "--src", str(src), "--out", str(whole), "-q") == 0
    monkeypatch.setattr(state, "UNIT_LIMIT", 4)
    monkeypatch.setattr(state, "BUCKET_FILES", 2)
    assert run_kwdocs("build", "--src", str(src), "--out", str(split), "-q") == 0
    assert len(state_json(split / ".kwdocs" / "folders.json")["units"]["ops"]) > 1
    assert pages(split) == pages(whole)
    doc = (whole / "ops" / "doc.md").read_text()
    assert "> The operators, one header each." in doc
    assert doc.index("class [`Op0`]") < doc.index("class [`Op1`]") < doc.index("namespace [`at`]")
    assert "namespace [`at`](./op00.h_docs.md#l2-namespace-at) in `op00.h` (line 2); opened in 11 other files too" in doc
    assert "namespace [`detail1`](./op01.h_docs.md#l5-namespace-detail1) in `op01.h` (line 5); opened in 3 other" in doc
    assert "more definitions are listed" in doc


def test_diff_tells_added_deleted_and_modified_files():
    """Edits pair up file by file; a rename or an added file with as many files as before
    must still read as one file gone and one new."""
    from kwdocs.engine.rescan import diff
    from kwdocs.scan import SourceFile

    before = [SourceFile("a.py", 1, 1), SourceFile("b.py", 2, 2), SourceFile("c.py", 3, 3)]
    assert diff(before, list(before)) == ([], [], [])
    assert diff(before, [before[0], SourceFile("b.py", 2, 5), SourceFile("c.py", 4, 3)]) == ([], [], ["b.py", "c.py"])
    assert diff(before, [before[0], SourceFile("b2.py", 2, 2), before[2]]) == (["b2.py"], ["b.py"], [])
    assert diff(before, [SourceFile("0.py", 1, 1), before[0], before[1]]) == (["0.py"], ["c.py"], [])
    assert diff(before, before[:2]) == ([], ["c.py"], [])
    assert diff(before[1:], before) == (["a.py"], [], [])


def test_entries_of_a_folder_excluded_since_do_not_come_back_with_the_next_edit(tmp_path):
    """A changed setting (``--exclude``) makes the keyword index again from the files left; a
    letter only the excluded files had must not keep its table of before, which the letter's
    next edit would read: ``beta`` of the excluded ``b/`` came back with ``bravo``."""
    src, out = tmp_path / "src", tmp_path / "out"
    (src / "a").mkdir(parents=True)
    (src / "b").mkdir()
    (src / "a/x.py").write_text("def alpha():\n    pass\n")
    (src / "b/y.py").write_text("def beta():\n    pass\n")
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    assert "beta" in (out / "keywords.md").read_text()
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q", "--exclude", "/b/") == 0
    assert "beta" not in (out / "keywords.md").read_text()
    with (src / "a/x.py").open("a") as module:
        module.write("def bravo():\n    pass\n")
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q", "--exclude", "/b/") == 0
    index = (out / "keywords.md").read_text()
    assert "bravo" in index and "beta" not in index
    assert run_kwdocs("check", "--src", str(src), "--out", str(out), "--exclude", "/b/") == 0


def test_a_build_that_left_a_page_as_it_was_vouches_for_nothing(golden_tree):
    """A file that changed again after extraction keeps its page of before (``steps.render``):
    the build that left it must not vouch for the output, or the next build and ``kwdocs check``
    would take the stale page for current.  The next build then writes it."""
    out = golden_tree.parent / "out"
    with changed_after_extraction("geometry/shapes/circle.py"):
        assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q") == 0
    assert not (out / "geometry/shapes/circle.py_docs.md").exists()
    assert run_kwdocs("check", "--src", str(golden_tree), "--out", str(out)) == 1
    assert run_kwdocs("build", "--src", str(golden_tree), "--out", str(out), "-q") == 0
    assert (out / "geometry/shapes/circle.py_docs.md").exists()
    assert run_kwdocs("check", "--src", str(golden_tree), "--out", str(out)) == 0
