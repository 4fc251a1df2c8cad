"""A licence notice is nobody's documentation: in every language its lines and its address
(``http://www.apache.org/licenses/LICENSE-2.0``) are never a File Purpose nor a definition's doc,
as ``kwdocs.extract.not_doc``'s one licence pattern says."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from kwdocs.extract import not_doc
from tests.conftest import run_kwdocs

APACHE = """Copyright 2013-2023 The Cobra Authors

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

     http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License."""

# each language: its comment marker, and the code after the notice (a definition named ``run``)
LANGUAGES = {
    "a.go": ("// ", "package cobra\n\nfunc Run() {}\n"),
    "a.rs": ("// ", "pub fn run() {}\n"),
    "a.js": ("// ", "export function run() {}\n"),
    "A.java": ("// ", "public class A {}\n"),
    "a.lua": ("-- ", "local function run() end\n"),
    "a.c": ("// ", "#include <stdio.h>\nint run(void);\n"),
    "a.cpp": ("// ", "int run();\n"),
    "a.py": ("# ", "import os\n\n\ndef run():\n    pass\n"),
    "a.sh": ("# ", "run() { echo hi; }\n"),
    "Makefile": ("# ", "all:\n\techo hi\n"),
    "a.yaml": ("# ", "key: 1\n"),
}


def _commented(marker: str, text: str) -> str:
    return "".join((marker + line).rstrip() + "\n" for line in text.split("\n"))


def _purpose(page: str) -> str:
    return page.split("## File Purpose", 1)[1].split("\n## ", 1)[0]


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, str]:
    """Each file of LANGUAGES twice: the notice heading the file, and the notice's address right
    above a definition (``link.*``), built once."""
    root = tmp_path_factory.mktemp("licence")
    src = root / "src"
    src.mkdir()
    for name, (marker, code) in LANGUAGES.items():
        (src / name).write_text(_commented(marker, APACHE) + "\n" + code, encoding="utf-8")
        if "." in name:
            stem, _, suffix = name.partition(".")
            note = "See http://www.apache.org/licenses/LICENSE-2.0"
            (src / f"{stem}_link.{suffix}").write_text(_commented(marker, note) + code, encoding="utf-8")
    out = root / "out"
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    return {path.name.removesuffix("_docs.md"): path.read_text(encoding="utf-8")
            for path in out.glob("*_docs.md")}


@pytest.mark.parametrize("name", sorted(LANGUAGES))
def test_a_licence_header_is_no_file_purpose(pages: dict[str, str], name: str):
    purpose = _purpose(pages[name])
    for words in ("apache.org", "LICENSE-2.0", "Unless required", "Licensed under", "Copyright", "License"):
        assert words not in purpose, (name, purpose)


@pytest.mark.parametrize("name", sorted(name for name in LANGUAGES if "." in name))
def test_a_licence_address_is_no_definitions_doc(pages: dict[str, str], name: str):
    stem, _, suffix = name.partition(".")
    page = pages[f"{stem}_link.{suffix}"]
    structure = page.split("## Detailed Analysis", 1)[-1].split("## Dependencies", 1)[0]
    assert "apache.org" not in _purpose(page) and not re.search(r"^\s+See http", structure, re.MULTILINE), page


def test_the_one_pattern_tells_a_notice_from_documentation_about_licences():
    for line in APACHE.split("\n"):
        if any(word in line for word in ("Copyright", "Licensed", "License", "WARRANTIES")):
            assert not_doc.is_licence(line), line
    assert not_doc.is_licence("SPDX-License-Identifier: MIT")
    assert not_doc.is_licence("Use of this source code is governed by a BSD-style license that can be")
    assert not not_doc.is_licence("Return the path of the package's license file.")
    assert not not_doc.is_licence("Pick (a), (b) or (c) below.")
