"""The rule set behind File Purpose, Architecture & Design, Code Patterns,
Performance and Security: what it finds, what it must not find, that secrets
never show in full, and that a project can extend it."""
from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from kwdocs.extract.python import extract
from kwdocs.rules.ruleset import RuleError, RuleSet, mask_secrets

FIXTURES = Path(__file__).parent / "fixtures" / "rules"


@pytest.fixture(scope="module")
def rules() -> RuleSet:
    return RuleSet.load(project="Acme")


def facts_for(path: str, language: str = "python", **extra) -> dict:
    return {"path": path, "language": language, "imports": [], "symbols": [], **extra}


def call(name: str, line: int = 3, args: list[str] | None = None, **kwargs: str) -> dict:
    """A call record as the Python extractor writes it (names resolved through imports)."""
    return {"name": name, "line": line, "kwargs": kwargs, "args": args or []}


def security(rules: RuleSet, calls: list[dict], path: str = "tools/job.py", language: str = "python",
             text: str = "") -> list[dict]:
    return rules.evaluate(facts_for(path, language), text, calls)["security"]


# ---------------------------------------------------------------- security: calls

FLAGGED_CALLS = [
    ("security.eval", call("eval", args=["expression"])),
    ("security.eval", call("builtins.eval")),
    ("security.exec", call("exec", args=["source"])),
    ("security.pickle", call("pickle.loads")),        # also `from pickle import loads; loads(x)`
    ("security.pickle", call("pickle.load")),
    ("security.pickle", call("pickle.Unpickler")),
    ("security.torch-load", call("torch.load", weights_only="False")),
    ("security.numpy-pickle", call("numpy.load", allow_pickle="True")),
    ("security.shell-true", call("subprocess.run", args=["cmd"], shell="True")),
    ("security.shell-true", call("subprocess.check_output", shell="use_shell")),
    ("security.os-shell", call("os.system", args=["'make'"])),
    ("security.os-shell", call("os.popen")),
    ("security.yaml-load", call("yaml.load", args=["stream"])),
    ("security.yaml-load", call("yaml.load", args=["stream"], Loader="yaml.FullLoader")),
    ("security.yaml-load", call("yaml.unsafe_load", args=["stream"])),
    ("security.mktemp", call("tempfile.mktemp")),
    ("security.tls-verify", call("requests.get", args=["url"], verify="False")),
]

SAFE_CALLS = [
    call("model.eval"),                                   # nn.Module.eval, not builtins.eval
    call("self.exec"),
    call("pickle.dumps"),
    call("torch.load", args=["path"], weights_only="True"),
    call("torch.load", args=["path"]),                    # weights_only=True is the default
    call("torch.save"),
    call("numpy.load", args=["path"]),
    call("subprocess.run", args=["cmd"]),
    call("subprocess.run", args=["cmd"], shell="False"),
    call("os.path.join"),
    call("yaml.load", args=["stream"], Loader="yaml.SafeLoader"),
    call("yaml.load", args=["stream"], Loader="yaml.CSafeLoader"),
    call("yaml.load", args=["stream", "yaml.SafeLoader"]),  # the loader given by position
    call("yaml.safe_load", args=["stream"]),
    call("tempfile.mkstemp"),
    call("tempfile.NamedTemporaryFile"),
    call("requests.get", args=["url"], verify="True"),
]


@pytest.mark.parametrize("rule_id, flagged", FLAGGED_CALLS, ids=lambda item: item if isinstance(item, str) else "")
def test_risky_calls_are_reported_with_their_line(rules, rule_id, flagged):
    found = security(rules, [dict(flagged, line=17)])
    assert [(f["rule"], f["line"]) for f in found] == [(rule_id, 17)]
    assert f"`{flagged['name']}" in found[0]["message"]


@pytest.mark.parametrize("harmless", SAFE_CALLS, ids=lambda item: f"{item['name']}{sorted(item['kwargs'].items())}")
def test_safe_calls_are_not_reported(rules, harmless):
    assert security(rules, [harmless]) == []


def test_a_call_finding_shows_the_argument_that_made_it_risky(rules):
    [finding] = security(rules, [call("torch.load", weights_only="False")])
    assert "`torch.load(..., weights_only=False)`" in finding["message"]
    [finding] = security(rules, [call("subprocess.Popen", shell="True")])
    assert "`subprocess.Popen(..., shell=True)`" in finding["message"]


def test_call_rules_apply_to_python_only(rules):
    assert security(rules, [call("eval"), call("os.system")], path="src/eval.cpp", language="cpp") == []


def test_each_call_is_one_finding_in_line_order(rules):
    found = security(rules, [call("eval", line=40), call("os.system", line=5), call("eval", line=12)])
    assert [(f["line"], f["rule"]) for f in found] == [(5, "security.os-shell"), (12, "security.eval"),
                                                         (40, "security.eval")]


# ---------------------------------------------------------------- security: text (C++, shell)

def test_unbounded_string_copies_and_shell_calls_in_cpp(rules):
    text = (FIXTURES / "socket_util.h").read_text()
    found = security(rules, [], path="torch/lib/libshm/socket_util.h", language="cpp", text=text)
    lines = text.splitlines()
    reported = {(f["rule"], lines[f["line"] - 1].strip()) for f in found}
    assert reported == {
        ("security.c-unbounded-copy", "strcpy(dst, src);"),
        ("security.c-unbounded-copy", 'std::strcat(dst, "/");'),
        ("security.c-shell", "return system(command);"),
    }  # and not safe_strcpy(...)


def test_a_download_piped_into_a_shell(rules):
    text = (FIXTURES / "install_deps.sh").read_text()
    found = security(rules, [], path="scripts/install_deps.sh", language="shell", text=text)
    assert [(f["rule"], f["line"]) for f in found] == [("security.pipe-to-shell", 5)]


# ---------------------------------------------------------------- secrets

LEAKY = (FIXTURES / "leaky_settings.py").read_text()
PLANTED = {  # secret -> the rule that must report it
    "AKIAIOSFODNN7EXAMPLE": "security.secret.aws-access-key",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY": "security.secret.aws-secret-key",
    "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d": "security.secret.github-token",
    "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":
        "security.secret.github-token",
    "xoxb-321223307924-4026859952890-D53X83RZJzzzzgEOzdmenCkh": "security.secret.slack-token",
    "AIzaJKY40uvSwMFLZDe1f8rESQedUStPKR0CsTy": "security.secret.google-api-key",
    "sk_live_vMdgaKjIg8xNbe3nNyjOq9wM": "security.secret.stripe-key",
    "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": "security.secret.huggingface-token",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIy"
    "fQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c": "security.secret.jwt",
    "s3cr3t-Hunter2!": "security.secret.password",
    "Tr0ub4dor&3": "security.secret.url-credentials",
    "3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c": "security.secret.assignment",
    "9bArPcZm9FveqizK7c0rUVdBDk3uSvKzT0MKBzRH3mNsDoBslXumhNZDH7Xq10JNCeFdAkxYSPI9":
        "security.secret.private-key",
}


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_every_planted_secret_is_found_on_its_line(rules):
    found = security(rules, [], path="deploy/leaky_settings.py", text=LEAKY)
    by_line = {(f["line"], f["rule"]) for f in found}
    for secret, rule_id in PLANTED.items():
        line = line_of(LEAKY, "-----BEGIN") if rule_id.endswith("private-key") else line_of(LEAKY, secret)
        assert (line, rule_id) in by_line, secret
    assert len(found) == len(PLANTED)  # one finding each, the key block included


def test_mask_secrets_leaves_no_secret_in_full():
    masked, lines = mask_secrets(LEAKY)
    for secret in PLANTED:
        assert secret not in masked
    assert masked.count("\n") == LEAKY.count("\n")  # line numbers on the page stay right
    assert 'AWS_ACCESS_KEY_ID = "AKIA****************"' in masked
    assert "-----BEGIN RSA PRIVATE KEY-----\n****" in masked
    assert 'RESULTS_DIR = os.path.join(os.path.dirname(__file__), "results")' in masked
    assert lines == sorted({line_of(LEAKY, "-----BEGIN") if rule.endswith("private-key") else line_of(LEAKY, s)
                            for s, rule in PLANTED.items()})


def test_findings_show_secrets_masked_only(rules):
    findings = rules.evaluate(facts_for("deploy/leaky_settings.py"), LEAKY, [])
    dumped = json.dumps(findings)
    for secret in PLANTED:
        assert secret not in dumped
        assert secret[4:] not in dumped  # not even without the kept prefix
    messages = [f["message"] for f in findings["security"]]
    assert "Contains an **AWS access key id** (`AKIA****************`)." in messages
    assert findings["secret_lines"] == mask_secrets(LEAKY)[1]


def test_placeholders_and_environment_lookups_are_not_secrets(rules):
    text = (FIXTURES / "safe_settings.py").read_text()
    assert mask_secrets(text) == (text, [])
    assert security(rules, [], path="deploy/safe_settings.py", text=text) == []


def test_a_secret_inside_another_rules_match_is_masked_too():
    custom = RuleSet.load(extra_rules=[{
        "id": "patterns.upload-config", "section": "patterns", "message": "Configures uploads ({matches}).",
        "text": ['"api_key": "[^"]*"']}])
    [message] = custom.evaluate(facts_for("deploy/leaky_settings.py"), LEAKY, [])["patterns"]
    assert "3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c" not in message
    assert '"api_key": "3f******' in message


def test_a_project_secret_pattern_is_masked_when_its_rule_set_is_given():
    custom = RuleSet.load(extra_rules=[{
        "id": "security.secret.acme-token", "section": "security", "secret": True,
        "message": "Contains an **Acme token** ({match}).", "text": ["acme_[0-9a-f]{24}"]}])
    text = 'TOKEN_FOR_CI = "acme_0123456789abcdef01234567"\n'
    masked, lines = mask_secrets(text, custom)
    assert "acme_0123456789abcdef01234567" not in masked and lines == [1]


# ---------------------------------------------------------------- purpose and role

def purpose(rules: RuleSet, path: str, language: str = "python", **extra) -> list[str]:
    return rules.evaluate(facts_for(path, language, **extra), "", [])["purpose"]


def test_the_seeds_sentences(rules):
    assert purpose(rules, "docs/source/distributed.md", "markdown") == [
        "This file is part of the **documentation**."]
    assert purpose(rules, "torch/distributed/benchmarks/README.md", "markdown") == [
        "This file contains **examples or benchmarks**.", "This file is part of the **documentation**."]


@pytest.mark.parametrize("path, language, expected", [
    ("test/test_nn.py", "python", "This file is part of the **tests**."),
    ("torch/testing/_internal/test_utils.py", "python", "This file is part of the **tests**."),
    ("caffe2/core/net_test.py", "python", "This file is part of the **tests**."),
    ("examples/mnist/main.py", "python", "This file contains **examples or benchmarks**."),
    ("benchmark_matmul.py", "python", "This file contains **examples or benchmarks**."),
    (".github/workflows/lint.yml", "yaml", "This file holds **configuration or data**."),
    ("setup.cfg", "text", "This file holds **configuration or data**."),
    ("CMakeLists.txt", "cmake", "This file is part of the **build system**."),
    ("cmake/public/cuda.cmake", "cmake", "This file is part of the **build system**."),
    ("scripts/build_android.sh", "shell", "This file is part of the **build system**."),
    ("torch/nn/modules/linear.py", "python", "`torch/nn/modules/linear.py` is **source code** with no documentation of its own."),
    ("LICENSE", "text", "`LICENSE` is a **supporting file** (Text File) with no documentation of its own."),
])
def test_purpose_from_path(rules, path, language, expected):
    found = rules.evaluate(facts_for(path, language, type_label="Text File"), "", [])["purpose"]
    assert expected in found


def test_a_file_defining_tests_is_a_test_and_tagged_so(rules):
    imports = [{"module": "pytest", "line": 1}]
    symbols = [{"name": "test_checks", "kind": "function", "line": 4, "signature": "()"}]
    found = rules.evaluate(facts_for("torch/utils/checks.py", imports=imports, symbols=symbols), "", [])
    assert "This file defines **tests** (`test_checks` at line 4)." in found["purpose"]
    assert not any("**source code**" in sentence for sentence in found["purpose"])  # the fallback only stands alone
    assert found["tags"] == ["defines-tests", "test"]
    importing = rules.evaluate(facts_for("torch/utils/checks.py", imports=imports), "", [])
    assert importing["tags"] == ["unclassified"]


@pytest.mark.parametrize("path, words", [
    ("torch/distributed/fsdp/api.py", "**distributed training**"),
    ("torch/csrc/distributed/c10d/Work.hpp", "**distributed training**"),
    ("torch/nn/modules/conv.py", "**neural network building blocks**"),
    ("torch/csrc/autograd/engine.cpp", "**C++ core**"),
    ("torch/_inductor/codegen/triton.py", "**TorchInductor**"),
    ("torch/cuda/memory.py", "**CUDA backend**"),
    ("test/distributed/test_c10d.py", "**test suite**"),
    ("docs/source/conf.py", "**documentation sources**"),
    ("benchmarks/dynamo/huggingface.py", "**benchmarks**"),
    ("tools/setup_helpers/env.py", "**developer tools**"),
    ("torch/utils/data/dataloader.py", "**`torch.utils`**"),
    ("torch/optim/adam.py", "**optimizers**"),
    ("torch/autograd/function.py", "**automatic differentiation**"),
    ("torch/jit/_script.py", "**TorchScript**"),
    ("torch/fx/graph.py", "**FX**"),
    ("torch/onnx/utils.py", "**ONNX exporter**"),
    ("torch/testing/_comparison.py", "**testing utilities**"),
    ("torch/include/fmt/format.h", "**Third-party code**"),
])
def test_role_from_folder(rules, path, words):
    role = rules.evaluate(facts_for(path), "", [])["role"]
    assert any(words in sentence for sentence in role), role


def test_role_falls_back_to_the_folder(rules):
    assert rules.evaluate(facts_for("acme/widgets/knob.py"), "", [])["role"] == [
        "This file is in the `acme/widgets` folder."]
    assert rules.evaluate(facts_for("setup.py"), "", [])["role"] == ["This file is in the root folder."]


def test_no_shipped_message_names_a_project():
    shipped = tomllib.loads((Path(__file__).parents[1] / "kwdocs" / "rules" / "rules.toml").read_text())
    for rule in shipped["rule"]:
        assert "PyTorch" not in rule["message"], rule["id"]


# ---------------------------------------------------------------- patterns and performance

def sections(rules: RuleSet, path: str, language: str = "python", text: str = "", calls=(), **extra) -> dict:
    return rules.evaluate(facts_for(path, language, **extra), text, list(calls))


def test_python_patterns_name_what_they_found(rules):
    symbols = [
        {"name": "Point", "kind": "class", "line": 5, "decorators": ["dataclass(frozen=True)"]},
        {"name": "Config", "kind": "class", "line": 9, "decorators": ["dataclasses.dataclass"]},
        {"name": "timer", "kind": "function", "line": 14, "decorators": ["contextlib.contextmanager"]},
        {"name": "Lock", "kind": "class", "line": 20, "signature": ""},
        {"name": "__enter__", "kind": "method", "line": 21, "parent": "Lock", "signature": "(self)"},
        {"name": "MLP", "kind": "class", "line": 30, "signature": "(nn.Module)"},
        {"name": "Head", "kind": "class", "line": 40, "signature": "(torch.nn.Module, metaclass=Registry)"},
        {"name": "Plain", "kind": "class", "line": 50, "signature": "(object)"},
        {"name": "fused", "kind": "function", "line": 60, "decorators": ["torch.jit.script"]},
        {"name": "area", "kind": "method", "line": 70, "parent": "Point", "decorators": ["property"]},
    ]
    text = "import asyncio\n\nasync def fetch(url):\n    return url\n"
    found = sections(rules, "acme/model.py", text=text, symbols=symbols,
                     imports=[{"module": "typing", "names": ["Any"], "line": 1, "kind": "from"}])
    assert found["patterns"] == [   # each match with its line; importing typing is no type hint
        "Defines **`nn.Module` subclasses** (`Head` at line 40, `MLP` at line 30).",
        "Defines **context managers** (`Lock` at line 21, `timer` at line 14).",
        "Defines **dataclasses** (`Config` at line 9, `Point` at line 5).",
        "Exposes **properties** (`area` at line 70).",
        "Uses **TorchScript decorators** (`fused` at line 60).",
        "Uses **async** code (`fetch` at line 3).",
    ]
    assert found["performance"] == ["Uses **compilation** to speed up execution (`fused` at line 60)."]


def test_cpp_patterns_and_performance(rules):
    text = (FIXTURES / "socket_util.h").read_text()
    imports = [{"module": name, "line": line, "kind": "include", "system": True}
               for line, name in ((3, "cstring"), (4, "immintrin.h"), (5, "torch/extension.h"))]
    found = sections(rules, "csrc/socket_util.h", "cpp", text=text, imports=imports)
    assert found["patterns"] == [
        "Binds C++ to Python with **pybind11**.",
        "Exports symbols from a shared library with **visibility macros** (`TORCH_API` at line 10).",
        "Uses **C++ templates** (`template` at line 9).",
    ]
    assert found["performance"] == ["Uses **SIMD vector instructions** (`immintrin.h` at line 4)."]


@pytest.mark.parametrize("path, language, text, imports, calls, expected", [
    ("acme/pool.py", "python", "", ["concurrent.futures"], [call("concurrent.futures.ThreadPoolExecutor")],
     "Runs work **in parallel** (`concurrent.futures.ThreadPoolExecutor` at line 3)."),
    ("acme/gpu.py", "python", "", [], [call("torch.cuda.synchronize")],
     "Runs work on **GPUs** (`torch.cuda.synchronize` at line 3)."),
    ("acme/kernels.cu", "cuda", "__global__ void k() {}\n", [], [],
     "Contains or launches **CUDA kernels** that run on the GPU (`__global__` at line 1)."),
    ("acme/launch.cu", "cuda", "void run() {\n  k<<<1, 32>>>();\n}\n", [], [],
     "Contains or launches **CUDA kernels** that run on the GPU (`<<<` at line 2)."),
    ("acme/pool.cpp", "cpp", "void run() {\n  at::parallel_for(0, n, 1, body);\n}\n", [], [],
     "Runs work **in parallel threads** (`at::parallel_for(` at line 2)."),
    ("acme/fast.py", "python", "", [], [call("torch.compile")],
     "Uses **compilation** to speed up execution (`torch.compile` at line 3)."),
    ("acme/jit.py", "python", "", ["numba"], [], "Compiles Python to machine code with **Numba**."),
    ("acme/loop.cpp", "cpp", "#pragma omp parallel for\nfor (;;) {}\n", [], [], "Parallelizes loops with **OpenMP**."),
    ("acme/loop.cu", "cuda", "#  pragma\tomp simd\n", [], [], "Parallelizes loops with **OpenMP**."),
    ("acme/hint.cu", "cuda", "#pragma once\n#pragma unroll 4\nfor (;;) {}\n", [], [],
     "Gives the compiler **loop hints** (`unroll` at line 2)."),
    ("acme/hint.cpp", "cpp", "#pragma clang loop vectorize(enable)\n#pragma GCC ivdep\n", [], [],
     "Gives the compiler **loop hints** (`GCC ivdep` at line 2, `clang loop` at line 1)."),
    ("benchmarks/bench_add.py", "python", "", [], [], "Measures **speed** (a benchmark): results depend on the machine it runs on."),
])
def test_performance_notes(rules, path, language, text, imports, calls, expected):
    found = sections(rules, path, language, text=text, calls=calls,
                     imports=[{"module": name, "line": 1, "kind": "import"} for name in imports])
    assert expected in found["performance"]


def test_the_pragma_rules_are_not_asked_of_a_header_whose_only_pragma_is_once(rules):
    """Nine C/C++ files in ten hold ``#pragma once``: the OpenMP and loop-hint rules' regexes run
    only on lines holding a word of the pragmas they find, which that line lacks."""
    pragma_rules = [rule for rule in rules.rules if rule.id in ("performance.openmp", "performance.loop-hints")]
    assert len(pragma_rules) == 2
    for rule in pragma_rules:
        assert rule.text_requires and not any(word in "#pragma once" for word in rule.text_requires)
    found = sections(rules, "acme/a.h", "cpp", text="#pragma once\nint f();\n")
    assert not found.get("performance")


def test_a_binary_file_gets_a_purpose_and_nothing_from_its_text(rules):
    found = rules.evaluate({"path": "torch/lib/libc10.so", "language": "binary", "type_label": "Binary File"},
                           None, [])
    assert found["purpose"] == ["`torch/lib/libc10.so` is a **supporting file** (Binary File) with no documentation of its own."]
    assert found["security"] == [] and found["patterns"] == [] and found["secret_lines"] == []


def test_odd_facts_are_skipped_not_raised_on(rules):
    odd = {"path": "acme/x.py", "language": "python", "imports": ["torch", {"module": None}],
           "symbols": [None, {"name": "A", "kind": "class", "signature": 3, "decorators": [None]}]}
    found = rules.evaluate(odd, "x = 1\n", [None, {"name": 5}, {"name": "eval", "line": "?", "kwargs": []}])
    assert [f["rule"] for f in found["security"]] == ["security.eval"]


# ---------------------------------------------------------------- a project's own rules

def test_a_project_adds_overrides_and_disables_rules():
    base = RuleSet.load(project="Acme")
    extended = RuleSet.load(extra_files=[FIXTURES / "project_rules.toml"], project="Acme")
    symbols = [{"name": "main", "kind": "function", "line": 8, "decorators": ['hydra.main(config_path="conf")']}]
    imports = [{"module": "logging", "line": 1, "kind": "import"}]
    found = extended.evaluate(facts_for("train.py", symbols=symbols, imports=imports), "", [])
    assert "Is configured with **Hydra** (`main` at line 8)." in found["patterns"]               # added
    assert not any("logging" in sentence for sentence in found["patterns"])             # disabled
    assert any("logging" in s for s in base.evaluate(facts_for("train.py", imports=imports), "", [])["patterns"])
    handbook = extended.evaluate(facts_for("handbook/setup.rst", "rst"), "", [])["purpose"]
    assert handbook == ["This file is part of the **Acme handbook**."]                  # replaced, by id
    assert base.evaluate(facts_for("handbook/setup.rst", "rst"), "", [])["purpose"] == [
        "This file is part of the **documentation**."]


def test_configuration_tables_layer_on_top_of_rule_files():
    extended = RuleSet.load(extra_files=[FIXTURES / "project_rules.toml"],
                            extra_rules=[{"id": "patterns.hydra-config", "disable": True}])
    assert "patterns.hydra-config" not in {rule.id for rule in extended.rules}


def test_replace_drops_the_shipped_rules():
    only = RuleSet.load(extra_files=[FIXTURES / "project_rules.toml"], replace=False)
    replaced = RuleSet.load(extra_rules=[
        {"id": "purpose.all", "section": "purpose", "message": "Part of the product.", "fallback": True}],
        replace=True)
    assert len(only.rules) > 50
    assert [rule.id for rule in replaced.rules] == ["purpose.all"]
    found = replaced.evaluate(facts_for("src/eval.py"), "password = 'hunter2hunter2'\n", [call("eval")])
    assert found["purpose"] == ["Part of the product."] and found["security"] == []


# ---------------------------------------------------------------- bad rule files

def test_a_bad_rule_file_names_the_file_rule_and_key():
    with pytest.raises(RuleError) as error:
        RuleSet.load(extra_files=[FIXTURES / "bad_rules.toml"])
    message = str(error.value)
    assert "bad_rules.toml" in message and "'security.requests-timeout'" in message
    assert "unknown key 'unles_args'" in message and "did you mean 'unless_args'" in message


def test_a_rule_without_an_id():
    with pytest.raises(RuleError, match=r"configuration \(rule #2\): a rule needs an 'id'"):
        RuleSet.load(extra_rules=[{"id": "acme.ok", "section": "role", "message": "x", "paths": ["a/**"]},
                                  {"section": "purpose", "message": "x", "paths": ["*"]}])


@pytest.mark.parametrize("table, complaint", [
    ({"section": "purpose", "paths": ["*"]}, "key 'message' is missing"),
    ({"section": "purpos", "message": "x", "paths": ["*"]}, "key 'section' must be one of"),
    ({"section": "purpose", "message": "x"}, "nothing to match on"),
    ({"section": "patterns", "message": "x", "text": ["(unclosed"]}, "key 'text': bad regular expression"),
    ({"section": "patterns", "message": "x", "paths": "[z-a]"}, "key 'paths'"),
    ({"section": "patterns", "message": "x", "paths": ["!vendor/**"]}, "use 'exclude_paths'"),
    ({"section": "patterns", "message": "In {folder_path}", "paths": ["*"]}, "unknown placeholder {folder_path}"),
    ({"section": "patterns", "message": "x", "calls": "eval", "languages": ["pyhton"]}, "unknown language(s) pyhton"),
    ({"section": "security", "message": "x", "unless_args": {"a": "b"}}, "key 'unless_args' needs 'calls'"),
    ({"section": "security", "message": "x", "calls": ["eval"], "keep": 2}, "key 'keep' needs 'secret = true'"),
    ({"section": "security", "message": "x", "calls": 7}, "key 'calls' must be a list"),
    ({"disable": True}, "key 'disable': no earlier rule has this id"),
    ({"section": "patterns", "message": "x", "text": ["a"], "text_requires": ["ok", ""]}, "holds an empty string"),
    ({"section": "patterns", "message": "x", "text": ["a"], "text_holds": [""]}, "holds an empty string"),
    ({"section": "patterns", "message": "x", "text_holds": ["a"], "paths": ["*"]}, "key 'text_holds' needs 'text'"),
    ({"section": "patterns", "message": "x", "text": ["a"], "text_holds": ["a"], "text_requires": ["a"]},
     "do not go together"),
])
def test_bad_rules_are_reported_with_id_and_key(table, complaint):
    with pytest.raises(RuleError) as error:
        RuleSet.load(extra_rules=[{"id": "acme.rule", **table}])
    message = str(error.value)
    assert complaint in message
    assert message.startswith("configuration (rule #1): rule 'acme.rule': ") or "'acme.rule'" in message


def test_path_globs_match_as_pathspec_and_compile_only_for_paths_that_could_match():
    """An edit's build asks the rules about one file: a rule whose globs name words the path
    lacks answers without compiling, and the answers are pathspec's gitignore matches."""
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern
    from kwdocs.rules.ruleset import Globs
    globs = ["torch/nn/**", "/aten/src/**", "**/test_*.py", "docs/**/*.md", "README*", "a-b.c/**"]
    paths = ["torch/nn/linear.py", "torch/nn/", "src/torch/nn/x.py", "torch/nnx/y.py", "aten/src/a.h", "x/aten/src/a.h",
             "t/test_a.py", "test_a.py", "t/test_a.pyi", "docs/a.md", "docs/x/y/a.md", "x/docs/a.md", "README.rst",
             "x/README", "a-b.c/d", "aXb.c/d", "src/model.py", ""]
    expected = {path for path in paths if any(re.match(GitIgnoreSpecPattern.pattern_to_regex(glob)[0], path)
                                              for glob in globs)}
    assert {path for path in paths if Globs(globs, "r", "paths").match(path)} == expected
    lazy = Globs(globs, "r", "paths")
    assert lazy.match("src/model.py") is None and lazy._regex is None
    assert lazy.match("torch/nn/linear.py") is not None and lazy._regex is not None
    with pytest.raises(RuleError, match="bad glob"):   # a glob too odd to screen is compiled, and checked
        Globs(["src/[z-a]"], "r", "paths").match("lib/x.py")


def test_a_rule_file_that_is_not_toml(tmp_path):
    broken = tmp_path / "rules.toml"
    broken.write_text('[[rule]]\nid = "acme.x"\nmessage = "unterminated\n')
    with pytest.raises(RuleError, match=re.escape(str(broken)) + ": not valid TOML"):
        RuleSet.load(extra_files=[broken])


def test_a_file_compiles_only_the_patterns_it_asks_and_findings_stay_the_same(monkeypatch):
    """An edit's build evaluates one file: the text regexes of rules whose words it does not hold
    are never compiled (they were all compiled, 109 of them, whatever the file), and a bad pattern
    of a lazily loaded rule set still names its rule when it is used."""
    import kwdocs.rules.ruleset as ruleset

    compiled: list[str] = []
    compile_regex = ruleset._regex
    monkeypatch.setattr(ruleset, "_regex", lambda pattern, where, key: (compiled.append(pattern),
                                                                         compile_regex(pattern, where, key))[1])
    text = "import os\n\ndef area(width, height):\n    return width * height\n"
    lazy = RuleSet.load(lazy=True)
    found = lazy.evaluate(facts_for("geometry/shapes.py"), text, [])
    assert len(compiled) < 10
    assert lazy.mask_secrets("token = 'ghp_" + "a" * 36 + "'\n", "python")[1] == [1]
    assert found == RuleSet.load().evaluate(facts_for("geometry/shapes.py"), text, [])
    broken = RuleSet.load(extra_rules=[{"id": "acme.bad", "section": "patterns", "message": "x",
                                        "text": ["(unclosed"]}], lazy=True)
    with pytest.raises(RuleError, match=re.escape("rule 'acme.bad': key 'text': bad regular expression")):
        broken.evaluate(facts_for("a.py"), "x = 1\n", [])


# ---------------------------------------------------------------- determinism and the cache key

def test_results_are_sorted_and_the_same_every_time(rules):
    text = (FIXTURES / "leaky_settings.py").read_text()
    calls = [call("os.system", line=30), call("eval", line=2)]
    first = rules.evaluate(facts_for("tools/deploy.py"), text, calls)
    again = RuleSet.load(project="Acme").evaluate(facts_for("tools/deploy.py"), text, list(reversed(calls)))
    assert json.dumps(first, sort_keys=True) == json.dumps(again, sort_keys=True)
    for section in ("purpose", "role", "patterns", "performance", "tags"):
        assert first[section] == sorted(set(first[section]))
    assert first["security"] == sorted(first["security"], key=lambda f: (f["line"], f["rule"], f["message"]))


def test_the_fingerprint_follows_the_rules():
    shipped = RuleSet.load().fingerprint()
    assert RuleSet.load().fingerprint() == shipped
    added = RuleSet.load(extra_files=[FIXTURES / "project_rules.toml"]).fingerprint()
    reworded = RuleSet.load(extra_rules=[{"id": "security.eval", "section": "security", "calls": ["eval"],
                                          "message": "Uses `eval`."}]).fingerprint()
    disabled = RuleSet.load(extra_rules=[{"id": "security.eval", "disable": True}]).fingerprint()
    renamed = RuleSet.load(project="Acme").fingerprint()
    assert len({shipped, added, reworded, disabled, renamed}) == 5
    same_rule_keys_reordered = RuleSet.load(extra_rules=[{"message": "Uses `eval`.", "calls": ["eval"],
                                                          "section": "security", "id": "security.eval"}])
    assert same_rule_keys_reordered.fingerprint() == reworded


# ---------------------------------------------------------------- behaviour, with the line as evidence
# Each row: a file as written, where it lives, a phrase of one rule's finding, and the lines that
# finding must name ([] = no such finding).  The false positives of issue 19 stand next to the
# true positives of the same rule; files go through extraction as a build reads them.

BEHAVIOUR = [
    # a test only if the file defines tests, not for `from unittest import mock`
    ("torch/__init__.py", "from unittest import mock\n\ndef _load():\n    return mock\n", "**tests**", []),
    ("acme/test_api.py", "import unittest\n\nclass ApiTest(unittest.TestCase):\n    def test_get(self):\n"
     "        pass\n", "**tests**", [3, 4]),
    ("acme/checks.py", "import pytest\n\ndef test_add():\n    assert 1 + 1 == 2\n", "**tests**", [3]),
    ("torch/_inductor/config.py", "class test_configs:\n    force: bool = False\n\ntests_run = 3\n",
     "**tests**", []),                              # a config namespace named test_*, not a test
    ("acme/engine_test.cpp", '#include <gtest/gtest.h>\n\nTEST(Engine, Starts) {\n  EXPECT_TRUE(true);\n}\n',
     "**tests**", [3]),
    # parallel only where threads, processes, pools or executors are started
    ("torch/_guards.py", "import threading\n\n_TLS = threading.local()\n_LOCK = threading.Lock()\n",
     "**in parallel**", []),
    ("acme/pool.py", "import threading\nfrom concurrent.futures import ThreadPoolExecutor\n\n"
     "def run(work):\n    threading.Thread(target=work).start()\n    with ThreadPoolExecutor() as pool:\n"
     "        pool.submit(work)\n", "**in parallel**", [5, 6]),
    ("acme/spawn.py", "import torch.multiprocessing as mp\n\ndef main(fn):\n    mp.spawn(fn, nprocs=2)\n",
     "**in parallel**", [4]),
    ("aten/MaxPooling.h", "#pragma once\n#include <thread>\n#include <ATen/Parallel.h>\n\nvoid pool(int n);\n",
     "**in parallel threads**", []),               # including the headers starts nothing
    ("aten/pool.cpp", "#include <ATen/Parallel.h>\nvoid run(int n) {\n  at::parallel_for(0, n, 1, body);\n}\n",
     "**in parallel threads**", [3]),
    # CUDA kernels only where one is defined or launched, not where a CUDA header is included
    ("aten/cuda/CUDAContextLight.h", "#pragma once\n#include <cuda_runtime_api.h>\n\nint device_count();\n",
     "**CUDA kernels**", []),
    ("aten/cuda/launch.cu", "__global__ void k() {}\nvoid run() {\n  k<<<1, 32>>>();\n}\n", "**CUDA kernels**", [1, 3]),
    # GPU only where device work is launched, not where a device is asked about
    ("acme/devices.py", "import torch\n\ndef gpus():\n    if torch.cuda.is_available():\n"
     "        return torch.cuda.device_count()\n    return 0\n", "**GPU", []),
    ("acme/sync.py", "import torch\n\ndef wait():\n    torch.cuda.synchronize()\n", "**GPUs**", [4]),
    ("acme/alloc.py", 'import torch\n\ndef ones():\n    return torch.ones(2, device="cuda")\n', "**GPU**", [4]),
    ("acme/example.py", 'import torch\n\ndef ones():\n    """\n    >>> torch.ones(2, device="cuda")\n    """\n',
     "**GPU", []),                                   # a docstring's example launches nothing
    # type hints from annotations, not from importing typing or typing_extensions
    ("acme/old.py", "from typing_extensions import deprecated\n\n@deprecated('use new')\ndef old(a, b=1):\n"
     "    return a\n", "**type hints**", []),
    ("acme/typed.py", "def add(a: int, b: int) -> int:\n    return a + b\n\ndef plain(x):\n    return x\n",
     "**type hints**", [1]),
    # command-line arguments only where the file builds a parser or reads sys.argv itself
    ("typer/models.py", "import typer\nfrom typer.core import TyperCommand\n\ndef helper(ctx):\n"
     "    return ctx.obj\n", "**command-line arguments**", []),
    ("acme/cli.py", "import argparse\n\ndef main():\n    parser = argparse.ArgumentParser()\n"
     "    return parser.parse_args()\n", "**command-line arguments**", [4]),
    ("acme/run.py", "import sys\n\nif __name__ == '__main__':\n    print(sys.argv[1])\n",
     "**command-line arguments**", [4]),
    # a safety finding only for the call as written: declarations and macros are not calls
    ("src/fmacros.h", '#ifndef FMACROS_H\n#define FMACROS_H\n'
     'char *strcpy(char *restrict dest, const char *src) __attribute__((deprecated("use strlcpy")));\n'
     'char *strcat(char *restrict dest, const char *restrict src) __attribute__((deprecated("use strlcat")));\n'
     '#define strcpy(d, s) safe_strcpy(d, s)\n#pragma GCC poison gets\n#endif\n',
     "does not check the destination's size", []),
    ("src/copy.c", '#include <string.h>\n\nvoid copy(char *d, const char *s) {\n  strcpy(d, s);\n'
     '  if (!strcat(d, "/")) return;\n}\n', "does not check the destination's size", [4, 5]),
    ("src/run.c", "#include <stdlib.h>\nint system(const char *command);\nint run(const char *c) {\n"
     "  return system(c);\n}\n", "shell command", [4]),
    # a bare torch.load defaults to weights_only=True; turning it off is the finding
    ("acme/ckpt.py", "import torch\n\ndef restore(f):\n    return torch.load(f)\n", "checkpoint", []),
    ("acme/unsafe.py", "import torch\n\ndef restore(f):\n    return torch.load(f, weights_only=False)\n",
     "checkpoint", [4]),
    # "installed public header" never from a path under include/ alone
    ("deps/jemalloc/include/jemalloc/internal/arena.h", "#pragma once\nstruct arena_s { int ind; };\n",
     "installed", []),
    # a secret only with evidence: ordinary words are not secrets
    ("src/commands/client-kill.json", '{\n  "arguments": [\n    {\n      "name": "lib-name",\n'
     '      "token": "lib-name",\n      "type": "string"\n    }\n  ]\n}\n', "secret", []),
    ("deploy/ci.json", '{\n  "token": "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"\n}\n', "GitHub token", [2]),
]


def behaviour(rules: RuleSet, path: str, text: str) -> dict:
    """The findings of a file as a build makes them: extracted from its (masked) text, then judged."""
    from kwdocs.extract import extract_bytes
    facts, read, calls = extract_bytes(path, text.encode(), lambda t, language: rules.mask_secrets(t, language, "x")[0])
    return rules.evaluate(facts, read, calls)


def lines_named(findings: dict, phrase: str) -> list[int] | None:
    """The lines the findings holding ``phrase`` name (None: no finding holds it)."""
    named: set[int] = set()
    found = False
    for section in ("purpose", "patterns", "performance"):
        for sentence in findings[section]:
            if phrase in sentence:
                found = True
                named.update(int(line) for line in re.findall(r"at line (\d+)", sentence))
    for finding in findings["security"]:
        if phrase in finding["message"]:
            found = True
            named.add(finding["line"])
    return sorted(named) if found else None


@pytest.mark.parametrize("path, text, phrase, lines", BEHAVIOUR, ids=[f"{row[0]}-{row[2]}" for row in BEHAVIOUR])
def test_rules_judge_behaviour_and_name_the_line(rules, path, text, phrase, lines):
    found = lines_named(behaviour(rules, path, text), phrase)
    assert found == (lines or None)


def test_a_test_page_offers_the_test_command_only_for_a_file_that_defines_tests(rules):
    assert "defines-tests" not in behaviour(rules, "torch/__init__.py", BEHAVIOUR[0][1])["tags"]
    assert "defines-tests" in behaviour(rules, "acme/checks.py", BEHAVIOUR[2][1])["tags"]


def test_an_ordinary_word_under_a_secret_key_is_left_as_written():
    text = BEHAVIOUR[-2][1]
    assert mask_secrets(text, language="json") == (text, [])


# "installed public header" only where a build file installs the header, naming its line
INSTALLING_CMAKE = '''\
cmake_minimum_required(VERSION 3.14)
project(acme)
set(ACME_HEADERS include/acme/api.h include/acme/types.h)
install(FILES ${ACME_HEADERS} DESTINATION include/acme)
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/public/ DESTINATION include
        FILES_MATCHING PATTERN "*.h" PATTERN "internal" EXCLUDE)
'''
INSTALLING_MAKEFILE = "PREFIX ?= /usr/local\n\ninstall:\n\t@install -m 644 include/m.h $(DESTDIR)$(PREFIX)/include\n"
INSTALLED = [
    ("include/acme/api.h", "`CMakeLists.txt` at line 4"),     # install(FILES ...) through a variable
    ("include/acme/types.h", "`CMakeLists.txt` at line 4"),
    ("public/util.h", "`CMakeLists.txt` at line 5"),          # install(DIRECTORY ...) matching *.h
    ("public/util_impl.cpp", None),                           # under the folder, not matching *.h
    ("public/internal/arena.h", None),                        # excluded from install(DIRECTORY ...)
    ("include/acme/internal/arena.h", None),                  # under include/, no install rule names it
    ("make/include/m.h", "`make/Makefile` at line 4"),        # copied by a Makefile's install target
    ("make/include/n.h", None),                               # beside it, not copied
]


@pytest.fixture(scope="module")
def installing_tree(tmp_path_factory) -> tuple[Path, Path]:
    from tests.conftest import run_kwdocs

    src = tmp_path_factory.mktemp("installing") / "src"
    (src / "CMakeLists.txt").parent.mkdir(parents=True)
    (src / "CMakeLists.txt").write_text(INSTALLING_CMAKE)
    (src / "make").mkdir()
    (src / "make/Makefile").write_text(INSTALLING_MAKEFILE)
    for path, _line in INSTALLED:
        (src / path).parent.mkdir(parents=True, exist_ok=True)
        (src / path).write_text("#pragma once\nint f(void);\n")
    out = src.parent / "out"
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    return src, out


def _purpose(out: Path, path: str) -> str:
    page = (out / f"{path}_docs.md").read_text(encoding="utf-8")
    return page.split("## File Purpose", 1)[1].split("\n## ", 1)[0]


@pytest.mark.parametrize("path, evidence", INSTALLED, ids=[path for path, _ in INSTALLED])
def test_installed_public_header_only_where_the_build_files_install_it(installing_tree, path, evidence):
    _src, out = installing_tree
    purpose = _purpose(out, path)
    if evidence is None:
        assert "installed" not in purpose
    else:
        assert "**public C/C++ header**" in purpose and evidence in purpose


def test_a_header_no_longer_installed_loses_the_claim(installing_tree):
    from tests.conftest import run_kwdocs

    src, out = installing_tree
    (src / "CMakeLists.txt").write_text(INSTALLING_CMAKE.replace("${ACME_HEADERS}", "include/acme/api.h"))
    assert run_kwdocs("build", "--src", str(src), "--out", str(out), "-q") == 0
    assert "`CMakeLists.txt` at line 4" in _purpose(out, "include/acme/api.h")
    assert "installed" not in _purpose(out, "include/acme/types.h")


def test_text_requires_finds_every_line_holding_a_word_whatever_its_case_and_neighbours():
    # a word inside another rule's word ("key" in "apikey"), and characters that lower-case to
    # two ("İ") before the lines: each line holding a word is searched, at its own offsets
    rules = RuleSet.load(replace=True, extra_rules=[
        {"id": "acme.keys", "section": "security", "message": "Names a key ({match}).",
         "text": [r"(?i)(?P<name>\w*key\w*) ="], "text_requires": ["key"]},
        {"id": "acme.api", "section": "security", "message": "Names an API ({match}).",
         "text": [r"(?P<name>APIKEY)\b"], "text_requires": ["apikey"]}])
    text = "İİİİİİİİİİİİ\nmy_apikey = 2\nnothing to see here\nMONKEY = 3\nAPIKEY\n"
    found = rules.evaluate(facts_for("conf.py"), text, [])["security"]
    assert [(finding["line"], finding["message"]) for finding in found] == [
        (2, "Names a key (`my_apikey`)."), (4, "Names a key (`MONKEY`)."), (5, "Names an API (`APIKEY`).")]


def test_a_text_rule_is_not_asked_about_a_file_lacking_all_its_words(monkeypatch):
    # a file is asked about a rule only when it holds one of its words: for each file most of the
    # shipped text rules need a word it lacks, and asking each of them cost a fifth of the rules' time
    rules = RuleSet.load(replace=True, extra_rules=[
        {"id": "acme.keys", "section": "security", "message": "Names a key ({match}).",
         "text": [r"(?P<name>\w*key\w*) ="], "text_requires": ["key"]},
        {"id": "acme.todo", "section": "patterns", "message": "Leaves work ({matches}).",
         "text": [r"TODO\w*"], "text_requires": ["todo", "fixme"]}])
    asked: list[str] = []
    apply = RuleSet._apply
    monkeypatch.setattr(RuleSet, "_apply", lambda self, rule, *rest: asked.append(rule.id) or apply(self, rule, *rest))
    found = rules.evaluate(facts_for("conf.py"), "monkey = 3\nnothing else\n", [])
    assert asked == ["acme.keys"]
    assert [finding["message"] for finding in found["security"]] == ["Names a key (`monkey`)."]
    assert found["patterns"] == []
    asked.clear()
    found = rules.evaluate(facts_for("conf.py"), "# FIXME: TODOs\n", [])
    assert asked == ["acme.todo"] and found["patterns"] == ["Leaves work (`TODOs` at line 1)."]


def test_a_file_is_asked_only_about_the_rules_its_names_path_or_secrets_can_match(monkeypatch):
    # most rules need a name, a path or a secret a file lacks: asking each of them was most of the rules' time
    rules = RuleSet.load(replace=True, extra_rules=[
        {"id": "acme.unpickle", "section": "security", "message": "Unpickles ({match}).", "calls": ["pickle.load*"]},
        {"id": "acme.docs", "section": "purpose", "message": "Documents things.", "paths": ["*.md", "docs/*.py"]},
        {"id": "acme.logs", "section": "patterns", "message": "Logs ({matches}).", "imports": ["logging"],
         "paths": ["logs/**"]},
        {"id": "acme.pin", "section": "security", "message": "Holds a PIN ({match}).", "secret": True,
         "text": [r"pin=(?P<secret>\d{6})"], "text_requires": ["pin="]}])
    asked: list[str] = []
    apply = RuleSet._apply
    monkeypatch.setattr(RuleSet, "_apply", lambda self, rule, *rest: asked.append(rule.id) or apply(self, rule, *rest))
    found = rules.evaluate(facts_for("src/job.py", imports=[{"module": "json", "line": 1}]), "import json\n",
                           [call("json.loads")])
    assert asked == [] and not any(found[section] for section in ("purpose", "patterns", "security"))
    facts = facts_for("docs/job.py", imports=[{"module": "logging", "line": 1}])
    found = rules.evaluate(facts, "import logging\npin=123456\n", [call("pickle.loads", line=3)])
    assert asked == ["acme.unpickle", "acme.docs", "acme.logs", "acme.pin"]
    assert found["purpose"] == ["Documents things."] and found["patterns"] == ["Logs (`logging` at line 1)."]
    assert [(finding["line"], finding["message"]) for finding in found["security"]] == [
        (2, "Holds a PIN (`1*****`)."), (3, "Unpickles (`pickle.loads`).")]


def test_path_rules_answer_the_same_once_their_globs_are_joined_into_one_regex():
    # after many paths a language's path globs are asked as one regex: the answers stay each glob's
    rules = RuleSet.load(replace=True, extra_rules=[
        {"id": "acme.docs", "section": "purpose", "message": "Documents things.", "paths": ["*.md", "docs/*.py"]},
        {"id": "acme.tests", "section": "purpose", "message": "Tests things.", "paths": ["**/test_*.py"]}])
    paths = [f"pkg{number}/{name}" for number in range(40) for name in ("a.py", "test_a.py", "b.md")] + ["docs/x.py"]
    found = {path: rules.evaluate(facts_for(path), "", [])["purpose"] for path in paths}
    assert found["pkg39/a.py"] == [] and found["pkg39/test_a.py"] == ["Tests things."]
    assert found["pkg39/b.md"] == ["Documents things."] and found["docs/x.py"] == ["Documents things."]
    assert sum(bool(purpose) for purpose in found.values()) == 81


def test_masking_runs_only_the_secret_rules_whose_words_the_text_holds(monkeypatch):
    from kwdocs.rules import ruleset as module
    rules = RuleSet.load(replace=True, extra_rules=[
        {"id": "acme.token", "section": "security", "message": "A token.", "secret": True,
         "text": [r"tok_(?P<secret>[a-z0-9]{12})"], "text_requires": ["tok_"]},
        {"id": "acme.pin", "section": "security", "message": "A PIN.", "secret": True,
         "text": [r"pin=(?P<secret>\d{6})"], "text_requires": ["pin="]}])
    asked: list[str] = []
    matches = module._Text.matches
    monkeypatch.setattr(module._Text, "matches", lambda self, rule: asked.append(rule.id) or matches(self, rule))
    masked, lines = rules.mask_secrets("x = 1\nkey = 'tok_abcdef123456'\n")
    assert asked == ["acme.token"]
    assert "abcdef123456" not in masked and lines == [2]


def test_a_generic_class_is_matched_by_its_bases(rules):
    """``class Color[T](enum.Enum)`` (3.12): its signature starts with the type parameters."""
    text = "import enum\n\n\nclass Color[T](enum.Enum):\n    RED = 1\n"
    facts = extract(text, "acme/colors.py")
    found = sections(rules, "acme/colors.py", text=text, symbols=facts["symbols"], imports=facts["imports"])
    assert "Defines **enumerations** (`Color` at line 4)." in found["patterns"]


# ---------------------------------------------------------------- calls of a Python file

CALLING = "import numpy as np\nimport subprocess\n\n" + "print(np.ones(3))\n" * 40 + \
    "subprocess.run(cmd, shell=True)\nresult = eval(text)\nprint(eval(more), np.load('w.npy'))\n"


def test_python_calls_read_by_the_rules_as_a_list_of_them(rules):
    """The Python extractor's calls reach the rules by name; what is found is what the same
    calls, as a plain list of records in line order, find."""
    facts = extract(CALLING, "tools/job.py")
    calls = facts["calls"]
    listed = [dict(record) for record in calls]
    assert [(c["line"], c["name"]) for c in listed] == sorted((c["line"], c["name"]) for c in listed)
    assert len(calls) == len(listed) == 85
    assert {c["name"] for c in listed} == {"print", "numpy.ones", "numpy.load", "subprocess.run", "eval"}
    found = rules.evaluate(facts_for("tools/job.py"), CALLING, calls)
    assert found == rules.evaluate(facts_for("tools/job.py"), CALLING, listed)
    assert found == rules.evaluate(facts_for("tools/job.py"), CALLING, list(reversed(listed)))
    assert {(f["rule"], f["line"]) for f in found["security"]} >= {
        ("security.eval", 45), ("security.eval", 46), ("security.shell-true", 44)}


def test_only_the_calls_a_rule_matches_become_records(rules, monkeypatch):
    """A file calls hundreds of names, a rule matches a few: only those calls are made records
    (with their arguments cut from the source), not one per call of the file."""
    from kwdocs.extract import python

    made: list[str] = []

    class Counted(python.CallRecord):
        def __init__(self, name: str, *args, **kwargs) -> None:
            made.append(name)
            super().__init__(name, *args, **kwargs)

    monkeypatch.setattr(python, "CallRecord", Counted)
    facts = extract(CALLING, "tools/job.py")
    rules.evaluate(facts_for("tools/job.py"), CALLING, facts["calls"])
    assert "print" not in made and "numpy.ones" not in made
    assert sorted(made) == ["eval", "eval", "numpy.load", "subprocess.run"]


def test_text_holds_runs_the_regexes_over_the_whole_text_of_the_files_holding_a_word():
    """``text_holds``: a file without one of the words is not searched at all (the private key's
    regexes ran over every file of a tree); one holding a word is searched whole, so a match
    may span lines, unlike ``text_requires``, which searches only the lines holding a word."""
    spanning = {"section": "patterns", "message": "Holds a block ({matches}).", "text": [r"BEGIN\n(?P<name>\w+)\nEND"]}
    rules = RuleSet.load(replace=True, extra_rules=[{"id": "acme.holds", **spanning, "text_holds": ["begin"]},
                                                    {"id": "acme.lines", **spanning, "text_requires": ["begin"]}])
    found = rules.evaluate(facts_for("m.txt", "text"), "x\nBEGIN\nbody\nEND\n", [])["patterns"]
    assert found == ["Holds a block (`body` at line 3)."]
    assert rules.evaluate(facts_for("m.txt", "text"), "x\nbegun\nbody\nEND\n", [])["patterns"] == []


def test_private_keys_are_found_in_the_files_holding_their_marker_only(rules):
    key = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(["MIIEow" + "A" * 58] * 4) + "\n-----END RSA PRIVATE KEY-----\n"
    masked, lines = rules.mask_secrets("x = 1\n" + key, "text")
    assert lines == [2] and "MIIEow" not in masked
    assert rules.mask_secrets("x = 1\n" + key.replace("-----BEGIN", "-----begun"), "text") == (
        "x = 1\n" + key.replace("-----BEGIN", "-----begun"), [])
