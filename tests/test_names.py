"""Any name the file system allows: folders doit would refuse as task names, and file and
folder names whose pages would pass the 255-byte file name limit."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from kwdocs import layout
from kwdocs.site.html import html_page
from output_checks import broken_links, keyword_search, kwdocs_command, pages, run_build

FUNCTION = "def {name}():\n    return 1\n"

# doit refuses "=" in a task name; the rest are names a shell or a path join may trip on.
ODD_FOLDERS = ["year=2024", "a=b=c", "year%3D2024", "a:b", "with space", "-leading", "..dots", "dots..", "..."]
# Names no page can carry: each is skipped with one problem line, and the rest builds.
UNPRINTABLE_FOLDERS = {b"new\nline": "new\\nline", b"bad\xff": "bad\\xff"}


def kwdocs(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(kwdocs_command(*args), capture_output=True, text=True, timeout=300)


def problem_lines(result: subprocess.CompletedProcess) -> list[str]:
    return [line for line in result.stdout.splitlines() if line.startswith("problem: ")]


def test_any_folder_name_builds_checks_and_rebuilds(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    for index, folder in enumerate(ODD_FOLDERS):
        (src / folder).mkdir(parents=True)
        (src / folder / "f.py").write_text(FUNCTION.format(name=f"function_{index}"))
    for raw in UNPRINTABLE_FOLDERS:
        folder = os.path.join(os.fsencode(src), raw)
        os.mkdir(folder)
        Path(os.fsdecode(os.path.join(folder, b"g.py"))).write_text(FUNCTION.format(name="never_seen"))

    built = run_build(src, out, "-j", "2")
    assert built.returncode == 0, built.stdout + built.stderr
    assert sorted(problem_lines(built)) == sorted(
        f"problem: {shown}: skipped: the file name is not valid UTF-8 or has control characters"
        for shown in UNPRINTABLE_FOLDERS.values())
    for index, folder in enumerate(ODD_FOLDERS):
        assert f"function_{index}" in (out / folder / "f.py_kw.md").read_text(), folder
        assert "f.py" in (out / folder / "index.md").read_text(), folder
    assert broken_links(out) == []
    checked = kwdocs("check", "--src", str(src), "--out", str(out))
    assert checked.returncode == 0, checked.stdout + checked.stderr

    # an edit in a "=" folder reaches its pages, by the incremental path and by a whole build
    with open(src / "year=2024" / "f.py", "a") as source:
        source.write(FUNCTION.format(name="added_later"))
    rebuilt = run_build(src, out)
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    assert "added_later" in (out / "year=2024" / "f.py_kw.md").read_text()
    (src / "a=b=c" / "new.py").write_text(FUNCTION.format(name="in_a_new_file"))
    shutil.rmtree(src / "dots..")
    rebuilt = run_build(src, out, "-j", "2")
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    assert "in_a_new_file" in (out / "a=b=c" / "new.py_kw.md").read_text()
    assert not (out / "dots..").exists()
    checked = kwdocs("check", "--src", str(src), "--out", str(out))
    assert checked.returncode == 0, checked.stdout + checked.stderr

    clean = tmp_path / "clean"
    assert run_build(src, clean).returncode == 0
    assert pages(out) == pages(clean)


def site_data(out: Path, name: str) -> dict:
    """The data a site script file assigns (``window.X = {...};``)."""
    text = (out / "site" / "_kwdocs" / name).read_text()
    return json.loads(text[text.index("=") + 1:].strip().removesuffix(";"))


def long_names_tree(src: Path) -> dict[str, str]:
    """Files whose pages cannot be named ``<name>_docs.md``: rel -> the function each defines."""
    ascii_name = "a" * 247 + ".py"                       # 250 bytes
    wide_name = "é" * 124 + ".py"                        # 251 bytes, two to a character
    cut_stem = layout.docs_page(ascii_name).removesuffix(layout.DOCS_SUFFIX)
    long_folder = "d" * 252 + ".md"                      # escaped with a "~", it would pass 255 bytes
    files = {
        f"pkg/{ascii_name}": "long_ascii",
        f"pkg/{wide_name}": "long_wide",
        f"pkg/{cut_stem}": "named_like_a_cut_page",      # must not take the long file's page
        "pkg/zz_after.py": "after_the_long_ones",        # later files of the folder get pages too
        f"{long_folder}/inner.py": "in_a_long_folder",
        "top.py": "at_the_top",
    }
    for rel, name in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(FUNCTION.format(name=name))
    return files


def test_a_250_byte_file_name_gets_pages_listed_under_its_real_name(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    files = long_names_tree(src)
    built = run_build(src, out, "--html")
    assert built.returncode == 0, built.stdout + built.stderr
    assert problem_lines(built) == []
    written = pages(out)
    assert all(len(part.encode()) <= 255 for page in written for part in page.split("/"))
    names = set()
    for rel, function in files.items():
        folder, _, name = rel.rpartition("/")
        docs, kw = layout.docs_page(rel), layout.kw_page(rel)
        names.update((docs, kw))
        assert function in written[kw].decode() and function in written[docs].decode(), rel
        assert name in written[docs].decode(), rel                   # the page names its file in full
        index = written[layout.index_page(folder)].decode()
        assert name in index and layout.quote_path(docs.rpartition("/")[2]) in index, rel
    assert len(names) == 2 * len(files)                              # no two files share a page
    keywords = written["keywords.md"].decode()
    assert all(function in keywords for rel, function in files.items() if rel.endswith(".py"))   # definitions
    assert broken_links(out) == []
    checked = kwdocs("check", "--src", str(src), "--out", str(out))
    assert checked.returncode == 0, checked.stdout + checked.stderr

    # the site names them in full too: page titles, the folder tree and the search index
    tree = site_data(out, "tree.js")
    assert sorted(tree["files"]) == sorted(files)
    assert {row[0] for row in keyword_search(out / "site")} >= {
        function for rel, function in files.items() if rel.endswith(".py")}
    for rel in files:
        site_page = tree.get("pages", {}).get(rel, rel) + "_docs.html"   # where the site's script links
        assert (out / "site" / site_page).is_file(), rel
        assert f"<title>{rel} · documentation" in (out / "site" / html_page(layout.docs_page(rel))).read_text()

    # the same pages from a copy of the tree in another folder, built into another
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(src, elsewhere / "src")
    assert run_build(elsewhere / "src", elsewhere / "out", "--html").returncode == 0
    assert pages(elsewhere / "out") == written

    # a long file removed takes its pages with it; the rest builds as before
    gone = next(rel for rel, function in files.items() if function == "long_ascii")
    (src / gone).unlink()
    rebuilt = run_build(src, out, "--html")
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    assert not (out / layout.docs_page(gone)).exists() and not (out / layout.kw_page(gone)).exists()
    checked = kwdocs("check", "--src", str(src), "--out", str(out))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_folder_named_like_a_bucket_of_a_large_folder_keeps_both(tmp_path):
    """A folder of many files is split into buckets; ``big#0`` beside ``big`` is a folder, not one."""
    src, out = tmp_path / "src", tmp_path / "out"
    (src / "big").mkdir(parents=True)
    (src / "big#0").mkdir()
    for index in range(300):
        (src / "big" / f"m{index}.py").write_text(FUNCTION.format(name=f"many_{index}"))
    (src / "big#0" / "solo.py").write_text(FUNCTION.format(name="lonely"))
    built = run_build(src, out)
    assert built.returncode == 0, built.stdout + built.stderr
    for index in range(300):
        assert f"many_{index}" in (out / "big" / f"m{index}.py_kw.md").read_text()
    assert "lonely" in (out / "big#0" / "solo.py_kw.md").read_text()
    checked = kwdocs("check", "--src", str(src), "--out", str(out))
    assert checked.returncode == 0, checked.stdout + checked.stderr
