"""Settings as a user writes them in ``[tool.kwdocs]``: every bad key is named at once with exit 2
before anything is written, and each key's default and effect shows in the pages."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from kwdocs.config import CONFIG_KEYS
from tests.conftest import run_kwdocs
from tests.output_checks import pages

OUT = "kwdocs-out"
SHAPES = '"""Shapes of the plane."""\n\n\ndef area(side: float) -> float:\n    return side * side\n'


def make_tree(root: Path, settings: str = "", **files: str) -> Path:
    """A small tree: a Python module, a README, the settings, and ``files`` (path: text)."""
    tree = root / "tree"
    contents = {"shapes.py": SHAPES, "README.md": "# Shapes\n\nDraw shapes.\n",
                "pyproject.toml": f'[project]\nname = "from-project"\n\n[tool.kwdocs]\n{settings}\n', **files}
    for name, text in contents.items():
        path = tree / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tree


def build(tree: Path, capsys, *args: str) -> tuple[int, str]:
    code = run_kwdocs("build", "--src", str(tree), "-q", *args)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def build_alone(tree: Path) -> tuple[int, str]:
    """``kwdocs build`` in its own process with no flag but the tree (the settings' ``jobs`` too)."""
    result = subprocess.run([sys.executable, "-m", "kwdocs", "build", "--src", str(tree), "-q"],
                            capture_output=True, text=True, timeout=300)
    return result.returncode, result.stdout + result.stderr


# ---------------------------------------------------------------- bad settings

BAD = {
    "outptu": '"docs"',                     # unknown key (a typo)
    "project_name": "3",
    "include": '"*.py"',                     # a string, not a list
    "exclude": "[1]",
    "max_source_bytes": "-1",
    "templates": "true",
    "rules": '"rules.toml"',
    "replace_rules": '"yes"',
    "include_roots": "[true]",
    "skip_secret_files": "1",
    "secret_files": '"*.pem"',
    "jobs": "true",                          # a bool is not a number of jobs
    "html": '"on"',
    "formats": '"json"',                  # a string, not a list of names
    "cache": "1",
    "cache_mode": '"write"',                 # only read or readwrite
    "cache_max_mb": "-1",
    "cache_key_file": '["key"]',              # a path, not a list
    "scheduler": '"tcp://nowhere"',          # an address needs its port
    "empty_sections": '"all"',               # a string, but not one of the two layouts
    "source_url": '"https://example.org/{file}#L{line}"',   # fields it does not have
    "source_ref": '"main branch"',           # no ref has a space
    "front_matter": '"yes"',                 # true or false
}


def test_every_bad_key_is_listed_with_exit_2_before_anything_is_written(tmp_path, capsys):
    assert set(BAD) - {"outptu"} == set(CONFIG_KEYS) - {"output"}, "a key without a bad-value case"
    tree = make_tree(tmp_path, "\n".join(f"{key} = {value}" for key, value in BAD.items()))
    before = sorted(path.relative_to(tmp_path) for path in tmp_path.rglob("*"))
    code, said = build_alone(tree)
    assert code == 2
    for key in BAD:
        assert f"'{key}'" in said, f"{key} is not named:\n{said}"
    assert "Traceback" not in said
    assert sorted(path.relative_to(tmp_path) for path in tmp_path.rglob("*")) == before


def test_bad_paths_are_listed_together_and_nothing_is_written(tmp_path, capsys):
    tree = make_tree(tmp_path, 'templates = "no-such-folder"\nrules = ["no-such-rules.toml"]\noutput = "."')
    code, said = build(tree, capsys)
    assert code == 2
    assert "'templates' folder not found" in said and "'rules' file not found" in said
    assert "'output'" in said and "must not be the source folder" in said
    assert not (tree / OUT).exists() and not (tree / ".kwdocs").exists()


def test_a_config_file_that_is_not_toml_is_one_line_and_exit_2(tmp_path, capsys):
    tree = make_tree(tmp_path)
    (tree / "pyproject.toml").write_text("[tool.kwdocs\nhtml = true\n")
    code, said = build(tree, capsys)
    assert code == 2 and "not valid TOML" in said and "Traceback" not in said
    assert not (tree / OUT).exists()


def test_a_bad_flag_value_is_listed_like_a_bad_key(tmp_path, capsys):
    tree = make_tree(tmp_path, "max_source_bytes = -5")
    code, said = build(tree, capsys, "--include", "*.py")
    assert code == 2 and "'max_source_bytes'" in said
    assert not (tree / OUT).exists()


# ---------------------------------------------------------------- each key: default and effect

def test_output_defaults_to_kwdocs_out_and_is_relative_to_the_settings_file(tmp_path, capsys):
    tree = make_tree(tmp_path)
    assert build(tree, capsys)[0] == 0
    assert (tree / OUT / "shapes.py_docs.md").is_file()
    moved = make_tree(tmp_path / "second", 'output = "../elsewhere"')
    assert build(moved, capsys)[0] == 0
    assert (moved.parent / "elsewhere" / "shapes.py_docs.md").is_file() and not (moved / OUT).exists()


def test_project_name_defaults_to_the_project_table_never_the_folder(tmp_path, capsys):
    tree = make_tree(tmp_path)
    assert build(tree, capsys)[0] == 0
    assert "from-project" in (tree / OUT / "index.md").read_text()
    named = make_tree(tmp_path / "named", 'project_name = "Named Here"')
    assert build(named, capsys)[0] == 0
    assert "Named Here" in (named / OUT / "index.md").read_text()
    bare = make_tree(tmp_path / "bare")
    (bare / "pyproject.toml").unlink()
    assert build(bare, capsys)[0] == 0
    heading = (bare / OUT / "index.md").read_text().split("\n", 1)[0]
    assert "project" in heading and "tree" not in heading    # a clone in another folder gets the same pages


def test_include_and_exclude_choose_the_files(tmp_path, capsys):
    files = {"lib/a.py": "A = 1\n", "lib/b.py": "B = 2\n", "scripts/run.py": "RUN = 3\n"}
    tree = make_tree(tmp_path)
    assert build(tree, capsys)[0] == 0
    everything = pages(tree / OUT)
    assert "shapes.py_docs.md" in everything and "README.md_docs.md" in everything
    chosen = make_tree(tmp_path / "chosen", 'include = ["lib/**", "*.md"]\nexclude = ["lib/b.py"]', **files)
    assert build(chosen, capsys)[0] == 0
    documented = {page for page in pages(chosen / OUT) if page.endswith("_docs.md")}
    assert documented == {"lib/a.py_docs.md", "README.md_docs.md"}


SEED_SECTIONS = ["File Metadata", "File Purpose", "Original Source", "High-Level Overview", "Detailed Analysis",
                 "Architecture & Design", "Dependencies", "Code Patterns & Idioms", "Performance Considerations",
                 "Security & Safety", "Testing & Usage", "Related Files", "Cross-References"]
FILLERS = ("No performance-related code detected", "Manual security review is recommended", "not applicable",
           "No specific patterns automatically detected", "No obvious security concerns")


def headings(page: str) -> list[str]:
    """The ``##`` headings of a page, outside its embedded source."""
    outside = re.sub(r"(?ms)^(`{3,})[^\n]*\n.*?^\1[ \t]*$", "", page)
    return re.findall(r"(?m)^## (.+)$", outside)


NOTHING_TO_LIST = ("*No test file in this repository imports this file.*",
                   "*No file in this repository imports or includes this file.*",
                   "*No file of this repository imports this file or is imported by it, and none is named like it.*")


def test_a_section_with_nothing_to_say_is_left_out_unless_empty_sections_keeps_it(tmp_path, capsys):
    tree = make_tree(tmp_path, "", **{"notes.txt": "plain words\n"})
    assert build(tree, capsys)[0] == 0
    docs = {name: page.decode() for name, page in pages(tree / OUT).items() if name.endswith("_docs.md")}
    assert set(docs) == {"shapes.py_docs.md", "README.md_docs.md", "notes.txt_docs.md", "pyproject.toml_docs.md"}
    for name, page in docs.items():
        found = headings(page)
        assert found == [title for title in SEED_SECTIONS if title in found], name   # the seed order
        assert not any(filler in page for filler in FILLERS), name
    shapes = headings(docs["shapes.py_docs.md"])
    assert "Code Patterns & Idioms" in shapes           # type hints, at the line of `area`
    assert "Uses **type hints** (`area` at line 4)." in docs["shapes.py_docs.md"]
    for title in ("Performance Considerations", "Security & Safety", "Architecture & Design"):
        assert title not in shapes
    notes = headings(docs["notes.txt_docs.md"])
    assert "Dependencies" not in notes and "High-Level Overview" not in notes
    # nothing imports it, it imports nothing, no file is named like it: nothing to list
    assert "Testing & Usage" not in notes and "Related Files" not in notes
    assert not any(line in page for line in NOTHING_TO_LIST for page in docs.values())

    (tree / "pyproject.toml").write_text('[project]\nname = "from-project"\n\n[tool.kwdocs]\nempty_sections = "keep"\n')
    assert build(tree, capsys)[0] == 0
    kept = {name: page.decode() for name, page in pages(tree / OUT).items() if name.endswith("_docs.md")}
    for name, page in kept.items():
        assert headings(page) == SEED_SECTIONS, name       # the seeds' full layout on every page
        assert not any(filler in page for filler in FILLERS), name
    assert "### Performance Notes\n\n*None found.*\n" in kept["shapes.py_docs.md"]
    assert "### Import Dependencies\n\n*Imports are not read for this file type.*\n" in kept["notes.txt_docs.md"]
    assert all(line in kept["notes.txt_docs.md"] for line in NOTHING_TO_LIST)


def test_max_source_bytes_cuts_the_embedded_source(tmp_path, capsys):
    tree = make_tree(tmp_path)
    assert build(tree, capsys)[0] == 0
    assert "bytes were left out" not in (tree / OUT / "shapes.py_docs.md").read_text()   # 256 KiB by default
    small = make_tree(tmp_path / "small", "max_source_bytes = 20")
    assert build(small, capsys)[0] == 0
    assert "bytes were left out" in (small / OUT / "shapes.py_docs.md").read_text()


def test_templates_override_the_shipped_ones_by_name(tmp_path, capsys):
    # the docs page's layout (file_docs.md.j2 holds its sections' blocks and extends it)
    shipped_docs = (Path(__file__).resolve().parents[1] / "templates" / "file_docs_layout.md.j2").read_text()
    tree = make_tree(tmp_path, 'templates = "my-templates"',
                     **{"my-templates/file_docs_layout.md.j2": shipped_docs + "\nReviewed by the docs team.\n"})
    shipped = make_tree(tmp_path / "shipped")
    assert build(tree, capsys)[0] == 0 and build(shipped, capsys)[0] == 0
    assert "Reviewed by the docs team." not in (shipped / OUT / "shapes.py_docs.md").read_text()
    assert "Reviewed by the docs team." in (tree / OUT / "shapes.py_docs.md").read_text()
    assert (tree / OUT / "keywords.md").read_text() == (shipped / OUT / "keywords.md").read_text()


RULES = '''[[rule]]
id = "purpose.team"
section = "purpose"
message = "Owned by the **platform team**."
paths = ["*.py"]
'''


def test_rules_add_to_the_shipped_rules_and_replace_rules_drops_them(tmp_path, capsys):
    shipped = make_tree(tmp_path / "shipped")
    added = make_tree(tmp_path / "added", 'rules = ["team.toml"]', **{"team.toml": RULES})
    only = make_tree(tmp_path / "only", 'rules = ["team.toml"]\nreplace_rules = true', **{"team.toml": RULES})
    for tree in (shipped, added, only):
        assert build(tree, capsys)[0] == 0
    shipped_purpose = "This file is part of the **documentation**."    # a shipped rule, for README.md
    assert "platform team" not in (shipped / OUT / "shapes.py_docs.md").read_text()
    assert "platform team" in (added / OUT / "shapes.py_docs.md").read_text()
    assert "platform team" in (only / OUT / "shapes.py_docs.md").read_text()
    assert shipped_purpose in (shipped / OUT / "README.md_docs.md").read_text()
    assert shipped_purpose in (added / OUT / "README.md_docs.md").read_text()
    assert shipped_purpose not in (only / OUT / "README.md_docs.md").read_text()


def test_include_roots_resolve_includes_from_other_folders(tmp_path, capsys):
    files = {"src/main.c": '#include "util.h"\n\nint main(void) { return util(); }\n',
             "headers/util.h": "int util(void);\n", "vendor/util.h": "int util(void);\n"}
    plain = make_tree(tmp_path / "plain", **files)
    rooted = make_tree(tmp_path / "rooted", 'include_roots = ["headers"]', **files)
    assert build(plain, capsys)[0] == 0 and build(rooted, capsys)[0] == 0
    assert "headers/util.h_docs.md" not in (plain / OUT / "src" / "main.c_docs.md").read_text()
    assert "headers/util.h_docs.md" in (rooted / OUT / "src" / "main.c_docs.md").read_text()


def test_secret_files_are_skipped_by_default_and_the_list_can_change(tmp_path, capsys):
    files = {".env": "TOKEN=abc\n", "deploy.secret": "password\n"}
    default = make_tree(tmp_path / "default", **files)
    listed = make_tree(tmp_path / "listed", 'secret_files = ["*.secret"]', **files)
    off = make_tree(tmp_path / "off", "skip_secret_files = false", **files)
    for tree in (default, listed, off):
        assert build(tree, capsys)[0] == 0
    assert not (default / OUT / ".env_docs.md").exists() and (default / OUT / "deploy.secret_docs.md").exists()
    assert (listed / OUT / ".env_docs.md").exists() and not (listed / OUT / "deploy.secret_docs.md").exists()
    assert (off / OUT / ".env_docs.md").exists() and (off / OUT / "deploy.secret_docs.md").exists()


def test_html_writes_the_site_only_when_asked(tmp_path, capsys):
    plain = make_tree(tmp_path / "plain")
    site = make_tree(tmp_path / "site", "html = true")
    assert build(plain, capsys)[0] == 0 and build(site, capsys)[0] == 0
    assert not (plain / OUT / "site").exists()
    assert (site / OUT / "site" / "shapes.py_docs.html").is_file()


def test_jobs_change_how_many_workers_run_but_never_the_pages(tmp_path, capsys):
    one = make_tree(tmp_path / "one", "jobs = 1", **{f"pkg/m{n}.py": f"VALUE_{n} = {n}\n" for n in range(12)})
    two = make_tree(tmp_path / "two", "jobs = 2", **{f"pkg/m{n}.py": f"VALUE_{n} = {n}\n" for n in range(12)})
    for tree in (one, two):
        assert build_alone(tree)[0] == 0
    settings_pages = ("pyproject.toml_docs.md", "pyproject.toml_kw.md")    # they show the setting itself
    assert ({page: text for page, text in pages(one / OUT).items() if page not in settings_pages}
            == {page: text for page, text in pages(two / OUT).items() if page not in settings_pages})


# ---------------------------------------------------------------- a plain checkout

def test_a_plain_checkout_finds_its_templates(tmp_path):
    """The repository, copied and run without installing it, builds with its own templates."""
    repository = Path(__file__).resolve().parents[1]
    checkout = tmp_path / "checkout"
    for name in ("kwdocs", "templates"):
        shutil.copytree(repository / name, checkout / name, ignore=shutil.ignore_patterns("__pycache__"))
    tree = make_tree(tmp_path)
    # Not installed: no editable-install finder may supply kwdocs or kwdocs.templates.
    script = ("import sys\n"
              "sys.meta_path[:] = [finder for finder in sys.meta_path if 'editable' not in repr(finder).lower()]\n"
              "from kwdocs.cli import main\n"
              f"sys.exit(main(['build', '--src', {str(tree)!r}, '-q', '-j', '1']))\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=checkout, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(checkout)}, timeout=300)
    assert result.returncode == 0, result.stderr
    assert (tree / OUT / "shapes.py_docs.md").is_file()
