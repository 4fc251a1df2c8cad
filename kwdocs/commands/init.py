"""``kwdocs init``: kwdocs' tasks in the project's ``dodo.py`` and its hooks in ``.pre-commit-config.yaml``.

Both files are the user's: a missing one is written, an existing one gets
kwdocs' part added and keeps everything else, and one that has kwdocs' part
already is left as it is, so running it twice changes nothing.
"""
from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

from kwdocs.config import Config, ConfigError

HELP = "add kwdocs' doit tasks to the project's dodo.py and its pre-commit hooks to .pre-commit-config.yaml"

DODO = "dodo.py"
PRE_COMMIT = ".pre-commit-config.yaml"
# the public import (kwdocs.doit) and the task creator it gives: `doit kwdocs` builds the pages
DODO_LINES = ("from kwdocs.doit import kwdocs_tasks\n"
              "task_kwdocs = kwdocs_tasks()    # `doit kwdocs`: the documentation and keyword pages\n")
DODO_FILE = '"""The project\'s doit tasks (https://pydoit.org): `doit list` lists them."""\n\n' + DODO_LINES
# kwdocs' hooks as one item of `repos:`, its dash two spaces in; the README gives them word for word
HOOKS_ITEM = """\
  - repo: local
    hooks:
      - id: kwdocs          # regenerates the pages; the commit fails until you stage them
        name: kwdocs pages up to date
        entry: kwdocs check --fix
        language: system
        pass_filenames: false
        require_serial: true
        stages: [pre-commit, pre-push, manual]
      - id: kwdocs-check    # for CI: pre-commit run kwdocs-check --hook-stage manual --all-files
        name: kwdocs pages up to date (check only)
        entry: kwdocs check
        language: system
        pass_filenames: false
        require_serial: true
        stages: [manual]
"""
PRE_COMMIT_FILE = "repos:\n" + HOOKS_ITEM
HOOK_IDS = ("kwdocs", "kwdocs-check")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


# the common flags that are settings: init writes none of them anywhere
SETTINGS_FLAGS = {"out": "--out", "config": "--config", "project_name": "--project-name", "include": "--include",
                  "exclude": "--exclude", "max_source_bytes": "--max-source-bytes", "templates": "--templates",
                  "jobs": "--jobs"}


def run(config: Config, args: argparse.Namespace) -> int:
    given = [flag for name, flag in SETTINGS_FLAGS.items() if getattr(args, name, None) is not None]
    if given:
        raise ConfigError([f"init takes no {given[0]}: settings go in [tool.kwdocs] of pyproject.toml, "
                           "or as arguments of kwdocs_tasks(...) in dodo.py"])
    project = config.src
    # both made before either is written: a file it cannot add to changes nothing
    changes = ((DODO, _with_tasks(project / DODO), "kwdocs' tasks"),
               (PRE_COMMIT, _with_hooks(project / PRE_COMMIT), "kwdocs' hooks"))
    for name, text, said in changes:
        path = project / name
        if text is None:
            print(f"kwdocs: {name} has {said} already")
            continue
        existed = path.exists()
        _replace(path, text)
        print(f"kwdocs: added {said} to {name}" if existed else f"kwdocs: wrote {name}")
    print("kwdocs: `doit kwdocs` builds the pages; `pre-commit install` runs the hook on every commit")
    return 0


def _with_tasks(path: Path) -> str | None:
    """The dodo.py with kwdocs' two lines at its end; None when it has a ``task_kwdocs`` already."""
    if not path.exists():
        return DODO_FILE
    text = _read(path)
    if re.search(r"^task_kwdocs\b", text, re.MULTILINE):
        return None
    return text + ("" if text.endswith("\n") or not text else "\n") + ("\n" if text else "") + DODO_LINES


def _with_hooks(path: Path) -> str | None:
    """The pre-commit configuration with kwdocs' hooks as the last item of ``repos:`` (after the
    formatters, which may change sources the pages document); None when it has them already."""
    if not path.exists():
        return PRE_COMMIT_FILE
    text = _read(path)
    if not text.strip():
        return PRE_COMMIT_FILE
    before = _parsed(path, text)
    if not isinstance(before, dict):
        raise ConfigError([f"{path}: not a pre-commit configuration (a mapping with 'repos:')"])
    repos = before.get("repos")
    if any(isinstance(repo, dict) and any(isinstance(hook, dict) and hook.get("id") in HOOK_IDS
                                          for hook in repo.get("hooks") or ()) for repo in repos or ()):
        return None
    lines = text.splitlines(keepends=True)
    start = next((index for index, line in enumerate(lines) if re.match(r"repos:\s*(#.*)?$", line)), None)
    repos = [] if repos is None and start is not None else repos     # `repos:` with nothing under it yet
    if start is None or not isinstance(repos, list):
        raise ConfigError([f"{path}: no block list 'repos:' to add kwdocs' hooks to; add them by hand "
                           "(README: \"Pre-commit hook and CI check\")"])
    last, dash = start, None     # the list's last line, the column of its dashes
    for index in range(start + 1, len(lines)):
        content = lines[index].lstrip(" ")
        if not content.strip() or content.startswith("#"):
            continue
        indent = len(lines[index]) - len(content)
        dash = indent if dash is None and content.startswith("-") else dash
        if dash is None or indent < dash or (indent == dash and not content.startswith("-")):
            break
        last = index
    shift = (dash if dash is not None else 2) - 2
    item = "".join(line[2:] if shift < 0 else " " * shift + line for line in HOOKS_ITEM.splitlines(keepends=True))
    if not lines[last].endswith("\n"):
        lines[last] += "\n"
    added = "".join(lines[:last + 1]) + item + "".join(lines[last + 1:])
    after = _parsed(path, added)
    if not isinstance(after, dict) or after.get("repos", [])[:-1] != repos or _others(after) != _others(before):
        raise ConfigError([f"{path}: could not add kwdocs' hooks without changing the rest; add them by hand "
                           "(README: \"Pre-commit hook and CI check\")"])
    return added


def _others(document: dict) -> dict:
    """A configuration's keys but ``repos``."""
    return {key: value for key, value in document.items() if key != "repos"}


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError([f"{path}: not UTF-8 text"]) from None


def _parsed(path: Path, text: str) -> object:
    # here: every command's start imports this module, and yaml takes 12 ms
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigError([f"{path}: not valid YAML: {' '.join(str(error).split())}"]) from None


def _replace(path: Path, text: str) -> None:
    """``path`` holding ``text``, whole or not at all (an existing file keeps its permissions)."""
    temporary = path.with_name(f".{path.name}.kwdocs-init")
    temporary.write_text(text, encoding="utf-8")
    if path.exists():
        os.chmod(temporary, path.stat().st_mode & 0o7777)
    os.replace(temporary, path)
