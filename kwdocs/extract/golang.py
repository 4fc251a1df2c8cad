"""Go: package, functions, methods with their receiver, types, interfaces, constants, imports.

Imports are linked to the files of the imported package when the path lies
under the module that ``go.mod`` declares, or ends with a folder of the tree.
"""
from __future__ import annotations

import functools
from collections import defaultdict
from typing import Any

from tree_sitter import Node

from kwdocs.extract import treesitter as ts

GRAMMAR = "tree_sitter_go"
_TYPE_DETAIL = {"struct_type": "struct", "interface_type": "interface"}


# a ``//`` comment right above a name is its doc, however short (``// Expected arguments``)
_definition = functools.partial(ts.definition, labels=False)


def extract(text: str, path: str) -> dict[str, Any]:
    """Definitions and imports of a Go file (or of a ``go.mod``)."""
    if path.rpartition("/")[2] == "go.mod":
        return extract_go_mod(text)
    return ts.extract_tree(text, GRAMMAR, _walk)


def _walk(source: bytes, root: Node, symbols: list[dict[str, Any]], imports: list[dict[str, Any]]) -> None:
    """The package, imports and top-level declarations of a Go file's tree."""
    for node in root.named_children:
        kind = node.type
        if kind == "package_clause":
            name = node.named_children[0] if node.named_children else None
            symbols.append(_definition(source, ts.text_of(source, name), "namespace", node,
                                         detail="package", with_signature=False))
        elif kind == "import_declaration":
            _imports(source, node, symbols, imports)
        elif kind == "function_declaration":
            symbols.append(_definition(source, ts.text_of(source, node.child_by_field_name("name")),
                                         "function", node, body=node.child_by_field_name("body")))
        elif kind == "method_declaration":
            symbols.append(_definition(
                source, ts.text_of(source, node.child_by_field_name("name")), "method", node,
                body=node.child_by_field_name("body"),
                parent=_receiver_type(source, node.child_by_field_name("receiver"))))
        elif kind == "type_declaration":
            for spec in node.named_children:
                if spec.type in ("type_spec", "type_alias"):
                    _type(source, spec, node, symbols)
        elif kind in ("const_declaration", "var_declaration"):
            _values(source, node, "constant" if kind == "const_declaration" else "variable", symbols)


def _imports(source: bytes, node, symbols: list, imports: list) -> None:
    specs = [node] if node.type == "import_spec" else node.named_children
    for spec in specs:
        if spec.type == "import_spec_list":
            _imports(source, spec, symbols, imports)
        elif spec.type == "import_spec":
            module = ts.unquote(ts.text_of(source, spec.child_by_field_name("path")))
            line = ts.line_of(spec)
            imports.append({"module": module, "line": line, "kind": "import"})
            symbols.append({"name": module, "kind": "import", "line": line})


def _receiver_type(source: bytes, receiver) -> str:
    """``(s *Server)`` -> ``Server``; ``(l List[T])`` -> ``List``."""
    text = ts.text_of(source, receiver).strip("() ")
    text = text.split()[-1] if text else ""
    return text.lstrip("*").split("[", 1)[0]


def _type(source: bytes, spec, declaration, symbols: list) -> None:
    name = ts.text_of(source, spec.child_by_field_name("name"))
    shape = spec.child_by_field_name("type")
    detail = _TYPE_DETAIL.get(shape.type if shape is not None else "", "")
    anchor = declaration if len(declaration.named_children) == 1 else spec
    if spec.type == "type_alias":
        symbols.append(_definition(source, name, "type", spec, anchor=anchor, detail="alias"))
        return
    body = None
    if detail == "struct":
        body = next((child for child in shape.named_children
                     if child.type == "field_declaration_list"), None)
    elif detail == "interface":
        body = shape
    symbol = _definition(source, name, "class" if detail else "type", spec, anchor=anchor,
                           body=body, detail=detail)
    if detail == "interface" and body is not None:
        symbol["signature"] = f"type {symbol['signature']} interface"
    elif detail == "struct":
        symbol["signature"] = f"type {symbol['signature']}"
    symbols.append(symbol)
    if detail == "struct" and body is not None:
        _fields(source, body, name, symbols)
    if detail == "interface":
        for element in shape.named_children:
            if element.type in ("method_elem", "method_spec"):
                symbols.append(_definition(
                    source, ts.text_of(source, element.child_by_field_name("name")), "method",
                    element, parent=name))


def _fields(source: bytes, body, owner: str, symbols: list) -> None:
    """A struct's exported fields with their comments, as ``go doc`` shows the struct (an
    unexported field is not part of its API; an embedded type has no name of its own)."""
    for field in body.named_children:
        if field.type != "field_declaration":
            continue
        for name in field.children_by_field_name("name"):
            text = ts.text_of(source, name)
            if text[:1].isupper():
                symbols.append(_with_line_comment(
                    source, _definition(source, text, "variable", field, parent=owner, detail="field"), field))


def _values(source: bytes, declaration, kind: str, symbols: list) -> None:
    specs = [child for child in declaration.named_children if child.type.endswith("_spec")]
    for child in declaration.named_children:
        if child.type.endswith("_spec_list"):
            specs += [spec for spec in child.named_children if spec.type.endswith("_spec")]
    # ``var ( // Doc.\n X = 1 )``: in a parenthesized group each value has its own comment
    grouped = len(specs) > 1 or any(child.type == "(" or child.type.endswith("_spec_list")
                                    for child in declaration.children)
    # the group's own comment (``// Annotations.\nconst ( ... )``) documents each name in it
    # that has none of its own, as ``go doc`` prints it under the group
    group_doc = ts.doc_comment(source, declaration) if grouped else ""
    for spec in specs:
        anchor = spec if grouped else declaration
        for name in spec.children_by_field_name("name"):
            symbol = _with_line_comment(source, _definition(source, ts.text_of(source, name), kind, name,
                                                            anchor=anchor, with_signature=False), anchor)
            if group_doc and "doc" not in symbol:
                symbol["doc"] = group_doc
            symbols.append(symbol)


def _with_line_comment(source: bytes, symbol: dict[str, Any], node: Node) -> dict[str, Any]:
    """``symbol``, documented by the comment ending its line (``Invalid = iota // Invalid UUID``,
    go/ast's ``Comment``) when no comment above documents it."""
    if "doc" not in symbol and (comment := ts.trailing_comment(source, node)):
        symbol["doc"] = comment
    return symbol


def extract_go_mod(text: str) -> dict[str, Any]:
    """``go.mod``: the module path (an import of kind ``module``) and the required modules."""
    symbols: list[dict[str, Any]] = []
    imports: list[dict[str, Any]] = []
    in_block = False
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.split("//", 1)[0].strip()
        words = line.split()
        if not words:
            continue
        if in_block:
            if words[0] == ")":
                in_block = False
            else:
                imports.append({"module": words[0], "line": number, "kind": "require"})
            continue
        if words[0] == "module" and len(words) > 1:
            module = words[1].strip('"')
            imports.append({"module": module, "line": number, "kind": "module"})
            symbols.append({"name": module, "kind": "namespace", "line": number, "detail": "module"})
        elif words[0] == "require":
            if words[1:2] == ["("]:
                in_block = True
            elif len(words) > 1:
                imports.append({"module": words[1], "line": number, "kind": "require"})
    return {"symbols": symbols, "imports": imports, "docstring": ""}


class Resolver:
    """Go import paths to the files of the package folder they name.

    A path under a module of a ``go.mod`` in the tree maps to the folder below
    that ``go.mod``; else a path whose first element is a domain is looked up
    as the longest tail that is a folder of Go files; one without a dot is the
    standard library's.
    """

    def __init__(self, languages: dict[str, str], imports: dict[str, list]) -> None:
        self.modules: list[tuple[str, str]] = []  # (module path, folder of its go.mod)
        go_files = []
        for path, language in languages.items():
            if language == "gomod":
                for entry in imports.get(path) or []:
                    if isinstance(entry, dict) and entry.get("kind") == "module":
                        self.modules.append((str(entry.get("module", "")), path.rpartition("/")[0]))
            elif language == "go" and not path.endswith("_test.go"):
                go_files.append(path)
        self.modules.sort(key=lambda item: -len(item[0]))
        self._tails: dict[str, tuple[str | None, str]] = {}
        self.package_files: dict[str, str] = {}
        for path in sorted(go_files, key=lambda p: (p.rpartition("/")[2] != "doc.go", p)):
            self.package_files.setdefault(path.rpartition("/")[0], path)
        self.by_last: dict[str, list[str]] = defaultdict(list)  # a folder's last name -> folders
        for folder in sorted(self.package_files):
            self.by_last[folder.rpartition("/")[2]].append(folder)

    def answer(self, entry: dict, path: str) -> tuple[str | None, str]:
        kind, module = entry.get("kind"), str(entry.get("module", ""))
        if kind == "module":
            return path, "repo"  # the module this go.mod declares is this file's own
        if kind == "require":
            return None, "third_party"
        for prefix, folder in self.modules:
            if module == prefix or module.startswith(prefix + "/"):
                rest = module[len(prefix):].strip("/")
                target = "/".join(part for part in (folder, rest) if part)
                found = self.package_files.get(target)
                return found, "repo"
        if "." not in module.partition("/")[0]:
            return None, "stdlib"
        if module not in self._tails:
            self._tails[module] = self._tail(module)
        return self._tails[module]

    def _tail(self, module: str) -> tuple[str | None, str]:
        """The package folder that ends with the longest tail of two or more elements of an
        import path outside the modules (``vendor/github.com/a/b`` for ``github.com/a/b``)."""
        parts = module.split("/")
        folders = self.by_last.get(parts[-1], [])
        for start in range(0, len(parts) - 1):
            tail = "/".join(parts[start:])
            candidates = [folder for folder in folders if folder == tail or folder.endswith("/" + tail)]
            if candidates:
                return self.package_files[min(candidates, key=lambda f: (f.count("/"), f))], "repo"
        return None, "third_party"
