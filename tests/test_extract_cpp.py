"""C, C++ and CUDA extraction: what a reader of a PyTorch-like tree expects to find."""
from __future__ import annotations

import time
from itertools import count
from pathlib import Path

import pytest
from hypothesis import example, given, settings, strategies as st

from kwdocs.extract import cpp, extract_bytes
from kwdocs.extract.cpp import extract, prepare
from tests.conftest import run_kwdocs

FIXTURES = Path(__file__).parent / "fixtures" / "cpp"
ALL_FIXTURES = sorted(p.relative_to(FIXTURES).as_posix()
                      for p in FIXTURES.rglob("*") if p.is_file())


def run(name: str) -> dict:
    """Extract a fixture through the registry, as the build does."""
    facts, _, _ = extract_bytes(name, (FIXTURES / name).read_bytes())
    return facts


def symbol(facts: dict, name: str, kind: str, line: int | None = None) -> dict:
    """The one symbol of that name and kind (on that line, when given)."""
    found = [s for s in facts["symbols"] if s["name"] == name and s["kind"] == kind
             and line in (None, s["line"])]
    assert len(found) == 1, (name, kind, line, found)
    return found[0]


def names(facts: dict, *kinds: str) -> set[str]:
    return {s["name"] for s in facts["symbols"] if s["kind"] in kinds}


# --- every fixture: the interface's promises ----------------------------------

@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_symbols_are_on_their_line_sorted_and_unique(name: str) -> None:
    facts = run(name)
    lines = (FIXTURES / name).read_text().split("\n")
    assert facts["symbols"], name
    for found in facts["symbols"]:
        assert found["name"] in lines[found["line"] - 1], found
    order = [(s["line"], s["name"], s["kind"]) for s in facts["symbols"]]
    assert order == sorted(set(order))
    assert facts["parsed"] is True and facts["problems"] == []


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_output_is_deterministic(name: str) -> None:
    assert run(name) == run(name)


def test_registry_sends_cuda_and_c_here() -> None:
    assert run("kernels.cu")["language"] == "cuda"
    assert run("legacy.c")["type_label"] == "C Source"
    assert run("demo.hpp")["type_label"] == "C++ Header"


# --- real PyTorch headers -----------------------------------------------------

def test_export_macro_does_not_hide_structs() -> None:
    facts = run("c10/core/GradMode.h")
    for name, line in [("GradMode", 9), ("AutoGradMode", 16), ("NoGradGuard", 32),
                       ("AutoFwGradMode", 38)]:
        found = symbol(facts, name, "class", line)
        assert found["parent"] == "c10" and found["detail"] == "struct"
    assert symbol(facts, "NoGradGuard", "class")["signature"] == (
        "struct NoGradGuard : public AutoGradMode")
    assert "C10_API" not in names(facts, "class", "function", "method", "type")


def test_methods_belong_to_their_struct() -> None:
    facts = run("c10/core/GradMode.h")
    enabled = symbol(facts, "is_enabled", "method", 10)
    assert enabled["parent"] == "GradMode"
    assert enabled["signature"] == "static bool is_enabled()"
    assert enabled["detail"] == "declaration"
    assert symbol(facts, "~AutoGradMode", "method")["parent"] == "AutoGradMode"
    assert [s["line"] for s in facts["symbols"] if s["name"] == "operator="
            and s["parent"] == "AutoFwGradMode"] == [45, 46]


def test_includes_are_imports_and_symbols() -> None:
    facts = run("c10/core/GradMode.h")
    assert facts["imports"] == [
        {"module": "c10/core/AutogradState.h", "line": 4, "kind": "include", "system": True},
        {"module": "c10/macros/Export.h", "line": 5, "kind": "include", "system": True},
    ]
    assert symbol(facts, "c10/macros/Export.h", "include")["line"] == 5


def test_nested_namespace_and_exported_free_functions() -> None:
    facts = run("c10/util/DeadlockDetection.h")
    assert "parent" not in symbol(facts, "c10", "namespace", 25)
    assert symbol(facts, "impl", "namespace", 25)["parent"] == "c10"
    gil = symbol(facts, "check_python_gil", "function", 27)
    assert gil["parent"] == "impl" and gil["signature"] == "bool check_python_gil()"
    assert symbol(facts, "check_python_gil", "method", 33)["parent"] == "PythonGILHooks"
    assert symbol(facts, "SetPythonGILHooks", "function", 36)["signature"] == (
        "void SetPythonGILHooks(PythonGILHooks* factory)")


def test_function_like_macro_and_doc_comment() -> None:
    facts = run("c10/util/DeadlockDetection.h")
    macro = symbol(facts, "TORCH_ASSERT_NO_GIL_WITHOUT_PYTHON_DEP", "macro", 20)
    assert macro["signature"] == "()"
    assert facts["docstring"].startswith(
        "This file provides some simple utilities for detecting common deadlocks in PyTorch.")


def test_cuda_header_kernels() -> None:
    facts = run("ATen/native/cuda/Randperm.cuh")
    kernel = symbol(facts, "randperm_handle_duplicate_keys_kernel", "function", 14)
    assert kernel["detail"] == "kernel" and "parent" not in kernel  # anonymous namespace
    host = symbol(facts, "randperm_handle_duplicate_keys", "function", 44)
    assert "detail" not in host
    assert "C10_CUDA_KERNEL_LAUNCH_CHECK" not in names(facts, "function")


# --- the hand-written C++ header ------------------------------------------------

def test_licence_is_skipped_for_the_overview() -> None:
    assert run("demo.hpp")["docstring"] == "Shape utilities for the demo tensor library."


def test_licence_notice_above_a_declaration_is_no_documentation_however_written() -> None:
    """Upper case, or letters beyond ASCII that fold to the words (a long s, U+017F, in LICENSED),
    as ``re.I`` reads them."""
    text = ("// SPDX-License-Identifier: MIT\nint a();\n\n"
            "// COPYRIGHT (C) ACME CORP.\nint b();\n\n"
            "// Zoë's code, LICEN\u017fED to all\nint c();\n\n"
            "// Adds two numbers, café style.\nint d();\n")
    docs = {s["name"]: s.get("doc", "") for s in extract(text, "x.h")["symbols"]}
    assert docs == {"a": "", "b": "", "c": "", "d": "Adds two numbers, café style."}
    assert extract("// LICEN\u017fED to all\nint c();\n", "x.h")["docstring"] == ""


def test_overview_skips_tool_notes_and_doxygen_tags() -> None:
    text = ("// clang-format off\n#pragma once\n// TODO: split this file\n\n"
            "/**\n * @file shape.h\n * @brief Shapes and strides.\n *\n * More detail.\n */\n"
            "int x;\n")
    assert extract(text, "shape.h")["docstring"] == "Shapes and strides."
    assert extract("int x; // not an overview\n", "x.h")["docstring"] == ""


def test_macros_object_like_function_like_and_inside_a_body() -> None:
    facts = run("demo.hpp")
    assert symbol(facts, "DEMO_MAX_DIMS", "macro", 13)["signature"] == "8"  # its value, as Doxygen shows it
    assert symbol(facts, "DEMO_CHECK", "macro", 14)["signature"] == "(cond, ...)"
    assert symbol(facts, "DEMO_LOCAL_PRODUCT", "macro")["line"] == 80


def test_macro_invocations_are_not_functions() -> None:
    facts = run("demo.hpp")
    callables = names(facts, "function", "method")
    for macro_call in ("C10_DEFINE_REGISTRY", "DEMO_DECLARE_FLAG", "AT_FORALL_SCALAR_TYPES",
                       "C10_DISABLE_COPY_AND_ASSIGN", "TORCH_LIBRARY"):
        assert macro_call not in callables


def test_types_enums_and_unions() -> None:
    facts = run("demo.hpp")
    assert symbol(facts, "dim_t", "type", 28)["parent"] == "shape"
    assert symbol(facts, "DimVector", "type", 29)["detail"] == "using"
    layout = symbol(facts, "Layout", "class", 31)
    assert layout["detail"] == "enum" and layout["parent"] == "shape"
    assert symbol(facts, "Bits", "class", 33)["detail"] == "union"


def test_class_members_nested_class_and_templates() -> None:
    facts = run("demo.hpp")
    shape = symbol(facts, "Shape", "class", 38)
    assert shape["parent"] == "shape"
    assert shape["signature"] == "class Shape final : public ShapeBase"
    assert symbol(facts, "Iterator", "class", 40)["parent"] == "Shape"
    assert symbol(facts, "operator*", "method", 41)["parent"] == "Iterator"
    constructors = [s["line"] for s in facts["symbols"]
                    if s["name"] == "Shape" and s["kind"] == "method"]
    assert constructors == [43, 44]
    assert symbol(facts, "~Shape", "method", 45)["signature"] == "~Shape() override"
    assert symbol(facts, "cast_to", "method", 48)["signature"] == (
        "template <typename T> T cast_to(const T& other) const")
    assert symbol(facts, "operator bool", "method", 50)["parent"] == "Shape"


def test_class_head_split_by_ifdef_reads_as_first_branch() -> None:
    facts = run("demo.hpp")
    assert symbol(facts, "Options", "class")["line"] == 58
    sizes = symbol(facts, "sizes", "method", 64)
    assert sizes["parent"] == "Options"


def test_free_functions_behind_export_and_device_macros() -> None:
    facts = run("demo.hpp")
    broadcast = symbol(facts, "broadcast", "function", 67)
    assert broadcast["signature"] == "Shape broadcast(const Shape& a, const Shape& b)"
    assert symbol(facts, "ceil_div", "function", 68)["signature"] == "dim_t ceil_div(dim_t a, dim_t b)"
    assert symbol(facts, "detail", "namespace", 74)["parent"] == "shape"
    assert symbol(facts, "check_dims", "function", 75)["parent"] == "detail"


def test_out_of_line_definitions_are_methods_of_their_class() -> None:
    facts = run("demo.hpp")
    numel = symbol(facts, "numel", "method", 79)
    assert numel["parent"] == "Shape" and "detail" not in numel
    assert symbol(facts, "~Shape", "method", 84)["parent"] == "Shape"


def test_out_of_line_namespace_function_is_a_function() -> None:
    text = "namespace at { namespace native {\nvoid relu(int);\n} }\n" \
           "void at::native::relu(int x) {}\n"
    relu = [s for s in extract(text, "relu.cpp")["symbols"] if s["line"] == 4]
    assert relu == [{"name": "relu", "kind": "function", "line": 4, "parent": "native",
                     "signature": "void at::native::relu(int x)"}]


SNIPPETS = [
    # (source, expected (name, kind, line, parent) among the symbols)
    ("class PROTOBUF_EXPORT Any PROTOBUF_FINAL :\n    public Message {\n};\n",
     ("Any", "class", 1, None)),
    ('class GOOGLE_CAPABILITY("mutex") PROTOBUF_EXPORT WrappedMutex {\n};\n',
     ("WrappedMutex", "class", 1, None)),
    ("inline uint16 GOOGLE_UNALIGNED_LOAD16(const void *p) {\n  return 0;\n}\n",
     ("GOOGLE_UNALIGNED_LOAD16", "function", 1, None)),
    ("__itt_domain* ITTAPI __itt_domain_create(const char* name);\n",
     ("__itt_domain_create", "function", 1, None)),
    ("struct Half {};\ninline C10_HOST_DEVICE Half::operator float() const {\n  return 0;\n}\n",
     ("operator float", "method", 2, "Half")),
    ("template <class T>\nArrayRef(const T*, size_t) -> ArrayRef<T>;\n",
     ("ArrayRef", "function", 2, None)),
    ("typedef void (Class::*MethodType)(int arg);\n", ("MethodType", "type", 1, None)),
    ("PROTOBUF_NAMESPACE_OPEN\nnamespace internal {\nclass AnyMetadata {};\n}\n",
     ("AnyMetadata", "class", 3, "internal")),
    ("class Graph {\n  friend void Lint(const Graph* g);\n};\n", ("Lint", "function", 2, "Graph")),
    ("#if defined(__s390x__)\ntemplate <class T, class U = void>\n#else\ntemplate <class T>\n"
     "#endif\nstruct Vectorized {\n  int size() const;\n};\n", ("size", "method", 7, "Vectorized")),
]


@pytest.mark.parametrize(("source", "expected"), SNIPPETS)
def test_constructs_seen_in_pytorch(source: str, expected: tuple) -> None:
    name, kind, line, parent = expected
    found = symbol(extract(source, "snippet.h"), name, kind, line)
    assert found.get("parent") == parent


def test_if_0_is_dead_code() -> None:
    text = "#if 0\nbroken {{ junk\n#define NOPE 1\n#else\nstruct Yes {};\n#endif\nstruct After {};\n"
    result = extract(text, "dead.h")
    assert [(s["name"], s["line"]) for s in result["symbols"]] == [("Yes", 5), ("After", 7)]


def test_macro_bodies_are_not_code() -> None:
    text = ("#define ACCESSORS(C) \\\n  inline int f() const { \\\n    return 1; \\\n  } \\\n"
            " \\\n  /* Singular accessors */ \\\n  inline int g() { \\\n    return 2; \\\n  }\n"
            "int after();\n")
    assert names(extract(text, "m.h"), "function", "macro") == {"ACCESSORS", "after"}


# --- CUDA and C ---------------------------------------------------------------------

def test_cuda_kernels_device_functions_and_launches() -> None:
    facts = run("kernels.cu")
    assert symbol(facts, "demo", "namespace", 5)
    assert symbol(facts, "cuda", "namespace", 5)["parent"] == "demo"
    assert "detail" not in symbol(facts, "square", "function", 7)
    kernel = symbol(facts, "square_kernel", "function", 10)
    assert kernel["detail"] == "kernel"
    assert kernel["signature"] == (
        "template <typename scalar_t> void square_kernel(const scalar_t* in, scalar_t* out, int n)")
    assert symbol(facts, "fill_kernel", "function", 17)["detail"] == "kernel"
    assert symbol(facts, "launch_square", "function", 19)["parent"] == "cuda"


def test_plain_c_structs_typedefs_and_functions() -> None:
    facts = run("legacy.c")
    assert symbol(facts, "buffer", "class", 7)["detail"] == "struct"
    assert symbol(facts, "buffer_t", "type", 10)["detail"] == "typedef"
    assert symbol(facts, "buffer_visitor", "type", 12)
    assert symbol(facts, "buffer_list", "class", 14)
    assert symbol(facts, "buffer_list_size", "function", 19)["signature"] == (
        "static size_t buffer_list_size(const struct buffer_list* list)")
    assert symbol(facts, "buffer_list_visit", "function", 23)["detail"] == "declaration"
    assert facts["docstring"] == "Plain C helpers: a list of named buffers."
    assert [i["system"] for i in facts["imports"]] == [True, False]


# --- bad input -------------------------------------------------------------------

def test_unbalanced_braces_keep_what_parses_and_say_so() -> None:
    text = "namespace a {\nclass Open {\n  void f();\n" + "int x = (;\n" * 30 + "void g() {}\n"
    result = extract(text, "broken.h")
    assert symbol(result, "Open", "class", 2)
    assert symbol(result, "f", "method", 3)
    assert result["problems"] and result["problems"][0]["line"] >= 1
    assert result["parsed"] is True


def test_small_parse_errors_are_not_reported() -> None:
    result = extract("int f(int a = {}, int b);\nvoid g();\n", "small.h")
    assert result["problems"] == []
    assert names(result, "function") == {"f", "g"}


def test_huge_file_falls_back_to_directives(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpp, "MAX_PARSE_BYTES", 100)
    text = "#include <vector>\n#define BIG(x) x\nclass Big {\n" + "  int field;\n" * 20 + "};\n"
    result = extract(text, "big.h")
    assert result["parsed"] is False
    assert "too large" in result["problems"][0]["message"]
    assert [(s["name"], s["kind"], s["line"]) for s in result["symbols"]] == [
        ("vector", "include", 1), ("BIG", "macro", 2)]
    assert result["imports"] == [{"module": "vector", "line": 1, "kind": "include",
                                  "system": True}]


def test_directives_in_comments_are_not_symbols() -> None:
    text = "/*\n#define NOT_A_MACRO 1\n#include <nothing.h>\n*/\nvoid f() {\n#define REAL 1\n}\n"
    result = extract(text, "comment.c")
    assert names(result, "macro", "include") == {"REAL"}


def test_binary_looking_text_does_not_raise() -> None:
    text = bytes(range(1, 256)).decode("latin-1") * 4 + "\nstruct S {\n"
    result = extract(text, "weird.h")
    assert isinstance(result["symbols"], list)


def test_preparing_keeps_every_line_and_offset() -> None:
    text = (FIXTURES / "demo.hpp").read_text()
    prepared = prepare(text)
    assert len(prepared) == len(text)
    assert [len(line) for line in prepared.split("\n")] == [len(line) for line in text.split("\n")]
    assert "class          Shape final : public ShapeBase {" in prepared  # DEMO_API blanked
    assert "#define DEMO_MAX_DIMS 8" in prepared  # directives kept


C_TOKENS = st.sampled_from([
    "class", "struct", "union", "enum", "namespace", "template", "<", ">", "typename", "T",
    "TORCH_API", "C10_API", "Foo", "bar", "::", "(", ")", "{", "}", ";", ",", "=", "{}", "*",
    "&", "operator", "==", "~", "int", "void", "\n", "\n#define X(a) a\n", "\n#include <x.h>\n",
    "\n#ifdef A\n", "\n#else\n", "\n#endif\n", "//", "/*", "*/", '"', "\\\n", "é", "\t",
])


@settings(max_examples=150, deadline=None)
@given(st.lists(C_TOKENS, max_size=60).map(" ".join))
@example("// class \n Foo class")      # a documented variable (the kinds of documented members came later)
def test_any_token_soup_gives_well_formed_facts(text: str) -> None:
    result = extract(text, "soup.hpp")
    lines = text.split("\n")
    for found in result["symbols"]:
        assert 1 <= found["line"] <= len(lines)
        assert found["name"] and found["kind"] in {
            "namespace", "class", "function", "method", "macro", "type", "include", "constant", "variable"}
    order = [(s["line"], s["name"], s["kind"], s.get("parent", "")) for s in result["symbols"]]
    assert order == sorted(set(order))


def test_parse_running_past_its_budget_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpp, "PARSE_CHECKS", 0)
    result = extract("#define SLOW 1\n" + "struct Slow { int x; };\n" * 2000, "slow.h")
    assert result["parsed"] is False
    assert "parsing ran past its budget" in result["problems"][0]["message"]
    assert [s["name"] for s in result["symbols"]] == ["SLOW"]
    # the shared parser is usable again afterwards
    monkeypatch.undo()
    assert symbol(extract("struct Fast {};\n", "fast.h"), "Fast", "class", 1)


def test_a_slow_machine_gets_the_same_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The parse's budget is counted in the parser's steps: a machine so loaded that each of
    them seems to take a minute still gets the whole file parsed, as a quiet one does."""
    text = "#define SLOW 1\n" + "struct Slow { int x; };\n" * 2000
    quiet = extract(text, "slow.h")
    clock = count(step=60.0)
    monkeypatch.setattr(time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(time, "perf_counter", lambda: next(clock))
    assert extract(text, "slow.h") == quiet
    assert quiet["parsed"] is True and not quiet["problems"]


def test_anonymous_enum_is_not_named_after_its_underlying_type() -> None:
    facts = extract("namespace n {\nenum : ullong { kA = 1 };\nenum class Color : int { Red };\n}\n", "e.h")
    # the enumerators are listed (as Doxygen lists an enum's values); nothing is named ``ullong``
    assert [(s["name"], s["kind"]) for s in facts["symbols"]] == [
        ("n", "namespace"), ("kA", "constant"), ("Color", "class"), ("Red", "constant")]


def test_signatures_as_written_trailing_return_and_template_head() -> None:
    facts = extract("auto twice(char c) -> char;\ntemplate <typename T, int N = 2>\nT first(const T* v);\n", "s.h")
    signatures = {s["name"]: s["signature"] for s in facts["symbols"]}
    assert signatures == {"twice": "auto twice(char c) -> char",
                          "first": "template <typename T, int N = 2> T first(const T* v)"}



PROTOTYPES = """namespace a { struct B { int c(int x) const; }; }
int a::B::c(int   x) const { return x; }
class S {
 public:
  explicit S(int n) noexcept;
  S(const S&) = delete;
  S& operator=(S&&) = default;
  virtual ~S() = default;
  virtual void run() const = 0;
  explicit operator bool() const { return true; }
  friend std::ostream& operator<<(std::ostream& os, const S& s);
  /// Frees the data.
  void (*free_data)(record *) = nullptr;
  static void* operator new(size_t n);
  int count(void) __attribute__((pure));
};
inline S::operator int() const { return 1; }
extern int c_api(int x,
                 int y);
__attribute__((pure)) inline int *ptr_ret(void);
"""


def test_each_declaration_kind_shows_its_prototype_as_declared() -> None:
    # what Doxygen and a C/C++ reader expect: return type, name, parameters, trailing clauses
    shown = {(s["line"], s["name"]): s["signature"] for s in extract(PROTOTYPES, "p.h")["symbols"]
             if s["kind"] in ("function", "method", "variable")}
    assert shown == {
        (1, "c"): "int c(int x) const",
        (2, "c"): "int a::B::c(int x) const",                      # out-of-class definition
        (5, "S"): "explicit S(int n) noexcept",                     # constructor
        (6, "S"): "S(const S&) = delete",
        (7, "operator="): "S& operator=(S&&) = default",            # operator
        (8, "~S"): "virtual ~S() = default",                        # destructor
        (9, "run"): "virtual void run() const = 0",
        (10, "operator bool"): "explicit operator bool() const",    # conversion function
        (11, "operator<<"): "std::ostream& operator<<(std::ostream& os, const S& s)",
        (13, "free_data"): "void (*free_data)(record *)",           # function pointer
        (14, "operator new"): "static void* operator new(size_t n)",
        (15, "count"): "int count(void)",                           # an attribute after it dropped
        (17, "operator int"): "S::operator int() const",
        (18, "c_api"): "int c_api(int x, int y)",                   # ``extern`` and ``inline`` say how, not what
        (20, "ptr_ret"): "int *ptr_ret(void)",                      # attributes dropped
    }



def test_old_style_c_definition_shows_its_head_as_written() -> None:
    text = "/// Adds.\nstatic int add(a, b)\n  int a;\n  char *b;\n{ return a; }\nint x = f(a);\n"
    symbols = extract(text, "knr.c")["symbols"]
    # Doxygen shows ``static int add(a, b)``; ``int x = f(a);`` stays a variable
    assert symbols == [{"name": "add", "kind": "function", "line": 2, "signature": "static int add(a, b)",
                        "doc": "Adds."}]

LIBSHM = """#pragma once

/// Starts the manager at a\\/b (a path such as C:\\temp\\x or \\\\server).
void libshm_init(const char* manager_exec_path);

/// Whether \\p n fits: 'a\\/b', \\:scope and \\? stay as written, `x\\/y` too.
int fits(int n);

/// The largest size.
#define SHM_MAX 64

enum Mode {
  kRead,   ///< Read only.
  kWrite,
};

struct Record {
  /// Its size.
  int size;
  int undocumented(void);
};
"""


def _docs_page(tmp_path: Path, name: str, text: str) -> str:
    """The docs page of a tree holding one file ``name`` with ``text``."""
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / name).write_text(text, encoding="utf-8")
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    return (out / f"{name}_docs.md").read_text(encoding="utf-8")


def test_page_shows_prototypes_labelled_as_declarations(tmp_path: Path) -> None:
    page = _docs_page(tmp_path, "libshm.h", LIBSHM)
    assert "function declaration **`libshm_init`** `void libshm_init(const char* manager_exec_path)`" in page
    assert "method declaration **`undocumented`** `int undocumented(void)`" in page
    assert "declaration function" not in page and "declaration method" not in page


def test_backslash_sequences_of_a_comment_are_shown_as_written(tmp_path: Path) -> None:
    page = _docs_page(tmp_path, "libshm.h", LIBSHM)
    # Markdown shows ``\\/`` as ``\/``: what Doxygen shows (``\\\\`` is its escaped backslash)
    assert "Starts the manager at a\\\\/b (a path such as C:\\\\temp\\\\x or \\\\server)." in page
    assert "Whether `n` fits: 'a\\\\/b', \\\\:scope and \\\\? stay as written, `x\\/y` too." in page


def test_coverage_counts_every_definition_the_page_lists(tmp_path: Path) -> None:
    # listed: libshm_init, fits, SHM_MAX, Mode, kRead, kWrite, Record, size, undocumented; the
    # documented ones are libshm_init, fits, SHM_MAX, kRead and size
    page = _docs_page(tmp_path, "libshm.h", LIBSHM)
    start = page.index("### Code Structure")
    assert page.count("- <a id=", start, page.index("\n## ", start)) == 9
    assert "*Documentation coverage: 5 of 9 public definitions documented (55.6%).*" in page

AVX_HEADER = Path("/work/corpus/full/torch/include/ATen/native/cpu/avx_mathfun.h")


@pytest.mark.skipif(not AVX_HEADER.exists(), reason="the corpus is not on this machine")
def test_damage_is_reported_where_the_code_is_not_an_enclosing_if_guard() -> None:
    text = AVX_HEADER.read_text(encoding="utf-8")
    damage = [p["line"] for p in extract(text, "avx_mathfun.h")["problems"] if "not understood" in p["message"]]
    assert damage and all(not text.split("\n")[line - 1].lstrip().startswith("#") for line in damage)


# --- #if branches: the comment above a group, the branch of each macro --------------------------

BRANCHES = """\
#ifndef LIB_H
#define LIB_H

/// Index sequences
#if defined(LIB_CPP14)
using std::index_sequence;
#else
template <size_t...>
struct index_sequence {};
template <size_t N>
struct make_index_sequence {};
#endif

/// Compile-time all/any of the template types
#if defined(__cpp_fold_expressions)
template <class... Ts>
using all_of = bool_constant<(Ts::value && ...)>;
#elif !defined(_MSC_VER)
template <bool...>
struct bools {};
#endif

/// Tracks the ABI version.
#ifndef LIB_ABI_VERSION
#    define LIB_ABI_VERSION 12
#endif

#if defined(_WIN32) // exported names
#define LIB_EXPORT __declspec(dllexport)
#elif defined(__GNUC__)
#  if __GNUC__ >= 4
#    define LIB_EXPORT __attribute__((visibility("default")))
#  endif
#else
#define LIB_EXPORT
#endif
#endif
"""


def test_a_comment_above_an_if_documents_the_first_declaration_of_each_branch() -> None:
    """Doxygen reads the comment above ``#if`` as the documentation of what follows in the branch it
    compiles (``/// Index sequences`` over ``#if ... #else struct index_sequence``): each branch's
    first declaration gets it; the second of a branch, and an include guard, do not."""
    facts = extract(BRANCHES, "lib.h")
    assert symbol(facts, "index_sequence", "class")["doc"] == "Index sequences"
    assert "doc" not in symbol(facts, "make_index_sequence", "class")
    assert symbol(facts, "all_of", "type")["doc"] == "Compile-time all/any of the template types"
    assert symbol(facts, "bools", "class")["doc"] == "Compile-time all/any of the template types"
    assert symbol(facts, "LIB_ABI_VERSION", "macro")["doc"] == "Tracks the ABI version."
    guard = symbol(facts, "LIB_H", "macro")
    assert "doc" not in guard and "condition" not in guard
    # a guard whose #define comes after a comment is a guard all the same
    spaced = extract("#ifndef B_H\n// the guard\n\n#define B_H\n#define B_MAX 4\n#endif\n", "b.h")
    assert "condition" not in symbol(spaced, "B_MAX", "macro")


def test_each_definition_of_a_macro_says_its_if_branch() -> None:
    """A macro defined in several branches is listed once per definition, each with its branch: the
    directive (comments and the include guard left out) and, for ``#elif`` and ``#else``, the
    ``#if`` of their group."""
    facts = extract(BRANCHES, "lib.h")
    exports = [(s["line"], s.get("condition")) for s in facts["symbols"] if s["name"] == "LIB_EXPORT"]
    assert exports == [(29, ["#if defined(_WIN32)"]), (32, ["#if __GNUC__ >= 4"]),
                       (35, ["#else", "#if defined(_WIN32)"])]
    assert symbol(facts, "LIB_ABI_VERSION", "macro")["condition"] == ["#ifndef LIB_ABI_VERSION"]
    elif_only = extract("#if A\n#define X 1\n#elif B\n#define X 2\n#endif\n", "x.h")
    assert symbol(elif_only, "X", "macro", 4)["condition"] == ["#elif B", "#if A"]
    # a macro inside a function body, found by the scan of directives, says it too
    in_body = extract("void f() {\n#ifdef A\n#define X 1\n#endif\n}\n", "x.h")
    assert symbol(in_body, "X", "macro", 3)["condition"] == ["#ifdef A"]


def test_a_plain_note_under_a_doxygen_comment_is_not_the_declarations_doc() -> None:
    """``/** Return ... */`` then ``// Templatized to ...`` over a declaration: the note is for the
    source's reader; Doxygen documents the declaration with the comment above it, and so do the pages."""
    text = ("struct str {\n    /** Return a string representation of the object. */\n"
            "    // Templatized to avoid ambiguity.\n    template <typename T>\n    explicit str(T &&h);\n};\n\n"
            "/// Check if a template is the base of a type.\ntemplate <typename T>\n// Sadly, MSVC needs this.\n"
            "#if !defined(_MSC_VER)\nusing is_base = decltype(check((T *) nullptr));\n#endif\n\n"
            "// A plain comment of its own.\nint plain();\n")
    facts = extract(text, "s.h")
    assert symbol(facts, "str", "method")["doc"] == "Return a string representation of the object."
    assert symbol(facts, "is_base", "type")["doc"] == "Check if a template is the base of a type."
    assert symbol(facts, "plain", "function")["doc"] == "A plain comment of its own."


def test_a_documented_template_declaration_is_not_documentation_of_its_specializations() -> None:
    """``/** Partial template specializations ... */ template <...> struct process_attribute;``
    documents the primary template, which Doxygen lists at that line; an undocumented
    specialization below does not take it."""
    text = ("/// Partial template specializations to process attributes.\n"
            "template <typename T, typename SFINAE = void>\nstruct process_attribute;\n\n"
            "/// Process a name.\ntemplate <>\nstruct process_attribute<name> {};\n\n"
            "template <typename T>\nstruct process_attribute<T, enable_if_t<is_object<T>::value>> {};\n")
    found = [(s["line"], s.get("doc", "")) for s in extract(text, "a.h")["symbols"]]
    assert found == [(3, "Partial template specializations to process attributes."),
                     (7, "Process a name."), (10, "")]


def test_a_macro_wrapping_the_return_type_hides_no_declaration() -> None:
    """cJSON declares its whole API as ``CJSON_PUBLIC(cJSON *) cJSON_Parse(const char *value);``
    and ``internal_malloc`` behind a calling convention (``void * CJSON_CDECL internal_malloc(``):
    Doxygen and ctags list them; none of the 78 was found, and the helpers were methods of a
    class ``CJSON_CDECL``."""
    header = ("#define CJSON_PUBLIC(type) type\n#define CJSON_CDECL __cdecl\n\n"
              "/* Supply a block of JSON, and this returns a cJSON object you can interrogate. */\n"
              "CJSON_PUBLIC(cJSON *) cJSON_Parse(const char *value);\n"
              "CJSON_PUBLIC(const char *) cJSON_GetErrorPtr(void);\n"
              "CJSON_PUBLIC(void) cJSON_Delete(cJSON *item);\n"
              "C10_DEPRECATED_MESSAGE(\"use g\") void f(int x);\n")
    facts = extract(header, "cJSON.h")
    parse = symbol(facts, "cJSON_Parse", "function")
    assert parse["signature"] == "cJSON * cJSON_Parse(const char *value)"
    assert parse["doc"].startswith("Supply a block of JSON")
    assert symbol(facts, "cJSON_GetErrorPtr", "function")["signature"] == "const char * cJSON_GetErrorPtr(void)"
    assert symbol(facts, "cJSON_Delete", "function")["line"] == 7
    assert symbol(facts, "f", "function")["signature"] == "void f(int x)"
    source = ("static void * CJSON_CDECL internal_malloc(size_t size)\n{\n    return malloc(size);\n}\n\n"
              "CJSON_PUBLIC(cJSON *) cJSON_Parse(const char *value)\n{\n    return 0;\n}\n")
    facts = extract(source, "cJSON.c")
    helper = symbol(facts, "internal_malloc", "function")
    assert "parent" not in helper and helper["signature"] == "static void * internal_malloc(size_t size)"
    assert symbol(facts, "cJSON_Parse", "function")["line"] == 6
