"""No module of kwdocs sets another's state: no ``module.name = ...`` on a kwdocs module (a hook
lent for a while, a cache filled by its keys) and no ``global`` name that another module reads or
sets.  What a build lends its steps goes down the calls (``kwdocs.engine.build_session``); a
per-configuration cache lives in ``kwdocs.context``.  Read from the source (AST), imports inside
functions included."""
from __future__ import annotations

import ast

from tests.test_layering import PACKAGE, module_name

MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def module_aliases(tree: ast.AST, modules: set[str]) -> dict[str, str]:
    """Local name -> the kwdocs module it is bound to by an import anywhere in ``tree``."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in modules:
                    aliases[alias.asname] = alias.name
                elif not alias.asname and alias.name.split(".")[0] == "kwdocs":
                    aliases["kwdocs"] = "kwdocs"
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if f"{node.module}.{alias.name}" in modules:
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def module_of(node: ast.expr, aliases: dict[str, str], modules: set[str]) -> str | None:
    """The kwdocs module ``node`` names (``writer``, ``kwdocs.store.writer``), if it names one."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id) if aliases.get(node.id) in modules else None
    if isinstance(node, ast.Attribute):
        outer = module_of(node.value, aliases, modules) if isinstance(node.value, ast.Attribute) else (
            aliases.get(node.value.id) if isinstance(node.value, ast.Name) else None)
        if outer is not None and f"{outer}.{node.attr}" in modules:
            return f"{outer}.{node.attr}"
    return None


def targets_of(node: ast.AST) -> list[ast.expr]:
    """What an assignment, augmented or annotated assignment, or ``del`` binds or unbinds."""
    if isinstance(node, ast.Assign):
        found = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        found = [node.target]
    elif isinstance(node, ast.Delete):
        found = list(node.targets)
    else:
        return []
    flat: list[ast.expr] = []
    while found:
        target = found.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            found.extend(target.elts)
        elif isinstance(target, ast.Starred):
            found.append(target.value)
        else:
            flat.append(target)
    return flat


def foreign_state(sources: dict[str, str]) -> list[str]:
    """Each place a module sets an attribute of another kwdocs module, and each ``global`` name
    another module reads or sets, as ``module: what``."""
    modules = set(sources)
    trees = {name: ast.parse(text) for name, text in sources.items()}
    rebound = {name: {global_name for node in ast.walk(tree) if isinstance(node, ast.Global)
                      for global_name in node.names} for name, tree in trees.items()}
    found = []
    for name, tree in trees.items():
        aliases = module_aliases(tree, modules)
        for node in ast.walk(tree):
            for target in targets_of(node):
                while isinstance(target, ast.Subscript):    # ``module.cache[key] = ...`` fills the module's cache
                    target = target.value
                if isinstance(target, ast.Attribute) and (owner := module_of(target.value, aliases, modules)):
                    found.append(f"{name}: sets {owner}.{target.attr}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in ("setattr", "delattr") and node.args and \
                    (owner := module_of(node.args[0], aliases, modules)):
                found.append(f"{name}: {node.func.id} on {owner}")
            if isinstance(node, ast.Attribute) and (owner := module_of(node.value, aliases, modules)) \
                    and owner != name and node.attr in rebound[owner]:
                found.append(f"{name}: uses {owner}.{node.attr}, which {owner} rebinds (global)")
    return sorted(set(found))


def test_the_check_sees_a_hook_lent_a_global_used_and_a_module_cache_filled():
    sources = {
        "kwdocs.a": "hook = None\n_seen = 0\ndef count():\n    global _seen\n    _seen += 1\n",
        "kwdocs.b": ("from kwdocs import a\nimport kwdocs.a as other\n"
                     "def lend():\n    a.hook, x = print, 1\n    setattr(other, 'hook', None)\n    return a._seen\n"),
        "kwdocs.c": "import kwdocs.a\ndef fill():\n    kwdocs.a.cache[1] = 2\n    kwdocs.a.hook = 3\n",
        # an object's attribute, even an object a module holds, is the object's business
        "kwdocs.d": "from kwdocs.a import hook\ndef own(a):\n    hook.x = 1\n",
    }
    assert foreign_state(sources) == [
        "kwdocs.b: setattr on kwdocs.a",
        "kwdocs.b: sets kwdocs.a.hook",
        "kwdocs.b: uses kwdocs.a._seen, which kwdocs.a rebinds (global)",
        "kwdocs.c: sets kwdocs.a.cache",
        "kwdocs.c: sets kwdocs.a.hook",
    ]


def test_no_kwdocs_module_sets_another_modules_state():
    found = foreign_state({name: path.read_text() for name, path in MODULES.items()})
    assert found == [], "pass what a build lends down the calls (kwdocs.engine.build_session):\n" + "\n".join(found)
