"""Property-based tests of every extractor: arbitrary text and bytes never crash one,
the facts are deterministic, and every reported line holds the reported name.

Unstructured random text rarely looks like code, so the text strategy mixes
random characters with fragments of each language's syntax (``def``, ``#define``,
headings, fences, keys ...); that reaches the parsers' interesting paths
(definitions, broken nesting, unterminated blocks) in a few hundred examples.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kwdocs.extract import BY_NAME, BY_SUFFIX, extract_bytes, language_of
from kwdocs.extract.decode import decode, is_binary
from kwdocs import layout

# One path per extractor the registry knows (and plain text for unknown names).
PATHS = ["pkg/mod.py", "docs/guide.md", "docs/guide.rst", "notes.txt", "include/api.h", "src/impl.cpp",
         "kernels/k.cu", "conf/ci.yaml", "pyproject.toml", "data/list.json", "CMakeLists.txt",
         "tools/run.sh", "web/app.js", "web/view.tsx", "web/api.ts", "svc/main.go", "go.mod",
         "crate/lib.rs", "src/App.java", "lua/mod.lua", "build/Makefile", "web/tsconfig.json",
         "tests/suite.tcl"]

FRAGMENTS = [
    # layout
    "\n", "\n", "\n", "\r\n", "\r", "    ", "\t", " ", "\\", "\ufeff", "\u2028", "\x0c", "\x00",
    # Python
    "def ", "class ", "async def ", "lambda", "(", ")", ":", "=", "@", "import ", "from ", " as ",
    '"""', "'''", "#", "return", "self", "->", ",", "if x:", "try:", "except:", "pass",
    "__init__", "TypeVar(", "type X = int",
    # C, C++, CUDA
    "#define ", "#include <", "#include \"", "#if 0", "#endif", "namespace ", "struct ", "template <",
    "typename T>", "{", "}", ";", "::", "/*", "*/", "//", "__global__ ", "TORCH_API ", "enum ",
    "using ", "typedef ", "int ", "void ",
    # prose
    "# ", "## ", "===", "---", "~~~", "```", "`", ".. _x:", ".. code-block::", "<!--", "-->",
    "**", "*", "_", "[", "]", "(http://x.org)", "NCCL_DEBUG", "ProcessGroup",
    # data
    "key: ", "- ", "[table]", "[[arr]]", "a = 1", '"k": ', "[", "]", "null", "'", '"', "&a", "*a",
    # CMake, shell
    "add_library(", "set(", "function(", "endfunction()", "export ", "() {", "}", "$(", "fi",
    # JS/TS, Go, Rust, Java, Lua, Make
    "function ", "=>", "export ", "import ", "require(", "interface ", "func ", "package ", ":=",
    "fn ", "impl ", "mod ", "use crate::", "super::", "#[test]", "pub ", "public class ", "local ",
    "end", "--", "ifeq (", "endif", "define ", "endef", ":\n\t", "include ", "proc ",
    # names
    "foo", "Bar", "baz_qux", "X1", "é", "名前", "\U0001f600",
]

code_text = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)), max_size=60).map("".join)
any_bytes = st.one_of(st.binary(max_size=400), code_text.map(lambda text: text.encode("utf-8", "surrogatepass")),
                      code_text.map(lambda text: text.encode("utf-16")))

EXTRACTOR_BUGS = ("extractor failed", "tolerant parser failed")


def check_facts(path: str, data: bytes) -> None:
    facts, text, calls = extract_bytes(path, data)
    assert (facts, text, calls) == extract_bytes(path, data), "not deterministic"
    messages = [problem["message"] for problem in facts["problems"]]
    assert not [m for m in messages if m.startswith(EXTRACTOR_BUGS)], messages
    json.dumps(facts)  # facts are cached as JSON
    if is_binary(data):
        assert text is None and facts["symbols"] == []
        return
    assert text == decode(data)[0]
    # Lines as decode() normalises them (\r\n and \r become \n) and as editors and
    # Python's own line numbers count them: str.splitlines() would also split at
    # \x0c, \x1c-\x1e, \x85, \u2028 and \u2029, which no extractor counts as a line end.
    lines = text.split("\n")
    for symbol in facts["symbols"]:
        assert 1 <= symbol["line"] <= len(lines), symbol
        assert symbol["name"] in lines[symbol["line"] - 1], (symbol, lines[symbol["line"] - 1])
    for problem in facts["problems"]:
        assert 1 <= problem.get("line", 1) <= len(lines) + 1, problem


# derandomize: the same examples on every run, so CI never fails by chance; no database folder either
PROPERTY_SETTINGS = settings(max_examples=250, deadline=None, derandomize=True, database=None,
                             suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("path", PATHS)
@PROPERTY_SETTINGS
@given(text=code_text)
@example(text='#include "\n#include "')        # an unterminated header name ran into the next line
@example(text='#include \\\n  "x.h"\n')       # a continued directive names its header on line 2
@example(text="a: 1\x85b: 2\u2028c: [\n")        # YAML breaks lines at NEL and LS; kwdocs does not
def test_any_text_gives_deterministic_facts_on_the_right_lines(path, text):
    check_facts(path, text.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize("path", PATHS)
@settings(PROPERTY_SETTINGS, max_examples=100)
@given(data=any_bytes)
def test_any_bytes_give_deterministic_facts_on_the_right_lines(path, data):
    check_facts(path, data)


def test_every_registered_language_is_covered():
    """A new extractor in the registry must get a path above, or it goes untested."""
    registered = {language.module for language in (*BY_SUFFIX.values(), *BY_NAME.values())}
    assert registered <= {language_of(path).module for path in PATHS}


SAMPLES = {
    "pkg/mod.py": "import os\nfrom . import sibling\nclass A(B):\n    def f(self, x: int = 1) -> int:\n"
                  "        return os.path.join(x)\n@dec\ndef g(*a, **k):\n    eval(a)\nCONST = {1, 2, 3}\n",
    "docs/guide.md": "# Title\n\nUses `ProcessGroupNCCL` and NCCL_DEBUG, DataLoader, init_process_group.\n\n"
                     "## Second\n\n```python\ndef hidden(): pass\n```\n",
    "include/api.h": "#include <vector>\n#define MAX 3\nnamespace a { class TORCH_API B { int f(); }; }\n",
    "conf/ci.yaml": "jobs:\n  build: 1\non: push\nenv: {A: 1}\n",
    "CMakeLists.txt": "project(x)\nadd_library(core a.cpp)\nfunction(helper)\nendfunction()\n",
    "tools/run.sh": "#!/bin/sh\n# Runs it\nexport FOO=1\nrun() { echo $FOO; }\n",
}


def test_facts_do_not_depend_on_the_hash_seed():
    """Builds with -j N extract in several processes: set or dict order must not leak into facts."""
    script = ("import json, sys\nfrom kwdocs.extract import extract_bytes\n"
              "samples = json.loads(sys.stdin.read())\n"
              "print(json.dumps({p: extract_bytes(p, t.encode())[0] for p, t in samples.items()}, sort_keys=True))\n")
    outputs = set()
    for seed in ("1", "2", "3"):
        result = subprocess.run([sys.executable, "-c", script], input=json.dumps(SAMPLES), capture_output=True,
                                text=True, check=True, env={**os.environ, "PYTHONHASHSEED": seed})
        outputs.add(result.stdout)
    assert len(outputs) == 1


def test_docstring_literals_read_as_code_and_the_rest_as_written():
    """Overviews quote docstrings, which mark code as reST's ``literal``: a reader of the page
    sees code there, and every other character as the docstring has it."""
    import markdown
    from kwdocs.pages.render import prose
    html = markdown.markdown(prose("Users write ``geometry.Circle`` or ``a_b``, not a_b * 2 <b> ``` ``."))
    assert "<code>geometry.Circle</code>" in html and "<code>a_b</code>" in html
    assert "not a_b * 2 &lt;b&gt; ``` ``." in html and "\\" not in html
    about_backticks = "anything in inline code (`` `cuda` ``, ``:func:`torch.load```) is a name"
    assert markdown.markdown(prose(about_backticks)) == f"<p>{about_backticks}</p>"


_FOLDER_PART = st.one_of(st.sampled_from(["index.md", "doc.md", "a.py_docs.md", ".kwdocs", "x.md~", "x.md~~", "~",
                                          ".kwdocs~", "src", "a~b", "md"]),
                         st.text(alphabet="ab.md~k", min_size=1, max_size=8).filter(lambda part: part not in (".", "..")))


@given(st.lists(_FOLDER_PART, min_size=1, max_size=4), st.sampled_from(["a.py", "README.md", "x~"]))
def test_a_page_names_its_source_file_and_folder_back_exactly(parts, name):
    folder = "/".join(parts)
    assert layout.page_subject(layout.docs_page(f"{folder}/{name}")) == ("docs", f"{folder}/{name}")
    assert layout.page_subject(layout.kw_page(f"{folder}/{name}")) == ("kw", f"{folder}/{name}")
    assert layout.page_subject(layout.index_page(folder)) == ("index", folder)
    assert layout.page_subject(layout.doc_page(folder)) == ("doc", folder)
    assert layout.page_subject(layout.docs_page(name)) == ("docs", name)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab \n\\&<>`*_[]|#!{}-+1.;", min_size=1, max_size=24).map(str.strip).filter(bool))
@example("\\*&lt;")
@example("---")
@example("-- -")
@example("a\\_b & <c> `d` *e* [f](g) |h| #i !j")
def test_any_escaped_text_reads_in_markdown_as_written(text):
    """Text a page shows as prose (a name's label, a finding, a docstring's words) reads in
    Markdown exactly as written, whichever of HTML's and Markdown's marks it holds, one after
    another or already escaped: a backslash or ``&`` of its own is shown, never taken for an escape
    or an entity."""
    import html
    import markdown
    from kwdocs.pages.render import escape_md
    shown = markdown.markdown(escape_md(text), extensions=["tables"])   # a backslashed bar read as GFM reads it
    assert shown.startswith("<p>") and shown.endswith("</p>"), shown
    assert html.unescape(shown[3:-4]) == " ".join(text.split("\n")), shown
