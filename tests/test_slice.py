"""The 500-file slice of the real PyTorch tree: what issue 2 and issue 5 promise of a real build."""
from __future__ import annotations

import shutil
import time
from pathlib import Path

from tests.conftest import changed_files, run_kwdocs, snapshot
from tests.output_checks import broken_links, pages


def build(src: Path, out: Path, *extra: str) -> None:
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q", "-j", "2", *extra) == 0


def test_slice_build_is_complete_linked_and_incremental(corpus_slice: Path, tmp_path: Path):
    src = tmp_path / "src"
    shutil.copytree(corpus_slice, src)
    out = tmp_path / "out"
    build(src, out)
    written = pages(out)
    sources = [p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()]
    assert len(sources) > 400, "the 500-file slice was not laid out"
    missing = [rel for rel in sources if rel + "_docs.md" not in written or rel + "_kw.md" not in written]
    assert not missing, f"files without both pages: {missing[:5]}"
    folders = {p.relative_to(src).as_posix() + "/" for p in src.rglob("*") if p.is_dir()} | {""}
    assert not [f for f in folders if f + "index.md" not in written or f + "doc.md" not in written]
    assert broken_links(out) == []

    before = snapshot(out)
    time.sleep(0.01)
    build(src, out)
    assert changed_files(before, snapshot(out)) == set(), "a second build wrote something"
    (out / ".kwdocs" / "snapshot.json").unlink()  # force the full doit up-to-date check too
    build(src, out)
    assert changed_files(before, snapshot(out)) == set(), "doit's no-op wrote something"

    edited = "torch/nn/modules/linear.py"
    folder = "torch/nn/modules/"
    with open(src / edited, "a") as handle:
        handle.write("\n# a comment that changes no keyword\n")
    build(src, out)
    assert changed_files(before, snapshot(out)) <= {edited + "_docs.md", edited + "_kw.md",
                                                    folder + "index.md", folder + "doc.md"}
    assert edited + "_docs.md" in changed_files(before, snapshot(out))

    # the incremental output equals a cold build of the same tree, byte for byte
    cold = tmp_path / "cold"
    build(src, cold)
    assert pages(cold) == pages(out)


def test_edits_across_many_folders_equal_a_cold_build(corpus_slice: Path, tmp_path: Path):
    """A few dozen files in a dozen folders: the build hands doit just their units, in worker
    processes (-j 2), and must still end where a cold build does; a damaged file list from the
    last build must only cost time."""
    src = tmp_path / "src"
    shutil.copytree(corpus_slice, src)
    out = tmp_path / "out"
    build(src, out)
    by_folder: dict[Path, list[Path]] = {}
    for path in sorted(src.rglob("*.py")):
        by_folder.setdefault(path.parent, []).append(path)
    folders = [folder for folder, files in sorted(by_folder.items()) if len(files) >= 3][:12]
    assert len(folders) == 12, "the slice has fewer folders of Python files than expected"
    edited = [path for folder in folders for path in by_folder[folder][:3]]
    for number, path in enumerate(edited):
        with open(path, "a") as handle:
            handle.write(f"\n\ndef spread_edit_{number}():\n    return {number}\n")
    before = snapshot(out)
    build(src, out)
    rewritten = changed_files(before, snapshot(out))
    for number, path in enumerate(edited):
        rel = path.relative_to(src).as_posix()
        assert {rel + "_docs.md", rel + "_kw.md"} <= rewritten
        assert f"spread_edit_{number}" in (out / (rel + "_kw.md")).read_text()

    cold = tmp_path / "cold"
    build(src, cold)
    assert pages(cold) == pages(out)

    (out / ".kwdocs" / "scanned.json").write_text("{not json")
    with open(edited[0], "a") as handle:
        handle.write("\n\ndef after_damage():\n    return 0\n")
    build(src, out)
    assert "after_damage" in (out / (edited[0].relative_to(src).as_posix() + "_kw.md")).read_text()
    build(src, cold)
    assert pages(cold) == pages(out)
