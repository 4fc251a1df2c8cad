"""CPU seconds of making the file pages' models (docs page, keyword map, keyword page) of a tree.

    python3 bench/page_models.py SOURCE_TREE [--inputs DIR] [--rounds N]

The tree is built once (``-j 1``, into a temporary folder) with the inputs the render step gives
each file's pages (facts, links, related files, source view) saved in chunks; then the models are
made again from them, ``--rounds`` times with the collector off as in the render step, and the best
CPU time of each chunk is summed.  ``--inputs DIR`` keeps the saved inputs, or reuses them when DIR
holds some: two versions of kwdocs (``PYTHONPATH=OTHER_CHECKOUT``) timed on the same inputs, back
to back, give the difference of their model building alone.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import io
import pickle
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

CHUNK = 400     # files a saved chunk holds: the corpus's inputs are more than a process should hold at once


def save_inputs(src: Path, inputs: Path) -> int:
    """Build ``src`` in this process, saving each file's page inputs in ``inputs``; the chunks saved."""
    from kwdocs import cli
    from kwdocs.pages import compose

    chunk: list[tuple] = []
    saved = 0
    make_pages = compose.file_pages

    def flush() -> None:
        nonlocal saved
        if chunk:
            (inputs / f"chunk{saved:05d}.pickle").write_bytes(pickle.dumps(chunk, protocol=5))
            saved += 1
            chunk.clear()

    def saving(config, renderer, facts, links, related, view, formats=()):  # type: ignore[no-untyped-def]
        # the render step's links note the names looked up; saved as the plain data they wrap
        plain = {key: dict(value) if isinstance(value, Mapping) else value
                 for key, value in links.items()} if links else links
        chunk.append((facts, plain, related, view, config.project_name))
        if len(chunk) >= CHUNK:
            flush()
        return make_pages(config, renderer, facts, links, related, view, formats)

    compose.file_pages = saving
    with tempfile.TemporaryDirectory(prefix="kwdocs-models-") as scratch, contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["build", "--src", str(src), "--out", str(Path(scratch) / "out"), "-q", "-j", "1"])
    compose.file_pages = make_pages
    if code:
        raise SystemExit(f"page_models: the build of {src} failed (exit {code})")
    flush()
    return saved


def make_models(record: tuple) -> None:
    """One file's models, as ``compose.file_pages`` makes them."""
    from kwdocs.pages import model

    facts, links, related, view, project = record
    entries = model.symbol_entries(facts)
    if links and links.get("findings"):
        facts = model.with_link_findings(facts, links["findings"])
    docs = model.file_docs_model(facts, project=project, related=related, links=links, view=view,
                                 src_link="../src", entries=entries)
    shown = None if view.text is None else (facts.get("lines", 0) if not view.omitted_bytes else view.shown_lines)
    found = model.section_map(docs, facts.get("symbols", []), shown)
    model.file_kw_model(facts, project=project, src_link="../src", section_map=found, entries=entries)


def measure(inputs: Path, rounds: int) -> tuple[float, int]:
    """The summed best CPU seconds of each chunk's models, and the files made."""
    chunks = sorted(inputs.glob("chunk*.pickle"))
    best = [float("inf")] * len(chunks)
    files = 0
    for _ in range(rounds):
        files = 0
        for index, path in enumerate(chunks):
            records = pickle.loads(path.read_bytes())
            gc.collect()
            gc.disable()    # as the render step runs (``collector_paused``)
            started = time.process_time()
            for record in records:
                make_models(record)
            best[index] = min(best[index], time.process_time() - started)
            gc.enable()
            files += len(records)
            del records
    return sum(best), files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("src", type=Path, help="the source tree (read only)")
    parser.add_argument("--inputs", type=Path, help="a folder to keep the saved inputs in, or to reuse them from")
    parser.add_argument("--rounds", type=int, default=3, help="times each chunk's models are made (the best counts)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kwdocs-model-inputs-") as scratch:
        inputs = args.inputs or Path(scratch)
        inputs.mkdir(parents=True, exist_ok=True)
        if not any(inputs.glob("chunk*.pickle")):
            save_inputs(args.src.resolve(), inputs)
        seconds, files = measure(inputs, args.rounds)
    import kwdocs

    print(f"{Path(kwdocs.__file__).parent}: {seconds:.2f} CPU s for the page models of {files:,} files "
          f"(best of {args.rounds} per chunk of {CHUNK})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
