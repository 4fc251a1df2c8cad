"""``kwdocs find``, ``refs`` and ``show``: answers from the symbol index, made by the first query from
the state the last build vouched for and kept current by every build after it."""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_kwdocs

CIRCLE = "geometry/shapes/circle.py"


@pytest.fixture
def built(golden_tree: Path) -> Path:
    """The golden tree built, and queried once: its index made, which builds keep current since."""
    assert run_kwdocs("build", "--src", str(golden_tree), "-q") == 0
    made_index(golden_tree)
    return golden_tree


def made_index(src: Path, out: Path | None = None) -> Path:
    """The index of ``out`` (the default output folder of ``src``), made as a user's first query makes it."""
    out = out or src / "kwdocs-out"
    assert run_kwdocs("find", "no_such_name_anywhere", "--src", str(src), "--out", str(out)) == 1
    assert (out / ".kwdocs" / "symbols.sqlite3").is_file()
    return out


def ask(tree: Path, capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = run_kwdocs(*argv, "--src", str(tree))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_find_lists_definitions_with_their_first_sentence(built, capsys):
    code, out, err = ask(built, capsys, "find", "Shape")
    assert (code, out, err) == (0, "geometry/shapes/base.py:6 class Shape  A closed plane figure.\n", "")
    # the mention of Circle in docs/guide.rst is no definition
    assert ask(built, capsys, "find", "Circle")[1] == "geometry/shapes/circle.py:9 class Circle\n"
    assert ask(built, capsys, "find", "Shape.area")[1] == \
        "geometry/shapes/base.py:10 method Shape.area  The area in square units.\n"
    both = ("geometry/shapes/base.py:6 class Shape  A closed plane figure.\n"
            "geometry/shapes/base.py:18 class ShapeRegistry\n")
    assert ask(built, capsys, "find", "Shape*")[1] == both
    assert ask(built, capsys, "find", "--prefix", "Shape")[1] == both
    assert ask(built, capsys, "find", "Circle.*")[1].splitlines() == [
        "geometry/shapes/circle.py:10 method Circle.__init__", "geometry/shapes/circle.py:13 method Circle.area",
        "geometry/shapes/circle.py:16 method Circle.stream_points"]
    assert ask(built, capsys, "find", "Nowhere") == (1, "", "")


def test_refs_lists_every_import_of_a_name_tests_marked(built, capsys):
    code, out, err = ask(built, capsys, "refs", "Circle")
    assert code == 0 and err == ""
    assert out.splitlines() == ["geometry/__init__.py:5", "tests/test_circle.py:3  (test)", "tools/make_shapes.py:5"]
    assert ask(built, capsys, "refs", "Nowhere") == (1, "", "")


def test_refs_counts_the_files_that_call_a_name_through_its_module(tmp_path, capsys):
    tree = tmp_path / "tree"
    for path, text in {"pkg/core.py": 'def helper():\n    """Help with everything."""\n    return 1\n',
                       "pkg/__init__.py": "from .core import helper\n",
                       "app.py": "import pkg\n\n\ndef main():\n    return pkg.helper()\n",
                       "tests/test_app.py": "from pkg.core import helper\n\n\ndef test_helper():\n"
                                            "    assert helper() == 1\n"}.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text)
    assert run_kwdocs("build", "--src", str(tree), "-q") == 0
    code, out, err = ask(tree, capsys, "refs", "helper")
    assert (code, err) == (0, "")
    assert out.splitlines() == ["pkg/__init__.py:1", "tests/test_app.py:1  (test)",
                                "pkg/core.py: helper is used by 3 files in all; calls through its module "
                                "(module.helper()) have no line"]
    assert json.loads(ask(tree, capsys, "refs", "helper", "--json")[1])["users"] == [
        {"name": "helper", "defined_in": "pkg/core.py", "files": 3}]


def test_show_summarizes_a_file_and_a_definition(built, capsys):
    code, out, err = ask(built, capsys, "show", "geometry/shapes/base.py")
    assert code == 0 and err == ""
    assert out.splitlines() == [
        "geometry/shapes/base.py  (python, 22 lines)",
        "Base class every shape derives from.",
        "geometry/shapes/base.py:6 class Shape  A closed plane figure.",
        "geometry/shapes/base.py:10 method Shape.area  The area in square units.",
        "geometry/shapes/base.py:13 method Shape.describe",
        "geometry/shapes/base.py:18 class ShapeRegistry",
        "geometry/shapes/base.py:19 variable ShapeRegistry.shapes",   # a dataclass field
        "geometry/shapes/base.py:21 method ShapeRegistry.register"]
    # a line inside a definition shows the one that starts last before it: signature, whole doc
    assert ask(built, capsys, "show", "geometry/shapes/base.py:11")[1].splitlines() == [
        "geometry/shapes/base.py:10 method Shape.area", "    area(self) -> float", "    The area in square units."]
    # a path typed relative to the shell's folder is the tree's file
    os.chdir(built / "geometry")
    assert ask(built, capsys, "show", "shapes/base.py")[1] == out
    code, out, err = ask(built, capsys, "show", "geometry/nowhere.py")
    assert code == 1 and out == "" and len(err.splitlines()) == 1 and "nowhere.py" in err


def test_json_answers_have_the_documented_shape(built, capsys):
    found = json.loads(ask(built, capsys, "find", "Shape", "--json")[1])
    assert found == {"query": "Shape", "prefix": False, "current": True, "stale": [], "definitions": [
        {"path": "geometry/shapes/base.py", "line": 6, "kind": "class", "name": "Shape", "qualified": "Shape",
         "signature": "(abc.ABC)", "summary": "A closed plane figure."}]}
    refs = json.loads(ask(built, capsys, "refs", "Circle", "--json")[1])
    assert refs["more"] == 0 and refs["current"] is True
    assert refs["references"][1] == {"path": "tests/test_circle.py", "line": 3, "name": "Circle",
                                     "defined_in": CIRCLE, "test": True}
    shown = json.loads(ask(built, capsys, "show", CIRCLE, "--json")[1])
    assert shown["file"]["purpose"] == "Circles." and shown["file"]["language"] == "python"
    assert [entry["qualified"] for entry in shown["file"]["definitions"]][:2] == ["UNIT_RADIUS", "Circle"]
    one = json.loads(ask(built, capsys, "show", f"{CIRCLE}:13", "--json")[1])
    assert one["definition"]["qualified"] == "Circle.area" and one["definition"]["doc"] == ""


def test_an_edit_is_reported_stale_until_a_build_updates_the_answers(built, capsys):
    with open(built / CIRCLE, "a") as handle:
        handle.write('\n\ndef unit_circle():\n    """The circle of radius one."""\n    return Circle()\n')
    _, out, err = ask(built, capsys, "find", "Circle")
    assert out == "geometry/shapes/circle.py:9 class Circle\n"
    assert err == f"kwdocs: the pages are stale: {CIRCLE} changed since the last build (run kwdocs build)\n"
    assert json.loads(ask(built, capsys, "find", "Circle", "--json")[1])["stale"] == [CIRCLE]
    assert ask(built, capsys, "find", "unit_circle")[0] == 1
    assert run_kwdocs("build", "--src", str(built), "-q", "-j", "1") == 0
    assert ask(built, capsys, "find", "unit_circle") == (
        0, f"{CIRCLE}:21 function unit_circle  The circle of radius one.\n", "")
    assert ask(built, capsys, "find", "Circle")[2] == ""
    # a file deleted: its definitions and uses go with the next build
    (built / "tools" / "make_shapes.py").unlink()
    assert "tools/make_shapes.py changed" in ask(built, capsys, "refs", "Circle")[2]
    assert run_kwdocs("build", "--src", str(built), "-q", "-j", "1") == 0
    assert ask(built, capsys, "refs", "Circle")[1].splitlines() == ["geometry/__init__.py:5",
                                                                    "tests/test_circle.py:3  (test)"]


def test_a_failed_build_leaves_answers_marked_stale(built, capsys):
    (built / "kwdocs-out" / ".kwdocs" / "snapshot.json").unlink()   # what a build that did not finish leaves
    code, out, err = ask(built, capsys, "find", "Shape")
    assert code == 0 and out.startswith("geometry/shapes/base.py:6")
    assert err == "kwdocs: the pages are stale: the last build did not finish (run kwdocs build)\n"
    assert json.loads(ask(built, capsys, "find", "Shape", "--json")[1])["current"] is False


def test_a_tree_nobody_queries_gets_no_index_and_the_first_query_makes_it(golden_tree, capsys):
    """A build makes no index: a tree nobody queries never pays for it. The first query makes it
    from the state the build left, answers as the build's own would, and every build after keeps
    it current; a query with no build finished behind it is one line."""
    state = golden_tree / "kwdocs-out" / ".kwdocs"
    assert run_kwdocs("build", "--src", str(golden_tree), "-q", "-j", "1") == 0
    assert not [path.name for path in state.iterdir() if "symbols" in path.name]
    assert ask(golden_tree, capsys, "find", "Shape") == (
        0, "geometry/shapes/base.py:6 class Shape  A closed plane figure.\n", "")
    assert (state / "symbols.sqlite3").is_file()
    with open(golden_tree / CIRCLE, "a") as handle:
        handle.write('\n\ndef unit_circle():\n    """The circle of radius one."""\n    return Circle()\n')
    assert run_kwdocs("build", "--src", str(golden_tree), "-q", "-j", "1") == 0
    assert ask(golden_tree, capsys, "find", "unit_circle") == (
        0, f"{CIRCLE}:21 function unit_circle  The circle of radius one.\n", "")
    # no build vouches for the state (the last did not finish) and there is no index: one line
    (state / "symbols.sqlite3").unlink()
    (state / "snapshot.json").unlink()
    assert ask(golden_tree, capsys, "refs", "Circle") == (2, "", f"kwdocs: no index in {state}: run kwdocs build\n")
    assert not (state / "symbols.sqlite3").exists()


@pytest.mark.parametrize("damage", ["deleted", "garbage", "empty"])
def test_a_missing_or_damaged_index_is_made_again_by_the_next_query(built, damage, capsys):
    """Lost or damaged, the index costs the next query the time to make it again, never an answer."""
    index = built / "kwdocs-out" / ".kwdocs" / "symbols.sqlite3"
    if damage == "deleted":
        index.unlink()
    else:
        index.write_bytes(b"not a database at all\n" * 100 if damage == "garbage" else b"")
    result = subprocess.run([sys.executable, "-m", "kwdocs", "find", "Shape", "--src", str(built)],
                            capture_output=True, text=True)
    assert (result.returncode, result.stdout, result.stderr) == (
        0, "geometry/shapes/base.py:6 class Shape  A closed plane figure.\n", "")
    assert ask(built, capsys, "refs", "Circle")[1].splitlines() == [
        "geometry/__init__.py:5", "tests/test_circle.py:3  (test)", "tools/make_shapes.py:5"]


def test_a_new_index_is_seen_only_whole(built, monkeypatch, capsys):
    """A query stopped while making the index anew leaves no half-made index under its name
    (the next query does not answer from part of the rows), nor a temporary file."""
    # the index's module is the build's (a query imports it only to make the index)
    from kwdocs.engine import symbol_index

    state = built / "kwdocs-out" / ".kwdocs"
    (state / "symbols.sqlite3").unlink()
    add_unit, added = symbol_index._add_unit, []

    def stopping(*args, **kwargs):
        if added:
            raise KeyboardInterrupt   # Ctrl-C half-way through the rows
        added.append(args[2])
        return add_unit(*args, **kwargs)
    monkeypatch.setattr(symbol_index, "_add_unit", stopping)
    assert ask(built, capsys, "find", "Shape")[:2] == (130, "")
    assert added and sorted(path.name for path in state.iterdir() if "symbols" in path.name) == \
        ["symbols-verified.json"]
    monkeypatch.undo()
    assert ask(built, capsys, "find", "Shape")[:2] == (0, "geometry/shapes/base.py:6 class Shape  "
                                                          "A closed plane figure.\n")


def test_a_query_from_another_folder_without_src_names_the_built_sources(built, tmp_path):
    """Run in another folder without ``--src``: one line naming the folder the build read, exit 2,
    not every file called changed since the build."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = built / "kwdocs-out"
    for argv in (["find", "Shape"], ["refs", "Circle"], ["find", "Shape", "--json"]):
        done = subprocess.run([sys.executable, "-m", "kwdocs", *argv, "--out", str(out)], cwd=elsewhere,
                              capture_output=True, text=True)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == (f"kwdocs: {out} was built from {built.resolve()}, not from {elsewhere.resolve()}: "
                               f"pass --src {built.resolve()}\n")
    # from the source folder, or with --src, the answer is as before
    done = subprocess.run([sys.executable, "-m", "kwdocs", "find", "Shape", "--out", str(out)], cwd=built,
                          capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, "")


def test_a_checkout_moved_whole_is_answered_from_its_new_folder(built, tmp_path):
    """Sources moved with their output (a renamed checkout, a restored CI cache) still hold every
    file the index names: a query from the new folder is answered, not sent back to the old one."""
    moved = tmp_path / "moved"
    shutil.copytree(built, moved)      # copy2: sizes and time stamps kept, as a move keeps them
    done = subprocess.run([sys.executable, "-m", "kwdocs", "find", "Shape", "--out", str(moved / "kwdocs-out")],
                          cwd=moved, capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, "")
    assert "Shape" in done.stdout


def test_no_build_yet_is_one_line(golden_tree, capsys):
    code, out, err = ask(golden_tree, capsys, "refs", "Circle")
    assert (code, out) == (2, "") and err == f"kwdocs: no index in {golden_tree / 'kwdocs-out' / '.kwdocs'}: " \
                                             "run kwdocs build\n"


def test_an_edit_remakes_the_rows_of_its_unit_only(built):
    index = built / "kwdocs-out" / ".kwdocs" / "symbols.sqlite3"

    def made() -> dict[str, str]:
        with sqlite3.connect(index) as connection:
            return dict(connection.execute("SELECT unit, made_from FROM units"))

    before = made()
    with open(built / CIRCLE, "a") as handle:
        handle.write("\n\nRADIUS_TWO = 2.0\n")
    assert run_kwdocs("build", "--src", str(built), "-q", "-j", "1") == 0
    after = made()
    assert set(after) == set(before)
    assert {unit for unit in after if after[unit] != before[unit]} == {"geometry/shapes"}


def test_a_reader_that_leaves_ends_the_answer_quietly(built):
    """``kwdocs find 'x*' | head``: the pipe closed early is no traceback."""
    process = subprocess.Popen([sys.executable, "-m", "kwdocs", "show", "geometry/shapes/base.py", "--src", str(built)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    error = process.stderr.read()
    assert (process.wait(), error) == (141, "")


def test_an_edit_that_moves_a_use_keeps_the_definitions_of_the_unit_it_uses(built, tmp_path, capsys):
    """An import moved down a line in one file changes the links of the file it imports from,
    not that file's facts: its unit's uses are made again, its definitions' rows stay as they were
    (remaking them was most of an index update after such an edit), and every table holds what a
    fresh build's index holds."""
    index = built / "kwdocs-out" / ".kwdocs" / "symbols.sqlite3"

    def file_ids() -> dict[str, int]:
        with sqlite3.connect(index) as connection:
            return dict(connection.execute("SELECT path, id FROM files WHERE unit = 'geometry/shapes'"))

    before = file_ids()
    script = built / "tools" / "make_shapes.py"
    script.write_text(script.read_text().replace('"""\nimport subprocess\n', '"""\n\nimport subprocess\n'))
    assert run_kwdocs("build", "--src", str(built), "-q", "-j", "1") == 0
    assert ask(built, capsys, "refs", "Circle")[1].splitlines() == [
        "geometry/__init__.py:5", "tests/test_circle.py:3  (test)", "tools/make_shapes.py:6"]
    assert file_ids() == before

    fresh = tmp_path / "fresh"
    assert run_kwdocs("build", "--src", str(built), "--out", str(fresh), "-q", "-j", "1") == 0
    # the index builds kept current holds what a query makes from a fresh build's state
    assert index_tables(built / "kwdocs-out") == index_tables(made_index(built, fresh))


def index_tables(folder: Path) -> dict[str, list]:
    """Every table of an output folder's index, rows sorted, files named rather than numbered."""
    with sqlite3.connect(folder / ".kwdocs" / "symbols.sqlite3") as connection:
        paths = dict(connection.execute("SELECT id, path FROM files"))    # ids differ from build to build
        return {
            "files": sorted(connection.execute("SELECT path, unit, size, language, lines, test, purpose FROM files")),
            "defs": sorted((row[:3], paths[row[3]], *row[4:]) for row in connection.execute("SELECT * FROM defs")),
            **{table: sorted(connection.execute(f"SELECT * FROM {table}")) for table in ("refs", "more_refs", "users")}}


def test_an_import_line_keeps_the_rows_of_units_whose_uses_did_not_move(built, tmp_path, monkeypatch):
    """An import line added to ``circle.py`` moves its definitions, so the links of the files
    using them (their anchors) change: the rows of those units' uses, which did not move, are
    left as they were (not deleted and inserted again), their counts of users (in importance
    shards the edit did not change) are not read again, and every table holds what a fresh
    build's index holds."""
    from kwdocs.engine import symbol_index

    decoded: list[tuple[str, str]] = []
    decode = symbol_index._decode_shard
    monkeypatch.setattr(symbol_index, "_decode_shard", lambda config, kind, unit, *rest: decoded.append(
        (kind, unit)) or decode(config, kind, unit, *rest))
    index = built / "kwdocs-out" / ".kwdocs" / "symbols.sqlite3"

    def others() -> dict[str, list]:
        with sqlite3.connect(index) as connection:
            return {table: sorted(connection.execute(f"SELECT rowid, * FROM {table} WHERE unit != 'geometry/shapes'"))
                    for table in ("refs", "users", "more_refs")}

    def made() -> dict[str, str]:
        with sqlite3.connect(index) as connection:
            return dict(connection.execute("SELECT unit, made_from FROM units"))

    before, made_before = others(), made()
    assert before["refs"] and before["users"]
    circle = built / CIRCLE
    circle.write_text(circle.read_text().replace('"""Circles."""\n', '"""Circles."""\nimport keyword\n'))
    assert run_kwdocs("build", "--src", str(built), "-q", "-j", "1") == 0
    assert made()["geometry"] != made_before["geometry"]    # its links changed: the anchors to ``Circle``
    assert others() == before
    assert ("links", "geometry") in decoded and ("importance", "geometry") not in decoded
    fresh = tmp_path / "fresh"
    assert run_kwdocs("build", "--src", str(built), "--out", str(fresh), "-q", "-j", "1") == 0
    # the index builds kept current holds what a query makes from a fresh build's state
    assert index_tables(built / "kwdocs-out") == index_tables(made_index(built, fresh))
