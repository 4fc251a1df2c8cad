"""File Purpose is the file's own words (issue 32): never one definition's comment, a test's
docstring, an example, a banner, a pragma or an author line; re-export modules say so."""
from __future__ import annotations

import re
import textwrap
from pathlib import Path

from tests.conftest import run_kwdocs


def _purpose(tmp_path: Path, name: str, text: str) -> str:
    """The File Purpose paragraph of ``name``'s docs page, built from a tree holding only it."""
    src = tmp_path / "src"
    (src / name).parent.mkdir(parents=True, exist_ok=True)
    (src / name).write_text(textwrap.dedent(text))
    assert run_kwdocs("build", "--src", str(src), "--out", str(tmp_path / "out"), "-q") == 0
    page = (tmp_path / "out" / f"{name}_docs.md").read_text()
    found = re.search(r"## File Purpose\n\n(.*?)\n\n##", page, re.S)
    assert found, page
    return found.group(1)


def _doc_of(tmp_path: Path, name: str, definition: str) -> str:
    """The text of ``definition``'s entry on ``name``'s docs page, up to the next entry."""
    page = (tmp_path / "out" / f"{name}_docs.md").read_text()
    found = re.search(rf"\*\*`{definition}`\*\*[^\n]*\n(.*?)(?=\n *- <a |\n## |\Z)", page, re.S)
    assert found, page
    return found.group(1)


def test_an_example_in_the_first_definitions_docstring_is_not_the_purpose(tmp_path: Path):
    purpose = _purpose(tmp_path, "urls.py", '''\
        class URL:
            """
            url = httpx.URL("HTTPS://jo%40email.com:a%20secret@example.com:1234/pa%20th")
            """


        def parse(text):
            """See https://github.com/example/project/issues/1 for the details."""
        ''')
    assert "httpx.URL" not in purpose and "github.com" not in purpose
    assert "`URL`" in purpose and "`parse`" in purpose


def test_a_section_banner_is_not_the_purpose(tmp_path: Path):
    purpose = _purpose(tmp_path, "errors.js", """\
        // ---- Errors ----
        export class ParseError extends Error {}
        """)
    assert "Errors" not in purpose.replace("ParseError", "")
    assert "`ParseError`" in purpose


def test_a_lint_pragma_is_not_the_purpose(tmp_path: Path):
    purpose = _purpose(tmp_path, "exception.h", """\
        #if !defined(STABLE_ONLY)
        // @allow-raw-throw
        #ifndef UTIL_EXCEPTION_H_
        #define UTIL_EXCEPTION_H_
        // NOLINTNEXTLINE(modernize-use-using)
        struct Error {};
        #endif
        #endif
        """)
    assert "allow" not in purpose and "NOLINT" not in purpose
    assert "`Error`" in purpose


def test_an_author_line_or_a_declarations_comment_is_not_the_purpose(tmp_path: Path):
    purpose = _purpose(tmp_path, "codec.c", """\
        /*
        Developed by ESN, an Electronic Arts Inc. studio.
        */

        #include <stdio.h>

        /* encode */
        int encode(int value);
        """)
    assert "Developed" not in purpose and "ESN" not in purpose
    assert not purpose.startswith("encode")
    assert "`encode`" in purpose


def test_a_section_divider_documents_no_definition(tmp_path: Path):
    _purpose(tmp_path, "schema.ts", """\
        export interface Schema {
          // parsing
          parse(data: unknown): number;
          safeParse(data: unknown): number;
        }

        // ==========================
        // helpers
        // ==========================
        export function check(value: number): boolean {
          return value > 0;
        }

        // Returns the value doubled.
        export function twice(value: number): number {
          return value * 2;
        }
        """)
    assert "parsing" not in _doc_of(tmp_path, "schema.ts", "parse")
    assert "helpers" not in _doc_of(tmp_path, "schema.ts", "check")
    assert "Returns the value doubled." in _doc_of(tmp_path, "schema.ts", "twice")


def test_compiled_reexports_are_described_as_reexports(tmp_path: Path):
    stars = _purpose(tmp_path / "a", "type/index.js", """\
        "use strict";
        var __createBinding = (this && this.__createBinding) || (Object.create ? (function(o, m, k, k2) {
            if (k2 === undefined) k2 = k;
            var desc = Object.getOwnPropertyDescriptor(m, k);
            if (!desc || ("get" in desc ? !m.__esModule : desc.writable || desc.configurable)) {
              desc = { enumerable: true, get: function() { return m[k]; } };
            }
            Object.defineProperty(o, k2, desc);
        }) : (function(o, m, k, k2) {
            if (k2 === undefined) k2 = k;
            o[k2] = m[k];
        }));
        var __exportStar = (this && this.__exportStar) || function(m, exports) {
            for (var p in m) if (p !== "default" && !Object.prototype.hasOwnProperty.call(exports, p))
                __createBinding(exports, m, p);
        };
        Object.defineProperty(exports, "__esModule", { value: true });
        __exportStar(require("./any"), exports);
        """)
    assert stars == "Re-exports `./any`."
    named = _purpose(tmp_path / "b", "index.cjs", """\
        "use strict";
        Object.defineProperty(exports, "__esModule", { value: true });
        var index_1 = require("./locales/index.cjs");
        Object.defineProperty(exports, "en", { enumerable: true, get: function () { return index_1.en; } });
        """)
    assert named == "Re-exports `./locales/index.cjs`."
    namespace = _purpose(tmp_path / "d", "pointer/index.js", """\
        "use strict";
        var __importStar = (this && this.__importStar) || (function () {
            var ownKeys = function(o) {
                ownKeys = Object.getOwnPropertyNames;
                return ownKeys(o);
            };
            return function (mod) { return mod; };
        })();
        Object.defineProperty(exports, "__esModule", { value: true });
        exports.ValuePointer = __importStar(require("./pointer"));
        """)
    assert namespace == "Re-exports `./pointer`."
    esm = _purpose(tmp_path / "c", "index.js", """\
        export * from "./a.js";
        export * from "./b.js";
        """)
    assert esm == "Re-exports `./a.js`, `./b.js`."


def test_the_first_declarations_doc_comment_is_not_the_files(tmp_path: Path):
    declared = _purpose(tmp_path / "a", "clone.d.ts", """\
        /** Returns a clone of the given value. */
        export declare function Clone<T>(value: T): T;
        export declare function Equal(left: unknown, right: unknown): boolean;
        """)
    assert "Returns a clone" not in declared and declared.startswith("Defines `Clone`")
    own = _purpose(tmp_path / "b", "clone.ts", """\
        /** @fileoverview Deep copies of plain values. */
        export function Clone<T>(value: T): T { return value; }
        """)
    assert own.startswith("Deep copies of plain values.")


def test_requests_module_headers_give_their_sentence_not_a_title_banner_or_a_false_generated_note(tmp_path: Path):
    """As requests writes its modules: a reST title underlined with ``~`` is a title, not a
    Markdown fence holding the rest as code; ASCII art is nobody's words; and "the response
    generated from a Request" does not say the file is generated."""
    purpose = _purpose(tmp_path, "api.py", '''\
        """
        requests.api
        ~~~~~~~~~~~~

        This module implements the Requests API.

        :copyright: (c) 2012 by Kenneth Reitz.
        :license: Apache2, see LICENSE for more details.
        """


        def get(url):
            """Sends a GET request."""
        ''')
    assert purpose.startswith("This module implements the Requests API. Defines `get`."), purpose
    page = (tmp_path / "out" / "api.py_docs.md").read_text()
    assert "```" not in page[page.index("## High-Level Overview"):page.index("## Detailed Analysis")]
    art = _purpose(tmp_path / "art", "__version__.py", """\
        # .-. .-. .-. . . .-. .-. .-. .-.
        # |(  |-  |.| | | |-  `-.  |  `-.
        # ' ' `-' `-`.`-' `-' `-'  '  `-'

        __title__ = "requests"
        """)
    assert art == "Defines `__title__`.", art
    hooks = _purpose(tmp_path / "hooks", "hooks.py", '''\
        """
        This module provides the capabilities for the Requests hooks system.

        Available hooks:

        ``response``:
            The response generated from a Request.
        """
        HOOKS = ["response"]
        ''')
    assert hooks.startswith("This module provides the capabilities for the Requests hooks system.")
    assert "edit that, not this file" not in (tmp_path / "hooks" / "out" / "hooks.py_docs.md").read_text()


def test_a_definitelytyped_header_gives_its_title_not_its_authors(tmp_path: Path):
    """commander's ``typings/index.d.ts`` opens with DefinitelyTyped's header: its first line is
    the file's words, its ``Original definitions by:`` line an author line, never the purpose."""
    purpose = _purpose(tmp_path, "index.d.ts", """\
        // Type definitions for commander
        // Original definitions by: Alan Agius <https://github.com/alan-agius4>, Marcelo Dezem <https://github.com/mdezem>

        /* eslint-disable @typescript-eslint/no-explicit-any */

        export declare function program(): void;
        """)
    assert purpose.startswith("Type definitions for commander. Defines `program`."), purpose
    assert "Alan" not in purpose
