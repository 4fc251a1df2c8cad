"""Formats own their pages' whole life (issue 35): a format from another package, registered by
one entry point in the ``kwdocs.formats`` group, is written, rewritten after an edit, checked,
repaired, pruned, cleaned and counted like Markdown; the shipped JSON format (issue 34) writes
``a/b.py.json`` files that validate against the schema kwdocs ships."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

PLUGIN = Path(__file__).parent / "fixtures" / "format_plugin"   # kwdocs_jsonfmt.py and its dist-info
FIXTURES = Path(__file__).parent / "fixtures"


def kwdocs(*argv: str, plugin: bool = True) -> subprocess.CompletedProcess:
    """``python -m kwdocs ARGV`` with the fixture's format package on the path (as if installed)."""
    env = dict(os.environ)
    if plugin:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PLUGIN), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "kwdocs", *argv], capture_output=True, text=True, env=env)


def make_tree(src: Path) -> None:
    (src / "pkg").mkdir(parents=True)
    (src / "app.py").write_text('"""The app."""\nfrom pkg.b import helper\n\n\ndef run():\n    return helper()\n')
    (src / "pkg" / "__init__.py").write_text("")
    (src / "pkg" / "b.py").write_text('"""Helpers."""\n\n\ndef helper():\n    return 1\n')
    (src / "pkg" / "c.py").write_text('"""More."""\n\n\nclass Thing:\n    def go(self):\n        pass\n')
    (src / "lib").mkdir()
    (src / "lib" / "d.py").write_text("VALUE = 1\n")


def json_pages(out: Path) -> list[Path]:
    """The JSON files of the pages under ``out`` (kwdocs' state folder aside)."""
    return sorted(path for path in out.rglob("*.json") if ".kwdocs" not in path.relative_to(out).parts)


def names_files(out: Path) -> dict[str, float]:
    """The plugin format's files under ``out``, with their modification times."""
    return {path.relative_to(out).as_posix(): path.stat().st_mtime_ns for path in out.rglob("*.names.json")}


def test_a_format_from_another_package_lives_as_markdown_does(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    make_tree(src)
    args = ("--src", str(src), "--out", str(out))

    built = kwdocs("build", *args, "--format", "jsonfmt")
    assert built.returncode == 0, built.stderr
    assert "JSONFMT: 5 written, 0 removed" in built.stdout
    first = names_files(out)
    assert sorted(first) == ["app.py.names.json", "lib/d.py.names.json", "pkg/__init__.py.names.json",
                             "pkg/b.py.names.json", "pkg/c.py.names.json"]
    assert json.loads((out / "pkg" / "c.py.names.json").read_text()) == {
        "made_by": "kwdocs_jsonfmt", "path": "pkg/c.py", "names": ["Thing", "go"]}

    # an edit rewrites that file's page only
    (src / "pkg" / "c.py").write_text('"""More."""\n\n\nclass Thing:\n    def stop(self):\n        pass\n')
    again = kwdocs("build", *args, "--format", "jsonfmt")
    assert "JSONFMT: 1 written, 0 removed" in again.stdout
    second = names_files(out)
    assert [page for page in first if first[page] != second[page]] == ["pkg/c.py.names.json"]

    # check covers the format the output holds, without being told; --fix repairs a hand edit
    assert kwdocs("check", *args).returncode == 0
    (out / "app.py.names.json").write_text("{}\n")
    checked = kwdocs("check", *args)
    assert checked.returncode == 1 and "stale: app.py.names.json" in checked.stdout
    fixed = kwdocs("check", *args, "--fix")
    assert fixed.returncode == 1 and "restored: app.py.names.json" in fixed.stdout
    assert json.loads((out / "app.py.names.json").read_text())["path"] == "app.py"
    assert kwdocs("check", *args).returncode == 0

    # a deleted file's page goes (render), and a deleted folder's (prune), counted
    (src / "pkg" / "b.py").unlink()
    gone = kwdocs("build", *args, "--format", "jsonfmt")
    assert "JSONFMT: 0 written, 1 removed" in gone.stdout
    (src / "lib" / "d.py").unlink()
    (src / "lib").rmdir()
    assert kwdocs("build", *args, "--format", "jsonfmt").returncode == 0
    assert sorted(names_files(out)) == ["app.py.names.json", "pkg/__init__.py.names.json", "pkg/c.py.names.json"]

    # a file of the user's named like the format's: never an orphan, never cleaned
    (out / "mine.names.json").write_text('{"mine": true}\n')
    assert kwdocs("check", *args).returncode == 0
    cleaned = kwdocs("clean", *args)
    assert cleaned.returncode == 0, cleaned.stderr
    assert sorted(path.relative_to(out).as_posix() for path in out.rglob("*") if path.is_file()) == [
        "mine.names.json"]


def test_clean_without_state_knows_the_format_by_its_looks(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    make_tree(src)
    assert kwdocs("build", "--src", str(src), "--out", str(out), "--format", "jsonfmt").returncode == 0
    shutil.rmtree(out / ".kwdocs")      # a fresh clone of committed pages
    assert kwdocs("clean", "--src", str(src), "--out", str(out)).returncode == 0
    assert not out.exists()


def test_a_build_refuses_to_overwrite_a_users_file_at_a_formats_place(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    make_tree(src)
    args = ("--src", str(src), "--out", str(out), "--format", "jsonfmt")
    assert kwdocs("build", *args).returncode == 0
    (src / "new.py").write_text("X = 1\n")
    (out / "new.py.names.json").write_text('{"mine": true}\n')
    refused = kwdocs("build", *args)
    assert refused.returncode == 2
    assert "new.py.names.json: not written by kwdocs" in refused.stderr
    assert (out / "new.py.names.json").read_text() == '{"mine": true}\n'


def test_an_unknown_format_is_one_line_naming_the_installed_ones(tmp_path):
    src = tmp_path / "src"
    make_tree(src)
    result = kwdocs("build", "--src", str(src), "--out", str(tmp_path / "out"), "--format", "yaml")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "kwdocs: configuration: unknown format 'yaml' (installed: html, json, jsonfmt, markdown)"]
    (src / "pyproject.toml").write_text('[tool.kwdocs]\nformats = ["markdown", "pdf"]\n')
    result = kwdocs("build", "--src", str(src), plugin=False)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "unknown format 'pdf' (installed: html, json, markdown)" in result.stderr


def test_formats_in_the_configuration_and_html_spelled_both_ways(tmp_path):
    src = tmp_path / "src"
    make_tree(src)
    (src / "pyproject.toml").write_text('[tool.kwdocs]\nformats = ["markdown", "html", "json"]\n')
    built = kwdocs("build", "--src", str(src), "--out", str(tmp_path / "a"), plugin=False)
    assert "HTML: " in built.stdout and "JSON: 6 written, 0 removed" in built.stdout
    assert (tmp_path / "a" / "site" / "pkg" / "b.py_docs.html").is_file()
    assert (tmp_path / "a" / "pkg" / "b.py.json").is_file()
    (src / "pyproject.toml").write_text("[tool.kwdocs]\nhtml = true\n")
    built = kwdocs("build", "--src", str(src), "--out", str(tmp_path / "b"), plugin=False)
    assert "HTML: " in built.stdout and "JSON" not in built.stdout
    assert sorted(path.name for path in (tmp_path / "a" / "site").rglob("*.html")) == sorted(
        path.name for path in (tmp_path / "b" / "site").rglob("*.html"))
    assert not json_pages(tmp_path / "b")


# ---------------------------------------------------------------- the shipped JSON format

@pytest.mark.parametrize("tree", ["python", "cpp", "data", "lang", "prose"])
def test_every_json_file_of_the_fixture_trees_validates(tmp_path, tree):
    from kwdocs.pages.json_format import schema

    out = tmp_path / "out"
    built = kwdocs("build", "--src", str(FIXTURES / tree), "--out", str(out), "--format", "json", plugin=False)
    assert built.returncode == 0, built.stderr
    validator = jsonschema.Draft202012Validator(schema())
    docs_pages = list(out.rglob("*_docs.md"))
    documents = json_pages(out)
    assert docs_pages and len(documents) == len(docs_pages)     # one per source file
    for path in documents:
        validator.validate(json.loads(path.read_text()))


def test_json_holds_what_the_pages_show(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    make_tree(src)
    (src / "test_app.py").write_text("from app import run\n\n\ndef test_run():\n    assert run() == 1\n")
    (src / "pkg" / "b.py").write_text('"""Helpers."""\n\n\ndef helper(x: int) -> int:\n    """Add one.\n\n'
                                      '    Args:\n        x: the number.\n\n    Returns:\n        x plus one.\n'
                                      '    """\n    return x + 1\n')
    assert kwdocs("build", "--src", str(src), "--out", str(out), "--format", "json", plugin=False).returncode == 0
    b = json.loads((out / "pkg" / "b.py.json").read_text())
    assert (b["path"], b["language"], b["lines"]) == ("pkg/b.py", "python", 13)
    helper = b["definitions"][0]
    assert (helper["qualified_name"], helper["kind"], helper["line"], helper["end"]) == ("helper", "function", 4, 13)
    assert helper["documentation"]["summary"] == "Add one."
    assert [section["title"] for section in helper["documentation"]["sections"]][:1] == ["Parameters"]
    assert helper["documentation"]["sections"][0]["items"][0]["name"] == "x"
    assert helper["uses"] == [{"path": "app.py", "line": 2}]
    assert b["users"] == ["app.py"]
    app = json.loads((out / "app.py.json").read_text())
    assert app["imports"] == [{"module": "pkg.b", "line": 2, "names": ["helper"], "category": "repo",
                               "file": "pkg/b.py"}]
    assert [test["path"] for test in app["tests"]] == ["test_app.py"]
    c = json.loads((out / "pkg" / "c.py.json").read_text())
    assert [d["qualified_name"] for d in c["definitions"]] == ["Thing", "Thing.go"]


def test_an_edit_rewrites_only_its_json_file(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    make_tree(src)
    args = ("--src", str(src), "--out", str(out), "--format", "json")
    assert kwdocs("build", *args, plugin=False).returncode == 0
    before = {path: path.stat().st_mtime_ns for path in json_pages(out)}
    (src / "lib" / "d.py").write_text('VALUE = 2\n"""The value."""\n')
    rebuilt = kwdocs("build", *args, plugin=False)
    assert "JSON: 1 written, 0 removed" in rebuilt.stdout
    after = {path: path.stat().st_mtime_ns for path in json_pages(out)}
    assert [path.relative_to(out).as_posix() for path in before if before[path] != after[path]] == ["lib/d.py.json"]
    assert json.loads((out / "lib" / "d.py.json").read_text())["lines"] == 2


def test_html_is_one_setting_however_it_is_spelled(tmp_path):
    """``replace(config, html=True)`` (what ``kwdocs serve`` and a dodo.py do) writes the site as
    ``formats = ["html"]`` does, and the other way round."""
    from dataclasses import replace

    from kwdocs.config import load_config
    from kwdocs.formats import formats_for

    make_tree(tmp_path / "src")
    config = load_config(tmp_path / "src")
    assert config.formats == ("markdown",) and not config.html and formats_for(config) == ()
    assert [each.name for each in formats_for(replace(config, html=True))] == ["html"]
    assert replace(config, formats=("markdown", "html")).html


def test_json_says_the_if_branch_of_each_macro_definition(tmp_path):
    """The JSON page of a header lists a macro defined in two branches twice, each with its branch,
    as the docs page does, and validates; a definition outside every branch has no ``condition``."""
    from kwdocs.pages.json_format import schema

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "export.h").write_text("#pragma once\n#ifdef _WIN32\n#define EXPORT __declspec(dllexport)\n#else\n"
                                  "#define EXPORT\n#endif\nint f();\n")
    assert kwdocs("build", "--src", str(src), "--out", str(out), "--format", "json", plugin=False).returncode == 0
    page = json.loads((out / "export.h.json").read_text())
    jsonschema.Draft202012Validator(schema()).validate(page)
    found = [(d["name"], d["line"], d.get("condition")) for d in page["definitions"]]
    assert found == [("EXPORT", 3, ["#ifdef _WIN32"]), ("EXPORT", 5, ["#else", "#ifdef _WIN32"]), ("f", 7, None)]


def test_a_no_op_markdown_build_reads_no_package_metadata(tmp_path: Path):
    """Which other formats are installed is asked only by a build that writes or removes one:
    a no-op build of Markdown alone never imports ``importlib.metadata`` (most of its start)."""
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "a.py").write_text('"""A module."""\n')
    build = ["build", "--src", str(src), "--out", str(out), "-q"]
    code = ("import sys\nfrom kwdocs.cli import main\nmain(sys.argv[1:])\n"
            "print('metadata' if 'importlib.metadata' in sys.modules else 'none')\n")
    for _ in range(2):     # the second build is the no-op
        done = subprocess.run([sys.executable, "-c", code, *build], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "none"
