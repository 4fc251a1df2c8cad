"""``kwdocs coverage``: how many public definitions are documented, per folder.  Writes nothing."""
from __future__ import annotations

import argparse
import json
import sys

from kwdocs.config import Config
from kwdocs.pages.coverage import by_folder, file_coverage, percent

HELP = "print how many public definitions of each folder are documented (a table, or --json)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object: the folders, the total and each file's undocumented names")


def measure(config: Config) -> list[tuple[str, dict]]:
    """``(path, file_coverage)`` of every documented file with public definitions, by path:
    the facts as a build extracts them now (the sources, not the pages, are measured)."""
    # on use: `kwdocs --help` imports every command module, and this loads the extractors
    from kwdocs.engine.steps.extract import extract_file
    from kwdocs.scan import scan

    measured = []
    for source in scan(config).files:
        counts = file_coverage(extract_file(config, source.rel))
        if counts["public"]:
            measured.append((source.rel, counts))
    return measured


def totals(files: list[tuple[str, dict]]) -> dict:
    public = sum(counts["public"] for _, counts in files)
    documented = sum(counts["documented"] for _, counts in files)
    return {"files": len(files), "public": public, "documented": documented, "percent": percent(documented, public)}


def run(config: Config, args: argparse.Namespace) -> int:
    files = measure(config)
    folders = by_folder(files)
    total = totals(files)
    if args.json:
        answer = {"folders": folders, "total": total,
                  "files": [{"path": path, "public": counts["public"], "documented": counts["documented"],
                             "undocumented": [{"line": line, "name": name} for line, name in counts["undocumented"]]}
                            for path, counts in files]}
        print(json.dumps(answer, ensure_ascii=False, sort_keys=True, indent=1))
        return 0
    width = max([len("folder"), *(len(item["folder"] or ".") for item in folders)])
    out = sys.stdout
    out.write(f"{'folder':<{width}}  {'files':>6}  {'public':>7}  {'documented':>10}  {'coverage':>8}\n")
    for item in [*folders, {"folder": "total", **total}]:
        out.write(f"{item['folder'] or '.':<{width}}  {item['files']:>6,}  {item['public']:>7,}  "
                  f"{item['documented']:>10,}  {item['percent']:>7.1f}%\n")
    return 0
