"""``kwdocs find``: where a name is defined, from the symbol index (``kwdocs.store.symbols``).

Imports nothing of the build (but to make the index, the first time): a query's time is Python's
start and one SQLite lookup.
"""
from __future__ import annotations

import argparse

from kwdocs.commands import add_name_arguments, answered, definition_line, name_query, open_index, print_json
from kwdocs.config import Config

HELP = "list the definitions of a name (NAME, NAME* or Class.member), one per line"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_name_arguments(parser, "a name, Class.member, or a prefix ending in *")


def run(config: Config, args: argparse.Namespace) -> int:
    # on use: `kwdocs --help` imports every command module (see kwdocs.commands.build)
    from kwdocs.store import symbols

    name, prefix = name_query(args)
    index = open_index(config)
    found = symbols.find(index, name, prefix)
    answer = answered(config, index, (entry["path"] for entry in found),
                      {"query": name, "prefix": prefix, "definitions": found}, args.json)
    if args.json:
        print_json(answer)
    else:
        for entry in found:
            print(definition_line(entry))
    return 0 if found else 1
