"""Tags that say how a comment is filed, not what it says: a TSDoc modifier (``@internal``) keeps
the words after it, as TypeDoc's summary does, and Doxygen's grouping commands (``\\ingroup``)
are not text (issue 32: zod's ``_$ZodTypeInternals`` members and pybind11's annotations)."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import entry_text as _entry, run_kwdocs

SCHEMA_TS = '''/** @internal Parses input and runs all checks (refinements). */
export function run(input: unknown): unknown {
  return input;
}

/**
 * Adds two numbers.
 * @internal
 */
export function add(a: number, b: number): number {
  return a + b;
}
'''

CAST_H = '''#pragma once

/// \\ingroup annotations
/// Annotation for arguments
struct arg {
    int flag;
};

/** @ingroup python_builtins
    Return true if ``obj`` is an instance of ``T``. */
bool isinstance(int obj);
'''


def test_modifier_tags_keep_their_words_and_grouping_commands_are_not_text(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "schema.ts").write_text(SCHEMA_TS)
    (src / "cast.h").write_text(CAST_H)
    assert run_kwdocs("build", "--src", str(src), "--out", str(tmp_path / "out"), "-q") == 0
    schema = (tmp_path / "out" / "schema.ts_docs.md").read_text(encoding="utf-8")
    assert "Parses input and runs all checks (refinements)." in _entry(schema, "run")
    assert "Adds two numbers." in _entry(schema, "add") and "internal" not in _entry(schema, "add")
    cast = (tmp_path / "out" / "cast.h_docs.md").read_text(encoding="utf-8")
    arg = _entry(cast, "arg")
    assert "Annotation for arguments" in arg and "ingroup" not in arg and "annotations" not in arg, arg
    instance = _entry(cast, "isinstance")
    assert "Return true if `obj` is an instance of `T`." in instance and "python_builtins" not in instance, instance
