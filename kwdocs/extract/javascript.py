"""JavaScript, TypeScript and TSX: functions, classes, methods, interfaces, types, exports, imports.

``import ... from``, ``export ... from``, ``require(...)`` and ``import(...)``
are imports; relative ones link to the file they name, with the suffixes and
``index`` files Node and TypeScript try, and ``paths`` of a ``tsconfig.json``.
"""
from __future__ import annotations

import json
import re
from typing import Any

from kwdocs.extract import data, not_doc, treesitter as ts
from kwdocs.extract.paths import PathIndex, joined

CONFIG_NAMES = ("tsconfig.json", "jsconfig.json")

_GRAMMARS = {".ts": ("tree_sitter_typescript", "language_typescript"),
             ".mts": ("tree_sitter_typescript", "language_typescript"),
             ".cts": ("tree_sitter_typescript", "language_typescript"),
             ".tsx": ("tree_sitter_typescript", "language_tsx")}
_JAVASCRIPT = ("tree_sitter_javascript", "language")
# Flow's type annotations are TypeScript's syntax nearly everywhere, and Flow code is often JSX
_FLOW = re.compile(r"\A(?:\s*(?://[^\n]*|/\*.*?\*/))*?\s*(?://|/\*+)\s*@flow\b", re.DOTALL)
_FUNCTIONS = {"function_declaration": "", "generator_function_declaration": "generator",
              "function_signature": "", "function": "", "function_expression": "",
              "generator_function": "generator"}
_CLASSES = {"class_declaration": "", "abstract_class_declaration": "abstract", "class": ""}
_TYPES = {"interface_declaration": ("class", "interface"), "enum_declaration": ("class", "enum"),
          "type_alias_declaration": ("type", ""), "internal_module": ("namespace", ""),
          "module": ("namespace", "")}
_METHODS = ("method_definition", "method_signature", "abstract_method_signature")
_VALUE_FUNCTIONS = ("arrow_function", "function", "function_expression", "generator_function")
_BODIES = ("class_body", "interface_body", "object_type")


# a file's first comment right on one of these documents it, not the file (``/** Clones a value. */``
# on ``export declare function Clone``)
_DECLARATIONS = frozenset({"export_statement", "function_declaration", "generator_function_declaration",
                           "class_declaration", "abstract_class_declaration", "interface_declaration",
                           "type_alias_declaration", "enum_declaration", "lexical_declaration",
                           "variable_declaration", "ambient_declaration", "function_signature"})


def extract(text: str, path: str) -> dict[str, Any]:
    """Definitions and imports of a JavaScript or TypeScript file (or of a ``tsconfig.json``)."""
    if path.rpartition("/")[2] in CONFIG_NAMES:
        return _config(text, path)
    suffix = path[path.rfind("."):].lower() if "." in path else ""
    grammar = _GRAMMARS.get(suffix, _JAVASCRIPT)
    if grammar is _JAVASCRIPT and "@flow" in text[:4096] and _FLOW.match(text[:4096]):
        grammar = _GRAMMARS[".tsx"]
    parsed = ts.parse(text, *grammar)
    if parsed is None:
        return ts.too_large(text)
    tree, source = parsed
    walker = _Walker(source)
    walker.walk(tree.root_node, "", True)
    _merged_docs(walker.symbols)
    return ts.finish(walker.symbols, walker.imports, ts.leading_doc(source, tree.root_node, _DECLARATIONS), tree)


class _Walker:
    def __init__(self, source: bytes) -> None:
        self.source = source
        self.symbols: list[dict[str, Any]] = []
        self.imports: list[dict[str, Any]] = []
        # inside a function's body, the methods of an object literal handed to a call are the
        # call's argument, not the owner's API (``res.redirect``'s ``this.format({text:
        # function () ...})``); a literal it returns is (a factory's ``return {send() {}}``)
        self.in_function = 0

    def name(self, node) -> str:
        return ts.text_of(self.source, node.child_by_field_name("name"))

    def define(self, name: str, kind: str, node, **options: Any) -> dict[str, Any]:
        """``ts.definition``, documented by the JSDoc nearest above it when there is one: that
        block, read as Markdown, is what TypeScript and TypeDoc take (``//`` lines are not docs)."""
        symbol = ts.definition(self.source, name, kind, node, **options)
        anchor = options.get("anchor") or node
        jsdoc = _jsdoc(self.source, anchor)
        # other comments between: not its doc; a blank line between: its doc all the same (as
        # TypeScript reads a JSDoc), which the comment lines right above did not find
        if jsdoc is not None and (jsdoc is not anchor.prev_sibling or jsdoc.end_point[0] < anchor.start_point[0] - 1):
            doc = ts.clean_comment(ts.text_of(self.source, jsdoc).split("\n"))
            symbol.pop("doc", None)
            if doc and not not_doc.is_licence(doc):
                symbol["doc"] = doc
        if jsdoc is not None and symbol.get("doc"):
            symbol["doc_parser"] = "jsdoc_doc"
        return symbol

    def walk(self, node, parent: str, top: bool) -> None:
        """Definitions anywhere (nested functions too, as ctags lists them); variables at the top."""
        for child in node.named_children:
            self.visit(child, parent, top, child)

    def visit(self, node, parent: str, top: bool, anchor) -> None:
        kind = node.type
        source = self.source
        if kind == "export_statement":
            self.module_source(node, "export")
            before = len(self.symbols)
            for inner in node.named_children:
                if inner.type == "export_clause":
                    self.export_clause(inner)
                elif inner.type == "namespace_export" and inner.named_children:  # ``export * as iso from``
                    self.symbols.append({"name": ts.unquote(ts.text_of(source, inner.named_children[0])),
                                         "kind": "export", "line": ts.line_of(inner)})
                else:
                    self.visit(inner, parent, top, node)
            for symbol in self.symbols[before:]:  # what this statement declares, not what nests in it
                if symbol.get("parent", "") == parent and symbol["kind"] not in ("import", "export"):
                    detail = symbol.get("detail") or ("class" if symbol["kind"] == "class" else "")
                    symbol["detail"] = f"exported {detail}".strip()
            if node.child_by_field_name("value") is not None or _is_default(node):
                if len(self.symbols) == before:  # ``export default {...}``: nothing else names it
                    self.symbols.append({"name": "default", "kind": "export", "line": ts.line_of(node)})
            return
        if kind == "import_statement":
            self.module_source(node, "import")
            return
        if kind == "ambient_declaration":  # ``export declare function f(...)``: documented above ``export``
            for inner in node.named_children:
                self.visit(inner, parent, top, anchor)
            return
        if kind in _FUNCTIONS and node.child_by_field_name("name") is not None:
            self.symbols.append(self.define(self.name(node), "function", node, anchor=anchor,
                                            body=node.child_by_field_name("body"),
                                            detail=_FUNCTIONS[kind], parent=parent))
            self.walk_body(node, parent)
            return
        if kind in _CLASSES and node.child_by_field_name("name") is not None:
            name = self.name(node)
            self.symbols.append(self.define(name, "class", node, anchor=anchor,
                                            body=node.child_by_field_name("body"),
                                            detail=_CLASSES[kind], parent=parent))
            self.walk(node.child_by_field_name("body") or node, name, False)
            return
        if kind in _TYPES:
            our_kind, detail = _TYPES[kind]
            name = ts.unquote(self.name(node))  # ``declare module "fs"`` names the module ``fs``
            body = node.child_by_field_name("body")
            if kind == "type_alias_declaration":    # ``type Options = { ... }``: its members, as TypeDoc's
                value = node.child_by_field_name("value")      # "Type declaration" lists them
                body = value if value is not None and value.type == "object_type" else None
            self.symbols.append(self.define(name, our_kind, node, anchor=anchor, body=body,
                                            detail=detail, parent=parent))
            if body is not None and kind == "enum_declaration":
                self.enum_members(body, name)
            elif body is not None:
                self.walk(body, name, kind not in ("interface_declaration", "type_alias_declaration"))
            return
        if kind == "construct_signature":  # ``new (x: T): C`` in an interface or declaration
            self.symbols.append(self.define("new", "method", node, anchor=anchor, parent=parent))
            return
        if kind in _METHODS and not self.argument_member(node):
            self.symbols.append(self.define(self.name(node), "method", node, anchor=anchor,
                                            body=node.child_by_field_name("body"), parent=parent))
            self.walk_body(node, parent)
            return
        if kind in ("lexical_declaration", "variable_declaration"):
            constant = ts.text_of(source, node).startswith("const")
            for declarator in node.named_children:
                if declarator.type == "variable_declarator":
                    self.declarator(declarator, parent, top, anchor, constant)
            return
        if kind == "assignment_expression" and self.assignment(node, anchor):
            return
        if kind == "pair" and not self.argument_member(node):
            value = node.child_by_field_name("value")
            if value is not None and value.type in _VALUE_FUNCTIONS:
                name = ts.unquote(ts.text_of(source, node.child_by_field_name("key")))
                self.symbols.append(self.define(name, "method", node, anchor=anchor,
                                                body=value.child_by_field_name("body"), parent=parent))
                self.walk_body(value, parent)
                return
        if kind in ("call_expression", "new_expression"):
            self.call(node)
        if kind in ("public_field_definition", "field_definition", "property_signature"):
            value = node.child_by_field_name("value")
            name = ts.text_of(source, node.child_by_field_name("name") or node.child_by_field_name("property"))
            if value is not None and value.type in _VALUE_FUNCTIONS:
                self.symbols.append(self.define(name, "method", node, anchor=anchor,
                                                body=value.child_by_field_name("body"), parent=parent))
            elif parent and name and not _private(source, node, name):
                # a class's or interface's property, as TypeDoc lists it (private ones are not its API)
                self.symbols.append(self.define(name, "variable", node, anchor=anchor,
                                                body=value, detail="property", parent=parent))
            if kind == "property_signature":    # a type: ``{request: Request}`` in it is no member of the owner
                return
        self.walk(node, parent, False)

    def enum_members(self, body, parent: str) -> None:
        """An enum's members with their values, as TypeDoc lists them (``Red = 0``, ``Green``)."""
        for member in body.named_children:
            named = member.child_by_field_name("name") if member.type == "enum_assignment" else member
            if named is None or named.type not in ("property_identifier", "string"):
                continue
            symbol = self.define(ts.unquote(ts.text_of(self.source, named)), "constant", member,
                                 with_signature=False, detail="enum", parent=parent)
            value = member.child_by_field_name("value") if member is not named else None
            if value is not None:
                symbol["signature"] = f"= {ts.signature(self.source, value, None)}"
            self.symbols.append(symbol)

    def argument_member(self, node) -> bool:
        """Whether ``node`` is a member of an object literal passed to a call in a function's body."""
        literal = node.parent
        return (self.in_function > 0 and literal is not None and literal.type == "object"
                and literal.parent is not None and literal.parent.type == "arguments")

    def walk_body(self, node, parent: str) -> None:
        self.walk_function(node.child_by_field_name("body"), parent)

    def walk_function(self, body, parent: str) -> None:
        """What a function's ``body`` defines."""
        if body is not None:
            self.in_function += 1
            try:
                self.walk(body, parent, False)
            finally:
                self.in_function -= 1

    def declarator(self, node, parent: str, top: bool, anchor, constant: bool) -> None:
        target = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        source = self.source
        if target is not None and target.type == "identifier" and value is not None:
            name = ts.text_of(source, target)
            if value.type in _VALUE_FUNCTIONS:
                symbol = self.define(name, "function", node, anchor=anchor,
                                     body=value.child_by_field_name("body"), parent=parent)
                self.symbols.append(symbol)
                self.walk_body(value, parent)
                return
            if value.type in ("call_expression", "parenthesized_expression") and _defines_class(
                    source, value, name):
                self.symbols.append(self.define(name, "class", node, anchor=anchor,
                                                with_signature=False, parent=parent))
                self.visit(value, name, False, value)
                return
            if value.type == "class":
                self.symbols.append(self.define(name, "class", node, anchor=anchor,
                                                body=value.child_by_field_name("body"), parent=parent))
                self.walk(value.child_by_field_name("body") or value, name, False)
                return
        if top and target is not None and target.type == "identifier" and not _required(source, value):
            self.symbols.append(self.define(ts.text_of(source, target),
                                            "constant" if constant else "variable", node,
                                            anchor=anchor, with_signature=False, parent=parent))
        if value is not None:
            self.visit(value, parent, False, value)

    def assignment(self, node, anchor) -> bool:
        """``exports.f = function``, ``A.prototype.m = function``, ``f = () =>``: a definition."""
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        source = self.source
        if (left is not None and right is not None and right.type == "object"
                and ts.text_of(source, left) in ("module.exports", "exports")):
            for entry in right.named_children:  # ``module.exports = { Router, create: make }``
                key = entry if entry.type == "shorthand_property_identifier" else entry.child_by_field_name("key")
                if key is not None:
                    self.symbols.append({"name": ts.unquote(ts.text_of(source, key)), "kind": "export",
                                         "line": ts.line_of(entry)})
            self.walk(right, "", False)
            return True
        if left is None or right is None or right.type not in (*_VALUE_FUNCTIONS, "class"):
            return False
        if left.type == "member_expression":
            owner = ts.text_of(source, left.child_by_field_name("object"))
            name = ts.text_of(source, left.child_by_field_name("property"))
            own_name = right.child_by_field_name("name")
            if name == "exports" and own_name is not None:  # ``module.exports = function query(``
                owner, name = "", ts.text_of(source, own_name)
            kind = "method" if owner.endswith(".prototype") else "function"
            owner = owner.removesuffix(".prototype")
        elif left.type == "identifier":
            owner, name, kind = "", ts.text_of(source, left), "function"
        else:
            return False  # ``a[b] = function``: no name to list
        outer = node    # ``res.contentType = res.type = function``: documented above the statement
        while outer.parent is not None and outer.parent.type == "assignment_expression":
            outer = outer.parent
        anchor = outer.parent if outer.parent is not None and outer.parent.type == "expression_statement" else anchor
        self.symbols.append(self.define(name, "class" if right.type == "class" else kind, node,
                                        anchor=anchor, body=right.child_by_field_name("body"),
                                        parent=owner))
        if right.type == "class":
            self.walk(right.child_by_field_name("body") or right, name, False)
        else:
            self.walk_function(right.child_by_field_name("body"), owner)
        return True

    def export_clause(self, node) -> None:
        """``export { a, b as c }``: the names other modules import."""
        for specifier in node.named_children:
            if specifier.type == "export_specifier":
                name = specifier.child_by_field_name("alias") or specifier.child_by_field_name("name")
                self.symbols.append({"name": ts.unquote(ts.text_of(self.source, name)), "kind": "export",
                                     "line": ts.line_of(specifier)})

    def module_source(self, node, kind: str) -> None:
        """``import x from "m"`` / ``export * from "m"``: the module named."""
        string = node.child_by_field_name("source")
        if string is not None:
            self.add_import(ts.unquote(ts.text_of(self.source, string)), node, kind)

    def call(self, node) -> None:
        """``require("m")`` and ``import("m")`` with a literal name."""
        function = node.child_by_field_name("function") or node.child_by_field_name("constructor")
        arguments = node.child_by_field_name("arguments")
        if function is None or arguments is None or len(arguments.named_children) != 1:
            return
        callee = ts.text_of(self.source, function)
        argument = arguments.named_children[0]
        if callee in ("require", "import") and argument.type == "string":
            self.add_import(ts.unquote(ts.text_of(self.source, argument)), node, callee)

    def add_import(self, module: str, node, kind: str) -> None:
        line = ts.line_of(node)
        self.imports.append({"module": module, "line": line, "kind": kind})
        self.symbols.append({"name": module, "kind": "import", "line": line})


def _jsdoc(source: bytes, node):
    """The ``/** */`` comment nearest above ``node`` in the comments right on it, if any; or the
    one right before it past blank lines, as TypeScript and TypeDoc attach it, unless that one
    opens the file (only comments before it: the file's own, see ``ts.leading_doc``)."""
    sibling = node.prev_sibling
    if (sibling is not None and sibling.type == "comment" and sibling.end_point[0] < node.start_point[0] - 1
            and _is_jsdoc(source, sibling)):
        before = sibling.prev_sibling
        while before is not None and "comment" in before.type:
            before = before.prev_sibling
        return sibling if before is not None else None
    expected = node.start_point[0]
    while sibling is not None and "comment" in sibling.type and sibling.end_point[0] >= expected - 1:
        if _is_jsdoc(source, sibling):
            return sibling
        expected = sibling.start_point[0]
        sibling = sibling.prev_sibling
    return None


def _required(source: bytes, value) -> bool:
    """``require("m")``, ``require("m").name`` or ``require("m")(options)``: what ``var x = ...``
    binds is another module's, an import as ``import x from "m"`` is, not a definition of this file."""
    while value is not None and value.type in ("member_expression", "call_expression"):
        if value.type == "call_expression":
            function = value.child_by_field_name("function")
            arguments = value.child_by_field_name("arguments")
            if (function is not None and function.type == "identifier" and ts.text_of(source, function) == "require"
                    and arguments is not None and len(arguments.named_children) == 1
                    and arguments.named_children[0].type == "string"):
                return True
            value = function
        else:
            value = value.child_by_field_name("object")
    return False


def _is_jsdoc(source: bytes, comment) -> bool:
    return source.startswith(b"/**", comment.start_byte) and not source.startswith(b"/**/", comment.start_byte)


# what declaration merging joins: a type (alias, interface, namespace) and a value of one name
_MERGING = frozenset({"function", "class", "type", "namespace", "constant", "variable"})


def _merged_docs(symbols: list[dict[str, Any]]) -> None:
    """A declaration without a JSDoc of its own that TypeScript merges with one of another kind
    (``type input<T>`` beside ``function input``) is documented by that one's JSDoc, as the
    merged symbol is (in the editor's hover and in TypeDoc)."""
    documented: dict[tuple[str, str], dict[str, Any]] = {}
    for symbol in symbols:
        if symbol.get("doc_parser") and symbol["kind"] in _MERGING and symbol.get("detail") != "property":
            documented.setdefault((symbol.get("parent", ""), symbol["name"]), symbol)
    for symbol in symbols:
        donor = documented.get((symbol.get("parent", ""), symbol["name"]))
        if (donor is not None and not symbol.get("doc_parser") and symbol["kind"] in _MERGING
                and symbol.get("detail") != "property" and donor["kind"] != symbol["kind"] and donor.get("doc")):
            symbol["doc"] = donor["doc"]
            symbol["doc_parser"] = "jsdoc_doc"


def _private(source: bytes, node, name: str) -> bool:
    """``private x`` (TypeScript) or ``#x`` (JavaScript): a member outside the class's API."""
    return name.startswith("#") or any(
        child.type == "accessibility_modifier" and ts.text_of(source, child) == "private" for child in node.children)


def _is_default(node) -> bool:
    return any(child.type == "default" for child in node.children)


def _defines_class(source: bytes, value, name: str) -> bool:
    """``var A = (function (_super) { function A() {...} ... return A; }(Base))``: a class as
    compilers to ES5 write it."""
    text = source[value.start_byte:min(value.end_byte, value.start_byte + 400)]
    return text.lstrip(b"(").startswith(b"function") and f"function {name}(".encode() in text


_JSONC = re.compile(r'"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*.*?\*/', re.S)
_TRAILING_COMMA = re.compile(r",(?=\s*[}\]])")


def _config(text: str, path: str) -> dict[str, Any]:
    """A ``tsconfig.json``: its keys, and as imports the file it ``extends`` and each
    ``paths`` alias (``"@app/*": ["src/app/*"]``), which imports in the project use."""
    plain = _TRAILING_COMMA.sub(" ", _JSONC.sub(_blank_comment, text))  # JSON with comments
    found = data.extract(plain, path)
    try:
        config = json.loads(plain)
    except ValueError:
        return found
    options = config.get("compilerOptions") if isinstance(config, dict) else None
    options = options if isinstance(options, dict) else {}
    imports: list[dict[str, Any]] = []
    extends = config.get("extends") if isinstance(config, dict) else None
    for parent in ([extends] if isinstance(extends, str) else extends if isinstance(extends, list) else []):
        if isinstance(parent, str):
            imports.append({"module": parent, "line": _line_of(text, f'"{parent}"'), "kind": "extends"})
    base = options.get("baseUrl") if isinstance(options.get("baseUrl"), str) else "."
    paths = options.get("paths")
    for alias, targets in (paths.items() if isinstance(paths, dict) else []):
        if isinstance(targets, list) and all(isinstance(target, str) for target in targets):
            imports.append({"module": alias, "line": _line_of(text, f'"{alias}"'), "kind": "paths",
                            "names": targets, "base": base})
    if isinstance(options.get("baseUrl"), str):  # bare imports are looked up below it, as ``"*": ["*"]``
        imports.append({"module": "*", "line": _line_of(text, '"baseUrl"'), "kind": "paths",
                        "names": ["*"], "base": base})
    found["imports"] = imports
    return found


def _blank_comment(match: re.Match) -> str:
    token = match.group()
    return token if token.startswith('"') else re.sub(r"[^\n]", " ", token)


def _line_of(text: str, needle: str) -> int:
    offset = text.find(needle)
    return text.count("\n", 0, offset) + 1 if offset >= 0 else 1


_SUFFIXES = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".json")
# Node's own modules (``fs``, ``node:path``): the platform's library, not a package.
NODE_BUILTINS = frozenset("""
assert async_hooks buffer child_process cluster console constants crypto dgram diagnostics_channel
dns domain events fs http http2 https inspector module net os path perf_hooks process punycode
querystring readline repl stream string_decoder sys timers tls trace_events tty url util v8 vm
wasi worker_threads zlib test
""".split())
_LANGUAGES = ("javascript", "typescript", "tsconfig")


class Resolver:
    """Relative imports to the file Node or TypeScript would load: the path as written, with
    a suffix, or its ``index`` file; a ``.js`` written for a ``.ts`` source (ESM style) too.
    Bare imports through the ``paths`` and ``baseUrl`` of the nearest ``tsconfig.json``."""

    def __init__(self, languages: dict[str, str], imports: dict[str, list]) -> None:
        self.index = PathIndex(path for path, language in languages.items()
                               if language in _LANGUAGES or path.endswith(".json"))
        # folder of a tsconfig -> (baseUrl, [(alias, targets)]), deepest folder first
        self.configs: list[tuple[str, str, list[tuple[str, list[str]]]]] = []
        for path, language in languages.items():
            if language != "tsconfig":
                continue
            entries = [entry for entry in imports.get(path) or [] if isinstance(entry, dict)]
            aliases = [(str(entry.get("module", "")), [str(n) for n in entry.get("names") or []])
                       for entry in entries if entry.get("kind") == "paths"]
            bases = [str(entry.get("base", ".")) for entry in entries if entry.get("kind") == "paths"]
            if aliases:
                self.configs.append((path.rpartition("/")[0], bases[0], aliases))
        self.configs.sort(key=lambda item: -len(item[0]))

    def answer(self, entry: dict, path: str) -> tuple[str | None, str]:
        module = str(entry.get("module", ""))
        kind = entry.get("kind")
        folder = path.rpartition("/")[0]
        if kind == "paths":  # a tsconfig's alias: the file it maps to (a folder has no page)
            base = joined(folder, str(entry.get("base", ".")))
            for target in entry.get("names") or []:
                found = self._load(joined(base or "", str(target).replace("*", "").rstrip("/")))
                if found is not None:
                    return found, "repo"
            return None, "repo"
        if module.startswith((".", "/")):
            return self._load(joined(folder, module)), "repo"
        name = module.removeprefix("node:")
        if module.startswith("node:") or name.partition("/")[0] in NODE_BUILTINS:
            return None, "stdlib"
        if kind == "extends":
            return None, "third_party"  # a shared config from a package
        found = self._aliased(module, path)
        return (found, "repo") if found is not None else (None, "third_party")

    def _load(self, base: str | None) -> str | None:
        return None if base is None else self.index.first(_candidates(base))

    def _aliased(self, module: str, path: str) -> str | None:
        """The file a bare import names through the nearest tsconfig's ``paths`` or ``baseUrl``."""
        for folder, base, aliases in self.configs:
            if folder and not path.startswith(folder + "/"):
                continue
            root = joined(folder, base) or ""
            for alias, targets in aliases:
                prefix, star, suffix = alias.partition("*")
                if star and module.startswith(prefix) and module.endswith(suffix) and len(module) >= len(alias) - 1:
                    middle = module[len(prefix):len(module) - len(suffix)]
                elif not star and module == alias:
                    middle = ""
                else:
                    continue
                for target in targets:
                    found = self._load(joined(root, target.replace("*", middle)))
                    if found is not None:
                        return found
        return None


def _candidates(base: str) -> list[str]:
    """What ``import "./base"`` may load, in the order the resolvers try."""
    found = [base] + [base + suffix for suffix in _SUFFIXES]
    stem, dot, suffix = base.rpartition(".")
    if dot and suffix in ("js", "jsx", "mjs", "cjs"):
        found += [stem + ts_suffix for ts_suffix in (".ts", ".tsx", ".mts", ".cts", ".d.ts")]
    prefix = base + "/" if base else ""
    found += [prefix + "index" + suffix for suffix in _SUFFIXES]
    return found
