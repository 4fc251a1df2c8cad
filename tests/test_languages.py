"""The languages on tree-sitter grammar wheels, files recognised by content, the Universal Ctags
fallback, and the links of each language: through the CLI on tests/fixtures/lang where a user
would look (the pages), and through the extractors for kinds, lines, signatures and doc comments.

Expected lines are found in the fixture files themselves, not written down twice.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kwdocs.extract import extract_bytes
from tests.output_checks import broken_links, run_build

FIXTURE = Path(__file__).parent / "fixtures" / "lang"
HAS_CTAGS = shutil.which("ctags") is not None and "Universal Ctags" in subprocess.run(
    ["ctags", "--version"], capture_output=True, text=True, check=False).stdout


def line_of(path: str, needle: str) -> int:
    """The first line of a fixture file that holds ``needle``."""
    for number, line in enumerate((FIXTURE / path).read_text().split("\n"), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def facts_of(path: str) -> dict:
    return extract_bytes(path, (FIXTURE / path).read_bytes())[0]


def symbol(facts: dict, name: str, kind: str) -> dict:
    found = [s for s in facts["symbols"] if s["name"] == name and s["kind"] == kind]
    assert found, f"no {kind} {name} in {facts['path']}: {facts['symbols']}"
    return found[0]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The fixture tree built once by the CLI (with whatever ctags the machine has)."""
    root = tmp_path_factory.mktemp("lang")
    src = root / "src"
    shutil.copytree(FIXTURE, src)
    completed = run_build(src, root / "out")
    assert completed.returncode == 0, completed.stderr
    return root / "out"


def page(out: Path, path: str, kind: str = "docs") -> str:
    return (out / f"{path}_{kind}.md").read_text()


def section(text: str, title: str) -> str:
    """The body of a ``## title`` section of a page."""
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else len(text)]


# ---------------------------------------------------------------- extractors


def test_go_definitions_kinds_lines_signatures_doc_comments_and_imports():
    path = "go/internal/store/store.go"
    facts = facts_of(path)
    assert facts["type_label"] == "Go Source"
    assert symbol(facts, "store", "namespace")["line"] == line_of(path, "package store")
    get = symbol(facts, "Get", "method")
    assert get["line"] == line_of(path, "func (s *Store) Get(")
    assert get["parent"] == "Store"
    assert get["signature"] == "func (s *Store) Get(key string) ([]byte, error)"
    assert get["doc"] == "Get returns the value of key."
    assert symbol(facts, "Store", "class")["detail"] == "struct"
    backend = symbol(facts, "Backend", "class")
    assert backend["detail"] == "interface" and backend["doc"] == "Backend persists entries."
    assert symbol(facts, "Append", "method")["parent"] == "Backend"
    assert symbol(facts, "New", "function")["line"] == line_of(path, "func New()")
    assert symbol(facts, "DefaultShards", "constant")["line"] == line_of(path, "const DefaultShards")
    assert symbol(facts, "ErrNotFound", "variable")["doc"] == "ErrNotFound is returned when a key is missing."
    assert symbol(facts, "shardID", "type")["line"] == line_of(path, "type shardID")
    assert [i["module"] for i in facts["imports"]] == ["errors", "sync", "github.com/google/uuid"]
    assert facts["docstring"].startswith("Package store keeps key-value pairs")


def test_rust_modules_items_impls_macros_attributes_and_use():
    path = "ringlog/src/lib.rs"
    facts = facts_of(path)
    assert symbol(facts, "storage", "namespace")["line"] == line_of(path, "pub mod storage;")
    logger = symbol(facts, "Logger", "class")
    assert logger["line"] == line_of(path, "pub struct Logger")
    assert logger["doc"] == "A logger writing into a ring."   # above #[derive(Debug)]
    new = symbol(facts, "new", "method")
    assert new["parent"] == "Logger" and new["signature"] == "pub fn new(capacity: usize) -> Self"
    assert symbol(facts, "info", "macro")["line"] == line_of(path, "macro_rules! info")
    assert symbol(facts, "DEFAULT_CAPACITY", "constant")["doc"] == "Maximum records kept by default."
    impls = [s for s in facts["symbols"] if s.get("detail") == "impl"]
    assert [s["signature"] for s in impls] == ["impl Logger", "impl fmt::Display for Logger"]
    assert facts["docstring"] == "ringlog: a fixed-size ring buffer of log records."
    modules = {(i["kind"], i["module"]) for i in facts["imports"]}
    assert {("mod", "storage"), ("mod", "record"), ("use", "crate::storage::ring::Ring"),
            ("use", "std::fmt")} <= modules
    trait = facts_of("ringlog/src/storage/mod.rs")
    assert symbol(trait, "Store", "class")["detail"] == "trait"
    assert symbol(trait, "push", "method")["parent"] == "Store"


def test_java_package_classes_records_enums_methods_and_imports():
    path = "java/src/main/java/org/acme/inventory/Inventory.java"
    facts = facts_of(path)
    assert symbol(facts, "org.acme.inventory", "namespace")["line"] == line_of(path, "package ")
    inventory = symbol(facts, "Inventory", "class")
    assert inventory["line"] == line_of(path, "public class Inventory")
    assert inventory["doc"] == "Counts items in stock, by SKU."
    main = symbol(facts, "main", "method")
    assert main["signature"] == "public static void main(String[] args)"
    assert symbol(facts, "Failure", "class")["parent"] == "Inventory"
    assert symbol(facts, "NOT_FOUND", "constant")["parent"] == "Inventory.Failure"
    assert symbol(facts, "org.acme.inventory", "namespace").get("doc", "") == ""  # not the licence
    assert [i["module"] for i in facts["imports"]] == [
        "java.util.HashMap", "java.util.Map", "org.acme.inventory.model.Item", "org.acme.inventory.model.*"]
    record = facts_of("java/src/main/java/org/acme/inventory/model/Item.java")
    assert symbol(record, "Item", "class")["detail"] == "record"


def test_java_annotation_elements_are_methods():
    text = ("package org.acme;\n\n/** Marks a field for export. */\npublic @interface Export {\n"
            "  /** The name it is exported under. */\n  String value() default \"\";\n\n"
            "  boolean deep() default true;\n}\n")
    facts = extract_bytes("Export.java", text.encode())[0]
    value = symbol(facts, "value", "method")
    assert (value["line"], value["parent"], value["doc"]) == (6, "Export", "The name it is exported under.")
    assert value["signature"] == 'String value() default ""'
    assert symbol(facts, "deep", "method")["line"] == 8


def test_typescript_tsx_and_javascript_definitions_and_imports():
    path = "ts/src/models/invoice.ts"
    facts = facts_of(path)
    assert facts["type_label"] == "TypeScript Source"
    invoice = symbol(facts, "Invoice", "class")
    assert invoice["line"] == line_of(path, "export class Invoice")
    assert invoice["doc"] == "An invoice: a customer, items and a status."
    total = symbol(facts, "total", "method")
    assert total["parent"] == "Invoice" and total["signature"] == "total(): Money"
    assert symbol(facts, "LineItem", "class")["detail"] == "exported interface"
    assert symbol(facts, "Currency", "class")["detail"] == "exported enum"
    assert symbol(facts, "InvoiceStatus", "type")["line"] == line_of(path, "export type InvoiceStatus")
    assert [i["module"] for i in facts["imports"]] == ["../lib/money"]
    money = facts_of("ts/src/lib/money.ts")
    assert symbol(money, "add", "function")["signature"].startswith("add = (a: Money, b: Money): Money")
    tsx = facts_of("ts/src/app.tsx")
    assert tsx["type_label"] == "TypeScript JSX Source" and not tsx["problems"]
    assert symbol(tsx, "InvoiceView", "function")["doc"] == "Shows an invoice's total."
    js = facts_of("js/src/index.js")
    assert symbol(js, "Router", "class")["doc"] == "A table of routes, tried in order."
    assert symbol(js, "add", "method")["doc"] == "Adds a route; `handler` gets the matched parameters."
    assert symbol(js, "createRouter", "function")["line"] == line_of("js/src/index.js", "function createRouter")
    assert {s["name"] for s in js["symbols"] if s["kind"] == "export"} == {"Router", "createRouter", "sep"}
    assert symbol(money, "format", "function")["detail"] == "exported"
    assert symbol(facts, "Invoice", "class")["detail"] == "exported class"
    assert [(i["kind"], i["module"]) for i in js["imports"]] == [
        ("require", "./compile"), ("require", "./util/escape.js"), ("require", "path")]


def test_an_object_literal_handed_to_a_call_in_a_function_is_not_the_owners_api():
    """express's ``res.redirect`` passes ``{text: function () ...}`` to ``this.format``: those are
    the argument's methods, not members of ``res``; a literal a factory returns is its API."""
    source = b"""\
var res = module.exports = {};

/** Redirect to the given url. */
res.redirect = function redirect(url) {
  this.format({
    text: function () { return url; },
    html() { return url; },
  });
};

/** A bus. */
function bus() {
  return {
    /** Calls every handler. */
    send(kind) { return kind; },
  };
}
"""
    facts = extract_bytes("lib/response.js", source)[0]
    members = {(s["name"], s.get("parent")) for s in facts["symbols"] if s["kind"] in ("method", "function")}
    assert ("redirect", "res") in members and ("bus", None) in {(n, p or None) for n, p in members}
    assert not {name for name, _ in members} & {"text", "html"}
    assert symbol(facts, "send", "method")["doc"] == "Calls every handler."


def test_lua_functions_methods_and_require():
    path = "lua/lib/ledger/account.lua"
    facts = facts_of(path)
    assert symbol(facts, "new", "function")["parent"] == "Account"
    assert symbol(facts, "new", "function")["doc"] == "A new account with a zero balance."
    assert symbol(facts, "deposit", "method")["signature"] == "function Account:deposit(amount)"
    assert symbol(facts, "check", "function")["line"] == line_of(path, "local function check")
    assert symbol(facts, "debit", "function")["line"] == line_of(path, "Account.debit = function")
    assert facts_of("lua/lib/ledger/init.lua")["imports"][0]["module"] == "ledger.account"


def test_makefile_targets_variables_macros_and_includes():
    path = "make/Makefile"
    facts = facts_of(path)
    assert facts["type_label"] == "Makefile"
    targets = [s["name"] for s in facts["symbols"] if s["kind"] == "target"]
    assert targets == ["all", "cache-server", "%.o", "install", "clean"]   # not .PHONY
    assert symbol(facts, "all", "target")["doc"] == "Builds the server binary."
    assert symbol(facts, "cache-server", "target")["signature"] == "cache-server: $(OBJ)"
    assert symbol(facts, "CFLAGS", "variable")["signature"] == "CFLAGS += -O2 -Wall"
    variables = {s["name"] for s in facts["symbols"] if s["kind"] == "variable"}
    assert {"CC", "CFLAGS", "OBJ", "PREFIX", "Q"} <= variables   # Q inside ifeq/else
    assert symbol(facts, "INSTALL_HELP", "macro")["line"] == line_of(path, "define INSTALL_HELP")
    assert [i["module"] for i in facts["imports"]] == ["config.mk", "$(DEPS)"]
    names = {s["name"] for s in facts["symbols"]}
    assert not names & {"RSALv2", "SSPLv1"}
    assert facts["docstring"] == "Top-level build for the cache server."   # not its licence paragraph
    assert facts_of("make/config.mk")["type_label"] == "Makefile"


def test_grammars_are_imported_only_when_a_file_of_their_language_is_extracted():
    code = ("import sys, kwdocs.cli, kwdocs.engine.tasks\n"
            "before = sorted(m for m in sys.modules if m.startswith('tree_sitter_') and '.' not in m)\n"
            "from kwdocs.extract import extract_bytes\n"
            "extract_bytes('a.go', b'package a\\nfunc F() {}\\n')\n"
            "after = sorted(m for m in sys.modules if m.startswith('tree_sitter_') and '.' not in m)\n"
            "print(before, after)\n")
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "[] ['tree_sitter_go']"


# ---------------------------------------------------------------- content recognition


@pytest.mark.parametrize("first_line, label", [
    ("#!/bin/sh", "Shell Script"),
    ("#!/usr/bin/env bash", "Shell Script"),
    ("#!/usr/bin/env -S python3 -u", "Python Source"),
    ("#!/usr/bin/python3.11", "Python Source"),
    ("#!/usr/bin/env node", "JavaScript Source"),
    ("#!/usr/bin/perl -w", "Perl Source"),
    ("#!/usr/bin/tclsh8.6", "Tcl Script"),
    ("#!/usr/bin/env -i PATH=/bin ruby", "Ruby Source"),
    ("#!/usr/bin/make -f", "Makefile"),
    ("# -*- mode: ruby -*-", "Ruby Source"),
    ("# vim: set ft=perl :", "Perl Source"),
    ("just words", "Text File"),
])
def test_a_file_without_a_telling_name_is_recognised_by_its_first_line(first_line, label):
    facts, _, _ = extract_bytes("tools/run-it", f"{first_line}\nsomething\n".encode())
    assert facts["type_label"] == label


def test_names_and_the_tcl_restart_trick_are_recognised():
    assert facts_of("tcl/runtest")["type_label"] == "Tcl Script"   # #!/bin/sh + exec tclsh
    assert facts_of("shell/deploy")["type_label"] == "Shell Script"
    for name, label in [("GNUmakefile", "Makefile"), ("build/rules.mk", "Makefile"),
                        ("Dockerfile", "Dockerfile"), ("go.mod", "Go Module Definition"),
                        ("include/config.h.in", "C/C++ Header"), ("deps/Makefile.in", "Makefile"),
                        ("configure.in", "Autoconf Script"), ("tool/version.in", "Text File"),
                        ("templates/args.py.in", "Text File")]:   # ``${args}`` is no Python
        assert extract_bytes(name, b"x\n")[0]["type_label"] == label
    # a file named like a known language keeps it, whatever its first line says
    assert extract_bytes("a.py", b"#!/bin/sh\nx = 1\n")[0]["type_label"] == "Python Source"


def test_generated_and_vendored_files_are_labelled(tmp_path):
    src = tmp_path / "src"
    (src / "vendor" / "github.com" / "x").mkdir(parents=True)
    (src / "web" / "node_modules" / "left-pad").mkdir(parents=True)
    (src / "vendor" / "github.com" / "x" / "x.go").write_text("package x\n")
    (src / "web" / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1;\n")
    (src / "api.pb.go").write_text("// Code generated by protoc-gen-go. DO NOT EDIT.\npackage api\n")
    assert run_build(src, tmp_path / "out").returncode == 0
    assert "**Third-party code**" in page(tmp_path / "out", "vendor/github.com/x/x.go")
    assert "**Third-party code**" in page(tmp_path / "out", "web/node_modules/left-pad/index.js")
    assert "This file is **generated**" in page(tmp_path / "out", "api.pb.go")


# ---------------------------------------------------------------- ctags fallback


@pytest.mark.skipif(not HAS_CTAGS, reason="Universal Ctags is not installed")
def test_other_languages_get_their_definitions_from_ctags_and_the_page_says_so(built):
    docs = page(built, "tcl/tests/helpers.tcl")
    assert "found by Universal Ctags" in docs
    structure = section(docs, "Detailed Analysis")
    assert re.search(rf"\*\*`start_server`\*\*.*\(\[line {line_of('tcl/tests/helpers.tcl', 'proc ::testutil::start_server')}\]",
                     structure)
    assert "**`assert_equal`**" in structure
    script = page(built, "tcl/runtest")   # known by its first lines alone
    assert "**`run_all`**" in section(script, "Detailed Analysis")


def test_without_ctags_other_languages_get_the_plain_page_without_licence_names(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "server.tcl").write_text("# Licensed under RSALv2 or SSPLv1.\nproc start_server {} {\n"
                                    "  set ServerPort 7000\n}\n")
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {**os.environ, "PATH": str(empty)}
    completed = subprocess.run([sys.executable, "-m", "kwdocs", "build", "--src", str(src),
                                "--out", str(tmp_path / "out")], env=env, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
    docs = page(tmp_path / "out", "server.tcl")
    keywords = page(tmp_path / "out", "server.tcl", "kw")
    assert "Universal Ctags" not in docs
    assert "ServerPort" in keywords   # the identifiers are still listed
    assert "RSALv2" not in keywords and "SSPLv1" not in keywords


# ---------------------------------------------------------------- links and rules


DEPENDENCY = re.compile(r"\[`([^`]+)`\]\(([^)]+)_docs\.md\)")


def linked(out: Path, path: str) -> dict[str, str]:
    """Import as written -> the page it links to (as a source path relative to ``path``'s folder)."""
    return dict(DEPENDENCY.findall(section(page(out, path), "Dependencies")))


@pytest.mark.parametrize("path, module, target", [
    ("go/cmd/kvd/main.go", "example.org/kvstore/internal/store", "../../internal/store/store.go"),
    ("ringlog/src/lib.rs", "storage", "./storage/mod.rs"),
    ("ringlog/src/lib.rs", "crate::storage::ring::Ring", "./storage/ring.rs"),
    ("ringlog/src/storage/ring.rs", "super::Store", "./mod.rs"),
    ("ringlog/src/bin/tail.rs", "ringlog::{Logger, Level}", "../lib.rs"),
    ("java/src/main/java/org/acme/inventory/Inventory.java", "org.acme.inventory.model.Item",
     "./model/Item.java"),
    ("java/src/test/java/org/acme/inventory/InventoryTest.java", "org.acme.inventory.model.Item",
     "../../../../../main/java/org/acme/inventory/model/Item.java"),
    ("ts/src/app.tsx", "./lib", "./lib/index.ts"),
    ("ts/src/models/invoice.ts", "../lib/money", "../lib/money.ts"),
    ("ts/src/models/reminder.ts", "@shared/dates", "../shared/dates.ts"),   # tsconfig paths
    ("ts/src/models/reminder.ts", "@money", "../lib/money.ts"),
    ("ts/src/models/reminder.ts", "src/models/invoice", "./invoice.ts"),     # tsconfig baseUrl
    ("js/src/index.js", "./compile", "./compile.js"),
    ("js/test/router.test.js", "../src", "../src/index.js"),
    ("lua/lib/ledger/init.lua", "ledger.account", "./account.lua"),
    ("make/Makefile", "config.mk", "./config.mk"),
    ("shell/deploy", "lib.sh", "./lib.sh"),   # sourced as "$(dirname "$0")/lib.sh"
])
def test_imports_of_each_language_link_to_their_file(built, path, module, target):
    links = linked(built, path)
    assert links.get(module) == target, links


def test_a_tsconfig_with_comments_and_trailing_commas_is_read(built):
    facts = facts_of("ts/tsconfig.json")
    assert facts["type_label"] == "TypeScript Configuration" and not facts["problems"]
    assert "compilerOptions" in {s["name"] for s in facts["symbols"]}
    assert "`ts/src/models/reminder.ts`" not in page(built, "ts/tsconfig.json")  # no false users


def test_used_by_and_standard_library_per_language(built):
    def used_by(path: str) -> str:
        text = page(built, path)
        return text[text.index("### Used By"):text.index("## Related Files")]
    assert "`go/cmd/kvd/main.go`" in used_by("go/internal/store/store.go")
    assert "`go/internal/store/store_test.go`" not in used_by("go/internal/store/store.go")  # same package
    assert "`ringlog/src/bin/tail.rs`" in used_by("ringlog/src/lib.rs")
    assert "`ts/src/app.tsx`" in used_by("ts/src/lib/index.ts")
    assert "`java/src/test/java/org/acme/inventory/InventoryTest.java`" in used_by(
        "java/src/main/java/org/acme/inventory/model/Item.java")
    assert "`lua/lib/ledger/init.lua`" in used_by("lua/lib/ledger/account.lua")
    main = section(page(built, "go/cmd/kvd/main.go"), "Dependencies")
    assert "Standard library" in main and "`net/http`" in main.split("Standard library")[1]
    rust = section(page(built, "ringlog/src/lib.rs"), "Dependencies")
    assert "`std::fmt`" in rust.split("Standard library")[1]
    assert broken_links(built) == []


def test_tests_and_entry_points_per_language(built):
    purpose = {path: section(page(built, path), "File Purpose") for path in (
        "go/internal/store/store_test.go", "ts/src/models/invoice.test.ts", "js/test/router.test.js",
        "java/src/test/java/org/acme/inventory/InventoryTest.java", "go/cmd/kvd/main.go",
        "ringlog/src/bin/tail.rs", "java/src/main/java/org/acme/inventory/Inventory.java",
        "ringlog/src/lib.rs", "go/internal/store/store.go", "shell/deploy")}
    for path in ("go/internal/store/store_test.go", "ts/src/models/invoice.test.ts",
                 "js/test/router.test.js", "java/src/test/java/org/acme/inventory/InventoryTest.java"):
        assert "part of the **tests**" in purpose[path], path
    assert "`func main` of `package main`" in purpose["go/cmd/kvd/main.go"]
    assert "(`fn main`)" in purpose["ringlog/src/bin/tail.rs"]
    assert "`public static void main`" in purpose["java/src/main/java/org/acme/inventory/Inventory.java"]
    assert "`#[test]` functions" in purpose["ringlog/src/lib.rs"]
    assert "entry point" not in purpose["go/internal/store/store.go"]
    # a file with neither test nor entry point says what it is in its own words
    assert "Package store keeps key-value pairs in memory" in purpose["go/internal/store/store.go"]
    assert "run as a program" in purpose["shell/deploy"]


@pytest.mark.skipif(not HAS_CTAGS, reason="Universal Ctags is not installed")
def test_ctags_runs_once_for_all_such_files_of_a_unit_and_again_only_for_what_changed(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for index in range(4):
        (src / f"suite{index}.tcl").write_text(f"proc check_{index} {{}} {{\n  return {index}\n}}\n")
    (src / "Tool.pm").write_text("package Tool;\nsub run_tool {\n  return 1;\n}\n1;\n")
    wrapper = tmp_path / "bin"
    wrapper.mkdir()
    log = tmp_path / "ctags.log"
    (wrapper / "ctags").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {shutil.which("ctags")} "$@"\n')
    (wrapper / "ctags").chmod(0o755)
    env = {**os.environ, "PATH": f"{wrapper}{os.pathsep}{os.environ['PATH']}"}

    def build() -> list[str]:
        log.write_text("")
        completed = subprocess.run([sys.executable, "-m", "kwdocs", "build", "--src", str(src),
                                    "--out", str(tmp_path / "out")], env=env, capture_output=True, text=True)
        assert completed.returncode == 0, completed.stderr
        return [line for line in log.read_text().splitlines() if "--_interactive" in line.split()]

    assert len(build()) == 1
    for index in range(4):
        assert f"**`check_{index}`**" in page(tmp_path / "out", f"suite{index}.tcl")
    assert "**`run_tool`**" in page(tmp_path / "out", "Tool.pm")
    (src / "suite2.tcl").write_text("proc renamed_check {} {\n  return 2\n}\n")
    assert len(build()) == 1
    assert "**`renamed_check`**" in page(tmp_path / "out", "suite2.tcl")
    assert "**`check_1`**" in page(tmp_path / "out", "suite1.tcl")


def test_go_imports_resolve_under_a_module_without_a_domain_and_without_a_go_mod():
    from kwdocs.extract.links import resolve_links

    languages = {"go.mod": "gomod", "cmd/main.go": "go", "internal/db/db.go": "go",
                 "vendor/github.com/acme/log/log.go": "go", "strings/strings.go": "go",
                 "internal/unix/unix.go": "go"}
    imports = {"go.mod": [{"module": "kvapp", "line": 1, "kind": "module"}],
               "cmd/main.go": [{"module": m, "line": n, "kind": "import"} for n, m in enumerate(
                   ["kvapp/internal/db", "github.com/acme/log", "strings", "golang.org/x/sys/unix"], 1)]}
    deps = resolve_links(languages, imports)["cmd/main.go"]["deps"]
    assert [(d["target"], d["category"]) for d in deps] == [
        ("internal/db/db.go", "repo"), ("vendor/github.com/acme/log/log.go", "repo"),
        (None, "stdlib"), (None, "third_party")]   # ``strings`` is Go's, ``unix`` not ``internal/unix``


@pytest.mark.skipif(not HAS_CTAGS, reason="Universal Ctags is not installed")
def test_a_failing_ctags_costs_the_definitions_not_the_build(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.tcl").write_text("proc start_ServerLoop {} {\n  return 1\n}\n")
    wrapper = tmp_path / "bin"
    wrapper.mkdir()
    real = shutil.which("ctags")
    (wrapper / "ctags").write_text(
        f'#!/bin/sh\ncase "$*" in *--_interactive*) echo broken >&2; exit 1;; esac\nexec {real} "$@"\n')
    (wrapper / "ctags").chmod(0o755)
    env = {**os.environ, "PATH": f"{wrapper}{os.pathsep}{os.environ['PATH']}"}
    completed = subprocess.run([sys.executable, "-m", "kwdocs", "build", "--src", str(src),
                                "--out", str(tmp_path / "out")], env=env, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
    assert "a.tcl" in completed.stdout + completed.stderr and "Universal Ctags failed" in completed.stdout + completed.stderr
    assert "start_ServerLoop" in page(tmp_path / "out", "a.tcl", "kw")   # still an identifier
    assert "found by Universal Ctags" not in page(tmp_path / "out", "a.tcl")


RUST_IMPLS = """\
use std::fmt;

/// A logger.
pub struct Logger;

impl Default for Logger {
    fn default() -> Self { Logger }
}

impl fmt::Display for Logger {
    /// How it reads.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }
}
"""


def test_rust_trait_impls_and_their_items_are_keywords_by_their_trait(tmp_path):
    """``impl Trait for Type``: the keyword page and the index name each impl by its trait, so a
    file's impls of ``Default`` and ``fmt::Display`` read apart, and list their items qualified."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "log.rs").write_text(RUST_IMPLS, encoding="utf-8")
    assert run_build(src, tmp_path / "out", "-q").returncode == 0
    page = (tmp_path / "out/log.rs_kw.md").read_text(encoding="utf-8")
    assert "- **`Default for Logger`**: [impl, line 6](./log.rs_docs.md#l6-class-logger)" in page
    assert "- **`fmt::Display for Logger`**: [impl, line 10](./log.rs_docs.md#l10-class-logger)" in page
    assert "- **`Logger.fmt`**: [method, line 12]" in page and "- **`Logger.default`**: [method, line 7]" in page
    index = (tmp_path / "out/keywords.md").read_text(encoding="utf-8")
    assert "`fmt::Display for Logger`" in index and "`Default for Logger`" in index
