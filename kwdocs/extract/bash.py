"""Shell scripts on the tree-sitter Bash grammar: functions and sourced files.

Kept beside the line scanner of ``kwdocs.extract.shell`` for comparison
(``bench/language_recall.py``); the registry says which one shell files use.
"""
from __future__ import annotations

from typing import Any

from kwdocs.extract import treesitter as ts
from kwdocs.extract.shell import leading_comment

GRAMMAR = "tree_sitter_bash"


def extract(text: str, path: str) -> dict[str, Any]:
    """Functions and sourced scripts of a shell script."""
    parsed = ts.parse(text, GRAMMAR)
    if parsed is None:
        return ts.too_large(text)
    tree, source = parsed
    symbols: list[dict[str, Any]] = []
    imports: list[dict[str, Any]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "function_definition":
            symbols.append(ts.definition(source, ts.text_of(source, node.child_by_field_name("name")),
                                         "function", node, body=node.child_by_field_name("body")))
        elif node.type == "command":
            name = ts.text_of(source, node.child_by_field_name("name"))
            arguments = node.children_by_field_name("argument")
            if name in ("source", ".") and arguments:
                module = ts.unquote(ts.text_of(source, arguments[0]))
                imports.append({"module": module, "line": ts.line_of(node), "kind": "include"})
                symbols.append({"name": module, "kind": "include", "line": ts.line_of(node)})
        stack.extend(reversed(node.named_children))
    return ts.finish(symbols, imports, leading_comment(text), tree)
