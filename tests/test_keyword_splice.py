"""Keyword letter pages after an edit: the touched names' rows spliced into the rows the page
kept, byte for byte what a clean build writes, and kept rows that are damaged or stale not used."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from kwdocs.pages import keywords
from tests.conftest import run_kwdocs
from tests.output_checks import pages

A_PY = "class Alpha:\n    pass\n\n\ndef alpha_one():\n    pass\n\n\ndef beta_one():\n    pass\n"
B_PY = "def alpha_two():\n    pass\n\n\ndef beta_two():\n    pass\n\n\ndef zulu():\n    pass\n"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two folders whose names share letters, the index split one page per letter."""
    monkeypatch.setattr(keywords, "SPLIT_THRESHOLD", 2)
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "other").mkdir()
    (src / "pkg" / "a.py").write_text(A_PY)
    (src / "pkg" / "b.py").write_text(B_PY)
    (src / "other" / "c.py").write_text("def alpha_three():\n    pass\n")
    return src


def build(src: Path, out: Path, *extra: str) -> None:
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q", *extra) == 0


def same_as_clean(src: Path, out: Path, clean: Path, *extra: str) -> None:
    build(src, out, *extra)
    build(src, clean, *extra)
    assert pages(out) == pages(clean)


def test_edits_keep_letter_pages_as_a_clean_build_writes_them(tree: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """An import line (every name of the file moves a line), a function appended, a file removed
    and a letter emptied: the letter pages (Markdown and HTML) equal a clean build's, and the
    import line digests the places of the edited file's names alone, not of every name shown."""
    out = tmp_path / "out"
    build(tree, out, "--html")
    assert (out / "keywords-A.md").exists() and (out / "keywords-B.md").exists()
    digested: list[str] = []
    real_digest = keywords.places_digest
    monkeypatch.setattr(keywords, "places_digest", lambda places: digested.append(places[0][0]) or real_digest(places))
    (tree / "pkg" / "a.py").write_text("import keyword\n" + A_PY)
    build(tree, out, "--html")
    assert digested and set(digested) <= {"Alpha", "alpha_one", "beta_one"}, digested
    monkeypatch.setattr(keywords, "places_digest", real_digest)
    build(tree, tmp_path / "clean-import", "--html")
    assert pages(out) == pages(tmp_path / "clean-import")

    (tree / "pkg" / "b.py").write_text(B_PY + "\n\ndef alpha_four():\n    pass\n")
    same_as_clean(tree, out, tmp_path / "clean-append", "--html")
    assert "alpha_four" in (out / "keywords-A.md").read_text()
    (tree / "other" / "c.py").unlink()
    same_as_clean(tree, out, tmp_path / "clean-removed", "--html")
    assert "alpha_three" not in (out / "keywords-A.md").read_text()
    (tree / "pkg" / "b.py").write_text(B_PY.replace("def zulu", "def alpha_zulu"))
    same_as_clean(tree, out, tmp_path / "clean-emptied", "--html")
    assert not (out / "keywords-Z.md").exists() and "alpha_zulu" in (out / "keywords-A.md").read_text()


def rows_file(out: Path, letter: str) -> Path:
    return out / ".kwdocs" / "keywords" / f"rows-keywords-{letter}.json"


def test_stale_kept_rows_are_not_used(tree: Path, tmp_path: Path) -> None:
    """Rows kept from a build before the last (their table has changed since) are rendered again,
    not spliced into: ``alpha_one``'s row would keep its old line."""
    out = tmp_path / "out"
    build(tree, out)
    stale = rows_file(out, "A").read_bytes()
    (tree / "pkg" / "a.py").write_text("import keyword\n" + A_PY)
    build(tree, out)
    rows_file(out, "A").write_bytes(stale)
    (tree / "other" / "c.py").write_text("import keyword\ndef alpha_three():\n    pass\n")
    same_as_clean(tree, out, tmp_path / "clean")


def test_damaged_kept_rows_are_not_used(tree: Path, tmp_path: Path) -> None:
    """A kept rows file changed by hand (its seal no longer matches) is not spliced into."""
    out = tmp_path / "out"
    build(tree, out)
    path = rows_file(out, "A")
    path.write_bytes(path.read_bytes().replace(b"alpha_one`", b"alpha_0ne`"))
    (tree / "other" / "c.py").write_text("import keyword\ndef alpha_three():\n    pass\n")
    same_as_clean(tree, out, tmp_path / "clean")
    assert "alpha_0ne" not in (out / "keywords-A.md").read_text()


def test_step_dying_before_its_pages_leaves_no_rows_trusted(tree: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The keyword step dying after its letter tables were written, before the pages: the next
    build does not splice into rows made from the tables of before."""
    from kwdocs.engine.steps import keywords as step

    out = tmp_path / "out"
    build(tree, out)
    (tree / "pkg" / "a.py").write_text("import keyword\n" + A_PY)

    def dies(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(step, "_spliced_pages", dies)
        assert run_kwdocs("build", "--src", str(tree), "--out", str(out), "-q") != 0
    same_as_clean(tree, out, tmp_path / "clean")


_UNITS = st.text(alphabet=st.sampled_from("ab/_.é\t\"\\"), min_size=0, max_size=6)
_ENTRIES = st.builds(lambda names: json.dumps([[name, "function", "p.py", 1, "f", name] for name in names],
                                              ensure_ascii=False, separators=(",", ":")),
                     st.lists(st.sampled_from(["alpha", "Beta", "gamma"]), min_size=1, max_size=3))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_UNITS, st.tuples(st.integers(1, 9), _ENTRIES), max_size=8),
       st.dictionaries(_UNITS, st.tuples(st.integers(0, 9), _ENTRIES), max_size=4))
def test_a_tables_lines_replaced_give_the_table_a_whole_read_gives(table, changes):
    """An edit's letter table is its changed units' lines replaced in the table's text: the same
    text, count and entries before as reading it whole, changing it and writing it again; a unit
    new to the letter is left to that whole read."""
    body = keywords.table_text(table).encode("utf-8")
    spliced = keywords.splice_table(body, changes)
    if any(count and unit not in table for unit, (count, _) in changes.items()):
        assert spliced is None
        return
    assert spliced is not None
    whole = dict(table)
    for unit, (count, entries) in changes.items():
        if count:
            whole[unit] = (count, entries)
        else:
            whole.pop(unit, None)
    text, total, before = spliced
    assert text == keywords.table_text(whole)
    assert total == sum(count for count, _ in whole.values())
    assert before == {unit: table.get(unit, (0, "[]"))[1] for unit in changes}
