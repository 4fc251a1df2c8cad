"""The site's keyword search kept per unit: an edit rewrites the shard of the unit it changed,
and the site an edit left is the site a cold build of the edited tree makes, byte for byte.
The search data is the build's ``search`` step, beside the render step: never stale, even for
a unit whose pages are up to date."""
from __future__ import annotations

import shutil
from pathlib import Path

from kwdocs.config import load_config
from kwdocs.context import drop_contexts
from kwdocs.engine.runner import build_namespace, run_doit
from kwdocs.layout import state_name
from kwdocs.scan import scan
from kwdocs.store.state import PAGES
from tests.conftest import run_kwdocs
from tests.output_checks import fulltext_search, keyword_search, pages, run_build

FOLDERS = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta")


def _tree(src: Path) -> Path:
    for folder in FOLDERS:
        (src / folder).mkdir(parents=True)
        (src / folder / "mod.py").write_text(
            f'"""The {folder} module."""\n\n\ndef {folder}_measure(value):\n    """Measure {folder} things."""\n'
            f"    return value\n\n\nclass {folder.title()}Box:\n    def open_{folder}(self):\n        return 1\n")
    return src


def _build(src: Path, out: Path, *args: str) -> None:
    result = run_build(src, out, "--html", "-q", *args)
    assert result.returncode == 0, result.stdout + result.stderr


def _site_data(out: Path) -> dict[str, bytes]:
    return {name: data for name, data in pages(out).items() if name.startswith("site/_kwdocs/")}


def _changed(before: dict[str, bytes], after: dict[str, bytes]) -> set[str]:
    return {name for name in set(before) | set(after) if before.get(name) != after.get(name)}


def test_an_edit_rewrites_its_units_keyword_shard_and_equals_a_cold_build(tmp_path: Path) -> None:
    src, out = _tree(tmp_path / "src"), tmp_path / "out"
    _build(src, out, "-j", "2")
    names = {row[0] for row in keyword_search(out / "site")}
    assert {"alpha_measure", "ZetaBox", "open_gamma"} <= names
    shards = {name for name in _site_data(out) if name.startswith("site/_kwdocs/keywords/")}
    assert len(shards) > 3       # the list and several shards: six units hash to more than one

    before = _site_data(out)
    with open(src / "gamma" / "mod.py", "a") as stream:
        stream.write("\n\ndef gamma_zebra():\n    return 2\n")
    _build(src, out)
    changed = {name for name in _changed(before, _site_data(out)) if name.startswith("site/_kwdocs/keywords/")}
    assert len(changed) == 1                     # the shard of gamma's unit, nothing else of the keywords
    assert "gamma_zebra" in (out / changed.pop()).read_text()
    assert ("gamma_zebra", "function", "gamma/mod.py", 14) in {row[:4] for row in keyword_search(out / "site")}

    # files and units that go and come: their keywords with them
    (src / "beta" / "mod.py").unlink()
    (src / "beta").rmdir()
    (src / "eta").mkdir()
    (src / "eta" / "mod.py").write_text("def eta_fresh():\n    return 3\n")
    alpha = src / "alpha" / "mod.py"
    alpha.write_text(alpha.read_text().replace("alpha_measure", "alpha_gauge"))
    _build(src, out)
    names = {row[0] for row in keyword_search(out / "site")}
    assert {"eta_fresh", "alpha_gauge", "gamma_zebra"} <= names
    assert not names & {"beta_measure", "BetaBox", "alpha_measure"}

    # the site (and every page) a cold build of the edited tree makes, in another folder, on one core
    cold = tmp_path / "cold"
    _build(src, cold, "-j", "1")
    assert pages(out) == pages(cold)


def test_a_damaged_keyword_shard_script_is_made_again_not_trusted(tmp_path: Path) -> None:
    src, out = _tree(tmp_path / "src"), tmp_path / "out"
    _build(src, out)
    scripts = sorted((out / "site" / "_kwdocs" / "keywords").glob("[0-9a-f][0-9a-f].js"))
    assert scripts
    for script in scripts:      # each shard's parts, read back by the next build that changes it
        script.write_text(script.read_text().replace("= [", '= [{"someone else":[1]},', 1))
    with open(src / "delta" / "mod.py", "a") as stream:
        stream.write("\n\ndef delta_more():\n    return 4\n")
    _build(src, out)
    cold = tmp_path / "cold"
    _build(src, cold)
    assert pages(out) == pages(cold)
    assert "delta_more" in {row[0] for row in keyword_search(out / "site")}


def test_keyword_entries_unlike_the_keyword_index_start_the_state_over(tmp_path: Path) -> None:
    src, out = _tree(tmp_path / "src"), tmp_path / "out"
    _build(src, out)
    state = load_config(src, overrides={"output": str(out)}).state
    (state / "search" / "meta.json").unlink()             # every unit's part is made again ...
    for shard in (state / "keyword-entries").iterdir():   # ... from entries that are not what they were
        shard.write_text('{"broken": 1}')
    with open(src / "zeta" / "mod.py", "a") as stream:
        stream.write("\n# a comment\n")
    result = run_build(src, out, "--html")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "building the state again" in result.stderr
    cold = tmp_path / "cold"
    _build(src, cold)
    assert pages(out) == pages(cold)


def test_an_edit_does_its_own_units_site_work_only_and_equals_a_cold_build(tmp_path: Path, monkeypatch) -> None:
    """The site step of an edit reads the page records of the edited unit only, makes its words
    for the full-text search again only when its documentation text changed, compiles no template
    (the site's are kept compiled as the Markdown pages' are), and leaves the site a cold build of
    the edited tree makes."""
    import jinja2

    from kwdocs.site import search
    from kwdocs.store import writer

    src, out = _tree(tmp_path / "src"), tmp_path / "out"
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "--html", "-q") == 0
    config = load_config(src, overrides={"output": str(out)})
    records_read: list[str] = []
    words_made: list[str] = []
    read_json, bucket_parts = writer.read_json, search.bucket_parts
    monkeypatch.setattr(writer, "read_json", lambda path, *rest, **named: (
        records_read.append(Path(path).name) if Path(path).parent == config.state / PAGES else None,
        read_json(path, *rest, **named))[1])
    monkeypatch.setattr(search, "bucket_parts", lambda texts: (
        words_made.extend(sorted({text[0] for text in texts})), bucket_parts(texts))[1])
    trees_made: list[int] = []
    tree_data = search.tree_data
    monkeypatch.setattr(search, "tree_data", lambda project, files, folders: (
        trees_made.append(len(files)), tree_data(project, files, folders))[1])
    compiled: list[str] = []
    compile_template = jinja2.Environment.compile
    monkeypatch.setattr(jinja2.Environment, "compile", lambda self, source, name=None, *rest, **named: (
        compiled.append(name), compile_template(self, source, name, *rest, **named))[1])
    site = out / "site" / "_kwdocs"

    def edit(rel: str, old: str, new: str) -> None:
        path = src / rel
        path.write_text(path.read_text().replace(old, new))
        records_read.clear()
        words_made.clear()
        trees_made.clear()
        drop_contexts()     # each build in a process of its own, as on the command line
        assert run_kwdocs("build", "--src", str(src), "--out", str(out), "--html", "-q") == 0

    def fulltext() -> str:
        return "".join(path.read_text() for path in sorted((site / "fulltext").glob("*.js")))

    # code without documentation: the unit's words are not made again, no other unit's record is read,
    # and the record of every unit's words (the full-text meta) is not even written again
    words_meta = config.state / "fulltext" / "meta.json"
    meta_stamp = words_meta.stat().st_mtime_ns
    edit("gamma/mod.py", "class GammaBox:", "def gamma_plain(value):\n    return value\n\n\nclass GammaBox:")
    assert words_meta.stat().st_mtime_ns == meta_stamp
    assert set(records_read) == {state_name("gamma")} and words_made == [] and compiled == []
    assert trees_made == []     # no file came or went: the folder tree is as it was
    assert "gamma_plain" in {row[0] for row in keyword_search(out / "site")}
    # documentation changed, then changed back: the words follow it each time
    edit("gamma/mod.py", "Measure gamma things.", "Measure gamma xylophones.")
    assert words_made == ["gamma/mod.py"] and "xylophones" in fulltext() and '"things"' in fulltext()
    edit("gamma/mod.py", "Measure gamma xylophones.", "Measure gamma things.")
    assert words_made == ["gamma/mod.py"] and "xylophones" not in fulltext()
    # a new file is in the folder tree; the tree and styles deleted by hand are made again by the next build
    (src / "gamma" / "extra.py").write_text("def extra_one():\n    return 1\n")
    styles = (site / "kwdocs.css").read_bytes()
    (site / "tree.js").unlink()
    (site / "kwdocs.css").unlink()
    edit("alpha/mod.py", "Measure alpha things.", "Measure alpha quokkas.")
    assert '"gamma/extra.py"' in (site / "tree.js").read_text() and (site / "kwdocs.css").read_bytes() == styles
    assert trees_made == [7]
    assert words_made == ["alpha/mod.py"] and "quokkas" in fulltext()

    cold = tmp_path / "cold"
    _build(src, cold, "-j", "1")
    assert pages(out) == pages(cold)


# ---------------------------------------------------------------- the search step beside rendering

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


def test_a_lost_keyword_entries_shard_never_drops_a_units_keywords(tmp_path: Path) -> None:
    """Each unit's keyword entries as extraction stored them are what the search step reads:
    one deleted (of a unit no edit touches) is damage, made good, not a unit gone."""
    src, out = _tree(tmp_path / "src"), tmp_path / "out"
    _build(src, out, "-j", "2")
    state = load_config(src, overrides={"output": str(out)}).state
    (state / "keyword-entries" / state_name("beta")).unlink()
    _edit(src / "alpha" / "mod.py", "def alpha_measure(", "def alpha_weigh(")
    _build(src, out, "-j", "2")
    assert {"beta_measure", "BetaBox", "alpha_weigh"} <= {row[0] for row in keyword_search(out / "site")}
    cold = tmp_path / "cold"
    _build(src, cold, "-j", "1")
    assert pages(out) == pages(cold)


def test_a_prose_file_changed_between_extracting_and_searching_never_leaves_stale_words(tmp_path: Path,
                                                                                      monkeypatch) -> None:
    """Issue 31: a checkout between a build's extract step and its search step, then back to the
    content extracted: the full-text search must not keep the other content's words (its input, the
    unit's facts shard, is the same again), and ``check`` must say so with and without the state."""
    from kwdocs.site import search

    src, out = _tree(tmp_path / "src"), tmp_path / "out"
    guide = src / "alpha" / "GUIDE.md"
    guide.write_text("# Guide\n\nThe alpha guide speaks of lanterns.\n")
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "--html", "-q") == 0
    branch = "# Guide\n\nThe alpha guide speaks of lanterns and quinces.\n"
    guide.write_text(branch)
    keyword_index = search.write_keyword_index

    def checkout_while_searching(*args, **kwargs):
        guide.write_text("# Guide\n\nThe alpha guide speaks of lanterns and zeppelins.\n")
        return keyword_index(*args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(search, "write_keyword_index", checkout_while_searching)
        assert run_kwdocs("build", "--src", str(src), "--out", str(out), "--html", "-q") == 0
    guide.write_text(branch)        # back to the content the build extracted
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "--html", "-q") == 0
    words = {row[0] for row in fulltext_search(out / "site")}
    assert "quinces" in words and "zeppelins" not in words
    cold = tmp_path / "cold"
    assert run_kwdocs("build", "--src", str(src), "--out", str(cold), "--html", "-q") == 0
    assert _site_data(out) == _site_data(cold)
    assert run_kwdocs("check", "--src", str(src), "--out", str(out)) == 0
    shutil.rmtree(out / ".kwdocs")
    assert run_kwdocs("check", "--src", str(src), "--out", str(out)) == 0
