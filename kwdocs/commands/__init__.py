"""One module per ``kwdocs`` subcommand; ``kwdocs.cli`` wires them to the command line."""
from __future__ import annotations

import argparse


def add_cache_arguments(parser: argparse.ArgumentParser) -> None:
    """The shared extraction cache's flags, for the commands that extract (build, check)."""
    parser.add_argument("--cache", metavar="URL",
                        help="a shared cache of extracted facts: file:///folder, s3://bucket/prefix, any URL "
                             "fsspec reaches, or a folder path (config key: cache)")
    parser.add_argument("--cache-mode", choices=("read", "readwrite"),
                        help="'read' uses the cache without adding to it, for untrusted jobs "
                             "(default: readwrite; config key: cache_mode)")
    parser.add_argument("--cache-key-file", metavar="FILE",
                        help="a file holding a secret key: entries are signed with it, and entries not signed "
                             "with it are ignored and made again (the variable KWDOCS_CACHE_KEY, when set, is "
                             "the key instead; config key: cache_key_file)")
