"""The package's layers as a test: ``kwdocs/`` has no import cycle, counting the imports inside
functions too (they run as surely as module-level ones, only later). Imports under
``if TYPE_CHECKING`` are for the type checker only and do not count."""
from __future__ import annotations

import ast
import graphlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "kwdocs"


def module_name(path: Path) -> str:
    """``kwdocs/engine/tasks.py`` -> ``kwdocs.engine.tasks``; a package's ``__init__`` is the package."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_type_checking(test: ast.expr) -> bool:
    """``if TYPE_CHECKING:`` or ``if typing.TYPE_CHECKING:``."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of a module, at any depth, except those under ``if TYPE_CHECKING``."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, ast.If) and is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the kwdocs modules it imports, anywhere in its code."""
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                # ``from pkg import sub`` imports the submodule ``pkg.sub``; other names come from ``pkg``
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                           for alias in node.names]
            for target in targets:
                while target and target not in modules:  # ``import kwdocs.a.b.name`` -> kwdocs.a.b
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def test_graph_sees_imports_inside_functions():
    """The walk finds an import inside a function and skips one under ``if TYPE_CHECKING``."""
    tree = ast.parse("import os\nif TYPE_CHECKING:\n    import a\ndef f():\n    if x:\n        from b import c\n")
    assert sorted(ast.unparse(node) for node in imports(tree)) == ["from b import c", "import os"]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Import loops, each as ``a -> b -> ... -> a``; after one is found its closing edge is set
    aside and the search goes on, so that each tangle shows all the loops it takes to undo it."""
    graph = {name: set(targets) for name, targets in graph.items()}
    found = []
    while True:
        try:
            graphlib.TopologicalSorter(graph).prepare()
        except graphlib.CycleError as error:
            loop = list(reversed(error.args[1]))  # graphlib gives it against the edges' direction
            found.append(loop)
            graph[loop[0]].discard(loop[1])
        else:
            return found


def test_cycles_are_found_and_named():
    """A loop through three modules is reported, and a graph without one reports nothing."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) in (
        [["a", "b", "c", "a"]], [["b", "c", "a", "b"]], [["c", "a", "b", "c"]])
    assert cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_kwdocs_has_no_import_cycle():
    """Every module's imports, module-level and inside functions, form layers: no module reaches itself."""
    graph = import_graph()
    assert sum(map(len, graph.values())) > 100, "the import graph came out nearly empty"
    loops = cycles(graph)
    assert not loops, "import cycles in kwdocs/:\n" + "\n".join(" -> ".join(loop) for loop in loops)
