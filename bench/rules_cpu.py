"""The CPU of the rules' part of extraction: reading each file, masking its secrets, evaluating its rules.

    python3 bench/rules_cpu.py SOURCE_TREE [--repeat 3]

Every file's facts are extracted first (not timed; its calls kept as plain dicts).  Then each
pass loads the rule set afresh and, file by file, reads it as the extract step does
(``read_head``), masks its text and evaluates its rules, each part timed apart (CPU seconds,
``time.process_time``, the collector paused as in the extract step); the best pass of each part
is printed, with a digest of the findings and masked lines, which two revisions that find the
same print alike.  To compare with an earlier revision, run it from that revision's checkout
(``PYTHONPATH=CHECKOUT``) right before or after this one.
"""
from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import sys
import time
from pathlib import Path

from kwdocs import sources
from kwdocs.extract import extract_bytes
from kwdocs.pages.compose import ANALYSE_LIMIT
from kwdocs.rules.ruleset import RuleSet


def files_of(src: Path) -> list[str]:
    found = []
    for root, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        found += [os.path.join(root, name) for name in sorted(files)]
    return found


def one_pass(src: Path, extracted: list[tuple[str, dict, str | None, list]]) -> tuple[dict[str, float], str]:
    """CPU seconds per part over the files, and the digest of what the rules found."""
    rules = RuleSet.load(lazy=True)
    seconds = {"reading": 0.0, "masking secrets": 0.0, "evaluating rules": 0.0}
    digest = hashlib.sha256()
    for path, facts, text, calls in extracted:
        started = time.process_time()
        sources.read_head(path, ANALYSE_LIMIT, hashed=False)
        read = time.process_time()
        lines = rules.mask_secrets(text, str(facts["language"]), "x")[1] if text is not None else None
        masked = time.process_time()
        findings = rules.evaluate(facts, text, calls)
        evaluated = time.process_time()
        seconds["reading"] += read - started
        seconds["masking secrets"] += masked - read
        seconds["evaluating rules"] += evaluated - masked
        digest.update(json.dumps([os.path.relpath(path, src), findings, lines], sort_keys=True).encode())
    return seconds, digest.hexdigest()[:16]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("src", type=Path, help="the source tree (read only)")
    parser.add_argument("--repeat", type=int, default=3, help="passes, the best of which is shown")
    args = parser.parse_args(argv)
    extracted = []
    rules = RuleSet.load(lazy=True)
    for path in files_of(args.src):
        source = sources.read_head(path, ANALYSE_LIMIT, hashed=False)
        if source.size > len(source.head):
            continue    # documented by its beginning alone: no rules' text of its own
        facts, text, calls = extract_bytes(os.path.relpath(path, args.src), source.head,
                                           lambda text, language: rules.mask_secrets(text, language, "x")[0])
        # plain dicts: a Python call holds its syntax tree until its arguments are asked for
        extracted.append((path, facts, text, [dict(call) for call in calls]))
    best: dict[str, float] = {}
    digests = set()
    gc.disable()
    for _ in range(args.repeat):
        seconds, digest = one_pass(args.src, extracted)
        digests.add(digest)
        best = {part: min(spent, best.get(part, spent)) for part, spent in seconds.items()}
    gc.enable()
    print(f"{len(extracted)} files, best of {args.repeat} passes, findings digest {', '.join(sorted(digests))}")
    print("| part | CPU s |\n| --- | ---: |")
    for part, spent in best.items():
        print(f"| {part} | {spent:.2f} |")
    print(f"| total | {sum(best.values()):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
