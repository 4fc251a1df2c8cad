"""Links between files: which file of the tree each import or include names.

Works on path lists and the facts' ``imports`` only (never the disk), so it is
cheap enough to recompute for the whole tree on every build: every lookup goes
through an index built once (module name -> candidate files, header name ->
files), and each distinct import is resolved once.

Python: ``a.b.c`` is ``a/b/c/__init__.py``, ``a/b/c.py``, or their ``.pyi``
stubs, found at the tree root or below a deeper folder that is not itself a
package (src-layout, a package kept in a subfolder, a folder of scripts).
C/C++: an include is looked up beside the including file (quoted only), in the
include roots (configured ones, then every folder named ``include``), in the
tree root, and finally, for a header written with a folder (``lib/Tensor.h``),
as the tail of any path in the tree, which finds roots nobody configured
(``aten/src``).  Shell ``source`` lines and Makefile ``include`` resolve like
quoted includes; CMake's ``include``/``add_subdirectory``/``find_package`` by
CMake's own rules.  Any other language whose extractor module defines a
``Resolver`` (JS/TS, Go, Rust, Java, Lua) resolves its own imports there.
"""
from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kwdocs.collector import collector_paused
from kwdocs.languages import resolver


def _stdlib_modules() -> frozenset[str]:
    """Python's standard library, shipped as data (not the running Python's
    ``sys.stdlib_module_names``): ``import imp`` is the standard library on every Python."""
    text = (Path(__file__).parent / "stdlib_modules.txt").read_text(encoding="utf-8")
    return frozenset(line for line in text.splitlines() if line and not line.startswith("#"))


PYTHON_STDLIB: frozenset[str] = _stdlib_modules()

# Headers of the C and C++ standard libraries, POSIX, the common operating
# system SDKs and compiler intrinsics: none of them is third party.  The C
# names are lower case: Windows and Apple SDK headers match case-insensitively.
_C_HEADERS = """
assert complex ctype errno fenv float inttypes iso646 limits locale math setjmp signal
stdalign stdarg stdatomic stdbit stdbool stdckdint stddef stdint stdio stdlib stdnoreturn
string tgmath threads time uchar wchar wctype
aio cpio dirent dlfcn fcntl fmtmsg fnmatch ftw glob grp iconv langinfo libgen monetary
mqueue ndbm netdb nl_types poll pthread pwd regex sched search semaphore spawn strings
stropts syslog tar termios trace ulimit unistd utime utmpx wordexp alloca malloc memory
execinfo getopt endian byteswap features elf link sysexits err error paths ucontext
cxxabi unwind
windows winsock winsock2 ws2tcpip windef winbase winnt winerror winreg shlobj shellapi
direct io process conio intrin tchar objbase psapi dbghelp crtdbg mmsystem
immintrin x86intrin xmmintrin emmintrin pmmintrin tmmintrin smmintrin nmmintrin
wmmintrin avxintrin avx2intrin avx512fintrin ammintrin cpuid arm_neon arm_sve arm_fp16
arm_acle arm_neon_sve_bridge altivec vecintrin riscv_vector mmintrin omp
xlocale yvals crtdefs basetsd winapifamily targetconditionals availability availabilitymacros
"""
_CPP_HEADERS = """
algorithm any array atomic barrier bit bitset cassert ccomplex cctype cerrno cfenv cfloat
charconv chrono cinttypes ciso646 climits clocale cmath codecvt compare complex concepts
condition_variable coroutine csetjmp csignal cstdalign cstdarg cstdbool cstddef cstdint
cstdio cstdlib cstring ctgmath ctime cuchar cwchar cwctype debugging deque exception
execution expected filesystem flat_map flat_set format forward_list fstream functional
future generator hazard_pointer initializer_list inplace_vector iomanip ios iosfwd
iostream istream iterator latch limits linalg list locale map mdspan memory
memory_resource mutex new numbers numeric optional ostream print queue random ranges
ratio rcu regex scoped_allocator semaphore set shared_mutex simd source_location span
spanstream sstream stack stacktrace stdexcept stdfloat stop_token streambuf string
string_view strstream syncstream system_error text_encoding thread tuple type_traits
typeindex typeinfo unordered_map unordered_set utility valarray variant vector version
"""
STANDARD_HEADERS: frozenset[str] = frozenset(
    [f"{name}.h" for name in _C_HEADERS.split()] + _CPP_HEADERS.split()
)
# Folders whose headers belong to the system (``<sys/types.h>``, ``<linux/perf_event.h>``).
SYSTEM_HEADER_FOLDERS: tuple[str, ...] = (
    "sys/", "bits/", "linux/", "asm/", "asm-generic/", "netinet/", "netinet6/", "arpa/",
    "net/", "mach/", "mach-o/", "machine/", "libkern/", "os/", "ext/", "tr1/", "experimental/",
    "dispatch/", "sanitizer/", "android/",
)

_PY_SUFFIX_RANK = {".py": 1, ".pyw": 2, ".pyi": 4}  # package __init__ ranks one lower


def is_standard_header(header: str) -> bool:
    """True for C/C++/POSIX/system headers: ``<vector>``, ``<stdio.h>``, ``<sys/mman.h>``."""
    return (header in STANDARD_HEADERS or header.lower() in STANDARD_HEADERS  # <Windows.h>
            or header.startswith(SYSTEM_HEADER_FOLDERS))


def is_python_stdlib(module: str) -> bool:
    """True when the top-level name of a dotted module is in Python's standard library."""
    return module.partition(".")[0] in PYTHON_STDLIB


def resolve_links(languages: Mapping[str, str], imports: Mapping[str, list[dict]],
                  include_roots: Sequence[str] = (), in_place: bool = False) -> dict[str, dict]:
    """For every path in ``languages``: its resolved ``deps`` and its ``used_by`` list.

    ``deps`` keeps the order of the file's imports: each import record with
    ``target`` (a path of the tree, or None) and ``category`` added, plus
    ``name_targets`` ({name: path}) when ``from m import a, b`` names
    submodules.  ``category`` is ``repo`` for every resolved import, and also
    for an unresolved one that is plainly the project's own (a relative import,
    a generated header in one of the tree's folders: ``target`` stays None);
    else ``stdlib`` (Python's, or a C/C++/POSIX/system header) or
    ``third_party``.  ``used_by`` lists, sorted, the other files whose imports
    target this one (or name it in ``name_targets``).

    ``in_place``: the import records become the ``deps`` records themselves
    instead of copies, for a caller that has no further use for them (the
    copies of a large tree's imports cost much memory).
    """
    with collector_paused():  # the ~100k new dicts would set off full collections: a third of the time
        return _resolve(languages, imports, include_roots, in_place)


def _resolve(languages: Mapping[str, str], imports: Mapping[str, list[dict]],
             include_roots: Sequence[str], in_place: bool) -> dict[str, dict]:
    resolution = ImportResolver(languages, imports, include_roots, in_place)
    result: dict[str, dict] = {path: {"deps": [], "used_by": []} for path in sorted(languages)}
    for path in sorted(path for path in imports if path in result):
        if isinstance(imports[path], list):
            result[path]["deps"] = resolution.deps(path, imports[path])
    for target, users_of_target in resolution.used_by.items():
        result[target]["used_by"] = users_of_target     # filled in path order: sorted
    return result


class ImportResolver:
    """A tree's imports resolved a file at a time (``deps``), against every path of the tree
    (``languages``): a caller that holds one part of the tree's imports at a time resolves it
    as ``resolve_links`` does the whole.  ``imports``: what the languages' own resolvers (JS's
    ``tsconfig``, Go's ``go.mod``) are built from, at least the imports of the files whose
    language has no resolver of ``RESOLVERS``.  ``used_by``: each target's importers, in the
    order they were resolved."""

    def __init__(self, languages: Mapping[str, str], imports: Mapping[str, list[dict]],
                 include_roots: Sequence[str] = (), in_place: bool = False) -> None:
        self._languages, self._imports = languages, imports
        self._how = {language: resolver(language) for language in set(languages.values())}
        self._python_dep = _PythonIndex([path for path, language in languages.items()
                                         if self._how[language] == "python"]).dep
        self._record = _update if in_place else _copy
        self._files = _FileIndex(languages.keys(), include_roots)
        # Each distinct include is resolved once: <...> per header, "..." per folder and header.
        self._angle_answers: dict[str, tuple[str | None, str]] = {}
        self._quoted_answers: dict[str, dict[str, tuple[str | None, str]]] = defaultdict(dict)
        self._resolvers: dict[str, Any] = {}  # language id -> its module's import resolver (or None)
        self.used_by: dict[str, list[str]] = defaultdict(list)

    def deps(self, path: str, file_imports: list) -> list[dict]:
        """The resolved ``deps`` of the file ``path`` (of ``languages``), its importers noted."""
        languages, files, record, python_dep = self._languages, self._files, self._record, self._python_dep
        angle_answers = self._angle_answers
        deps: list[dict] = []
        folder = path.rpartition("/")[0]
        found_by = self._how[languages[path]]
        python = found_by == "python"
        cmake = found_by == "cmake"
        includes = found_by == "include"
        tree_resolver = None
        if isinstance(found_by, type):   # the language's own resolver, built once over the whole tree
            if languages[path] not in self._resolvers:
                self._resolvers[languages[path]] = found_by(languages, self._imports)
            tree_resolver = self._resolvers[languages[path]]
        quoted = self._quoted_answers[folder]
        users: set[str | None] = set()
        for entry in file_imports:
            if not isinstance(entry, dict):
                continue
            module = entry.get("module")
            kind = entry.get("kind")
            if not isinstance(module, str):
                entry = {**entry, "module": ""}
                module = ""
            if tree_resolver is not None:
                target, category = tree_resolver.answer(entry, path)
                dep = record(entry, target, category)
            elif kind == "include" and includes:
                if entry.get("system"):
                    answer = angle_answers.get(module)
                    if answer is None:
                        answer = angle_answers[module] = files.answer(module, folder, True)
                else:
                    answer = quoted.get(module)
                    if answer is None:
                        answer = quoted[module] = files.answer(module, folder, False)
                dep = record(entry, answer[0], answer[1])
            elif (kind == "from" or kind == "import") and python:
                dep = python_dep(entry, module, path, folder, record)
                if "name_targets" in dep:
                    users.update(dep["name_targets"].values())
            elif cmake:
                target, category = files.cmake_answer(module, kind, folder)
                dep = record(entry, target, category)
            elif callable(found_by) and not isinstance(found_by, type):    # an installed language's own function
                target = _installed_answer(found_by, module, path, files.paths)
                dep = record(entry, target, "repo" if target else "third_party")
            else:
                dep = record(entry, None, "third_party")
            deps.append(dep)
            users.add(dep["target"])
        users.discard(path)
        for target in users:
            if target is not None:
                self.used_by[target].append(path)
        return deps


def _installed_answer(find: Callable[[str, str, frozenset[str]], str | None], module: str, path: str,
                      paths: frozenset[str]) -> str | None:
    """An installed language's resolver, kept to its promise: a path of the tree, or None."""
    try:
        target = find(module, path, paths)
    except Exception:  # noqa: BLE001 - a plug-in's bug leaves the import unresolved, never stops the build
        return None
    return target if isinstance(target, str) and target in paths and target != path else None


def _copy(entry: dict[str, Any], target: str | None, category: str) -> dict[str, Any]:
    return {**entry, "target": target, "category": category}


def _update(entry: dict[str, Any], target: str | None, category: str) -> dict[str, Any]:
    """Positional, and assigned one by one: called for each of a tree's 100,000 imports,
    keyword arguments cost a dict each and ``update`` a method call."""
    entry["target"] = target
    entry["category"] = category
    return entry


class _PythonIndex:
    """Dotted module name -> the files that can be that module, best first."""

    def __init__(self, python_paths: Sequence[str]):
        packages = set()
        for path in python_paths:
            folder, _, name = path.rpartition("/")
            if name in ("__init__.py", "__init__.pyi"):
                packages.add(folder)
        found: dict[str, list[tuple[int, int, str, str]]] = defaultdict(list)
        self._top_names: set[str] = set()  # first names of the modules at the tree root
        for path in python_paths:
            parts = path.split("/")
            stem, dot, suffix = parts[-1].rpartition(".")
            rank = _PY_SUFFIX_RANK.get(dot + suffix)
            if rank is None or not stem:
                continue
            if stem == "__init__":
                module_parts, rank = parts[:-1], rank - 1
            else:
                module_parts = parts[:-1] + [stem]
            # The module name may start at any folder whose parts (and what
            # follows) are identifiers and which is not inside a package.
            start = len(module_parts)
            while start > 0 and module_parts[start - 1].isidentifier():
                start -= 1
            for depth in range(start, len(module_parts)):
                prefix = "/".join(parts[:depth])
                if depth and prefix in packages:
                    continue
                found[".".join(module_parts[depth:])].append((depth, rank, path, prefix))
            if start == 0 and module_parts:
                self._top_names.add(module_parts[0])
        # Modules found at the tree root need no further thought; the others
        # depend on where the importer is.
        self._rooted: dict[str, str] = {}
        self._deep: dict[str, list[tuple[int, int, str, str]]] = {}
        for module, entries in found.items():
            entries.sort()
            if entries[0][0] == 0:
                self._rooted[module] = entries[0][2]
            else:
                self._deep[module] = entries
        self._deep_answers: dict[tuple[str, str], str | None] = {}

    def find(self, module: str, importer: str, folder: str) -> str | None:
        """The file that ``module`` names for ``importer`` (in ``folder``), or None.

        A candidate under the tree root, or under a folder that holds the
        importer, wins over one elsewhere (shortest prefix first, then the
        package over the module, code over stub, then by path); a standard
        library name is never taken from a folder the importer cannot see.
        """
        target = self._rooted.get(module)
        if target is not None or module not in self._deep:
            return target
        key = (module, folder)
        if key not in self._deep_answers:
            candidates = self._deep[module]
            visible = [path for _, _, path, prefix in candidates if importer.startswith(prefix + "/")]
            if visible:
                self._deep_answers[key] = visible[0]
            else:
                self._deep_answers[key] = None if is_python_stdlib(module) else candidates[0][2]
        return self._deep_answers[key]

    def dep(self, entry: dict[str, Any], module: str, importer: str, folder: str,
            record: Callable[[dict[str, Any], str | None, str], dict[str, Any]]) -> dict[str, Any]:
        """``entry`` with ``target``/``category`` (and ``name_targets`` for submodules).

        ``from a.b import c`` targets the submodule ``a/b/c.py`` when every
        imported name is a submodule, else the package ``a.b``; the submodules
        it names are listed in ``name_targets`` either way.  ``import a.b.c``
        with no ``a/b/c`` in the tree is unresolved (``target`` None).
        """
        rooted, deep, find = self._rooted, self._deep, self.find
        target = None
        name_targets = None
        names = entry.get("names")
        if names and entry.get("kind") == "from" and isinstance(names, list):
            prefix = module + "." if module else ""
            for name in names:
                if name != "*" and isinstance(name, str):
                    dotted = prefix + name
                    submodule = rooted.get(dotted) or (find(dotted, importer, folder) if dotted in deep else None)
                    if submodule is not None:
                        if name_targets is None:
                            name_targets = {}
                        name_targets[name] = submodule
            if name_targets and all(name in name_targets for name in names):
                target = next(iter(name_targets.values()))
        if target is None and module:
            # the module itself, never a package above it: ``import pkg.gone`` after
            # ``pkg/gone.py`` was deleted names no file, and linking ``pkg`` would be wrong
            target = rooted.get(module) or find(module, importer, folder)
        if target is None and name_targets:
            target = next(iter(name_targets.values()))
        top = module.partition(".")[0]
        if target is not None or (entry.get("level") or 0) > 0:
            category = "repo"  # an unresolved relative import is still ours
        elif top in PYTHON_STDLIB:
            category = "stdlib"
        elif top in self._top_names:
            category = "repo"  # a module of ours missing from the tree (generated, left out)
        else:
            category = "third_party"
        dep = record(entry, target, category)
        if name_targets:
            dep["name_targets"] = name_targets
            if target in name_targets.values() and (package := rooted.get(module) or find(module, importer, folder)):
                dep["package"] = package   # the module's own file, for names said through it
        return dep


class _FileIndex:
    """Resolves includes (C/C++, shell ``source``, CMake) against the tree's paths."""

    def __init__(self, paths: Sequence[str] | Any, include_roots: Sequence[str]):
        self._paths = frozenset(paths)
        roots = [_normalise(root.strip("/")) for root in include_roots if isinstance(root, str)]
        folders = {path.rpartition("/")[0] + "/" for path in self._paths}
        self._folders: set[str] = set()
        for folder in folders:
            while folder and folder not in self._folders:
                self._folders.add(folder)
                folder = folder[:-1].rpartition("/")[0] + "/" if "/" in folder[:-1] else ""
        detected = set()
        for folder in folders:
            start = folder.find("include/")
            while start != -1:
                if start == 0 or folder[start - 1] == "/":
                    detected.add(folder[:start + len("include")])
                start = folder.find("include/", start + 1)
        roots += sorted(detected, key=lambda root: (root.count("/"), root))
        self.roots = [root for root in dict.fromkeys(roots) if root]
        self._by_name: dict[str, list[str]] | None = None

    @property
    def paths(self) -> frozenset[str]:
        """Every file of the tree."""
        return self._paths

    def answer(self, header: str, folder: str, system: bool) -> tuple[str | None, str]:
        """(target, category) of one include written in a file of ``folder``."""
        target = self._find(header, folder, system)
        if target is not None:
            return target, "repo"
        if is_standard_header(header):
            return None, "stdlib"
        return None, "repo" if self._ours(header, folder, system) else "third_party"

    def cmake_answer(self, argument: str, kind: Any, folder: str) -> tuple[str | None, str]:
        """(target, category) of a CMake ``include``/``add_subdirectory`` or ``find_package``.

        The extractor reports the first two as kind ``include``, the last as
        ``import``.
        """
        if kind == "import":
            found = self._by_names([f"Find{argument}.cmake", f"{argument}Config.cmake",
                                    f"{argument.lower()}-config.cmake"])
            return (found, "repo") if found else (None, "third_party")
        for variable in ("${CMAKE_CURRENT_LIST_DIR}/", "${CMAKE_CURRENT_SOURCE_DIR}/"):
            argument = argument.removeprefix(variable)
        if not argument or "${" in argument or argument.startswith("/"):
            return None, "third_party"
        for base in ([folder] if folder else []) + [""]:
            path = _normalise(f"{base}/{argument}" if base else argument)
            for candidate in (path, f"{path}/CMakeLists.txt"):
                if candidate in self._paths:
                    return candidate, "repo"
        if "/" in argument or "." in argument:
            return None, "third_party"
        found = self._by_names([f"{argument}.cmake"])  # a module of CMAKE_MODULE_PATH
        return (found, "repo") if found else (None, "stdlib")  # else one of CMake's own

    def _by_names(self, names: list[str]) -> str | None:
        """The shortest path of the tree whose file name is one of ``names``."""
        by_name = self._names()
        matches = [path for name in names for path in by_name.get(name, ())]
        return min(matches, key=lambda path: (path.count("/"), path)) if matches else None

    def _names(self) -> dict[str, list[str]]:
        if self._by_name is None:
            self._by_name = defaultdict(list)
            for path in self._paths:
                self._by_name[path.rpartition("/")[2]].append(path)
        return self._by_name

    def _find(self, header: str, folder: str, system: bool) -> str | None:
        if not header or header.startswith("/"):
            return None
        paths = self._paths
        clean = not _needs_normalising(header)  # then no joined candidate does either
        candidates = [] if system else [f"{folder}/{header}" if folder else header]
        candidates += [f"{root}/{header}" for root in self.roots]
        for candidate in candidates:
            if not clean:
                candidate = _normalise(candidate)
            if candidate in paths:
                return candidate
        if is_standard_header(header):
            return None if system else self._existing(header)
        return self._existing(header) or self._by_tail(header)

    def _ours(self, header: str, folder: str, system: bool) -> bool:
        """True when a header missing from the tree sits in one of its folders.

        Generated headers (``lib/ops/abs_meta.h``) are the project's own even
        though no file of the tree is them.
        """
        first = _normalise(header).partition("/")[0]
        if not first or first == ".." or "/" not in header:
            return False
        bases = ([folder] if folder and not system else []) + self.roots + [""]
        return any((f"{base}/{first}/" if base else f"{first}/") in self._folders for base in bases)

    def _existing(self, path: str) -> str | None:
        path = _normalise(path)
        return path if path in self._paths else None

    def _by_tail(self, header: str) -> str | None:
        """The shortest path of the tree ending in ``header`` when it names a folder."""
        header = _normalise(header)
        if "/" not in header or header.startswith("../"):
            return None
        tail = "/" + header
        matches = [path for path in self._names().get(header.rpartition("/")[2], ())
                   if path.endswith(tail)]
        return min(matches, key=lambda path: (path.count("/"), path)) if matches else None


def _needs_normalising(path: str) -> bool:
    return "/." in path or path.startswith(".") or "//" in path


def _normalise(path: str) -> str:
    """Collapse ``.``/``..`` segments; a path leaving the tree becomes ``..`` (never found)."""
    if _needs_normalising(path):
        path = posixpath.normpath(path)
        if path == ".":
            return ""
    return path


REEXPORT_DEPTH = 4   # re-exports followed from a package to where a name is defined


Reexports = tuple[dict[str, dict[str, str]], dict[str, list[str]]]


def reexports(resolved: Mapping[str, dict]) -> Reexports:
    """Per file, the file each name it imports comes from (``from .core import f``: the name
    may be used through this file), and the files it imports ``*`` from."""
    exported: dict[str, dict[str, str]] = {}     # file -> name -> file it imports the name from
    starred: dict[str, list[str]] = {}           # file -> files it imports * from
    for path, links in resolved.items():
        for dep in links.get("deps", []):
            target = dep.get("target")
            if not target:
                continue
            for name in dep.get("names", ()):
                if name == "*":
                    starred.setdefault(path, []).append(target)
                else:
                    exported.setdefault(path, {}).setdefault(name, (dep.get("name_targets") or {}).get(name, target))
    return exported, starred


def name_uses(resolved: Mapping[str, dict], uses: Mapping[str, list[str]],
              shared: Reexports | None = None) -> dict[str, dict[str, int]]:
    """For each file of the tree, how many other files use each name it may define.

    A name counts for a file when another file imports it from there
    (``from pkg.core import f``) or calls it through an import (``dist.f()`` with
    ``import pkg as dist``: ``uses`` holds such called names, as imports resolve
    them); a package that re-exports the name (``from .core import f`` or ``*``
    in ``pkg/__init__.py``) passes the use on to where it comes from.  Names a
    file does not define are counted too: only the files' own lists tell.  ``shared``:
    ``reexports(resolved)``, if already made.
    """
    exported, starred = shared or reexports(resolved)
    modules: dict[str, dict[str, str]] = {}      # file -> module as written -> its file, for calls
    for path, links in resolved.items():
        for dep in links.get("deps", []):
            target = dep.get("target")
            if not target:
                continue
            known = modules.setdefault(path, {})
            known.setdefault(dep.get("module", ""), target)
            for name, submodule in (dep.get("name_targets") or {}).items():
                known.setdefault(f"{dep.get('module', '')}.{name}", submodule)
    # a file's uses are all credited at its turn: a count per name, not the set of its users (those
    # sets for the whole tree bounded the link step's peak)
    counted: dict[str, dict[str, int]] = {}
    credited: set[tuple[str, str]] = set()     # (file, name) credited by the file whose turn it is
    walks: dict[tuple[str, str], list[str]] = {}    # (file, name) -> the files its re-exports reach

    def walk(target: str, name: str) -> list[str]:
        places: list[str] = []
        reached = [target]
        for _ in range(REEXPORT_DEPTH):
            following: list[str] = []
            for place in reached:
                places.append(place)
                source = exported.get(place, {}).get(name)
                following.extend([source] if source else starred.get(place, ()))
            reached = [place for place in following if place]
            if not reached:
                break
        return places

    def credit(user: str, target: str, name: str) -> None:
        if (target, name) not in walks:
            walks[target, name] = walk(target, name)
        for place in walks[target, name]:
            if place != user and (place, name) not in credited:
                credited.add((place, name))
                known = counted.setdefault(place, {})
                known[name] = known.get(name, 0) + 1

    for path, links in resolved.items():
        credited.clear()
        for dep in links.get("deps", []):
            if dep.get("target"):
                for name in dep.get("names", ()):
                    if name != "*":
                        credit(path, dep["target"], name)
        known = modules.get(path, {})
        for called in uses.get(path, ()):
            module, _, name = called.rpartition(".")
            while module and module not in known:
                module = module.rpartition(".")[0]
            if module and name:
                credit(path, known[module], called[len(module) + 1:].partition(".")[0])
    return {path: dict(sorted(names.items())) for path, names in counted.items()}


USES_LIMIT = 20     # places listed per definition; the rest are counted
CHAIN_LIMIT = 32    # files a name is looked for in, from the one it is imported from


def definition_links(resolved: Mapping[str, dict], defs: Mapping[str, Mapping[str, int]],
                     binds: Mapping[str, Mapping[str, str]], shared: Reexports | None = None,
                     sink: Callable[[str, str, dict], None] | None = None,
                     ) -> tuple[dict[str, dict], dict[str, dict], dict[str, list]]:
    """Where the names a file imports are defined, and where each definition is imported.

    ``defs``: per file, its top-level definitions (name -> line); ``binds``: per file, the
    names it binds under another name (``module.name`` as imported -> the name bound).
    Returns ``names`` (per file: identifier as bound in it -> [file, line or None]: a named
    import to its definition, following packages that re-export it, or to the file it is
    imported from when it is not found; a module or header imported whole to its file),
    ``uses`` (per defining file: name -> {"at": the first ``USES_LIMIT`` [file, line] of its
    imports, sorted, "more": how many more}) and ``requests`` (per file a name is looked for
    in: [importer, name as bound, name, file imported from, the files looked in]), with which
    ``chain_definition`` finds a name again when only definitions moved.  ``shared``:
    ``reexports(resolved)``, if already made.  ``sink``: given each file's ``names`` and
    ``uses`` as ``("names" or "uses", file, value)`` as they are made, which are then not
    returned (the whole tree's, held at once, bounded the link step's peak).
    """
    exports, starred = shared or reexports(resolved)

    no_defs: Mapping[str, int] = {}

    def chain(target: str, name: str) -> list[str]:
        """The files ``name`` is looked for in, in order, up to the first that defines it: where
        it is imported from, then where that file imports it from (or the files it imports
        ``*`` from), and so on.  A file further on matters only once that one no longer
        defines it, and then the name is found elsewhere: the whole tree is linked again."""
        if name in defs.get(target, no_defs):
            return [target]
        reached, seen = [target], [target]
        for _ in range(REEXPORT_DEPTH):
            following: list[str] = []
            for place in reached:
                source = exports.get(place, {}).get(name)
                for other in [source] if source else starred.get(place, ()):
                    if other in seen or other in following:
                        continue
                    following.append(other)
                    if name in defs.get(other, no_defs):
                        return seen + following
            seen.extend(following)
            reached = following
            if not reached or len(seen) >= CHAIN_LIMIT:
                break
        return seen[:CHAIN_LIMIT]

    names: dict[str, dict] = {}
    # per defining file and name, the places it is imported at: the first ``USES_LIMIT`` in order
    # and those that came after them, cut back to these once there are twice as many (``dropped``
    # counts the rest: places of different files never repeat, and a file's own are credited once)
    places: dict[str, dict[str, list[tuple[str, int]]]] = {}
    dropped: dict[tuple[str, str], int] = {}
    requests: dict[str, list] = {}
    for path, links in resolved.items():
        found: dict[str, list] = {}
        credited: set[tuple[str, str, int]] = set()
        bound = binds.get(path, {})
        for dep in links.get("deps", []):
            target, module = dep.get("target"), dep.get("module") or ""
            if not target:
                continue
            imported = [name for name in dep.get("names") or () if isinstance(name, str) and name != "*"]
            if not imported:
                found.setdefault(bound.get(module, module), [target, None])
                continue
            for name in imported:
                submodule = (dep.get("name_targets") or {}).get(name)
                as_bound = bound.get(f"{module}.{name}", name)
                if submodule or as_bound in found or not as_bound:
                    found.setdefault(as_bound, [submodule or target, None])
                    continue
                looked_in = chain(target, name)
                found[as_bound] = chain_definition(looked_in, name, target, defs)
                request = [path, as_bound, name, target, looked_in]
                for place in looked_in:
                    requests.setdefault(place, []).append(request)
                definer_path, line = found[as_bound][0], dep.get("line") or 1
                if found[as_bound][1] is not None and definer_path != path and \
                        (definer_path, name, line) not in credited:
                    credited.add((definer_path, name, line))
                    at = places.setdefault(definer_path, {}).setdefault(name, [])
                    at.append((path, line))
                    if len(at) >= 2 * USES_LIMIT:
                        at.sort()
                        dropped[definer_path, name] = dropped.get((definer_path, name), 0) + len(at) - USES_LIMIT
                        del at[USES_LIMIT:]
        found.pop("", None)
        if found and sink is not None:
            sink("names", path, dict(sorted(found.items())))
        elif found:
            names[path] = dict(sorted(found.items()))
    uses: dict[str, dict] = {}
    while places:     # each file's places let go as its uses are made: both at once raised the peak
        target, by_name = places.popitem()
        made = {name: {"at": [list(place) for place in sorted(at)[:USES_LIMIT]],
                       "more": max(0, len(at) - USES_LIMIT) + dropped.get((target, name), 0)}
                for name, at in sorted(by_name.items())}
        if sink is not None:
            sink("uses", target, made)
        else:
            uses[target] = made
    return names, uses, requests


def chain_definition(looked_in: Sequence[str], name: str, imported_from: str,
                     defs: Mapping[str, Mapping[str, int]]) -> list:
    """[file, line] of the first file of ``looked_in`` that defines ``name``; else [the file it
    is imported from, None]."""
    for place in looked_in:
        line = defs.get(place, {}).get(name)
        if line is not None:
            return [place, line]
    return [imported_from, None]


Follows = dict[str, tuple[dict[str, list[tuple[int, str]]], list[tuple[int, dict]]]]


def _followed(place: str, name: str, deps_of: Callable[[str], list[dict]], index: Follows) -> list[str]:
    """The files ``place`` imports ``name`` from (``from .core import name``, or ``*``), in the
    order of its imports; ``index`` keeps each file's imports by name, made at its first look."""
    if place not in index:
        named: dict[str, list[tuple[int, str]]] = {}
        stars: list[tuple[int, dict]] = []
        for order, dep in enumerate(deps_of(place)):
            if not dep.get("target"):
                continue
            names = dep.get("names", ())
            if "*" in names:
                stars.append((order, dep))
                continue
            submodules = dep.get("name_targets") or {}
            for imported in names:
                if isinstance(imported, str):
                    named.setdefault(imported, []).append((order, submodules.get(imported, dep["target"])))
        index[place] = named, stars
    named, stars = index[place]
    hits = named.get(name, [])
    if stars:
        hits = sorted([*hits, *((order, (dep.get("name_targets") or {}).get(name, dep["target"]))
                                for order, dep in stars)])
    return [target for _, target in hits]


def _definition(target: str, name: str, defines_of: Callable[[str], Mapping[str, str]],
                deps_of: Callable[[str], list[dict]], reached: set[str], index: Follows) -> list[str] | None:
    """``[file, anchor]`` of the definition of ``name`` imported from ``target``: the first of
    the files that define it, following re-exports (``from .core import f``, ``*``) from
    ``target``.  Every file the re-exports lead to is added to ``reached``, found or not, so
    the files whose definitions an answer may come to depend on only the imports."""
    found = None
    places = [target]
    walked = {target}      # this name's files: another name's walk may pass the same ones
    for _ in range(REEXPORT_DEPTH):
        following: list[str] = []
        for place in places:
            reached.add(place)
            anchor = defines_of(place).get(name)
            if anchor and found is None:
                found = [place, anchor]
            following.extend(_followed(place, name, deps_of, index))
        places = [place for place in dict.fromkeys(following) if place not in walked]
        walked.update(places)
        if not places:
            break
    return found


def module_file(dep: Mapping[str, Any]) -> str | None:
    """The file that is the module an import names (``from pkg import sub`` targets ``pkg/sub.py``,
    whose module is ``pkg``: its ``package``), or None when the import's target is not it."""
    target = dep.get("package") or dep.get("target")
    module = dep.get("module") or ""
    return target if target and module and is_module_file(module, target) else None


def is_module_file(module: str, path: str) -> bool:
    """True when ``path`` can be the file of the dotted ``module``: ``a/b/c.py``, ``a/b/c/__init__.py``
    (or a stub), at the tree root or below a folder."""
    stem = path.rpartition(".")[0]
    if stem.endswith("/__init__") or stem == "__init__":
        stem = stem[:-len("__init__")].rstrip("/")
    tail = module.replace(".", "/")
    return stem == tail or stem.endswith("/" + tail)


_DOTTED = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


def bound_modules(facts: Mapping[str, Any]) -> dict[str, str]:
    """The names a Python file's imports bind -> the module or dotted name each stands for
    (``nn`` -> ``torch.nn`` for ``from torch import nn``), with which a dotted name written in
    the file (``nn.Module``) reads as the imports resolve it (``torch.nn.Module``)."""
    bound: dict[str, str] = {}
    for module in (entry.get("module") for entry in facts.get("imports") or () if isinstance(entry, dict)):
        if isinstance(module, str) and module:
            bound.setdefault(module.partition(".")[0], module.partition(".")[0])
    for symbol in facts.get("symbols") or ():
        if symbol.get("kind") == "import" and isinstance(symbol.get("name"), str):
            head = symbol["name"].partition(".")[0]
            bound[head] = symbol.get("signature") or bound.get(head, head)
    return bound


def mentions_of(facts: Mapping[str, Any]) -> dict[str, list[str]]:
    """``{"mentions": [...]}``: the dotted names a file's docstrings and signatures say through
    a name its imports bind (``pkg.Engine`` with ``import pkg``, ``F.relu`` with ``import
    pkg.functional as F``), as the imports resolve them, sorted; the link step finds their
    definitions as it does for called names, so a page links them to the defining file.
    Python's only: the names other languages' imports bind are no dotted module paths."""
    if facts.get("language") != "python":
        return {}
    bound = bound_modules(facts)
    if not bound:
        return {}
    found: set[str] = set()
    texts = "\n".join(text for symbol in facts.get("symbols") or ()      # one search: most are short
                      for text in (symbol.get("doc"), symbol.get("signature")) if isinstance(text, str))
    for name in set(_DOTTED.findall(texts)):
        head, _, rest = name.partition(".")
        if head in bound:
            found.add(f"{bound[head]}.{rest}")
    found.difference_update(facts.get("uses") or ())
    return {"mentions": sorted(found)} if found else {}


def uses_and_mentions(info: Mapping[str, Any]) -> list[str]:
    """What a file's anchors are found for: the names it calls through imports, then those its
    docstrings and signatures mention (``mentions_of``)."""
    return [*info.get("uses", []), *info.get("mentions", [])]


def _through_modules(place: str, parts: Sequence[str], deps_of: Callable[[str], list[dict]],
                     index: Follows) -> str | None:
    """The file of the submodule ``parts`` of the module in ``place`` (``nn.functional`` of
    ``torch``), through what each package imports; None when one of them is not a module."""
    for part in parts:
        following = [found for found in _followed(place, part, deps_of, index) if is_module_file(part, found)]
        if not following:
            return None
        place = following[0]
    return place


def definer(found: list) -> str | None:
    """The file that defines a name as ``chain_definition`` found it (None: none does)."""
    return found[0] if found[1] is not None else None


def definition_anchors(deps: list[dict], uses: list[str], defines_of: Callable[[str], Mapping[str, str]],
                       deps_of: Callable[[str], list[dict]], reached: set[str],
                       index: Follows | None = None) -> dict[str, list[str]]:
    """Where the names a file imports (``from m import f``: ``m.f``) or calls through an import
    (``uses``: ``m.f`` for ``import m``, or ``alias.f``, as imports resolve them) are defined in
    the tree, as ``{name: [file, anchor]}``; ``defines_of(file)``: a file's top-level
    definitions (name -> anchor), ``deps_of(file)``: its resolved imports; ``index``: kept
    across the files of one link step, so each file's imports are sorted by name once."""
    index = {} if index is None else index
    anchors: dict[str, list[str]] = {}
    modules: dict[str, str] = {}
    for dep in deps:
        target, module = dep.get("target"), dep.get("module", "")
        if not target:
            continue
        submodules = dep.get("name_targets") or {}
        if (own := module_file(dep)) is not None:   # never a submodule it names: a name there is not its
            modules.setdefault(module, own)
        for name, submodule in submodules.items():
            modules.setdefault(f"{module}.{name}", submodule)
        for name in dep.get("names", ()):
            if name != "*" and name not in submodules:
                if (found := _definition(target, name, defines_of, deps_of, reached, index)) is not None:
                    anchors.setdefault(f"{module}.{name}", found)
    for called in uses:
        if called in anchors:
            continue
        parts = called.split(".")
        # the longest imported module it starts with, then its submodules to the name's own
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            if module in modules:
                place = _through_modules(modules[module], parts[cut:-1], deps_of, index)
                if place is not None and (found := _definition(place, parts[-1], defines_of, deps_of,
                                                                reached, index)) is not None:
                    anchors[called] = found
                break
    return anchors


def indirect_test_users(rel: str, resolved: dict[str, dict], tests: set[str], direct: set[str]) -> list[list[str]]:
    """``[test, package]`` for the tests that reach ``rel`` only through packages re-exporting
    it (a test imports ``pkg``, whose ``__init__.py`` imports ``pkg/core.py``), sorted."""
    found: dict[str, str] = {}
    seen = {rel}
    packages = [user for user in resolved.get(rel, {}).get("used_by", []) if user.endswith("__init__.py")]
    for _ in range(REEXPORT_DEPTH):
        following = []
        for package in packages:
            if package in seen:
                continue
            seen.add(package)
            for user in resolved.get(package, {}).get("used_by", []):
                if user in tests and user not in direct and user != rel:
                    found.setdefault(user, package)
                elif user.endswith("__init__.py"):
                    following.append(user)
        packages = following
    return [[test, package] for test, package in sorted(found.items())]
