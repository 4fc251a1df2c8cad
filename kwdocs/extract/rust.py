"""Rust: modules, functions, structs, enums, traits, impls, macros, constants, ``use``.

``mod name;`` is an import of the module's file as well as a definition, so
that the module tree links file to file; ``use crate::...`` paths link to the
file of the module they name.
"""
from __future__ import annotations

import re
from typing import Any

from kwdocs.extract import treesitter as ts

GRAMMAR = "tree_sitter_rust"
_CLASSES = {"struct_item": "struct", "enum_item": "enum", "union_item": "union",
            "trait_item": "trait"}
_REFERENCE = re.compile(r"^(?:&\s*(?:'\w+\s+)?|mut\s+|dyn\s+)+")  # ``impl X for &'a mut T``
_SIMPLE = {"const_item": "constant", "static_item": "variable", "type_item": "type",
           "associated_type": "type",
           "macro_definition": "macro"}
_FUNCTIONS = ("function_item", "function_signature_item")


def extract(text: str, path: str) -> dict[str, Any]:
    """Definitions and imports of a Rust file."""
    return ts.extract_tree(text, GRAMMAR, lambda source, root, symbols, imports: _walk(
        source, root, "", False, symbols, imports, ""), _inner_doc)


def _members(source: bytes, body, owner: str, symbols: list) -> None:
    """An enum's variants and a struct's or union's public fields, as rustdoc lists them (a
    private field is not part of the type's API)."""
    for member in body.named_children:
        if member.type == "enum_variant":
            symbols.append(ts.definition(source, ts.text_of(source, member.child_by_field_name("name")),
                                         "constant", member, anchor=_anchor(member), parent=owner,
                                         detail="variant",
                                         with_signature=member.child_by_field_name("body") is not None))
        elif member.type == "field_declaration" and any(
                child.type == "visibility_modifier" for child in member.children):
            symbols.append(ts.definition(source, ts.text_of(source, member.child_by_field_name("name")),
                                         "variable", member, anchor=_anchor(member), parent=owner,
                                         detail="field"))


def _walk(source: bytes, node, parent: str, in_impl: bool, symbols: list, imports: list,
          inline: str) -> None:
    """Definitions under ``node``; ``inline`` is the path of the ``mod x { ... }`` blocks
    around it (``a::b``), which ``super::`` in a ``use`` steps out of first."""
    for child in node.named_children:
        kind = child.type
        name = ts.text_of(source, child.child_by_field_name("name"))
        body = child.child_by_field_name("body")
        anchor = _anchor(child)
        if kind in _FUNCTIONS:
            symbols.append(ts.definition(source, name, "method" if in_impl else "function", child,
                                         anchor=anchor, body=body, parent=parent))
            if body is not None:  # items declared inside a function body
                _walk(source, body, name, False, symbols, imports, inline)
        elif kind in _CLASSES:
            symbols.append(ts.definition(source, name, "class", child, anchor=anchor, body=body,
                                         parent=parent, detail=_CLASSES[kind]))
            if kind == "trait_item" and body is not None:
                _walk(source, body, name, True, symbols, imports, inline)
            elif body is not None and kind != "trait_item":
                _members(source, body, name, symbols)
        elif kind == "impl_item":
            target = _REFERENCE.sub("", ts.text_of(source, child.child_by_field_name("type"))).split("<", 1)[0]
            symbol = ts.definition(source, target, "class", child, anchor=anchor, body=body,
                                   parent=parent, detail="impl")
            trait = child.child_by_field_name("trait")
            if trait is not None:   # ``impl fmt::Display for Logger``: the keyword page names the trait
                symbol["trait"] = " ".join(ts.text_of(source, trait).split())
            symbols.append(symbol)
            if body is not None:
                _walk(source, body, target, True, symbols, imports, inline)
        elif kind == "mod_item":
            symbols.append(ts.definition(source, name, "namespace", child, anchor=anchor,
                                         body=body, parent=parent, detail="mod"))
            if body is not None:
                _walk(source, body, name, False, symbols, imports, f"{inline}::{name}".lstrip(":"))
            else:
                imports.append({"module": name, "line": ts.line_of(child), "kind": "mod"})
        elif kind in _SIMPLE:
            symbols.append(ts.definition(source, name, _SIMPLE[kind], child, anchor=anchor,
                                         parent=parent, with_signature=kind != "macro_definition"))
        elif kind == "use_declaration":
            argument = ts.text_of(source, child.child_by_field_name("argument"))
            module = " ".join(argument.split())
            entry = {"module": module, "line": ts.line_of(child), "kind": "use"}
            if inline:
                entry["inline"] = inline
            imports.append(entry)
            symbols.append({"name": module, "kind": "import", "line": ts.line_of(child)})
        elif kind == "extern_crate_declaration":
            module = ts.text_of(source, child.child_by_field_name("name"))
            imports.append({"module": module, "line": ts.line_of(child), "kind": "crate"})
            symbols.append({"name": module, "kind": "import", "line": ts.line_of(child)})
        elif kind in ("declaration_list", "attribute_item") or kind.startswith("macro_invocation"):
            continue
    if node.parent is None:   # the file's root, walked last: every definition is listed now
        _join_attribute_docs(source, node, symbols)


# ``#[doc = "..."]`` or ``#[cfg_attr(<cfg>, doc = "...")]``: a line of the doc comment, as rustdoc reads it
_DOC_ATTRIBUTE = re.compile(r'#\[\s*(cfg_attr\s*\(.*,\s*)?doc\s*=\s*"((?:[^"\\]|\\.)*)"\s*\)?\s*\]\s*', re.DOTALL)
_ESCAPE = re.compile(r"\\(.)")
_OUTER_DOC = ("///", "/**")


def _join_attribute_docs(source: bytes, root, symbols: list) -> None:
    """Give a definition the whole doc comment rustdoc shows where attributes interrupt it
    (``/// # Examples``, then ``#[cfg_attr(feature = "x", doc = " ```")]``, then more ``///``):
    ts.doc_comment stops at the first attribute, which lost the summary above it and the
    code fence the attribute opens.  Other definitions keep the doc they have."""
    docs: dict[int, str] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        if node.prev_sibling is None or node.prev_sibling.type not in ("attribute_item", "line_comment"):
            continue
        lines: list[str] = []
        interrupted = False
        attribute_below = False   # an attribute between this line and the item
        last_cfg = False
        sibling = node.prev_sibling
        while sibling is not None and sibling.type in ("attribute_item", "line_comment", "block_comment"):
            text = ts.text_of(source, sibling).rstrip("\r\n")
            if sibling.type == "attribute_item":
                found = _DOC_ATTRIBUTE.fullmatch(text)
                if found and not (found[1] and last_cfg):  # of consecutive cfg_attr docs, one is built
                    lines[:0] = ["///" + _ESCAPE.sub(r"\1", found[2])]  # its leading blank is "/// "'s
                    interrupted = True
                last_cfg = bool(found and found[1])
                attribute_below = True
            elif text.startswith(_OUTER_DOC) and not text.startswith(("////", "/***")):
                lines[:0] = text.split("\n")
                interrupted = interrupted or attribute_below
                last_cfg = False
            elif not (sibling.prev_sibling is not None and sibling.prev_sibling.end_point[0] == sibling.start_point[0]):
                break   # a plain comment on a line of its own ends the doc; one after an attribute does not
            else:
                attribute_below = True
            sibling = sibling.prev_sibling
        if interrupted:
            docs[ts.line_of(node.child_by_field_name("name") or node)] = ts.clean_comment(lines)
    for symbol in symbols:
        if symbol["kind"] != "import" and docs.get(symbol["line"]):
            symbol["doc"] = docs[symbol["line"]]


def _anchor(node):
    """The first of the attributes (``#[derive(...)]``) right above a declaration: its doc
    comment sits above them."""
    anchor = node
    while anchor.prev_sibling is not None and anchor.prev_sibling.type == "attribute_item":
        anchor = anchor.prev_sibling
    return anchor


def _inner_doc(source: bytes, root) -> str:
    """The crate's or module's ``//!`` comment with its ``#![doc = ...]`` lines, as rustdoc
    reads it; else the opening comment, unless it sits on an item (an outer ``///`` comment is
    the item's)."""
    lines: list[str] = []
    last_cfg = False
    for child in root.children:
        text = ts.text_of(source, child).rstrip("\r\n")
        if "comment" in child.type and text.startswith(("//!", "/*!")):
            lines.extend(text.split("\n"))
            last_cfg = False
        elif child.type == "inner_attribute_item":
            found = _DOC_ATTRIBUTE.fullmatch("#" + text[2:])
            if found and not (found[1] and last_cfg):  # of consecutive cfg_attr docs, one is built
                lines.append("//!" + _ESCAPE.sub(r"\1", found[2]))
            last_cfg = bool(found and found[1])
    return ts.clean_comment(lines) if lines else ts.leading_doc(source, root, _ITEMS)


# what a comment right above documents rather than the file: items, attributes, uses
_ITEMS = frozenset(("function_item", "function_signature_item", "struct_item", "enum_item", "union_item",
                    "trait_item", "impl_item", "type_item", "const_item", "static_item", "mod_item",
                    "macro_definition", "macro_invocation", "attribute_item", "use_declaration",
                    "extern_crate_declaration", "foreign_mod_item"))


_ROOT_FOLDERS = frozenset(("tests", "examples", "benches", "bin"))
_STANDARD_CRATES = frozenset(("std", "core", "alloc", "proc_macro", "test"))


class Resolver:
    """``mod name;`` to ``name.rs`` or ``name/mod.rs`` beside the module's own file; ``use
    crate::a::b`` (and ``super::``, ``self::``) to the file of the deepest module it names."""

    def __init__(self, languages: dict[str, str], imports: dict[str, list]) -> None:
        self.paths = frozenset(path for path, language in languages.items() if language == "rust")

    def answer(self, entry: dict, path: str) -> tuple[str | None, str]:
        kind, module = entry.get("kind"), str(entry.get("module", ""))
        if kind == "mod":
            return self._file(_module_folder(path), [module]), "repo"
        parts = [part.strip() for part in module.split("{", 1)[0].split("::")]
        parts = [part for part in parts if part and part != "*"]
        first = parts[0] if parts else ""
        library = ""
        if first not in ("crate", "self", "super") and first not in _STANDARD_CRATES:
            library = self._library(path, first)
            if library:
                first = "crate"  # a binary, test or example of a package using its library
        if kind == "crate" or first not in ("crate", "self", "super"):
            return None, "stdlib" if first in _STANDARD_CRATES else "third_party"
        if first == "crate":
            folder, rest = library or _crate_folder(path, self.paths), parts[1:]
            if not library and _is_crate_root(path):
                folder = path.rpartition("/")[0]
        else:
            folder, rest = _module_folder(path), parts[1:] if first == "self" else parts
            inline = [part for part in str(entry.get("inline", "")).split("::") if part]
            while rest and rest[0] == "super":
                rest = rest[1:]
                if inline:
                    inline.pop()  # out of a ``mod x { }`` block: still this file
                else:
                    folder = folder.rpartition("/")[0]
            if inline or (not rest and folder == _module_folder(path)):
                return path, "repo"
        for length in range(len(rest), 0, -1):
            found = self._file(folder, rest[:length])
            if found is not None:
                return found, "repo"
        if folder == _module_folder(path) and not library and (first != "crate" or _is_crate_root(path)):
            return path, "repo"  # an item of this very module
        return self._module_file(folder, path), "repo"

    def _library(self, path: str, crate: str) -> str:
        """The ``src`` folder of the package's library when ``crate`` is the package's own name."""
        folder = path.rpartition("/")[0]
        while True:
            package = folder.removesuffix("/src") if folder.endswith("/src") else folder
            source = f"{package}/src" if package else "src"
            if f"{source}/lib.rs" in self.paths and _package_crate(source) == crate:
                return source
            if not folder:
                return ""
            folder = folder.rpartition("/")[0]

    def _file(self, folder: str, parts: list[str]) -> str | None:
        stem = "/".join(part for part in (folder, *parts) if part)
        return next((c for c in (f"{stem}.rs", f"{stem}/mod.rs") if c in self.paths), None)

    def _module_file(self, folder: str, near: str) -> str | None:
        """The file of the module whose submodules live in ``folder``."""
        prefix = f"{folder}/" if folder else ""
        for candidate in (f"{prefix}lib.rs", f"{prefix}main.rs", f"{prefix}mod.rs", f"{folder}.rs"):
            if candidate in self.paths and (candidate != f"{prefix}main.rs" or near.startswith(prefix)):
                return candidate
        return None


def _module_folder(path: str) -> str:
    """Where the submodules of the module in ``path`` live: beside ``lib.rs``, ``main.rs`` or
    ``mod.rs``; in ``a/`` for ``a.rs``."""
    folder, _, name = path.rpartition("/")
    if name in ("lib.rs", "main.rs", "mod.rs", "build.rs") or folder.rpartition("/")[2] in _ROOT_FOLDERS:
        return folder  # a crate root: each file of tests/, examples/, benches/, src/bin/ is one
    return f"{folder}/{name[:-3]}" if folder else name[:-3]


def _is_crate_root(path: str) -> bool:
    folder, _, name = path.rpartition("/")
    return name in ("lib.rs", "main.rs", "build.rs") or folder.rpartition("/")[2] in _ROOT_FOLDERS


def _package_crate(crate_folder: str) -> str:
    """The crate name a package's folder suggests (``regex-1.10.2/src`` -> ``regex``)."""
    name = crate_folder.removesuffix("/src").rpartition("/")[2]
    return re.sub(r"-\d[\w.+-]*$", "", name).replace("-", "_")


def _crate_folder(path: str, paths: frozenset[str]) -> str:
    """The folder of the crate root (``lib.rs`` or ``main.rs``) nearest above ``path``."""
    folder = path.rpartition("/")[0]
    while True:
        if any(f"{folder}/{name}" in paths or (not folder and name in paths)
               for name in ("lib.rs", "main.rs")):
            return folder
        if not folder:
            return path.rpartition("/")[0]
        folder = folder.rpartition("/")[0]
