"""Pages that are not what kwdocs wrote, made again: a page deleted or edited by hand, or one
the journal does not know (``kwdocs check --fix``, and a build that finds the pages' folders
changed since the last build)."""
from __future__ import annotations

from dataclasses import dataclass, field

from kwdocs import layout
from kwdocs.config import Config
from kwdocs.engine.runner import run_dry
from kwdocs.formats import formats_for
from kwdocs.scan import scan
from kwdocs.store import journal as ledger, owned, state, writer as output


@dataclass
class Findings:
    """Pages out of date (paths relative to the output folder)."""

    stale: set[str] = field(default_factory=set)
    missing: set[str] = field(default_factory=set)
    orphaned: set[str] = field(default_factory=set)
    expected: int = 0          # pages kwdocs writes for this tree
    written: int = 0           # --fix: pages written or removed besides the build's
    removed: int = 0
    by_cache: bool = False     # judged by the page hashes in the shared cache, without building

    def __bool__(self) -> bool:
        return bool(self.stale or self.missing or self.orphaned)


def expected_pages(config: Config, dry: output.DryRun | None) -> set[str]:
    """Every page the state (as it stands, dry run included) says kwdocs writes, and every file
    the configuration's other formats write beside them (``Format.files``; ``StateDamaged`` when
    the state cannot say which, the site's search scripts say)."""
    pages = state.written_pages(config, strict=True)
    for path, data in (dry.overlay.items() if dry else ()):
        if data is not None and path.parent == config.state / state.PAGES:   # units new in this dry run
            for rel in (output.read_json(path, {}) or {}).get("files", {}):
                pages.update((layout.docs_page(rel), layout.kw_page(rel)))
    return pages | owned.format_files(config, pages, strict=True)


def repair(config: Config) -> Findings:
    """After a build: write the pages that are not what kwdocs wrote (a page edited by hand, or
    one the ledger does not know), made by a dry run without state, and remove orphans."""
    findings = Findings()
    try:
        expected = expected_pages(config, None)
    except output.StateDamaged:     # the build just made the state: a damaged record is judged by building
        expected = state.written_pages(config)
        expected |= owned.format_files(config, expected)
    entries = ledger.load(config)
    _, doubtful = ledger.vouched(config, expected, entries)
    users = owned.foreign(config, doubtful, entries)
    if users:   # never replaced: the build refuses the same
        raise owned.ForeignFiles(config, users)
    if doubtful:
        with output.dry_run(config.state, blank=True, keep={config.out / page for page in doubtful}) as dry:
            run_dry(config, scan(config))
        for path, data in sorted(dry.kept.items()):
            if output.write_if_changed(config.out, path, data):     # else: journaled, vouched for from now
                findings.stale.add(path.relative_to(config.out).as_posix())
        findings.written = len(findings.stale)
    findings.orphaned = {page for page in owned.pages_on_disk(config, formats_for(config)) - expected
                         if owned.is_ours(config, page, entries)}
    findings.removed = sum(output.remove(config.out, config.out / page) for page in sorted(findings.orphaned))
    findings.expected = len(expected)
    return findings
