"""Makefiles: targets, variables, ``define`` macros, included makefiles, and the files an
``install`` target copies."""
from __future__ import annotations

import posixpath
import re
from typing import Any

from tree_sitter import Node

from kwdocs.extract import treesitter as ts

GRAMMAR = "tree_sitter_make"
_VARIABLES = ("variable_assignment", "shell_assignment")
_ASSIGNMENT = re.compile(r"\s*(?:(?:export|override)\s+)?([A-Za-z_][\w.-]*)\s*(?:[:+?!]|::)?=")
_BRANCHES = ("conditional", "else_directive", "elsif_directive")
_SPECIAL = frozenset((".PHONY", ".SUFFIXES", ".DEFAULT", ".PRECIOUS", ".INTERMEDIATE",
                      ".SECONDARY", ".SECONDEXPANSION", ".DELETE_ON_ERROR", ".IGNORE",
                      ".LOW_RESOLUTION_TIME", ".SILENT", ".EXPORT_ALL_VARIABLES",
                      ".NOTPARALLEL", ".ONESHELL", ".POSIX", ".NOTINTERMEDIATE"))


# ``install -m 644 include/a.h $(DESTDIR)...``, ``cp include/*.h ...``, ``$(INSTALL_DATA) a.h ...``
_COPY_COMMAND = re.compile(r"^(?:install|cp|\$[({]INSTALL\w*[)}]|\$[({]CP[)}])$")
_COMMAND_SPLIT = re.compile(r"&&|\|\||;")


def _installed(source: bytes, recipe: Any, folder: str) -> list[dict[str, Any]]:
    """The tree's files that the copy commands of an install target's recipe name, per line: a
    plain relative path (no variable, no option); ``dir/*.h`` is every ``.h`` under ``dir``."""
    found: list[dict[str, Any]] = []
    for line_node in recipe.named_children:
        if line_node.type != "recipe_line":
            continue
        files: list[str] = []
        folders: dict[str, list[str]] = {}
        for command in _COMMAND_SPLIT.split(ts.text_of(source, line_node).replace("\\\n", " ")):
            words = command.split()
            if words:   # ``@install``, ``-cp``: echo and error prefixes
                words[0] = words[0].lstrip("@-+")
            if not words or not _COPY_COMMAND.match(words[0]):
                continue
            for word in words[1:]:
                word = word.strip("'\"")
                if (word.startswith(("-", "/")) or "$" in word or "." not in posixpath.basename(word)
                        or word.isdigit()):
                    continue
                path = posixpath.normpath(posixpath.join(folder, word))
                if path.startswith(".."):
                    continue
                if "*" in posixpath.dirname(path):
                    continue
                if "*" in path:
                    folders.setdefault(posixpath.dirname(path), []).append(posixpath.basename(path))
                else:
                    files.append(path)
        entry: dict[str, Any] = {"line": ts.line_of(line_node)}
        if files:
            entry["files"] = files
        for where, match in folders.items():
            found.append({"line": entry["line"], "folders": [where], "match": match})
        if files:
            found.append(entry)
    return found


def extract(text: str, path: str) -> dict[str, Any]:
    """Targets, variables, includes and installed files of a Makefile."""
    installs: list[dict[str, Any]] = []
    found = ts.extract_tree(text, GRAMMAR, lambda source, root, symbols, imports: _walk(
        source, root, symbols, imports, installs, posixpath.dirname(path)))
    if installs:
        found["installs"] = installs
    return found


def _walk(source: bytes, root: Node, symbols: list[dict[str, Any]], imports: list[dict[str, Any]],
          installs: list[dict[str, Any]], folder: str) -> None:
    """``extract``'s walk; the files ``install`` targets copy go to ``installs`` (``folder``: the Makefile's)."""
    stack = list(reversed(root.named_children))
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
                if name.startswith("install") and recipe is not None:   # ``install:``, ``install-headers:``
                    installs.extend(_installed(source, recipe, folder))
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
