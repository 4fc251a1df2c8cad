"""Page texts from facts: the pure step between extraction and writing.

Every function here returns ``{output-relative page path: Markdown}`` and
writes nothing, so ``kwdocs build`` (which writes what changed) and
``kwdocs check`` (which only compares) produce pages the same way.
"""
from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path

from markupsafe import Markup

from kwdocs import layout
from kwdocs.config import Config
from kwdocs.extract.decode import decode, is_binary
from kwdocs.facts import Facts
from kwdocs.formats import Format
from kwdocs.pages import coverage, keywords, model
from kwdocs.pages.markdown import TEMPLATES, MarkdownFormat
from kwdocs.pages.render import Renderer

ANALYSE_LIMIT = 3 * 1024 * 1024
"""Larger files get metadata and an excerpt, not keywords: only this much of a file is read
whole, and parsers are given no more (their memory grows with what they read)."""
FILE_TEMPLATES = tuple(TEMPLATES.values())   # file_docs.md.j2, file_kw.md.j2
FOLDER_TEMPLATES = ("folder_index.md.j2", "folder_doc.md.j2")
KEYWORDS_TEMPLATE = "keywords.md.j2"
KEYWORD_ROW_TEMPLATE = "keyword_row.md.j2"   # imported by KEYWORDS_TEMPLATE
FOLDER_ROW_TEMPLATE = "folder_row.md.j2"     # imported by FOLDER_TEMPLATES[0]


def source_link(config: Config, page: str, rel: str) -> str:
    """Link from a page in the output tree to the source file in the repository."""
    folder, _, name = rel.rpartition("/")
    return layout.quote_path(_folder_link(config.src, config.out, posixpath.dirname(page), folder) + name)


@lru_cache(maxsize=4096)
def _folder_link(src: Path, out: Path, page_folder: str, folder: str) -> str:
    """From a folder of the output tree to a source folder, ending in ``/``: the pages of a
    folder's files share it (``os.path.relpath`` per page was a fortieth of rendering)."""
    up = Path(os.path.relpath(src / folder, out / page_folder)).as_posix()
    return "" if up == "." else up + "/"


def front_matter(config: Config, text: str, title: str, description: str = "") -> str:
    """``text`` with YAML front matter (``title``, and ``description`` when there is one) on top
    when the configuration asks for it (MkDocs, Jekyll and Hugo read it); else ``text`` as it is."""
    if not config.front_matter:
        return text
    import yaml  # only for the few builds that ask: it quotes whatever a title or sentence holds
    fields = {"title": title} | ({"description": description} if description else {})
    return "---\n" + yaml.safe_dump(fields, sort_keys=False, allow_unicode=True, width=1 << 16) + "---\n\n" + text


def _folder_title(config: Config, folder: str) -> str:
    """A folder as its pages' headings name it."""
    return f"{folder}/" if folder else f"{config.project_name} (repository root)"


def source_view(config: Config, facts: Facts, data: bytes | None, mask) -> model.SourceView:
    """What the page embeds of the file (``data``: at least its first ``sources.source_bytes_shown``
    bytes): decoded, secrets masked, cut at the configured size."""
    if data is None or facts.get("binary") or is_binary(data):
        return model.SourceView(None)
    if facts.get("findings", {}).get("secret_lines") or config.max_source_bytes > ANALYSE_LIMIT:
        # masked whole, as analysed, and only then cut: a secret across the cut is found and hidden
        text, _ = decode(data[:max(ANALYSE_LIMIT, config.max_source_bytes + 4)])
        masked, lines = mask(text, facts.get("language", ""))
        return model.cut_source(masked, facts["size"], config.max_source_bytes, tuple(lines))
    text, _ = decode(data[: config.max_source_bytes + 4])
    return model.cut_source(text, facts["size"], config.max_source_bytes)


def file_pages(config: Config, renderer: Renderer, facts: Facts, links: dict | None,
               related: dict, view: model.SourceView, formats: Sequence[Format] = ()) -> dict[str, str]:
    """The documentation page and the keyword page of one file, in Markdown and in each of
    ``formats`` (``formats.formats_for``), all from the same models."""
    rel = facts["path"]
    docs_path, kw_path = layout.docs_page(rel), layout.kw_page(rel)
    src_link = source_link(config, kw_path, rel)
    entries = model.symbol_entries(facts)
    if links and links.get("findings"):   # rules decided when linking (a header a build file installs)
        facts = model.with_link_findings(facts, links["findings"])
    markdown = MarkdownFormat(renderer)
    docs_model = model.file_docs_model(
        facts, project=config.project_name, related=related, links=links, view=view, src_link=src_link,
        entries=entries, keep_empty=config.empty_sections == "keep", source_url=config.source_url,
        source_ref=config.source_ref)
    docs = markdown.render("file_docs", docs_model, docs_path)
    if config.front_matter:     # its description is the file's summary, else made for nothing
        docs = front_matter(config, docs, f"Documentation: {rel}", model.summary_sentence(model.own_text(
            facts.get("docstring", ""))))
    shown = None if view.text is None else (facts.get("lines", 0) if not view.omitted_bytes else view.shown_lines)
    section_map = model.section_map(docs_model, facts.get("symbols", []), shown)
    kw_model = model.file_kw_model(
        facts, project=config.project_name, src_link=src_link, section_map=section_map, entries=entries)
    texts = {docs_path: docs,
             kw_path: front_matter(config, markdown.render("file_kw", kw_model, kw_path), f"Keyword Index: {rel}")}
    for output_format in formats:     # a format may write no page of a kind (``page_path``: None)
        for kind, page_model, md_page in (("file_docs", docs_model, docs_path), ("file_kw", kw_model, kw_path)):
            format_page = output_format.page_path(md_page)
            if format_page is not None:
                texts[format_page] = output_format.render(kind, page_model, md_page)
    return texts


def summary_row(facts: Facts) -> dict:
    """What folder pages need of a file: its symbols only as far as Main Definitions shows
    them (a large folder reads its rows on every edit), and its documentation coverage."""
    return dict(coverage=list(coverage.file_counts(facts)),
                path=facts["path"], type_label=facts["type_label"], size=facts["size"],
                lines=facts.get("lines", 0), docstring=facts.get("docstring", "")[:2000],
                symbols=[{key: s[key] for key in ("kind", "name", "line", "detail") if key in s}
                         | ({"documented": True} if s.get("doc") else {})
                         for s in facts.get("symbols", [])
                         if s["kind"] in model.MAIN_DEFINITION_KINDS and not s.get("parent")
                         and not s["name"].startswith("_")],
                keyword_count=len(facts.get("symbols", [])))


RowCache = dict[str, list]   # a table's rows as rendered: name -> [what the row shows..., the row]


def kept_row(cached: RowCache, name: str, inputs: list, render: Callable[[], str]) -> list:
    """``name``'s row as ``[*inputs, row]``: the cached one while what it shows is unchanged,
    else rendered again.  Checking the inputs, not trusting a list of what changed, keeps a
    row right whatever happened to an earlier build (killed half-way, say)."""
    entry = cached.get(name)
    if not isinstance(entry, list) or entry[:-1] != inputs:
        entry = inputs + [render()]
    return entry


def folder_pages(config: Config, renderer: Renderer, folder: str, file_rows: list[str], parts: list[dict],
                 subfolders: list[dict], total_files: int, importance: dict | None = None,
                 formats: Sequence[Format] = (), row_items: Sequence[tuple[str, list]] = (),
                 diagrams: dict | None = None) -> dict[str, str]:
    """``index.md`` and ``doc.md`` of one folder, from its index's file rows as rendered
    (``file_rows``), its units' ``model.folder_part`` and linking's counts of uses (``importance``);
    and in each of ``formats``, from the same models, the index's rows made from ``row_items``
    (each file's name and ``model.file_row_inputs``, in the rows' order).  ``diagrams``: the
    folder's (``diagrams.folder_diagrams``, None for none)."""
    index_path, doc_path = layout.index_page(folder), layout.doc_page(folder)
    index_model = model.folder_index_model(
        folder, project=config.project_name, file_rows=file_rows, subfolders=subfolders, has_keyword_index=True)
    doc_model = model.folder_doc_model(
        folder, project=config.project_name, parts=parts, subfolders=subfolders, total_files=total_files,
        importance=importance, folder_diagrams=diagrams)
    title = _folder_title(config, folder)
    texts = {index_path: front_matter(config, renderer.render(FOLDER_TEMPLATES[0], index_model),
                                      f"Folder Index: {title}"),
             doc_path: front_matter(config, renderer.render(FOLDER_TEMPLATES[1], doc_model),
                                    f"Folder Documentation: {title}")}
    formats = [each for each in formats if each.page_path(index_path) is not None
               or each.page_path(doc_path) is not None]     # a format may write no folder pages
    row_models = [model.file_row_model(name, shown) for name, shown in row_items] if formats else []
    for output_format in formats:
        index_form, doc_form = output_format.page_path(index_path), output_format.page_path(doc_path)
        if index_form is not None:
            rows = output_format.rows("file_row", row_models, index_path)
            texts[index_form] = output_format.render("folder_index", index_model | {"file_rows": rows}, index_path)
        if doc_form is not None:
            texts[doc_form] = output_format.render("folder_doc", doc_model, doc_path)
    return texts


def folder_file_rows(renderer: Renderer, rows: list[dict], cached: RowCache) -> tuple[list[str], list[list], list[str]]:
    """Rows of a folder index's table of files, through the ``file_row`` macro: the files'
    names, what each row shows, and the rows.  A row in ``cached`` is used again while what
    it shows is unchanged: an edit in a large folder changes one row of thousands.
    """
    row = renderer.macro(FOLDER_ROW_TEMPLATE, "file_row")
    names = model.own_names(rows)
    inputs, texts = [], []
    for facts, name in zip(rows, names):
        shown = model.file_row_inputs(facts)
        entry = kept_row(cached, name, shown, lambda: row(model.file_row_model(name, shown)))  # noqa: B023 - called at once
        inputs.append(shown)
        texts.append(entry[-1])
    return names, inputs, texts


def folder_tree(direct_counts: dict[str, int], all_folders: list[str]) -> tuple[dict[str, list[dict]], dict[str, int]]:
    """Each folder's subfolder rows (files and folders below each), and files below each folder."""
    children: dict[str, list[str]] = {folder: [] for folder in all_folders}
    for folder in all_folders:
        if folder:
            children[os.path.dirname(folder)].append(folder)
    totals: dict[str, tuple[int, int]] = {}
    for folder in sorted(all_folders, key=lambda f: -f.count("/") if f else 1):
        below = [totals[sub] for sub in children[folder]]
        totals[folder] = (direct_counts.get(folder, 0) + sum(t[0] for t in below),
                          len(below) + sum(t[1] for t in below))
    rows = {folder: [dict(folder=sub, total_files=totals[sub][0], total_folders=totals[sub][1])
                     for sub in sorted(children[folder])] for folder in all_folders}
    return rows, {folder: total[0] for folder, total in totals.items()}


def keyword_pages(config: Config, renderer: Renderer, entries_of: Callable[[str], list[list]],
                  counts: dict[str, int], letters_to_render: set[str],
                  cached_rows: Callable[[str], RowCache], formats: Sequence[Format] = ()
                  ) -> Iterator[tuple[str, str, RowCache | None]]:
    """``keywords.md``, and when the index is large the ``keywords-X.md`` of ``letters_to_render``,
    as (page, text, its rows to keep) one at a time: on a 100,000-file tree one letter's entries
    are plenty to hold.

    ``counts`` holds every letter's number of entries; ``entries_of(letter)`` gives those of a
    letter to render (of every letter when the index fits on one page); ``cached_rows(page)``
    the rows the page had, as this returned them last time.  Each page of ``formats`` follows
    its Markdown page, from the same models, with its own rows to keep.
    """
    all_letters = keywords.sorted_letters({letter for letter, count in counts.items() if count})
    if sum(counts.values()) <= keywords.SPLIT_THRESHOLD:
        page = layout.keywords_page()
        grouped = keywords.by_name([entry for letter in all_letters for entry in entries_of(letter)])
        models: dict[str, dict] = {}
        rows, kept = keyword_rows(renderer, page, grouped, cached_rows(page), models)
        page_model = keywords.letter_model(None, rows, project=config.project_name, all_letters=[], counts=counts)
        yield page, _keywords_text(config, renderer, page_model, None), kept
        yield from _keyword_formats(formats, page, page_model, grouped, cached_rows, kept, models)
        return
    page = layout.keywords_page()
    page_model = keywords.bar_model(project=config.project_name, all_letters=all_letters, counts=counts)
    yield page, _keywords_text(config, renderer, page_model, None), None
    yield from _keyword_formats(formats, page, page_model, [], cached_rows)
    for letter in all_letters:
        if letter in letters_to_render:
            page = layout.keywords_page(letter)
            grouped = keywords.by_name(entries_of(letter))
            models = {}
            # the row models only when another format renders rows from them
            rows, kept = keyword_rows(renderer, page, grouped, cached_rows(page), models if formats else None)
            if not formats:     # the rows hold all the page shows: its entries go before it is rendered
                grouped.clear()
            page_model = keywords.letter_model(letter, rows, project=config.project_name, all_letters=all_letters,
                                               counts=counts)
            yield page, _keywords_text(config, renderer, page_model, letter), kept
            yield from _keyword_formats(formats, page, page_model, grouped, cached_rows, kept, models)


def _keywords_text(config: Config, renderer: Renderer, page_model: dict, letter: str | None) -> str:
    """A keyword index page in Markdown, with its front matter when asked for."""
    title = f"Keyword Index of {config.project_name}" + (f": {letter}" if letter else "")
    return front_matter(config, renderer.render(KEYWORDS_TEMPLATE, page_model), title)


def _keyword_formats(formats: Sequence[Format], page: str, page_model: dict, grouped: list[tuple[str, list[list]]],
                     cached_rows: Callable[[str], RowCache], markdown_rows: RowCache | None = None,
                     models: dict[str, dict] | None = None) -> Iterator[tuple[str, str, RowCache | None]]:
    """A keyword page in each of ``formats``, from its Markdown page's model, and its rows to
    keep (those in ``cached_rows`` of its path used again while their places are unchanged).
    ``markdown_rows``: the Markdown page's rows to keep, whose inputs (its places' digest) each
    format's row has too: a letter's thousands of names are digested once; ``models``: the row
    models the Markdown page's rows were rendered from (``keyword_rows``), made once."""
    models = models or {}
    for output_format in formats:
        format_page = output_format.page_path(page)
        if format_page is None:     # a format that writes no keyword pages
            continue
        cached = cached_rows(format_page) if grouped else {}
        kept: RowCache = {}
        missing: list[tuple[str, list]] = []
        for name, places in grouped:
            inputs = markdown_rows[name][:-1] if markdown_rows else [keywords.places_digest(places)]
            entry = cached.get(name)
            if isinstance(entry, list) and entry[:-1] == inputs:
                kept[name] = entry
            else:
                kept[name] = inputs     # its row is rendered below, with the others missing
                missing.append((name, places))
        docs_links: dict[str, str] = {}
        # one call for every row missing: a row at a time cost more than its rendering
        fresh = output_format.rows("keyword_row", [
            models.get(name) or keywords.row_model(page, name, places, docs_links) for name, places in missing], page)
        for (name, _), row in zip(missing, fresh):
            kept[name] = [*kept[name], str(row)]
        rows = [Markup(entry[-1]) for entry in kept.values()]    # rows this format rendered (kept as text)
        text = output_format.render("keywords", page_model | {"rows": rows}, page)
        yield format_page, text, kept if grouped else None


def keyword_rows(renderer: Renderer, page: str, grouped: list[tuple[str, list[list]]], cached: RowCache,
                 models: dict[str, dict] | None = None) -> tuple[list[str], RowCache]:
    """A keyword page's table rows, through the template's ``row`` macro, and the rows to keep,
    each checked against a digest of its places: a letter of a large tree lists
    thousands of places, and an edit changes a few names.  ``grouped``: the page's entries
    by name (``keywords.by_name``); ``models``, when given, keeps the model of each row rendered,
    for the page's other formats.
    """
    row = renderer.macro(KEYWORD_ROW_TEMPLATE, "row")
    docs_links: dict[str, str] = {}

    def render(name: str, places: list[list]) -> str:
        model = keywords.row_model(page, name, places, docs_links)
        if models is not None:
            models[name] = model
        return row(model["name"], model["places"])   # arguments, not a dict: 75,000 calls

    kept: RowCache = {}
    for name, places in grouped:
        kept[name] = kept_row(cached, name, [keywords.places_digest(places)],
                              lambda: render(name, places))  # noqa: B023 - called at once
    return [entry[-1] for entry in kept.values()], kept
