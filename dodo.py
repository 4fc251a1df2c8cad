"""`doit` at the repository root: kwdocs documents its own repository.

The rule set any project's dodo.py gets from `kwdocs.doit` (docs/watch-and-hooks.md:
"In your own dodo.py"), here with kwdocs' own doit settings and summary line, since kwdocs'
tasks are the only ones; the output folder is `kwdocs-out/` (settings in
`[tool.kwdocs]` of pyproject.toml).
"""
from pathlib import Path

from kwdocs.doit import kwdocs_doit_config, kwdocs_tasks

task_kwdocs = kwdocs_tasks(Path(__file__).resolve().parent)
DOIT_CONFIG = kwdocs_doit_config(task_kwdocs)
