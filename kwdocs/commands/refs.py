"""``kwdocs refs``: where a name is used, from the symbol index (``kwdocs.store.symbols``):
the uses linking found for the pages' "Tests and users" sections."""
from __future__ import annotations

import argparse

from kwdocs.commands import add_name_arguments, answered, name_query, open_index, print_json
from kwdocs.config import Config

HELP = "list where a name defined in the tree is imported and used, tests marked"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_name_arguments(parser, "a top-level name, or a prefix ending in *")


def run(config: Config, args: argparse.Namespace) -> int:
    # on use: `kwdocs --help` imports every command module (see kwdocs.commands.build)
    from kwdocs.store import symbols

    name, prefix = name_query(args)
    index = open_index(config)
    found, more, users = symbols.refs(index, name, prefix)
    paths = {ref["path"] for ref in found} | {ref["defined_in"] for ref in found}
    answer = answered(config, index, paths, {"query": name, "prefix": prefix, "references": found, "more": more,
                                             "users": users}, args.json)
    if args.json:
        print_json(answer)
        return 0 if found or users else 1
    for ref in found:
        also = f" {ref['name']}" if prefix else ""
        print(f"{ref['path']}:{ref['line']}{also}{'  (test)' if ref['test'] else ''}")
    if more:
        print(f"... and {more:,} more imports the build counted without listing them")
    listed = {(ref["name"], ref["defined_in"]): 0 for ref in found}
    for ref in found:
        listed[ref["name"], ref["defined_in"]] += 1
    for use in users:
        if use["files"] > listed.get((use["name"], use["defined_in"]), 0):
            print(f"{use['defined_in']}: {use['name']} is used by {use['files']:,} files in all; calls "
                  f"through its module (module.{use['name']}()) have no line")
    return 0 if found or users else 1
