"""The JSON format: ``a/b.py.json`` beside a file's pages, for editors, CI bots and other tools.

It is made from the model of the file's documentation page (``kwdocs.pages.model``), the one
its Markdown is rendered from: the file's metadata, its definitions (kind, qualified name,
lines, signature, documentation as text and as parsed sections, where the repository uses
them), its imports resolved to files, the files and tests that use it, and the rules'
findings.  Its shape is ``page.schema.json`` beside this module (``SCHEMA``); ``"format"``
names that shape's version.  It writes no folder or keyword page.
"""
from __future__ import annotations

import json
import posixpath
from importlib.resources import files
from typing import Any
from urllib.parse import unquote

from kwdocs import layout
from kwdocs.config import Config
from kwdocs.context import per_config
from kwdocs.formats import PageFormat
from kwdocs.pages.docstrings import doc_text, spans_text
from kwdocs.store.snapshot import code_fingerprint

SCHEMA = "page.schema.json"    # package data of kwdocs.pages: the JSON Schema every file validates against
VERSION = 1                    # of the files' shape; a change that breaks a reader adds one
SUFFIX = ".json"
GENERATOR = "kwdocs"           # every file's first member: how kwdocs knows its own without its state


def schema() -> dict:
    """The JSON Schema of the format's files, as shipped."""
    return json.loads(files("kwdocs.pages").joinpath(SCHEMA).read_text(encoding="utf-8"))


class JsonFormat(PageFormat):
    """A source file's facts as one JSON document, beside its Markdown pages."""

    name = "json"
    label = "JSON"
    suffix = SUFFIX
    marker = f'{{\n  "generator": "{GENERATOR}"'.encode()

    def page_path(self, md_page: str) -> str | None:
        if not md_page.endswith(layout.DOCS_SUFFIX):     # one file per source file, none per folder
            return None
        return md_page[: -len(layout.DOCS_SUFFIX)] + SUFFIX

    def key(self) -> str:
        return f"json{VERSION}:{code_fingerprint()}"

    def render(self, kind: str, model: dict, md_page: str) -> str:
        if kind != "file_docs":
            raise ValueError(f"the JSON format writes no {kind} page")
        return json.dumps(document(model, md_page), indent=2, ensure_ascii=True) + "\n"


@per_config
def json_format(config: Config) -> JsonFormat:
    return JsonFormat()


def document(model: dict, md_page: str) -> dict[str, Any]:
    """The JSON document of a file, from its documentation page's model (``md_page``)."""
    # a section's fields are the model's own keys (``model.file_docs_model``); absent: not on the page
    return {
        "generator": GENERATOR,
        "format": VERSION,
        "path": model["path"],
        "language": model.get("language") or "",
        "type": model.get("type_label") or "",
        "lines": model.get("lines") or 0,
        "size": model.get("size") or 0,
        "sha256": model.get("sha256") or "",
        "purpose": [str(line) for line in model.get("purpose") or ()],
        "definitions": _definitions(model.get("structure") or ()),
        "imports": _imports(model.get("deps") or {}, md_page),
        "users": [user["path"] for user in model.get("used_by") or ()],
        "more_users": model.get("more_users") or 0,
        "tests": [{"path": test["path"], "via": test.get("via") or None} for test in model.get("tests_using") or ()],
        "more_tests": model.get("more_tests") or 0,
        "test_command": model.get("test_command") or "",
        "findings": {key: [_finding(item) for item in model.get(key) or ()]
                     for key in ("patterns", "performance", "security")},
        "problems": [{"line": problem.get("line"), "message": str(problem["message"])}
                     for problem in model.get("problems") or ()],
    }


def _definitions(entries) -> list[dict]:
    """Each entry of the page's structure; its qualified name from the entries it is nested in."""
    found: list[dict] = []
    outer: list[str] = []      # the names of the entries enclosing this one, by depth
    for entry in entries:
        depth = entry.get("depth", 0)
        del outer[depth:]
        qualified = ".".join([*outer, entry["name"]])
        outer.append(entry["name"])
        found.append({
            "kind": entry["kind"],
            "name": entry["name"],
            "qualified_name": qualified,
            "line": entry["line"],
            "end": entry.get("end", entry["line"]),
            "signature": entry.get("signature") or "",
            "decorators": list(entry.get("decorators") or ()),
            "documentation": _documentation(entry.get("doc")),
            "uses": [{"path": path, "line": line} for path, line in entry.get("uses") or ()],
            "more_uses": entry.get("more_uses", 0),
        })
        if entry.get("condition"):
            found[-1]["condition"] = list(entry["condition"])
    return found


def _documentation(doc: dict | None) -> dict | None:
    """A definition's documentation: its text, its summary and its parsed sections (the
    field lists: parameters, returns, raises...), from the parse the pages show."""
    if not doc:
        return None
    blocks = doc.get("blocks") or []
    summary = spans_text(doc.get("summary"))
    text = doc_text(doc)
    sections = [{"title": block.get("title", ""),
                 "items": [{"name": row.get("name", ""), "type": spans_text(row.get("type")),
                            "text": spans_text(row.get("spans"))} for row in block.get("rows", ())]}
                for block in blocks if block.get("t") == "fields"]
    return {"summary": summary, "text": text, "sections": sections}


def _imports(deps: dict, md_page: str) -> list[dict]:
    """The file's imports in source order, each with the repository file it resolves to (or None)."""
    found = [{"module": dep["module"], "line": dep["line"], "names": list(dep.get("names") or ()),
              "category": category, "file": _linked_file(md_page, dep.get("link") or "")}
             for category in ("repo", "stdlib", "third_party") for dep in deps.get(category, ())]
    return sorted(found, key=lambda dep: (dep["line"], dep["module"]))


def _linked_file(md_page: str, link: str) -> str | None:
    """The source file whose documentation page a page's link (relative to ``md_page``) leads to."""
    if not link:
        return None
    target = posixpath.normpath(posixpath.join(posixpath.dirname(md_page), unquote(link.partition("#")[0])))
    kind, rel = layout.page_subject(target)
    return rel if kind == "docs" else None


def _finding(item: Any) -> dict:
    """A rule's finding: its message (Markdown, as the page shows it), line and rule when known."""
    if isinstance(item, dict):
        return {"message": str(item.get("message", "")), "line": item.get("line"), "rule": item.get("rule")}
    return {"message": str(item), "line": None, "rule": None}
