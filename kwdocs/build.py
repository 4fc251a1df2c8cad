"""The build steps that doit runs: extract, link, render, assemble.

Data flows one way through JSON state files under ``<out>/.kwdocs``:

    sources --extract:<folder>--> facts/<id>.json   (one shard per folder)
    facts   --link-------------> links/<id>.json    (who imports whom)
    facts + links --render:<folder>--> the folder's file pages
    facts   --assemble----------> index.md, doc.md of every folder; pruning

Each step rewrites a state file only when its content changes, so doit's md5
check cuts off everything downstream of an edit that changes nothing.  Each
returns counts for the build summary.
"""
from __future__ import annotations

import hashlib
import json
import os
import posixpath
import stat
from functools import lru_cache
from pathlib import Path

from kwdocs import __version__, layout, model, output
from kwdocs.config import Config
from kwdocs.extract import extract_bytes
from kwdocs.extract.decode import decode, is_binary
from kwdocs.facts import Facts
from kwdocs.render import renderer_for
from kwdocs.rules import RuleSet

ANALYSE_LIMIT = 8 * 1024 * 1024   # larger files get metadata and an excerpt, not keywords
FACTS, LINKS, PAGES = "facts", "links", "pages"


# ---------------------------------------------------------------- state files

def shard(config: Config, kind: str, folder: str) -> Path:
    return config.state / kind / layout.state_name(folder)


def load_shard(config: Config, kind: str, folder: str) -> dict:
    data = output.read_json(shard(config, kind, folder), {})
    return data if isinstance(data, dict) and data.get("folder") == folder else {}


def save_shard(config: Config, kind: str, folder: str, data: dict) -> bool:
    return output.write_json(config.out, shard(config, kind, folder), dict(data, folder=folder))


def digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


@lru_cache(maxsize=4)
def rules_for(config: Config) -> RuleSet:
    return RuleSet.load(extra_files=list(config.rules), replace=config.replace_rules, project=config.project_name)


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of kwdocs' own code: a new kwdocs rebuilds everything, released or not."""
    package = Path(__file__).parent
    return digest(__version__, [(path.relative_to(package).as_posix(), hashlib.sha256(path.read_bytes()).hexdigest())
                                for path in sorted(package.rglob("*.py"))])


@lru_cache(maxsize=8)
def extraction_key(config: Config) -> str:
    """What facts depend on besides the file itself: kwdocs' code and the rules."""
    return digest(code_fingerprint(), rules_for(config).fingerprint(), ANALYSE_LIMIT)


@lru_cache(maxsize=32)
def render_key(config: Config, template: str) -> str:
    """What a page depends on besides its model: its templates, kwdocs' code and the settings."""
    renderer = renderer_for(config.templates)
    return digest(code_fingerprint(), renderer.fingerprint(template), config.fingerprint_data())


# ---------------------------------------------------------------- reading

def read_source(path: Path) -> bytes:
    """Read a regular file without ever blocking on a FIFO swapped in after the scan."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(0, "not a regular file any more")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def extract_file(config: Config, rel: str) -> Facts:
    """Facts of one file with its rule findings; a file that cannot be read still gets a record."""
    try:
        data = read_source(config.src / rel)
    except OSError as error:
        reason = error.strerror or str(error)
        return Facts(path=rel, size=0, lines=0, sha256="", language="unreadable", type_label="Unreadable File",
                     fence="", binary=False, encoding="", parsed=False, docstring="", symbols=[], imports=[],
                     problems=[{"message": f"could not be read: {reason}"}], findings={})
    if len(data) > ANALYSE_LIMIT and not is_binary(data):
        facts, text, calls = extract_bytes(rel, b"")
        facts.update(size=len(data), sha256=hashlib.sha256(data).hexdigest())
        text, _ = decode(data[:ANALYSE_LIMIT])
        facts["lines"] = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
        facts["problems"].append({"message": f"larger than {ANALYSE_LIMIT // (1024 * 1024)} MiB: "
                                              "only its metadata and beginning are documented"})
    else:
        facts, text, calls = extract_bytes(rel, data)
    facts["findings"] = rules_for(config).evaluate(facts, text, calls)
    return facts


# ---------------------------------------------------------------- steps

def extract_folder(config: Config, folder: str, names: list[str], changed: list[str]) -> dict:
    """Bring the folder's facts shard up to date, re-extracting only changed files."""
    old = load_shard(config, FACTS, folder)
    key = extraction_key(config)
    previous = old.get("files", {}) if old.get("key") == key else {}
    changed_set = set(changed)
    files: dict[str, Facts] = {}
    extracted = 0
    for name in names:
        rel = posixpath.join(folder, name)
        source = str(config.src / rel)
        if rel in previous and source not in changed_set:
            files[rel] = previous[rel]
            continue
        before = _stamp(source)
        files[rel] = extract_file(config, rel)
        if _stamp(source) != before:
            raise RuntimeError(f"{rel}: changed while it was being read; the next build will pick it up")
        extracted += 1
    save_shard(config, FACTS, folder, {"key": key, "files": files})
    return {"files": len(names), "extracted": extracted}


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


def render_folder(config: Config, folder: str) -> dict:
    """Render the pages of the folder's files whose inputs changed; remove pages of gone files."""
    facts_by_file: dict[str, Facts] = load_shard(config, FACTS, folder).get("files", {})
    links = load_shard(config, LINKS, folder).get("files", {})
    manifest = load_shard(config, PAGES, folder).get("files", {})
    renderer = renderer_for(config.templates)
    keys = (render_key(config, "file_docs.md.j2"), render_key(config, "file_kw.md.j2"))
    siblings = model.Siblings([posixpath.basename(rel) for rel in facts_by_file])
    written = removed = 0
    new_manifest: dict[str, str] = {}
    for rel, facts in sorted(facts_by_file.items()):
        related = siblings.related(posixpath.basename(rel))
        key = digest(facts, links.get(rel), related, keys)
        new_manifest[rel] = key
        if manifest.get(rel) == key:
            continue
        written += render_file(config, renderer, facts, links.get(rel), related)
    for rel in sorted(set(manifest) - set(new_manifest)):
        removed += output.remove(config.out, config.out / layout.docs_page(rel))
        removed += output.remove(config.out, config.out / layout.kw_page(rel))
    save_shard(config, PAGES, folder, {"files": new_manifest})
    return {"written": written, "removed": removed}


def render_file(config: Config, renderer, facts: Facts, links: dict | None, related: list[str]) -> int:
    """Render and write one file's two pages; returns how many were written."""
    rel = facts["path"]
    view = model.SourceView(None)
    if not facts.get("binary") and facts.get("sha256"):
        try:
            data = read_source(config.src / rel)
        except OSError:
            data = None
        if data is not None and not is_binary(data):
            text, _ = decode(data[: config.max_source_bytes + 4])
            masked, lines = text, []
            if facts.get("findings", {}).get("secret_lines") or config.max_source_bytes > ANALYSE_LIMIT:
                masked, lines = rules_for(config).mask_secrets(text)
            view = model.source_view(masked, facts["size"], config.max_source_bytes, tuple(lines))
    docs_path, kw_path = layout.docs_page(rel), layout.kw_page(rel)
    src_link = source_link(config, kw_path, rel)
    docs = renderer.render("file_docs.md.j2", model.file_docs_model(
        facts, project=config.project_name, related=related, links=links, view=view, src_link=src_link))
    names = [symbol["name"] for symbol in facts.get("symbols", [])]
    kw = renderer.render("file_kw.md.j2", model.file_kw_model(
        facts, project=config.project_name, src_link=src_link, section_map=model.section_map(docs, names)))
    return (output.write_if_changed(config.out, config.out / docs_path, docs)
            + output.write_if_changed(config.out, config.out / kw_path, kw))


def source_link(config: Config, page: str, rel: str) -> str:
    """Link from a page in the output tree to the source file in the repository."""
    page_folder = (config.out / page).parent
    target = Path(os.path.relpath(config.src / rel, page_folder)).as_posix()
    return layout.quote_path(target)


def link_tree(config: Config, folders: list[str], changed: list[str]) -> dict:
    """Resolve imports and includes across the tree; write per-folder link shards that changed."""
    from kwdocs.links import resolve_links

    cache_path = config.state / "link-input.json"
    cache = output.read_json(cache_path, {}) if changed is not None else {}
    changed_set = set(changed or ())
    inputs: dict[str, dict] = {}
    for folder in folders:
        path = str(shard(config, FACTS, folder))
        entry = cache.get(folder)
        if entry is None or path in changed_set:
            files = load_shard(config, FACTS, folder).get("files", {})
            entry = {rel: {"language": facts.get("language", ""), "imports": facts.get("imports", []),
                           "test": model.is_test(facts)} for rel, facts in files.items()}
        inputs[folder] = entry
    output.write_json(config.out, cache_path, inputs)
    flat = {rel: info for entry in inputs.values() for rel, info in entry.items()}
    resolved = resolve_links({rel: info["language"] for rel, info in flat.items()},
                             {rel: info["imports"] for rel, info in flat.items() if info["imports"]},
                             config.include_roots)
    tests = {rel for rel, info in flat.items() if info["test"]}
    written = 0
    for folder, entry in inputs.items():
        files = {}
        for rel in entry:
            links = resolved.get(rel, {"deps": [], "used_by": []})
            links["test_users"] = [user for user in links["used_by"] if user in tests]
            files[rel] = links
        written += save_shard(config, LINKS, folder, {"files": files})
    return {"link_shards": written}


def assemble(config: Config, folders: list[str], all_folders: list[str], changed: list[str]) -> dict:
    """Write every folder's index.md and doc.md whose content changed; prune what is gone."""
    renderer = renderer_for(config.templates)
    keys = (render_key(config, "folder_index.md.j2"), render_key(config, "folder_doc.md.j2"))
    state_path = config.state / "folders.json"
    state = output.read_json(state_path, {}) or {}
    cached: dict[str, list] = state.get("rows", {}) if state.get("keys") == list(keys) else {}
    changed_set = set(changed or ())
    rows: dict[str, list] = {}
    problems: list[list] = []
    for folder in folders:
        path = str(shard(config, FACTS, folder))
        if folder in cached and path not in changed_set:
            rows[folder] = cached[folder]
            continue
        files = load_shard(config, FACTS, folder).get("files", {})
        rows[folder] = [_summary_row(facts) for _, facts in sorted(files.items())]
    for folder_rows in rows.values():
        for row in folder_rows:
            problems += [[row["path"], problem.get("line"), problem["message"]] for problem in row["problems"]]
    children: dict[str, list[str]] = {folder: [] for folder in all_folders}
    for folder in all_folders:
        if folder:
            children[posixpath.dirname(folder)].append(folder)
    totals = _totals(all_folders, children, rows)
    page_keys: dict[str, str] = state.get("pages", {}) if cached else {}
    new_keys: dict[str, str] = {}
    written = removed = 0
    for folder in all_folders:
        subfolders = [dict(folder=sub, total_files=totals[sub][0], total_folders=totals[sub][1])
                      for sub in sorted(children[folder])]
        files = rows.get(folder, [])
        key = digest(folder, files, subfolders, keys, config.project_name)
        new_keys[folder] = key
        if page_keys.get(folder) == key:
            continue
        index = renderer.render("folder_index.md.j2", model.folder_index_model(
            folder, project=config.project_name, files=files, subfolders=subfolders, has_keyword_index=True))
        doc = renderer.render("folder_doc.md.j2", model.folder_doc_model(
            folder, project=config.project_name, files=files, subfolders=subfolders,
            total_files=totals[folder][0]))
        written += output.write_if_changed(config.out, config.out / layout.index_page(folder), index)
        written += output.write_if_changed(config.out, config.out / layout.doc_page(folder), doc)
    for folder in sorted(set(page_keys) - set(new_keys)):
        removed += output.remove(config.out, config.out / layout.index_page(folder))
        removed += output.remove(config.out, config.out / layout.doc_page(folder))
    removed += prune_folders(config, set(folders))
    output.write_json(config.out, state_path, {"keys": list(keys), "rows": rows, "pages": new_keys})
    output.write_json(config.out, config.state / "problems.json", sorted(problems, key=lambda p: (p[0], p[1] or 0)))
    return {"written": written, "removed": removed}


def _summary_row(facts: Facts) -> dict:
    """What folder pages need of a file (kept small: cached for every file)."""
    return dict(path=facts["path"], type_label=facts["type_label"], size=facts["size"],
                lines=facts.get("lines", 0), docstring=facts.get("docstring", "")[:2000],
                symbols=[s for s in facts.get("symbols", [])
                         if s["kind"] in ("class", "function", "namespace") and not s.get("parent")],
                keyword_count=len(facts.get("symbols", [])), problems=facts.get("problems", []))


def _totals(all_folders: list[str], children: dict[str, list[str]], rows: dict[str, list]) -> dict[str, tuple[int, int]]:
    """Files and folders below each folder, computed bottom-up."""
    totals: dict[str, tuple[int, int]] = {}
    for folder in sorted(all_folders, key=lambda f: -f.count("/") if f else 1):
        files = len(rows.get(folder, []))
        below = [totals[sub] for sub in children[folder]]
        totals[folder] = (files + sum(t[0] for t in below), len(below) + sum(t[1] for t in below))
    return totals


def prune_folders(config: Config, live: set[str]) -> int:
    """Remove the pages and state of folders that no longer hold files."""
    removed = 0
    pages_dir = config.state / PAGES
    if not pages_dir.is_dir():
        return 0
    for path in sorted(pages_dir.glob("*.json")):
        manifest = output.read_json(path, {}) or {}
        folder = manifest.get("folder")
        if folder is None or folder in live:
            continue
        for rel in sorted(manifest.get("files", {})):
            removed += output.remove(config.out, config.out / layout.docs_page(rel))
            removed += output.remove(config.out, config.out / layout.kw_page(rel))
        for kind in (FACTS, LINKS, PAGES):
            output.remove(config.out, shard(config, kind, folder))
    return removed


def written_pages(config: Config) -> set[str]:
    """Every page the state says kwdocs wrote (output-relative paths), for clean and check."""
    pages: set[str] = set()
    pages_dir = config.state / PAGES
    for path in sorted(pages_dir.glob("*.json")) if pages_dir.is_dir() else ():
        for rel in (output.read_json(path, {}) or {}).get("files", {}):
            pages.update((layout.docs_page(rel), layout.kw_page(rel)))
    for folder in (output.read_json(config.state / "folders.json", {}) or {}).get("pages", {}):
        pages.update((layout.index_page(folder), layout.doc_page(folder)))
    pages.update((output.read_json(config.state / "keywords" / "meta.json", {}) or {}).get("pages", []))
    return pages


def index_keywords(config: Config, folders: list[str], changed: list[str]) -> dict:
    """Update the repository-wide keyword pages whose letters gained, lost or moved entries."""
    from kwdocs import keywords

    root = config.state / "keywords"
    renderer = renderer_for(config.templates)
    key = render_key(config, "keywords.md.j2")
    meta = output.read_json(root / "meta.json", {}) or {}
    fresh = meta.get("key") != key
    known: dict[str, list[str]] = {} if fresh else meta.get("folders", {})
    counts: dict[str, int] = {} if fresh else meta.get("counts", {})
    changed_set = set(changed or ())
    dirty: set[str] = set()
    updates: dict[str, dict[str, list]] = {}   # letter -> folder -> entries (empty: drop)
    for folder in folders:
        if folder in known and str(shard(config, FACTS, folder)) not in changed_set:
            continue
        entries = keywords.folder_entries(load_shard(config, FACTS, folder).get("files", {}))
        by_letter: dict[str, list] = {}
        for entry in entries:
            by_letter.setdefault(keywords.letter_of(entry[0]), []).append(entry)
        for letter in set(by_letter) | set(known.get(folder, [])):
            updates.setdefault(letter, {})[folder] = by_letter.get(letter, [])
        known[folder] = sorted(by_letter)
    for folder in sorted(set(known) - set(folders)):
        for letter in known.pop(folder):
            updates.setdefault(letter, {})[folder] = []
    tables: dict[str, dict[str, list]] = {}
    for letter, folder_entries in sorted(updates.items()):
        path = root / f"letter-{letter}.json"
        table = {} if fresh else output.read_json(path, {}) or {}
        before = table.copy()
        for folder, entries in folder_entries.items():
            if entries:
                table[folder] = entries
            else:
                table.pop(folder, None)
        if table != before or fresh:
            dirty.add(letter)
        counts[letter] = sum(len(entries) for entries in table.values())
        if not counts[letter]:
            counts.pop(letter)
        tables[letter] = table
        output.write_json(config.out, path, table)
    all_letters = keywords.sorted_letters(set(counts))
    split = sum(counts.values()) > keywords.SPLIT_THRESHOLD
    wanted: dict[str, str] = {}   # page -> letter ('' for the single page or the bar)
    written = 0

    def letter_entries(letter: str) -> list:
        table = tables.get(letter) or output.read_json(root / f"letter-{letter}.json", {}) or {}
        return [entry for folder in sorted(table) for entry in table[folder]]

    mode_changed = meta.get("split") != split or meta.get("letters") != all_letters
    if split:
        for letter in all_letters:
            page = layout.keywords_page(letter)
            wanted[page] = letter
            if letter in dirty or mode_changed or fresh:
                written += output.write_if_changed(config.out, config.out / page, renderer.render(
                    "keywords.md.j2", keywords.letter_model(letter, letter_entries(letter), project=config.project_name,
                                                            all_letters=all_letters, counts=counts)))
        bar = keywords.bar_model(project=config.project_name, all_letters=all_letters, counts=counts)
        written += output.write_if_changed(config.out, config.out / layout.keywords_page(),
                                           renderer.render("keywords.md.j2", bar))
    elif dirty or mode_changed or fresh or not (config.out / layout.keywords_page()).exists():
        everything = [entry for letter in all_letters for entry in letter_entries(letter)]
        written += output.write_if_changed(config.out, config.out / layout.keywords_page(), renderer.render(
            "keywords.md.j2", keywords.letter_model(None, everything, project=config.project_name,
                                                    all_letters=[], counts=counts)))
    wanted[layout.keywords_page()] = ""
    removed = sum(output.remove(config.out, config.out / page)
                  for page in sorted(set(meta.get("pages", [])) - set(wanted)))
    output.write_json(config.out, root / "meta.json", {"key": key, "folders": known, "counts": counts,
                                                      "split": split, "letters": all_letters,
                                                      "pages": sorted(wanted)})
    return {"written": written, "removed": removed}
