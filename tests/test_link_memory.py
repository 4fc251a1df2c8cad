"""The link step's memory (issue 33): linking the whole tree keeps of each file only what other
files' links read of it, while each file's import records and resolved imports wait in a spill
file until its unit's shards are made."""
from __future__ import annotations

from pathlib import Path

from kwdocs.config import load_config
from kwdocs.engine.steps import link as link_step
from kwdocs.engine.steps.link_all import SPILL
from kwdocs.store import writer as output
from kwdocs.store.state import IMPORTANCE, LINK_INPUTS, LINK_META, LINK_REQUESTS, LINKS, load_shard
from tests.conftest import run_kwdocs, traced_peak

PACKAGES, MODULES = 8, 30      # 240 Python files and as many headers, each importing a dozen others


def _tree(src: Path) -> None:
    for package in range(PACKAGES):
        folder = src / f"pkg{package}"
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text(f"from .m0 import *\nfrom .m1 import name_{package}_1\n")
        for module in range(MODULES):
            others = [(package + step) % PACKAGES for step in range(1, 7)]
            lines = ["import os", "import json", "from collections import OrderedDict"]
            lines += [f"from pkg{other}.m{(module + step) % MODULES} import name_{other}_{(module + step) % MODULES}"
                      for step, other in enumerate(others)]
            lines += [f"import pkg{other}" for other in others]
            lines += [f"def name_{package}_{module}(value):", f'    """Uses pkg{others[0]}.name."""',
                      f"    return pkg{others[0]}.name_{others[0]}_0(value)", ""]
            (folder / f"m{module}.py").write_text("\n".join(lines))
            includes = [f'#include "pkg{other}/h{(module + step) % MODULES}.h"' for step, other in enumerate(others)]
            (folder / f"h{module}.h").write_text("\n".join(["#include <vector>", "#include <string>", *includes,
                                                            f"int h_{package}_{module}(int value);", ""]))


def _shards(config, units: list[str]) -> dict[str, dict]:
    return {f"{kind}/{unit}": load_shard(config, kind, unit) for unit in units
            for kind in (LINKS, IMPORTANCE, LINK_REQUESTS)}


def test_linking_the_whole_tree_holds_a_fraction_of_the_files_link_records(tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    _tree(src)
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    config = load_config(src, overrides={"output": str(out)})
    units = list(output.read_json(config.state / LINK_META, {})["digests"])
    built = _shards(config, units)
    inputs = sum(path.stat().st_size for path in (config.state / LINK_INPUTS).rglob("*") if path.is_file())
    (config.state / LINK_META).unlink()     # the whole tree linked again, as a cold build does
    peak = traced_peak(lambda: link_step.link_tree(config, units, []))
    # every file's import records and inputs held at once, and all linking made of them: 10 times the
    # size of the link inputs on disk on this tree (2026-12-06), 6.1 times with them spilled, 4.9 with
    # each file's definition names and uses spilled as made and the counts of uses kept as counts
    assert peak < 5.5 * inputs, (peak, inputs)
    assert _shards(config, units) == built
    assert not (config.state / SPILL).exists()     # the spill file is gone with its name
