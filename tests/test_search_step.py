"""The site's search data is the build's ``search`` step: it needs only what extraction stored,
so it runs beside the render step, and it is never stale, even for a unit whose pages are up to date."""
from __future__ import annotations

import shutil
from pathlib import Path

from kwdocs.config import load_config
from kwdocs.engine.runner import build_namespace, run_doit
from kwdocs.scan import scan
from tests.output_checks import fulltext_search, keyword_search, pages, run_build

FOLDERS = ("alpha", "beta", "gamma", "delta")


def _tree(src: Path) -> Path:
    for folder in FOLDERS:
        (src / folder).mkdir(parents=True)
        (src / folder / "mod.py").write_text(
            f'"""The {folder} module."""\n\n\ndef {folder}_measure(value):\n    """Measure {folder} things."""\n'
            f"    return value\n")
    return src


def _build(src: Path, out: Path, *args: str) -> None:
    result = run_build(src, out, "--html", "-q", *args)
    assert result.returncode == 0, result.stdout + result.stderr


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _places(out: Path, word: str) -> set[tuple]:
    return {(file, line) for found, file, line, _ in fulltext_search(out / "site") if found == word}


def test_a_docstring_edit_is_in_the_search_data_of_the_build_that_saw_it(tmp_path: Path) -> None:
    src, out = _tree(tmp_path / "src"), tmp_path / "out"
    _build(src, out, "-j", "2")
    assert _places(out, "things") == {(f"{folder}/mod.py", 4) for folder in FOLDERS}

    _edit(src / "gamma" / "mod.py", "Measure gamma things.", "Measure gamma xylophones.")
    _build(src, out, "-j", "2")
    assert _places(out, "xylophones") == {("gamma/mod.py", 4)}
    assert ("gamma/mod.py", 4) not in _places(out, "things")

    # the search step alone (``doit search`` at the repository root asks for it so) runs
    # extraction first: it cannot read the facts of the sources as they were before an edit
    _edit(src / "beta" / "mod.py", "Measure beta things.", "Measure beta marmosets.")
    _edit(src / "beta" / "mod.py", "def beta_measure(", "def beta_weigh(")
    config = load_config(src, overrides={"output": str(out), "html": True})
    tasks = build_namespace(config, scan(config), quiet=True)
    tasks["DOIT_CONFIG"]["default_tasks"] = ["search"]
    assert run_doit(tasks, 1, config) == 0
    assert _places(out, "marmosets") == {("beta/mod.py", 4)}
    assert "beta_weigh" in {row[0] for row in keyword_search(out / "site")}

    # and a build then leaves what a cold build of the edited tree makes
    _build(src, out, "-j", "2")
    cold = tmp_path / "cold"
    _build(src, cold, "-j", "2")
    assert pages(out) == pages(cold)


def test_the_search_data_of_a_unit_whose_pages_are_up_to_date_is_made_again_when_lost(tmp_path: Path) -> None:
    """A build stopped after rendering an edit but before its search step finished: the next
    build renders nothing of that unit, and its search data must still catch up."""
    src, out = _tree(tmp_path / "src"), tmp_path / "out"
    _build(src, out, "-j", "2")
    state = load_config(src, overrides={"output": str(out)}).state
    kept = tmp_path / "kept"
    searched = [state / "fulltext", state / "search", out / "site" / "_kwdocs" / "fulltext",
                out / "site" / "_kwdocs" / "keywords"]
    for index, folder in enumerate(searched):
        shutil.copytree(folder, kept / str(index))

    _edit(src / "gamma" / "mod.py", "Measure gamma things.", "Measure gamma xylophones.")
    _edit(src / "gamma" / "mod.py", "def gamma_measure(", "def gamma_weigh(")
    _build(src, out, "-j", "2")
    for index, folder in enumerate(searched):     # the search data as it was before that build
        shutil.rmtree(folder)
        shutil.copytree(kept / str(index), folder)
    assert not _places(out, "xylophones")

    _edit(src / "alpha" / "mod.py", "return value", "return value + 1")    # code only: no word changes
    _build(src, out, "-j", "2")
    assert _places(out, "xylophones") == {("gamma/mod.py", 4)}
    assert {"gamma_weigh", "alpha_measure", "beta_measure"} <= {row[0] for row in keyword_search(out / "site")}
    assert "gamma_measure" not in {row[0] for row in keyword_search(out / "site")}
    cold = tmp_path / "cold"
    _build(src, cold, "-j", "1")
    assert pages(out) == pages(cold)
