"""Java: package, classes, interfaces, enums, records, annotations, methods, imports.

Imports name classes (``a.b.C``) or packages (``a.b.*``); they link to the
file of the class, found by its package path anywhere in the tree.
"""
from __future__ import annotations

from typing import Any

from tree_sitter import Node

from kwdocs.extract import treesitter as ts
from kwdocs.extract.paths import PathIndex

GRAMMAR = "tree_sitter_java"
_CLASSES = {"class_declaration": "class", "interface_declaration": "interface",
            "enum_declaration": "enum", "record_declaration": "record",
            "annotation_type_declaration": "annotation"}
# an annotation's elements (``String value() default "";``) are its methods, as ctags lists them
_METHODS = ("method_declaration", "constructor_declaration", "compact_constructor_declaration",
            "annotation_type_element_declaration")


def extract(text: str, path: str) -> dict[str, Any]:
    """Definitions and imports of a Java file."""
    return ts.extract_tree(text, GRAMMAR, _walk)


def _walk(source: bytes, root: Node, symbols: list[dict[str, Any]], imports: list[dict[str, Any]]) -> None:
    """The package, imports and classes of a Java file's tree."""
    for node in root.named_children:
        if node.type == "package_declaration":
            name = next((c for c in node.named_children if "identifier" in c.type), None)
            symbols.append(ts.definition(source, ts.text_of(source, name), "namespace", node,
                                         detail="package", with_signature=False))
        elif node.type == "import_declaration":
            module = ts.text_of(source, node).removeprefix("import").strip().rstrip(";").strip()
            static = module.startswith("static ")
            module = module.removeprefix("static ").replace(" ", "")
            entry = {"module": module, "line": ts.line_of(node), "kind": "import"}
            if static:
                entry["static"] = True
            imports.append(entry)
            symbols.append({"name": module, "kind": "import", "line": ts.line_of(node)})
        elif node.type in _CLASSES:
            _class(source, node, "", symbols)


def _class(source: bytes, node, parent: str, symbols: list) -> None:
    name = ts.text_of(source, node.child_by_field_name("name"))
    body = node.child_by_field_name("body")
    symbols.append(ts.definition(source, name, "class", node, body=body, parent=parent,
                                 detail=_CLASSES[node.type]))
    if body is None:
        return
    qualified = f"{parent}.{name}" if parent else name
    for member in body.named_children:
        if member.type in _CLASSES:
            _class(source, member, qualified, symbols)
        elif member.type in _METHODS:
            symbols.append(ts.definition(source, ts.text_of(source, member.child_by_field_name("name")),
                                         "method", member, body=member.child_by_field_name("body"),
                                         parent=qualified))
        elif member.type == "enum_constant":
            constant = ts.definition(source, ts.text_of(source, member.child_by_field_name("name")),
                                     "constant", member, parent=qualified, with_signature=False)
            symbols.append(constant)
        elif member.type == "enum_body_declarations":
            for inner in member.named_children:
                if inner.type in _METHODS:
                    symbols.append(ts.definition(
                        source, ts.text_of(source, inner.child_by_field_name("name")), "method",
                        inner, body=inner.child_by_field_name("body"), parent=qualified))
                elif inner.type in _CLASSES:
                    _class(source, inner, qualified, symbols)


class Resolver:
    """``import a.b.C`` to the file ``.../a/b/C.java`` (a nested or static member: its
    outer class's file); ``a.b.*`` to the first file of that package's folder."""

    def __init__(self, languages: dict[str, str], imports: dict[str, list]) -> None:
        self.index = PathIndex(path for path, language in languages.items() if language == "java")
        self.package_files: dict[str, str] = {}
        for path in sorted(self.index.paths):
            self.package_files.setdefault(path.rpartition("/")[0], path)

    def answer(self, entry: dict, path: str) -> tuple[str | None, str]:
        parts = str(entry.get("module", "")).split(".")
        wildcard = parts[-1] == "*"
        if wildcard:
            parts = parts[:-1]
        found = self._class(parts, path)
        if found is None and wildcard:
            folder = "/".join(parts)
            package = [f for f in self.package_files if f == folder or f.endswith("/" + folder)]
            found = self.package_files[min(package, key=len)] if package else None
        if found is not None:
            return found, "repo"
        if parts[0] in ("java", "javax", "jdk", "sun") or parts[:2] == ["com", "sun"]:
            return None, "stdlib"
        return None, "third_party"

    def _class(self, parts: list[str], near: str) -> str | None:
        """The file of the longest leading part of ``parts`` that names a class."""
        for length in range(len(parts), 1, -1):
            found = self.index.tail("/".join(parts[:length]) + ".java", near)
            if found is not None:
                return found
        return None
