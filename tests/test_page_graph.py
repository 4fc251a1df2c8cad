"""Pages that use the import graph: folder overviews and Main Definitions ranked by use,
Related Files and Testing by who imports whom, and a Keyword -> Section Map that says something."""
from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import run_kwdocs

VARIANTS = ["all_gather", "all_gather_object", "all_gather_into_tensor", "all_gather_coalesced",
            "all_reduce", "all_reduce_coalesced", "all_to_all", "all_to_all_single"]


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _build(tmp_path: Path, files: dict[str, str]) -> Path:
    src = _write(tmp_path / "src", files)
    out = tmp_path / "out"
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    return out


def _section(page: str, title: str) -> str:
    return page.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def _distributed_tree() -> dict[str, str]:
    """A package whose core module defines many collective variants (each documented) and one
    function that every other file calls, through the package (``import dist.pkg as dist``)."""
    variants = [f"{name}_{index}" for name in VARIANTS for index in range(6)]    # 48 names before "init"
    core = '"""Collectives."""\n\n' + "".join(
        f'def {name}(tensor):\n    """{name} over the group."""\n\n\n' for name in variants)
    core += 'def init_process_group(backend):\n    """Initialise the default process group."""\n'
    files = {"dist/__init__.py": "from .core import *\n", "dist/core.py": core}
    for index in range(4):
        files[f"train/job_{index}.py"] = ("import dist as d\n\n\ndef main():\n"
                                          "    d.init_process_group('gloo')\n")
    return files


def test_main_definitions_rank_the_function_many_files_use(tmp_path: Path):
    out = _build(tmp_path, _distributed_tree())
    listed = re.findall(r"^- function \[`(\w+)`\]", _section((out / "dist" / "doc.md").read_text(),
                                                             "Main Definitions"), re.MULTILINE)
    assert listed, "Main Definitions lists nothing"
    assert listed[0] == "init_process_group", listed[:5]


def test_folder_overview_quotes_its_files_when_it_has_no_readme(tmp_path: Path):
    out = _build(tmp_path, {"tools/fetch.py": '"""Download the release archives."""\nX = 1\n',
                            "tools/unpack.py": '"""Unpack an archive into a folder."""\nY = 2\n',
                            "tools/plain.py": "Z = 3\n"})
    overview = _section((out / "tools" / "doc.md").read_text(), "Overview")
    assert "Download the release archives." in overview
    assert "Unpack an archive into a folder." in overview
    assert "](./fetch.py_docs.md)" in overview


def _package_tree() -> dict[str, str]:
    return {"pkg/__init__.py": "from pkg.core import run\n",
            "pkg/core.py": "from pkg import helpers\n\n\ndef run():\n    return helpers.twice(1)\n",
            "pkg/helpers.py": "def twice(x):\n    return 2 * x\n",
            "pkg/zeta.py": "A = 1\n", "pkg/alpha.py": "B = 2\n",
            "tests/test_direct.py": "from pkg.core import run\n\n\ndef test_run():\n    assert run() == 2\n",
            "tests/test_package.py": "import pkg\n\n\ndef test_run():\n    assert pkg.run() == 2\n"}


def test_related_files_follow_the_import_graph(tmp_path: Path):
    out = _build(tmp_path, _package_tree())
    related = _section((out / "pkg" / "core.py_docs.md").read_text(), "Related Files")
    linked = re.findall(r"^- \[`([^`]+)`\]\([^)]*\) \(([^)]+)\)", related, re.MULTILINE)
    assert ("pkg/helpers.py", "imported") in linked
    assert ("pkg/__init__.py", "imports it") in linked
    assert ("tests/test_direct.py", "imports it") in linked
    names = [name for name, _ in linked]
    assert "pkg/alpha.py" not in names and "pkg/zeta.py" not in names, "unrelated neighbours listed"


def test_related_files_count_the_rest(tmp_path: Path):
    files = {f"lib/mod_{index:02d}.py": "import lib.hub\n" for index in range(14)}
    files["lib/hub.py"] = "X = 1\n"
    out = _build(tmp_path, files)
    related = _section((out / "lib" / "hub.py_docs.md").read_text(), "Related Files")
    assert len(re.findall(r"^- \[`lib/mod_\d+\.py`\]", related, re.MULTILINE)) == 10
    assert "and 4 more" in related


def test_testing_counts_tests_through_package_reexports_as_indirect(tmp_path: Path):
    out = _build(tmp_path, _package_tree())
    testing = (out / "pkg" / "core.py_docs.md").read_text().split("### Testing\n", 1)[1].split("\n### ", 1)[0]
    direct = re.search(r"^- \[`tests/test_direct.py`\]\([^)]*\)$", testing, re.MULTILINE)
    indirect = re.search(r"^- \[`tests/test_package.py`\]\([^)]*\) \(indirect: through \[`pkg/__init__.py`\]",
                         testing, re.MULTILINE)
    assert direct and indirect, testing


def test_testing_lists_a_few_indirect_tests_and_counts_the_rest(tmp_path: Path):
    # every test importing a top-level package reaches each module it re-exports: a handful
    # is listed, the rest counted, direct tests always first
    files = _package_tree()
    files.update({f"tests/test_via_{index:02d}.py": "import pkg\n\n\ndef test_it():\n    assert pkg.run()\n"
                  for index in range(14)})
    out = _build(tmp_path, files)
    testing = (out / "pkg" / "core.py_docs.md").read_text().split("### Testing\n", 1)[1].split("\n### ", 1)[0]
    assert re.search(r"^- \[`tests/test_direct.py`\]\([^)]*\)$", testing, re.MULTILINE), testing
    assert len(re.findall(r"^- \[`tests/test_[a-z_0-9]+\.py`\]\([^)]*\) \(indirect:", testing, re.MULTILINE)) == 10
    assert "*... and 5 more test files.*" in testing, testing


def test_section_map_sums_up_keywords_found_only_where_defined(tmp_path: Path):
    body = "".join(f"def helper{index}():\n    return {index}\n\n\n" for index in range(12))
    out = _build(tmp_path, {"m.py": '"""Uses helper3 for everything."""\n' + body})
    section_map = _section((out / "m.py_kw.md").read_text(), "Keyword → Section Map")
    # the purpose names the first three definitions and quotes the docstring, which names helper3
    listed = re.findall(r"^- \*\*`(\w+)`\*\*: File Purpose", section_map, re.MULTILINE)
    assert listed == ["helper0", "helper1", "helper2", "helper3"], section_map
    assert "helper7" not in section_map, "a keyword found only where it is defined is listed"
    assert "8 other keywords appear only where they are written and defined" in section_map
