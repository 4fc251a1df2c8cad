"""The lines a build ends with: one per problem, then one summary line."""
from __future__ import annotations

from kwdocs.store import writer as output
from kwdocs.config import Config
from kwdocs.scan import ScanResult


def problems(config: Config, scanned: ScanResult) -> list[tuple[str, str]]:
    """(path, line to print) for the scan's problems and those extraction recorded."""
    found = [(path, f"{path}: {message}") for path, message in scanned.problems]
    for path, line, message in output.read_json(config.state / "problems.json", []) or []:
        found.append((path, f"{path}:{line}: {message}" if line else f"{path}: {message}"))
    return found


def report(write, config: Config, scanned: ScanResult, written: int, removed: int, seconds: float,
           quiet: bool = False) -> None:
    found = problems(config, scanned)
    if not quiet:
        for _, line in found:
            write(f"problem: {line}\n")
    write(f"kwdocs: {len(scanned.files):,} files scanned, {written:,} pages written, {removed:,} removed, "
          f"{len({path for path, _ in found}):,} files with problems ({seconds:.2f} s)\n")
