"""The keyword step's memory (issue 33): the whole index made again from every unit's entries
holds one letter's entries and page at a time, each once, in proportion to the letter tables
on disk, and writes the same tables and pages."""
from __future__ import annotations

from pathlib import Path

from kwdocs.config import load_config
from kwdocs.engine.steps import keywords as keywords_step
from kwdocs.store import writer as output
from kwdocs.store.state import KEYWORDS, KEYWORDS_META
from tests.conftest import run_kwdocs, traced_peak
from tests.output_checks import pages

FOLDERS, MODULES, NAMES = 12, 10, 200   # 24,000 names, most of them on one letter's page


def _tree(src: Path) -> None:
    for folder in range(FOLDERS):
        where = src / "package" / f"subpackage_{folder}"
        where.mkdir(parents=True)
        for module in range(MODULES):
            lines = []
            for name in range(NAMES):
                first = "s" if name % 4 else "a"
                lines += [f"def {first}ample_function_{folder}_{module}_{name}(value):", "    return value", ""]
            (where / f"module_{module}.py").write_text("\n".join(lines))


def _state(out: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted((out / ".kwdocs" / KEYWORDS).glob("letter-*.jsonl"))}


def test_the_whole_index_made_again_holds_a_letter_at_a_time(tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    _tree(src)
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    config = load_config(src, overrides={"output": str(out)})
    units = sorted(output.read_json(config.state / KEYWORDS_META, {})["units"])
    built, tables = pages(out), _state(out)
    assert "keywords-S.md" in built
    on_disk = sum(len(table) for table in tables.values())
    (config.state / KEYWORDS_META).unlink()     # every unit's entries read again, as a cold build does
    peak = traced_peak(lambda: keywords_step.index_keywords(config, units, []))
    # the largest letter's table held as a dict, its text and its bytes at once, its entries decoded
    # with a string per path and kind, their row models kept for no other format, its page held
    # while its rows were encoded at once: 13.6 times the tables on disk on this tree (2026-12-06),
    # 5.1 times with each held once and the rows encoded a thousand at a time
    assert peak < 7 * on_disk, (peak, on_disk)
    assert pages(out) == built
    assert _state(out) == tables
