"""``kwdocs show``: a file's or a definition's summary in the terminal, from the symbol index
(``kwdocs.store.symbols``)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from kwdocs.commands import add_query_arguments, answered, definition_line, open_index, print_json
from kwdocs.config import Config

HELP = "summarize a file (PATH) or the definition at a line (PATH:LINE)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("where", metavar="PATH[:LINE]", help="a source file, relative to --src or to this folder")
    add_query_arguments(parser)


def _split(where: str) -> tuple[str, int | None]:
    path, _, line = where.rpartition(":")
    return (path, int(line)) if path and line.isdigit() else (where, None)


def _relative(config: Config, path: str) -> str:
    """``path`` as the index names files: relative to the source tree, with forward slashes (one
    typed relative to this folder is taken that way when it is inside the tree)."""
    full = Path(path).resolve() if os.path.exists(path) or os.path.isabs(path) else None
    if full is not None and full.is_relative_to(config.src):
        return full.relative_to(config.src).as_posix()
    return Path(path).as_posix().removeprefix("./")


def run(config: Config, args: argparse.Namespace) -> int:
    # on use: `kwdocs --help` imports every command module (see kwdocs.commands.build)
    from kwdocs.store import symbols

    typed, line = _split(args.where)
    index = open_index(config)
    path = _relative(config, typed)
    summary = symbols.indexed_file(index, path)
    if summary is None:
        print(f"kwdocs: {typed}: no such file in the index of {config.src} (run kwdocs build if it is new)",
              file=sys.stderr)
        return 1
    if line is None:
        answer = answered(config, index, [path], {"file": summary}, args.json)
        if args.json:
            print_json(answer)
            return 0
        print(f"{path}  ({summary['language'] or 'unknown'}, {summary['lines']:,} lines"
              f"{', a test' if summary['test'] else ''})")
        if summary["purpose"]:
            print(" ".join(summary["purpose"].split()))
        for entry in summary["definitions"]:
            print(definition_line(entry))
        return 0
    found = symbols.definition_at(index, path, line)
    answer = answered(config, index, [path], {"file": path, "line": line, "definition": found}, args.json)
    if args.json:
        print_json(answer)
        return 0 if found else 1
    if found is None:
        print(f"kwdocs: {path}:{line}: no definition starts at or before that line", file=sys.stderr)
        return 1
    print(definition_line(dict(found, summary="")))
    if found["signature"]:     # a bare signature follows its name: ``(self, x)``, ``(Base)``
        signature = found["signature"]
        print(f"    {found['name'] + signature if signature.startswith('(') else signature}")
    for text in found["doc"].splitlines():
        print(f"    {text}".rstrip())
    return 0
