"""Documentation coverage: the pages' coverage lines, ``kwdocs coverage`` and ``check --min-coverage``."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_kwdocs

GOOD = '''"""Well documented."""


def area(r):
    """The area."""


class Shape:
    """A shape."""

    def grow(self):
        """Bigger."""

    def _shrink(self):
        pass


def _helper():
    pass
'''

BAD = '''def undocumented():
    pass


class Thing:
    """A thing."""

    def method(self):
        pass
'''


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "good.py").write_text(GOOD)
    (root / "pkg" / "bad.py").write_text(BAD)
    (root / "notes.md").write_text("# Notes\n\nNo code here.\n")
    return root


def test_pages_say_how_many_public_definitions_are_documented(tree):
    assert run_kwdocs("build", "--src", str(tree), "-q") == 0
    out = tree / "kwdocs-out"
    bad = (out / "pkg" / "bad.py_docs.md").read_text()
    assert "*Documentation coverage: 1 of 3 public definitions documented (33.3%).*" in bad
    # private names (``_shrink``, ``_helper``) are not counted
    good = (out / "pkg" / "good.py_docs.md").read_text()
    assert "*Documentation coverage: 3 of 3 public definitions documented (100.0%).*" in good
    folder = (out / "pkg" / "doc.md").read_text()
    assert "- **Documentation coverage**: 4 of 6 public definitions documented (66.7%)" in folder
    # a file or folder with nothing public to count says nothing
    assert "Documentation coverage" not in (out / "notes.md_docs.md").read_text()
    assert "Documentation coverage" not in (out / "doc.md").read_text()


def test_coverage_prints_a_table_per_folder(tree, capsys):
    capsys.readouterr()
    assert run_kwdocs("coverage", "--src", str(tree)) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["folder", "files", "public", "documented", "coverage"]
    assert lines[1].split() == ["pkg", "2", "6", "4", "66.7%"]
    assert lines[2].split() == ["total", "2", "6", "4", "66.7%"]
    assert not (tree / "kwdocs-out").exists()     # it writes nothing


def test_coverage_json_names_each_undocumented_definition(tree, capsys):
    capsys.readouterr()
    assert run_kwdocs("coverage", "--src", str(tree), "--json") == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["total"] == {"files": 2, "public": 6, "documented": 4, "percent": 66.7}
    assert answer["folders"] == [{"folder": "pkg", "files": 2, "public": 6, "documented": 4, "percent": 66.7}]
    bad = next(item for item in answer["files"] if item["path"] == "pkg/bad.py")
    assert bad["undocumented"] == [{"line": 1, "name": "undocumented"}, {"line": 8, "name": "Thing.method"}]


def test_check_min_coverage_fails_below_and_names_the_undocumented(tree, capsys):
    assert run_kwdocs("build", "--src", str(tree), "-q") == 0
    capsys.readouterr()
    assert run_kwdocs("check", "--src", str(tree), "--min-coverage", "50") == 1
    text = capsys.readouterr().out
    undocumented = [line for line in text.splitlines() if line.startswith("undocumented: ")]
    assert undocumented == ["undocumented: pkg/bad.py:1 undocumented", "undocumented: pkg/bad.py:8 Thing.method"]
    assert "1 file documents fewer than 50% of its public definitions" in text
    # the pages themselves are up to date: coverage alone made it fail
    assert "pages are up to date" in text


def test_check_min_coverage_passes_at_or_below_every_file(tree, capsys):
    assert run_kwdocs("build", "--src", str(tree), "-q") == 0
    capsys.readouterr()
    assert run_kwdocs("check", "--src", str(tree), "--min-coverage", "33") == 0
    assert "undocumented" not in capsys.readouterr().out
    (tree / "pkg" / "bad.py").write_text('"""Now documented."""\n\n\ndef undocumented():\n    """Not any more."""\n')
    assert run_kwdocs("build", "--src", str(tree), "-q") == 0
    assert run_kwdocs("check", "--src", str(tree), "--min-coverage", "100") == 0


@pytest.mark.parametrize("value", ["101", "-1", "half"])
def test_check_min_coverage_rejects_a_value_that_is_no_percentage(tree, capsys, value):
    with pytest.raises(SystemExit) as exit_:
        run_kwdocs("check", "--src", str(tree), "--min-coverage", value)
    assert exit_.value.code == 2
    assert "is not a percentage from 0 to 100" in capsys.readouterr().err


def test_a_python_module_with_all_counts_only_the_names_it_lists(tree, capsys):
    (tree / "pkg" / "listed.py").write_text(
        '__all__ = ["Listed"]\n\n\nclass Listed:\n    """Listed."""\n\n    def run(self):\n        pass\n\n\n'
        'def helper():\n    pass\n')
    capsys.readouterr()
    assert run_kwdocs("coverage", "--src", str(tree), "--json") == 0
    answer = json.loads(capsys.readouterr().out)
    listed = next(item for item in answer["files"] if item["path"] == "pkg/listed.py")
    # ``helper`` has no underscore, but the module's __all__ leaves it out
    assert (listed["public"], listed["documented"]) == (2, 1)
    assert listed["undocumented"] == [{"line": 7, "name": "Listed.run"}]


def test_documenting_a_function_updates_its_folder_page_on_the_next_build(tree):
    assert run_kwdocs("build", "--src", str(tree), "-q") == 0
    (tree / "pkg" / "bad.py").write_text(BAD.replace("def undocumented():\n", 'def undocumented():\n    """Now."""\n'))
    assert run_kwdocs("build", "--src", str(tree), "-q") == 0
    folder = (tree / "kwdocs-out" / "pkg" / "doc.md").read_text()
    assert "- **Documentation coverage**: 5 of 6 public definitions documented (83.3%)" in folder


@pytest.mark.parametrize("path, language, symbols, tags", [
    ("pkg/shapes.py", "python", [{"name": "area", "kind": "function", "line": 1, "doc": "The area."},
                                 {"name": "Shape", "kind": "class", "line": 3},
                                 {"name": "grow", "kind": "method", "line": 4, "parent": "Shape"},
                                 {"name": "_hidden", "kind": "function", "line": 6},
                                 {"name": "X", "kind": "variable", "line": 7}], []),
    ("lib/a.h", "cpp", [{"name": "f", "kind": "function", "line": 1, "doc": "F."},
                        {"name": "S", "kind": "class", "line": 2},
                        {"name": "m", "kind": "method", "line": 3, "parent": "S"}], []),
    ("lib/a.cpp", "cpp", [{"name": "f", "kind": "function", "line": 1}], []),
    ("tests/test_a.py", "python", [{"name": "test_a", "kind": "function", "line": 1}], ["test"]),
])
def test_a_pages_counts_are_those_the_coverage_command_adds_up(path, language, symbols, tags):
    """A docs page and a folder's row show a file's counts alone (``file_counts``): the same as
    ``kwdocs coverage`` counts, which also names each undocumented definition."""
    from kwdocs.pages.coverage import file_counts, file_coverage
    facts = {"path": path, "language": language, "symbols": symbols, "findings": {"tags": tags}}
    whole = file_coverage(facts)
    assert file_counts(facts) == (whole["public"], whole["documented"])
    assert whole["documented"] + len(whole["undocumented"]) == whole["public"]


TYPED = '''/** A command. */
export class Command {
  /** Runs it. */
  run(): void {}
  private secret(): void {}
  #hidden() {}
  protected parse(): void {}
  name: string;
}

class Option { flags: string; }
export { Option };

class Internal { step() {} }

/** Options. */
export interface Settings {
  /** Whether to print. */
  verbose: boolean;
}
'''


def test_a_typescript_modules_exported_classes_count_with_their_members(tree, capsys):
    """As TypeDoc documents a module: what it exports (``export class``, ``export { Option }``)
    and their members, not the private ones (``private``, ``#``), nor what stays inside."""
    (tree / "pkg" / "command.ts").write_text(TYPED)
    capsys.readouterr()
    assert run_kwdocs("coverage", "--src", str(tree), "--json") == 0
    typed = next(item for item in json.loads(capsys.readouterr().out)["files"] if item["path"] == "pkg/command.ts")
    assert sorted(item["name"] for item in typed["undocumented"]) == [
        "Command.name", "Command.parse", "Option", "Option.flags"]
    assert (typed["public"], typed["documented"]) == (8, 4)
    assert run_kwdocs("build", "--src", str(tree), "-q") == 0
    page = (tree / "kwdocs-out" / "pkg" / "command.ts_docs.md").read_text()
    assert "*Documentation coverage: 4 of 8 public definitions documented (50.0%).*" in page
