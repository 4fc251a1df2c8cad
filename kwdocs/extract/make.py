"""Makefiles: targets, variables, ``define`` macros and included makefiles."""
from __future__ import annotations

import re
from typing import Any

from kwdocs.extract import treesitter as ts

GRAMMAR = "tree_sitter_make"
_VARIABLES = ("variable_assignment", "shell_assignment")
_ASSIGNMENT = re.compile(r"\s*(?:(?:export|override)\s+)?([A-Za-z_][\w.-]*)\s*(?:[:+?!]|::)?=")
_BRANCHES = ("conditional", "else_directive", "elsif_directive")
_SPECIAL = frozenset((".PHONY", ".SUFFIXES", ".DEFAULT", ".PRECIOUS", ".INTERMEDIATE",
                      ".SECONDARY", ".SECONDEXPANSION", ".DELETE_ON_ERROR", ".IGNORE",
                      ".LOW_RESOLUTION_TIME", ".SILENT", ".EXPORT_ALL_VARIABLES",
                      ".NOTPARALLEL", ".ONESHELL", ".POSIX", ".NOTINTERMEDIATE"))


def extract(text: str, path: str) -> dict[str, Any]:
    """Targets, variables and includes of a Makefile."""
    parsed = ts.parse(text, GRAMMAR)
    if parsed is None:
        return ts.too_large(text)
    tree, source = parsed
    symbols: list[dict[str, Any]] = []
    imports: list[dict[str, Any]] = []
    stack = list(reversed(tree.root_node.named_children))
    while stack:
        node = stack.pop()
        kind = node.type
        if kind == "rule":
            targets = next((c for c in node.named_children if c.type == "targets"), None)
            recipe = next((c for c in node.named_children if c.type == "recipe"), None)
            rule_line = ts.signature(source, node, recipe)  # ``all: server docs``
            for word in targets.named_children if targets is not None else []:
                name = ts.text_of(source, word)
                if name not in _SPECIAL:
                    symbol = ts.definition(source, name, "target", word, anchor=node, with_signature=False)
                    if rule_line:
                        symbol["signature"] = rule_line
                    symbols.append(symbol)
            pattern = node.child_by_field_name("target")  # ``$(OBJS): %.o: %.c``
            for word in pattern.named_children if pattern is not None else []:
                symbols.append(ts.definition(source, ts.text_of(source, word), "target", word,
                                             with_signature=False))
            # the grammar puts an ``ifeq`` block after a recipe inside the rule
            for recipe in node.named_children:
                if recipe.type == "recipe":
                    stack.extend(reversed([c for c in recipe.named_children if c.type == "conditional"]))
        elif kind in _VARIABLES or kind == "define_directive":
            name_node = node.child_by_field_name("name")
            if name_node is not None:  # ``A?=b`` gives the word ``A?``
                symbols.append(ts.definition(source, ts.text_of(source, name_node).rstrip("?:+!"),
                                             "macro" if kind == "define_directive" else "variable",
                                             node, with_signature=kind != "define_directive"))
            targets = node.child_by_field_name("target_or_pattern")
            for word in targets.named_children if targets is not None else []:
                symbols.append(ts.definition(source, ts.text_of(source, word), "target", word,
                                             with_signature=False))  # ``debug: CFLAGS += -g``
        elif kind == "recipe_line" and node.parent is not None and node.parent.type in _BRANCHES:
            # an indented assignment inside ``ifeq`` reads as a recipe line to the grammar
            match = _ASSIGNMENT.match(ts.text_of(source, node))
            if match:
                symbols.append({"name": match.group(1), "kind": "variable", "line": ts.line_of(node)})
        elif kind == "include_directive":
            files = node.child_by_field_name("filenames")
            for word in files.named_children if files is not None else []:
                module = ts.text_of(source, word)
                imports.append({"module": module, "line": ts.line_of(node), "kind": "include"})
                symbols.append({"name": module, "kind": "include", "line": ts.line_of(node)})
        if kind in _BRANCHES:
            stack.extend(reversed(node.named_children))  # both branches define
    return ts.finish(symbols, imports, ts.leading_doc(source, tree.root_node), tree)
