"""Which files are inputs: ``.gitignore`` rules as git applies them, case by case.

Each case is a tree (its ``.gitignore`` files included) and the files kwdocs must
document; git itself (``git ls-files --others --exclude-standard``) is asked too,
so a table that disagrees with git fails as surely as kwdocs does.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kwdocs.config import load_config
from kwdocs.scan import scan, scan_folder
from tests.conftest import run_kwdocs

CASES = {
    "negation": (
        {".gitignore": "*.log\n!keep.log\n", "a.log": "", "keep.log": "", "sub/b.log": "", "sub/keep.log": "",
         "main.py": ""},
        {"keep.log", "sub/keep.log", "main.py"}),
    "negation_cannot_reach_into_an_ignored_folder": (
        {".gitignore": "logs/\n!logs/keep.txt\n", "logs/keep.txt": "", "logs/other.txt": "", "main.py": ""},
        {"main.py"}),
    "last_matching_line_wins": (
        {".gitignore": "!important.txt\n*.txt\n", "important.txt": "", "notes.txt": "", "main.py": ""},
        {"main.py"}),
    "leading_slash_anchors_to_the_file_s_folder": (
        {".gitignore": "/build\n", "build/out.py": "", "src/build/keep.py": "", "src/main.py": ""},
        {"src/build/keep.py", "src/main.py"}),
    "a_middle_slash_anchors_too": (
        {".gitignore": "docs/*.txt\n", "docs/a.txt": "", "docs/b.md": "", "sub/docs/c.txt": ""},
        {"docs/b.md", "sub/docs/c.txt"}),
    "a_name_alone_matches_at_any_depth": (
        {".gitignore": "secret_notes.txt\n", "secret_notes.txt": "", "a/b/secret_notes.txt": "", "a/b/c.txt": ""},
        {"a/b/c.txt"}),
    "nested_gitignore_adds_and_negates_for_its_folder_only": (
        {".gitignore": "*.out\n", "sub/.gitignore": "!special.out\n*.py\n", "a.out": "", "x.py": "",
         "sub/special.out": "", "sub/other.out": "", "sub/y.py": "", "sub/deeper/z.py": "", "other/w.py": ""},
        {"x.py", "sub/special.out", "other/w.py"}),
    "nested_anchor_is_relative_to_its_own_folder": (
        {"pkg/.gitignore": "/gen\n", "pkg/gen/a.py": "", "pkg/sub/gen/b.py": "", "gen/c.py": ""},
        {"pkg/sub/gen/b.py", "gen/c.py"}),
    "trailing_slash_matches_folders_only": (
        {".gitignore": "cache/\n", "cache/a.py": "", "src/cache/b.py": "", "notes/cache": "", "main.py": ""},
        {"notes/cache", "main.py"}),
    "double_star_prefix_matches_every_depth": (
        {".gitignore": "**/gen/*.py\n", "gen/a.py": "", "x/gen/b.py": "", "x/y/gen/c.py": "", "x/gen/d.txt": ""},
        {"x/gen/d.txt"}),
    "double_star_suffix_matches_everything_inside": (
        {".gitignore": "vendor/**\n", "vendor/a.py": "", "vendor/deep/b.py": "", "src/vendor/c.py": ""},
        {"src/vendor/c.py"}),
    "double_star_in_the_middle_matches_zero_or_more_folders": (
        {".gitignore": "a/**/z.py\n", "a/z.py": "", "a/b/z.py": "", "a/b/c/z.py": "", "a/z2.py": "", "b/a/z.py": ""},
        {"a/z2.py", "b/a/z.py"}),
    "comments_blank_lines_and_escapes": (
        {".gitignore": "# a comment\n\n\\#hash.txt\n\\!bang.txt\n", "#hash.txt": "", "!bang.txt": "",
         "# a comment": "", "plain.txt": ""},
        {"# a comment", "plain.txt"}),
    "character_classes_and_question_marks": (
        {".gitignore": "file[0-9].txt\nlog?.txt\n", "file1.txt": "", "fileA.txt": "", "log1.txt": "",
         "log10.txt": ""},
        {"fileA.txt", "log10.txt"}),
}


def make_tree(root: Path, files: dict[str, str]) -> Path:
    tree = root / "tree"
    for rel, text in files.items():
        path = tree / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tree


def git_documents(tree: Path, scratch: Path) -> set[str]:
    """What git calls untracked and not ignored, in a repository copy of the tree."""
    copy = scratch / "git-copy"
    shutil.copytree(tree, copy)
    subprocess.run(["git", "init", "-q"], cwd=copy, check=True)
    listed = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "-z"], cwd=copy, check=True,
                            capture_output=True, text=True).stdout.split("\0")
    return {rel for rel in listed if rel and not rel.endswith(".gitignore")}


@pytest.mark.parametrize("case", sorted(CASES))
def test_gitignore_rules_choose_the_files_as_git_does(case, tmp_path):
    files, expected = CASES[case]
    tree = make_tree(tmp_path, files)
    if shutil.which("git"):
        assert git_documents(tree, tmp_path) == expected, "the table disagrees with git"
    config = load_config(tree)
    assert {source.rel for source in scan(config).files} == expected
    for folder in sorted({rel.rpartition("/")[0] for rel in files}):   # a watch's rescan of one folder
        found = scan_folder(config, folder)
        wanted = {rel for rel in expected if folder == "" or rel.startswith(folder + "/")}
        assert {source.rel for source in (found.files if found else [])} == wanted, folder


def test_ignored_files_get_no_pages_through_the_cli(tmp_path):
    files, expected = CASES["nested_gitignore_adds_and_negates_for_its_folder_only"]
    tree = make_tree(tmp_path, files)
    assert run_kwdocs("build", "--src", str(tree), "-q") == 0
    documented = {page.relative_to(tree / "kwdocs-out").as_posix()[: -len("_docs.md")]
                  for page in (tree / "kwdocs-out").rglob("*_docs.md")}
    assert documented == expected


def test_git_info_exclude_counts_like_a_root_gitignore(tmp_path):
    tree = make_tree(tmp_path, {".git/info/exclude": "*.bak\n", "a.bak": "", "a.py": ""})
    assert {source.rel for source in scan(load_config(tree)).files} == {"a.py"}
