"""The engine's modules stay small enough to read whole: each says one concern (the build flow,
a step, the cluster's connection...), and one grown past about 400 lines is split along its
concerns rather than left to grow."""
from __future__ import annotations

from tests.test_layering import PACKAGE

ENGINE_LINES = 400


def test_no_engine_module_is_over_400_lines():
    long = {path.relative_to(PACKAGE.parent).as_posix(): lines for path in sorted((PACKAGE / "engine").rglob("*.py"))
            if (lines := len(path.read_text().splitlines())) > ENGINE_LINES}
    assert long == {}, f"split these along their concerns (at most {ENGINE_LINES} lines each): {long}"
