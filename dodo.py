"""`doit` at the repository root: kwdocs documents its own repository.

The same rule set as `kwdocs build --src .`, loaded as a dodo module; the
output folder is `kwdocs-out/` (settings in `[tool.kwdocs]` of pyproject.toml).
"""
from pathlib import Path

from kwdocs.config import load_config
from kwdocs.store.lock import hold_for_process
from kwdocs.engine.runner import build_namespace

_config = load_config(Path(__file__).resolve().parent)
hold_for_process(_config.state)
globals().update(build_namespace(_config))
