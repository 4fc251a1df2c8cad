"""Lua: functions (``function M.f``, ``function M:m``, ``local function f``, ``f = function``)
and modules loaded with ``require``."""
from __future__ import annotations

from typing import Any

from tree_sitter import Node

from kwdocs.extract import treesitter as ts
from kwdocs.extract.paths import PathIndex

GRAMMAR = "tree_sitter_lua"


def extract(text: str, path: str) -> dict[str, Any]:
    """Definitions and ``require`` imports of a Lua file."""
    return ts.extract_tree(text, GRAMMAR, _walk)


def _walk(source: bytes, root: Node, symbols: list[dict[str, Any]], imports: list[dict[str, Any]]) -> None:
    """The functions, assignments of functions and ``require`` calls anywhere in a Lua file's tree."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "function_declaration":
            name = node.child_by_field_name("name")
            symbols.append(_function(source, node, name, node))
        elif node.type == "assignment_statement":
            _assignment(source, node, symbols)
        elif node.type == "field":
            value = node.child_by_field_name("value")
            name = node.child_by_field_name("name")
            if value is not None and name is not None and value.type == "function_definition":
                symbols.append(_function(source, value, name, node))  # ``{ __call = function() }``
        elif node.type == "function_call":
            _require(source, node, symbols, imports)
        stack.extend(reversed(node.named_children))


def _function(source: bytes, node, name_node, anchor) -> dict[str, Any]:
    """``M.sub.f`` is ``f`` of ``M.sub``; ``M:m`` is method ``m`` of ``M``."""
    full = ts.text_of(source, name_node)
    method = ":" in full
    parent, _, name = full.replace(":", ".").rpartition(".")
    if anchor.parent is not None and anchor.parent.type == "variable_declaration":
        anchor = anchor.parent
    symbol = ts.definition(source, name, "method" if method else "function", node, anchor=anchor,
                           body=_after_parameters(node), parent=parent)
    symbol["line"] = ts.line_of(name_node) if name_node is not None else symbol["line"]
    return symbol


def _assignment(source: bytes, node, symbols: list) -> None:
    """``local f = function(...)``, ``M.f = function(...)``."""
    targets = next((c for c in node.named_children if c.type == "variable_list"), None)
    values = next((c for c in node.named_children if c.type == "expression_list"), None)
    if targets is None or values is None:
        return
    for target, value in zip(targets.named_children, values.named_children):
        if value.type == "function_definition":
            symbol = _function(source, value, target, node)
            symbol["signature"] = f"{ts.text_of(source, target)} = " + ts.signature(
                source, value, _after_parameters(value))
            symbols.append(symbol)


def _require(source: bytes, node, symbols: list, imports: list) -> None:
    if ts.text_of(source, node.child_by_field_name("name")) != "require":
        return
    arguments = node.child_by_field_name("arguments")
    strings = [c for c in (arguments.named_children if arguments is not None else [])
               if c.type == "string"]
    if len(strings) == 1:
        module = ts.unquote(ts.text_of(source, strings[0]))
        imports.append({"module": module, "line": ts.line_of(node), "kind": "require"})
        symbols.append({"name": module, "kind": "import", "line": ts.line_of(node)})


def _after_parameters(node):
    """Where the signature stops: the node after the parameters (the body, or ``end``)."""
    parameters = node.child_by_field_name("parameters")
    return parameters.next_sibling if parameters is not None else None


class Resolver:
    """``require "a.b"`` to ``a/b.lua`` or ``a/b/init.lua`` under any folder, nearest first."""

    def __init__(self, languages: dict[str, str], imports: dict[str, list]) -> None:
        self.index = PathIndex(path for path, language in languages.items() if language == "lua")

    def answer(self, entry: dict, path: str) -> tuple[str | None, str]:
        module = str(entry.get("module", "")).replace(".", "/")
        for tail in (f"{module}.lua", f"{module}/init.lua"):
            found = self.index.tail(tail, path)
            if found is not None:
                return found, "repo"
        top = module.partition("/")[0]
        return None, "stdlib" if top in ("string", "table", "math", "io", "os", "coroutine",
                                         "debug", "utf8", "package", "bit32", "ffi", "jit") else "third_party"
