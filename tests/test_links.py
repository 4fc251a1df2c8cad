"""Links between files: what each import/include points at, and who uses each file."""
from __future__ import annotations

import json

from kwdocs.extract.links import resolve_links


def py_import(module: str, line: int = 1, level: int = 0) -> dict:
    return {"module": module, "line": line, "kind": "import", "level": level}


def py_from(module: str, names: list[str], line: int = 1, level: int = 0) -> dict:
    return {"module": module, "names": names, "line": line, "kind": "from", "level": level}


def include(header: str, line: int = 1, system: bool = False) -> dict:
    return {"module": header, "line": line, "kind": "include", "system": system}


def tree(*paths: str) -> dict[str, str]:
    """``languages`` for a list of paths, as the registry would name them."""
    def language(path: str) -> str:
        if path.endswith((".py", ".pyi")):
            return "python"
        if path.endswith((".h", ".hpp", ".cpp", ".cc", ".c")):
            return "cpp"
        if path.endswith((".cu", ".cuh")):
            return "cuda"
        if path.endswith(".cmake") or path.endswith("CMakeLists.txt"):
            return "cmake"
        if path.endswith(".sh"):
            return "shell"
        return "markdown" if path.endswith(".md") else "text"
    return {path: language(path) for path in paths}


def first_dep(languages: dict[str, str], path: str, entry: dict, roots: tuple[str, ...] = ()) -> dict:
    return resolve_links(languages, {path: [entry]}, roots)[path]["deps"][0]


TORCH = tree(
    "torch/__init__.py",
    "torch/nn/__init__.py",
    "torch/nn/init.py",
    "torch/nn/functional.py",
    "torch/nn/functional.pyi",
    "torch/nn/modules/__init__.py",
    "torch/nn/modules/module.py",
    "torch/nn/modules/linear.py",
    "torch/_C/__init__.pyi",
    "torch/_C/_nn.pyi",
    "torch/_dynamo/__init__.py",
    "torch/_dynamo/polyfills/__init__.py",
    "torch/_dynamo/polyfills/os.py",
    "torch/_inductor/__init__.py",
    "torch/_inductor/codegen/__init__.py",
    "torch/_inductor/codegen/triton.py",
    "torch/_inductor/codegen/wrapper.py",
    "README.md",
)


# --- Python -----------------------------------------------------------------

def test_absolute_import_links_to_the_module_file():
    dep = first_dep(TORCH, "torch/nn/modules/linear.py", py_import("torch.nn.functional", line=4))
    assert dep == {"module": "torch.nn.functional", "line": 4, "kind": "import", "level": 0,
                   "target": "torch/nn/functional.py", "category": "repo"}


def test_relative_import_given_as_absolute_name_links_to_the_sibling():
    dep = first_dep(TORCH, "torch/nn/modules/linear.py",
                    py_from("torch.nn.modules.module", ["Module"], level=1))
    assert dep["target"] == "torch/nn/modules/module.py"
    assert dep["names"] == ["Module"]
    assert dep["level"] == 1


def test_package_import_links_to_its_init():
    dep = first_dep(TORCH, "torch/nn/modules/linear.py", py_import("torch.nn"))
    assert dep["target"] == "torch/nn/__init__.py"


def test_package_wins_over_a_module_of_the_same_name():
    languages = tree("a/__init__.py", "a/b.py", "a/b/__init__.py", "main.py")
    assert first_dep(languages, "main.py", py_import("a.b"))["target"] == "a/b/__init__.py"


def test_module_wins_over_its_stub_and_a_stub_alone_is_found():
    assert first_dep(TORCH, "torch/nn/init.py",
                     py_import("torch.nn.functional"))["target"] == "torch/nn/functional.py"
    assert first_dep(TORCH, "torch/nn/init.py", py_from("torch._C", ["_add_docstr"]))["target"] \
        == "torch/_C/__init__.pyi"
    assert first_dep(TORCH, "torch/nn/init.py", py_import("torch._C._nn"))["target"] == "torch/_C/_nn.pyi"


def test_from_import_of_a_submodule_links_to_the_submodule():
    dep = first_dep(TORCH, "torch/nn/__init__.py", py_from("torch.nn", ["init"], level=1))
    assert dep["target"] == "torch/nn/init.py"
    assert dep["name_targets"] == {"init": "torch/nn/init.py"}


def test_from_import_of_a_name_links_to_the_package():
    dep = first_dep(TORCH, "torch/nn/modules/linear.py", py_from("torch.nn.modules", ["Module"]))
    assert dep["target"] == "torch/nn/modules/__init__.py"
    assert "name_targets" not in dep


def test_from_import_mixing_names_and_submodules_links_the_package_and_lists_submodules():
    result = resolve_links(TORCH, {"torch/__init__.py": [
        py_from("torch.nn", ["Module", "functional", "init"], line=2)]})
    dep = result["torch/__init__.py"]["deps"][0]
    assert dep["target"] == "torch/nn/__init__.py"
    assert dep["name_targets"] == {"functional": "torch/nn/functional.py", "init": "torch/nn/init.py"}
    assert result["torch/nn/init.py"]["used_by"] == ["torch/__init__.py"]
    assert result["torch/nn/functional.py"]["used_by"] == ["torch/__init__.py"]


def test_import_of_a_missing_submodule_is_unresolved_never_its_package_and_keeps_the_name():
    # the package does not define the module: linking its page would be a wrong link (issue 32)
    dep = first_dep(TORCH, "torch/nn/init.py", py_import("torch.nn.not_there.deeper"))
    assert dep["module"] == "torch.nn.not_there.deeper"
    assert dep["target"] is None
    assert dep["category"] == "repo"
    dep = first_dep(TORCH, "torch/nn/init.py", py_from("torch.nn.not_there", ["f"]))
    assert (dep["target"], dep["category"]) == (None, "repo")


def test_src_layout_package_is_found_below_its_folder():
    languages = tree("src/pkg/__init__.py", "src/pkg/core.py", "tests/test_core.py", "setup.py")
    dep = first_dep(languages, "tests/test_core.py", py_from("pkg.core", ["run"]))
    assert dep["target"] == "src/pkg/core.py"
    assert dep["category"] == "repo"


def test_candidates_at_the_same_depth_are_chosen_by_path():
    languages = tree("python/pkg/__init__.py", "lib/pkg/__init__.py", "main.py")
    assert first_dep(languages, "main.py", py_import("pkg"))["target"] == "lib/pkg/__init__.py"


def test_the_importers_own_folder_wins_over_a_shallower_one_elsewhere():
    languages = tree("tools/helpers.py", "benchmarks/nested/helpers.py",
                     "benchmarks/nested/run.py")
    # the script's folder is on its path; a same-named module elsewhere is not
    assert first_dep(languages, "benchmarks/nested/run.py",
                     py_import("helpers"))["target"] == "benchmarks/nested/helpers.py"


def test_module_inside_a_package_never_stands_for_a_top_level_name():
    dep = first_dep(TORCH, "torch/nn/init.py", py_import("os"))
    assert (dep["target"], dep["category"]) == (None, "stdlib")  # not torch/_dynamo/polyfills/os.py
    dep = first_dep(TORCH, "torch/_inductor/codegen/wrapper.py", py_import("triton"))
    assert (dep["target"], dep["category"]) == (None, "third_party")  # not codegen/triton.py


def test_stdlib_name_shadowed_only_where_the_importer_can_see_it():
    languages = tree("scripts/os.py", "scripts/run.py", "tools/build.py")
    assert first_dep(languages, "scripts/run.py", py_import("os"))["target"] == "scripts/os.py"
    dep = first_dep(languages, "tools/build.py", py_import("os"))
    assert (dep["target"], dep["category"]) == (None, "stdlib")


def test_unresolved_imports_are_stdlib_or_third_party():
    entries = [py_import("os.path", 1), py_from("__future__", ["annotations"], 2),
               py_import("numpy", 3), py_from("typing_extensions", ["Self"], 4),
               py_from("collections.abc", ["Mapping"], 5)]
    deps = resolve_links(TORCH, {"torch/nn/init.py": entries})["torch/nn/init.py"]["deps"]
    assert [(dep["module"], dep["target"], dep["category"]) for dep in deps] == [
        ("os.path", None, "stdlib"), ("__future__", None, "stdlib"),
        ("numpy", None, "third_party"), ("typing_extensions", None, "third_party"),
        ("collections.abc", None, "stdlib")]


def test_missing_module_of_a_package_in_the_tree_is_still_this_repository():
    # a slice of the tree: torch/__init__.py and torch/nn/__init__.py left out
    languages = tree("torch/nn/modules/linear.py", "torch/utils/data.py")
    dep = first_dep(languages, "torch/utils/data.py", py_import("torch.nn"))
    assert (dep["target"], dep["category"]) == (None, "repo")
    dep = first_dep(languages, "torch/utils/data.py", py_import("torchvision"))
    assert (dep["target"], dep["category"]) == (None, "third_party")


def test_unresolved_relative_import_is_still_this_repository():
    dep = first_dep(TORCH, "torch/nn/init.py", py_from("version", ["__version__"], level=2))
    assert (dep["target"], dep["category"]) == (None, "repo")


# --- C / C++ ----------------------------------------------------------------

CPP = tree(
    "torch/include/ATen/Tensor.h",
    "torch/include/ATen/core/Tensor.h",
    "torch/include/ATen/core/TensorBase.h",
    "torch/include/c10/util/Exception.h",
    "torch/include/torch/csrc/api/include/torch/nn.h",
    "torch/include/torch/nn.h",
    "torch/csrc/inductor/model.h",
    "torch/csrc/inductor/model.cpp",
    "torch/csrc/inductor/cpp/helper.h",
    "torch/csrc/common.h",
    "third/lib/api.h",
    "aten/src/ATen/native/Copy.h",
    "aten/src/ATen/native/Copy.cpp",
    "kernels/add.cu",
    "kernels/vector",
)


def test_quoted_include_resolves_beside_the_including_file():
    dep = first_dep(CPP, "torch/csrc/inductor/model.cpp", include("model.h", line=3))
    assert dep == {"module": "model.h", "line": 3, "kind": "include", "system": False,
                   "target": "torch/csrc/inductor/model.h", "category": "repo"}
    assert first_dep(CPP, "torch/csrc/inductor/model.cpp",
                     include("cpp/helper.h"))["target"] == "torch/csrc/inductor/cpp/helper.h"


def test_dot_dot_segments_are_normalised():
    dep = first_dep(CPP, "torch/csrc/inductor/cpp/helper.h", include("../../common.h"))
    assert dep["target"] == "torch/csrc/common.h"
    dep = first_dep(CPP, "torch/csrc/inductor/model.cpp", include("./cpp/../model.h"))
    assert dep["target"] == "torch/csrc/inductor/model.h"


def test_include_never_resolves_outside_the_tree():
    dep = first_dep(CPP, "third/lib/api.h", include("../../../torch/csrc/common.h"))
    assert dep["target"] is None


def test_include_resolves_through_an_auto_detected_include_folder():
    dep = first_dep(CPP, "torch/csrc/inductor/model.cpp", include("ATen/core/Tensor.h", system=True))
    assert dep["target"] == "torch/include/ATen/core/Tensor.h"
    assert dep["category"] == "repo"


def test_shallower_include_folder_wins_over_a_nested_one():
    dep = first_dep(CPP, "torch/csrc/inductor/model.cpp", include("torch/nn.h", system=True))
    assert dep["target"] == "torch/include/torch/nn.h"


def test_nested_include_folder_is_a_root_too():
    languages = {path: lang for path, lang in CPP.items() if path != "torch/include/torch/nn.h"}
    dep = first_dep(languages, "torch/csrc/inductor/model.cpp", include("torch/nn.h", system=True))
    assert dep["target"] == "torch/include/torch/csrc/api/include/torch/nn.h"


def test_include_resolves_through_a_configured_root():
    dep = first_dep(CPP, "kernels/add.cu", include("api.h", system=True), roots=("third/lib",))
    assert dep["target"] == "third/lib/api.h"
    assert first_dep(CPP, "kernels/add.cu", include("api.h", system=True))["target"] is None


def test_configured_root_comes_before_detected_ones():
    languages = dict(CPP, **tree("vendored/ATen/Tensor.h"))
    dep = first_dep(languages, "kernels/add.cu", include("ATen/Tensor.h", system=True),
                    roots=("vendored/",))
    assert dep["target"] == "vendored/ATen/Tensor.h"


def test_quoted_include_falls_back_to_the_tree_root():
    dep = first_dep(CPP, "kernels/add.cu", include("torch/csrc/common.h"))
    assert dep["target"] == "torch/csrc/common.h"


def test_angle_include_skips_the_including_folder():
    dep = first_dep(CPP, "torch/csrc/inductor/cpp/helper.h", include("helper.h", system=True))
    assert dep["target"] is None


def test_header_with_a_folder_is_found_under_an_unconfigured_root():
    dep = first_dep(CPP, "kernels/add.cu", include("ATen/native/Copy.h", system=True))
    assert dep["target"] == "aten/src/ATen/native/Copy.h"


def test_standard_headers_are_stdlib_even_when_a_file_has_their_name():
    entries = [include("vector", 1, True), include("cstdint", 2, True), include("stdio.h", 3, True),
               include("sys/types.h", 4, True), include("Windows.h", 5, True)]
    deps = resolve_links(CPP, {"kernels/add.cu": entries})["kernels/add.cu"]["deps"]
    assert [(dep["target"], dep["category"]) for dep in deps] == [(None, "stdlib")] * 5


def test_unknown_headers_are_third_party_and_missing_ones_in_our_folders_are_ours():
    entries = [include("cuda_runtime.h", 1, True), include("cutlass/cutlass.h", 2, True),
               include("ATen/ops/abs_meta.h", 3, True)]
    deps = resolve_links(CPP, {"kernels/add.cu": entries})["kernels/add.cu"]["deps"]
    assert [(dep["target"], dep["category"]) for dep in deps] == [
        (None, "third_party"), (None, "third_party"), (None, "repo")]


# --- CMake and shell scripts ---------------------------------------------------

SCRIPTS = tree(
    "CMakeLists.txt",
    "cmake/Modules/FindNCCL.cmake",
    "cmake/Dependencies.cmake",
    "torch/__init__.py",
    "torch/csrc/CMakeLists.txt",
    "torch/share/cmake/Caffe2/Caffe2Config.cmake",
    "torch/share/cmake/Caffe2/public/utils.cmake",
    "tools/env.sh",
    "tools/build.sh",
)


def test_cmake_includes_and_subdirectories_resolve_to_files():
    entries = [{"module": "${CMAKE_CURRENT_LIST_DIR}/public/utils.cmake", "line": 1, "kind": "include"},
               {"module": "cmake/Dependencies.cmake", "line": 2, "kind": "include"},
               {"module": "torch/csrc", "line": 3, "kind": "include"},
               {"module": "Dependencies", "line": 4, "kind": "include"},
               {"module": "CMakeDependentOption", "line": 5, "kind": "include"},
               {"module": "${Torch_ROOT}/x.cmake", "line": 6, "kind": "include"}]
    result = resolve_links(SCRIPTS, {"torch/share/cmake/Caffe2/Caffe2Config.cmake": entries[:1],
                                     "CMakeLists.txt": entries[1:]})
    deps = result["torch/share/cmake/Caffe2/Caffe2Config.cmake"]["deps"] + result["CMakeLists.txt"]["deps"]
    assert [(dep["target"], dep["category"]) for dep in deps] == [
        ("torch/share/cmake/Caffe2/public/utils.cmake", "repo"),
        ("cmake/Dependencies.cmake", "repo"),
        ("torch/csrc/CMakeLists.txt", "repo"),
        ("cmake/Dependencies.cmake", "repo"),
        (None, "stdlib"),
        (None, "third_party")]


def test_cmake_find_package_uses_the_trees_find_modules_never_python():
    entries = [{"module": "NCCL", "line": 1, "kind": "import"},
               {"module": "torch", "line": 2, "kind": "import"}]
    deps = resolve_links(SCRIPTS, {"CMakeLists.txt": entries})["CMakeLists.txt"]["deps"]
    assert [(dep["target"], dep["category"]) for dep in deps] == [
        ("cmake/Modules/FindNCCL.cmake", "repo"), (None, "third_party")]


def test_shell_source_resolves_beside_the_script():
    dep = first_dep(SCRIPTS, "tools/build.sh", {"module": "env.sh", "line": 2, "kind": "include"})
    assert (dep["target"], dep["category"]) == ("tools/env.sh", "repo")


# --- used_by and the shape of the result ------------------------------------

def test_used_by_is_sorted_deduplicated_and_excludes_the_file_itself():
    imports = {
        "torch/nn/modules/linear.py": [py_from("torch.nn.modules.module", ["Module"], 1, level=1),
                                       py_import("torch.nn.modules.module", 2)],
        "torch/nn/init.py": [py_import("torch.nn.modules.module")],
        "torch/nn/modules/module.py": [py_from("torch.nn.modules.module", ["Module"])],
        "torch/__init__.py": [py_import("torch.nn.modules.module")],
    }
    result = resolve_links(TORCH, imports)
    assert result["torch/nn/modules/module.py"]["used_by"] == [
        "torch/__init__.py", "torch/nn/init.py", "torch/nn/modules/linear.py"]


def test_every_file_gets_an_entry_and_deps_keep_the_import_order():
    entries = [py_import("numpy", 3), py_import("torch.nn", 1), py_import("os", 2)]
    result = resolve_links(TORCH, {"torch/nn/init.py": entries})
    assert sorted(result) == sorted(TORCH)
    assert result["README.md"] == {"deps": [], "used_by": []}
    assert [dep["line"] for dep in result["torch/nn/init.py"]["deps"]] == [3, 1, 2]


def test_result_is_plain_data_and_independent_of_input_order():
    imports = {"torch/csrc/inductor/model.cpp": [include("model.h"), include("vector", 2, True)],
               "kernels/add.cu": [include("torch/csrc/inductor/model.h")]}
    forward = resolve_links(CPP, imports)
    backward = resolve_links(dict(reversed(list(CPP.items()))), dict(reversed(list(imports.items()))))
    assert json.dumps(forward, sort_keys=True) == json.dumps(backward, sort_keys=True)
    assert list(forward) == sorted(CPP)
    assert forward["torch/csrc/inductor/model.h"]["used_by"] == [
        "kernels/add.cu", "torch/csrc/inductor/model.cpp"]


def test_inputs_are_not_changed():
    entry = py_from("torch.nn", ["init"])
    resolve_links(TORCH, {"torch/__init__.py": [entry]})
    assert entry == py_from("torch.nn", ["init"])


def test_bad_input_is_tolerated():
    imports = {
        "torch/nn/init.py": ["not a dict", {"line": 1, "kind": "import"}, {"module": 5, "kind": "from"},
                             {"module": "x", "kind": "weird"}],
        "not/in/tree.py": [py_import("torch")],
        "torch/__init__.py": "not a list",
    }
    result = resolve_links(TORCH, imports)
    deps = result["torch/nn/init.py"]["deps"]
    assert [(dep["module"], dep["target"]) for dep in deps] == [("", None), ("", None), ("x", None)]
    assert "not/in/tree.py" not in result
    assert result["torch/__init__.py"]["deps"] == []
