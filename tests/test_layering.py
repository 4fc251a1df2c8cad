"""The package's layers as a test: ``kwdocs/`` has no import cycle between files, and its folders
and top-level modules import down one order (``LAYERS``), counting the imports inside functions
too (they run as surely as module-level ones, only later). Imports under ``if TYPE_CHECKING``
are for the type checker only and do not count."""
from __future__ import annotations

import ast
import graphlib
from pathlib import Path
from typing import NamedTuple

PACKAGE = Path(__file__).resolve().parents[1] / "kwdocs"


def module_name(path: Path, package: Path = PACKAGE) -> str:
    """``kwdocs/engine/tasks.py`` -> ``kwdocs.engine.tasks``; a package's ``__init__`` is the package."""
    parts = path.relative_to(package.parent).with_suffix("").parts
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


class Edge(NamedTuple):
    """One import of a kwdocs module by another: where it is written and what it reaches."""
    source: str
    target: str
    path: Path
    line: int


def import_edges(root: Path = PACKAGE) -> list[Edge]:
    """Every import of a kwdocs module by another, anywhere in its code, relative ones resolved."""
    modules = {module_name(path, root): path for path in root.rglob("*.py")}
    edges: list[Edge] = []
    for name, path in sorted(modules.items()):
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
                edge = Edge(name, target, path, node.lineno)
                if target and target != name and edge not in edges:   # ``from m import a, b``: one
                    edges.append(edge)
    return edges


def import_graph() -> dict[str, set[str]]:
    """Module -> the kwdocs modules it imports, anywhere in its code."""
    graph: dict[str, set[str]] = {module_name(path): set() for path in PACKAGE.rglob("*.py")}
    for edge in import_edges():
        graph[edge.source].add(edge.target)
    return graph


def test_edges_resolve_relative_imports_inside_functions(tmp_path):
    """``from ..pages import layout`` in a function of ``kwdocs/store/a.py`` reaches ``kwdocs.pages.layout``."""
    root = tmp_path / "kwdocs"
    for name, text in {"__init__.py": "", "store/__init__.py": "", "pages/__init__.py": "", "pages/layout.py": "",
                       "store/a.py": "def f():\n    from ..pages import layout\n    from . import b\n",
                       "store/b.py": ""}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    assert sorted((edge.source, edge.target, edge.line) for edge in import_edges(root)) == [
        ("kwdocs.store.a", "kwdocs.pages.layout", 2), ("kwdocs.store.a", "kwdocs.store.b", 3)]


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


# The package's layers, top to bottom: a folder or top-level module of kwdocs/ imports only from
# the layers below its own (and itself), never from one above it nor from a sibling in its own
# row.  ``__init__`` is the package's own __init__.py (its version).
LAYERS: list[tuple[str, ...]] = [
    ("__main__",),
    ("cli",),
    ("commands", "doit", "mkdocs_plugin"),   # the subcommands; the tasks a project's dodo.py loads; MkDocs' plugin
    ("webserver",),         # kwdocs serve: watch's loop plus an HTTP server over the site
    ("engine",),            # build, watch and check orchestration over doit
    ("site",),              # the HTML site, its highlighting and search indexes
    ("pages",),             # page models, composition, rendering, formats
    ("scan",),              # the tree's files, output folders recognised and skipped
    ("store",),             # what kwdocs keeps on disk: state, journal, ownership, cache
    ("formats",),           # the output formats' registry (entry points): what each writes, owns and counts
    ("layout",),            # page identity: where each page of a source or folder goes
    ("sources",),           # a source's bytes as read for a build and a page, checked against its facts
    ("extract",),           # facts of a source, per language; links between files
    ("config",),
    ("rules",),
    ("languages",),
    ("facts",),
    ("context", "collector", "mistakes"),
    ("__init__",),
]


def layer_of(module: str) -> str:
    """``kwdocs.engine.steps.common`` -> ``engine``; ``kwdocs`` (its __init__) -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def wrong_way(edges: list[Edge], layers: list[tuple[str, ...]]) -> list[str]:
    """The imports that go up the order or across a row, each as ``file:line: a -> b (...)``."""
    rank = {name: depth for depth, row in enumerate(layers) for name in row}
    found = []
    for edge in edges:
        source, target = layer_of(edge.source), layer_of(edge.target)
        if source not in rank or target not in rank:
            continue    # a folder or module with no place yet: test_every_folder_and_module_has_a_layer says so
        if source != target and rank[target] <= rank[source]:
            how = "across its row" if rank[target] == rank[source] else "up the layers"
            found.append(f"{edge.path.relative_to(PACKAGE.parent)}:{edge.line}: {source} -> {target} ({how}: "
                         f"{edge.source} imports {edge.target})")
    return found


def test_wrong_way_names_the_file_line_and_both_layers():
    """An import up the order, and one between siblings of a row, are named; one down is not."""
    here = PACKAGE / "store" / "owned.py"
    edges = [Edge("kwdocs.store.owned", "kwdocs.pages.layout", here, 21),
             Edge("kwdocs.pages.render", "kwdocs.store.state", here, 3),
             Edge("kwdocs.context", "kwdocs.mistakes", here, 9)]
    layers = [("pages",), ("store",), ("context", "mistakes")]
    assert wrong_way(edges, layers) == [
        "kwdocs/store/owned.py:21: store -> pages (up the layers: kwdocs.store.owned imports kwdocs.pages.layout)",
        "kwdocs/store/owned.py:9: context -> mistakes (across its row: kwdocs.context imports kwdocs.mistakes)"]


def test_every_folder_and_module_has_a_layer():
    """A new folder or top-level module of kwdocs/ gets its place in ``LAYERS`` (and no place names nothing)."""
    present = {layer_of(module_name(path)) for path in PACKAGE.rglob("*.py")}
    named = [name for row in LAYERS for name in row]
    assert len(named) == len(set(named)), "a layer is named twice in LAYERS"
    assert present == set(named), f"not in LAYERS: {sorted(present - set(named))}; gone: {sorted(set(named) - present)}"


def test_imports_go_down_the_layers():
    """No import, at any depth of a module (inside functions too), reaches a layer above its own."""
    edges = import_edges()
    assert len(edges) > 100, "the import graph came out nearly empty"
    wrong = wrong_way(edges, LAYERS)
    assert not wrong, "imports against kwdocs' layers (LAYERS in tests/test_layering.py, top to bottom):\n" + \
        "\n".join(wrong)


# Names every module of one kind defines for the same role, called through the module: an
# extractor's ``extract`` and ``Resolver``, a command's ``add_arguments`` and ``run``, what a
# module adds to the extraction key (``fingerprint``), a comment extractor's ``leading_comment``.
ROLES = {"extract", "Resolver", "add_arguments", "run", "fingerprint", "leading_comment"}


def test_no_two_modules_define_one_public_name():
    """A public function or class defined at the top of two kwdocs modules means one thing, a role
    in ``ROLES``; otherwise each name says its own job (``decode`` of a source's bytes, not of a
    cache entry)."""
    where: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
                    not node.name.startswith("_"):
                where.setdefault(node.name, []).append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    twice = {name: places for name, places in where.items() if len(places) > 1 and name not in ROLES}
    assert not twice, "one name, two meanings:\n" + "\n".join(f"{name}: {' '.join(places)}"
                                                               for name, places in sorted(twice.items()))
