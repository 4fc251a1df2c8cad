"""Configuration: one place that reads, validates and defaults every setting.

Settings come from ``[tool.kwdocs]`` in the source tree's ``pyproject.toml`` (or
a file given with ``--config``), then command-line flags, which win.  Every
problem is collected and reported at once, naming the key, before anything is
written (exit code 2).
"""
from __future__ import annotations

import functools
import json
import os
import re
import string
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_OUTPUT = "kwdocs-out"
# Shipped templates: ``templates/`` beside the package in a checkout, ``kwdocs.templates`` once installed.
_CHECKOUT_TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
STATE_FOLDER = ".kwdocs"
DEFAULT_CACHE_MB = 2048
CACHE_MODES = ("read", "readwrite")
DEFAULT_SECRET_FILES = [
    ".env", ".env.*", "*.env", "*.pem", "*.key", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
    "*.p12", "*.pfx", ".netrc", "_netrc", "credentials*", "*.kdbx", ".pgpass",
    "*.keystore", "*.jks", ".npmrc", ".pypirc", ".htpasswd", ".git-credentials",
    "**/.docker/config.json", "**/.kube/config", "kubeconfig", "*.kubeconfig",
]


class ConfigError(Exception):
    """Bad configuration; ``problems`` holds one message per bad key."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Config:
    """Validated settings. Paths are absolute; everything else is plain data."""

    src: Path
    out: Path
    project_name: str
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_source_bytes: int = 256 * 1024
    templates: Path | None = None
    rules: tuple[Path, ...] = ()
    replace_rules: bool = False
    include_roots: tuple[str, ...] = ()
    skip_secret_files: bool = True
    secret_files: tuple[str, ...] = tuple(DEFAULT_SECRET_FILES)
    jobs: int = 0
    html: bool = False              # "html" in formats: the spelling of every check of the site
    formats: tuple[str, ...] = ("markdown",)    # the formats written (kwdocs.formats), Markdown first
    cache: str = ""                 # a URL fsspec reaches, or a folder path; "" without a shared cache
    cache_mode: str = "readwrite"
    cache_max_mb: int = DEFAULT_CACHE_MB
    cache_key_file: Path | None = None  # the file holding the key entries are signed with (never the key)
    empty_sections: str = "omit"
    source_url: str = ""            # where a definition's lines link: "" for the relative path#L10-L20
    source_ref: str = "HEAD"        # what ``{ref}`` of ``source_url`` stands for
    front_matter: bool = False      # YAML front matter (title, description) atop each page, for hosts that read it
    scheduler: str = ""             # a Dask scheduler's address, or "local"; "" to build on this machine
    config_file: Path | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        # ``html`` and ``"html"`` in ``formats`` are one setting: ``replace(config, html=True)``
        # (the server's, a dodo.py's) turns the site on as the configuration key does
        if self.html and "html" not in self.formats:
            object.__setattr__(self, "formats", (*self.formats, "html"))
        elif "html" in self.formats and not self.html:
            object.__setattr__(self, "html", True)

    @functools.cached_property
    def state(self) -> Path:
        """kwdocs' own bookkeeping lives inside the output folder: nothing else is written.
        (Kept once made: every shard's path starts with it, thousands per build.)"""
        return self.out / STATE_FOLDER

    def fingerprint_data(self) -> dict[str, Any]:
        """The settings that shape page content (not where pages go)."""
        data = asdict(self)
        for key in ("src", "out", "jobs", "html", "formats", "config_file", "cache", "cache_mode", "cache_max_mb",
                    "cache_key_file", "scheduler"):
            data.pop(key)
        data["templates"] = str(self.templates) if self.templates else None
        data["rules"] = [str(path) for path in self.rules]
        return data


# key -> (expected type(s), description used in error messages)
_KEYS: dict[str, tuple[type | tuple[type, ...], str]] = {
    "output": (str, "a folder path"),
    "project_name": (str, "a string"),
    "include": (list, "a list of glob strings"),
    "exclude": (list, "a list of glob strings"),
    "max_source_bytes": (int, "a whole number of bytes, 0 or more"),
    "templates": (str, "a folder path"),
    "rules": (list, "a list of TOML file paths"),
    "replace_rules": (bool, "true or false"),
    "include_roots": (list, "a list of folder paths relative to the source root"),
    "skip_secret_files": (bool, "true or false"),
    "secret_files": (list, "a list of glob strings"),
    "jobs": (int, "a whole number, 0 for one per core"),
    "html": (bool, "true or false"),
    "formats": (list, 'a list of format names (["markdown", "html", "json"])'),
    "cache": (str, "a URL (file:///folder, s3://bucket/prefix) or a folder path"),
    "cache_mode": (str, "'read' or 'readwrite'"),
    "cache_max_mb": (int, "a whole number of MiB, 0 or more"),
    "cache_key_file": (str, "the path of a file holding the key that signs cache entries"),
    "scheduler": (str, "a Dask scheduler's address (tcp://HOST:PORT) or \"local\""),
    "empty_sections": (str, '"omit" (leave out a section with nothing to say) or "keep" (the full layout)'),
    "source_url": (str, "a URL holding {path}, and perhaps {start}, {end} and {ref} "
                        "(https://host/project/blob/{ref}/{path}#L{start}-L{end})"),
    "source_ref": (str, "a branch, tag or commit without spaces, for {ref} in source_url"),
    "front_matter": (bool, "true or false"),
}
SOURCE_URL_FIELDS = frozenset(("path", "start", "end", "ref"))
EMPTY_SECTIONS = ("omit", "keep")
CONFIG_KEYS = tuple(_KEYS)


def _url_template(value: object) -> bool:
    """Whether ``value`` is a ``source_url`` template: its fields the four known ones, {path} among them."""
    if not isinstance(value, str):
        return True     # the type check names it
    try:
        fields = {name for _, name, spec, conversion in string.Formatter().parse(value) if name is not None}
    except ValueError:  # an unmatched brace
        return False
    return "path" in fields and fields <= SOURCE_URL_FIELDS


FORMATS_GROUP = "kwdocs.formats"     # the entry-point group of the formats (kwdocs.formats)
OWN_FORMATS = ("markdown", "html", "json")    # kwdocs' own entries in it: named without reading metadata


def _format_names(listed: list[str], html: bool, where: str, problems: list[str]) -> tuple[str, ...]:
    """The formats to write, Markdown first, each once, in the order given (``html = true`` is
    ``html``); a name no installed package registers is a problem naming those that are."""
    names = tuple(dict.fromkeys(["markdown", *listed, *(["html"] if html else [])]))
    unknown = [name for name in names if name not in OWN_FORMATS]
    if unknown:     # reading every package's metadata only when a name is not kwdocs' own
        from importlib.metadata import entry_points
        found = {point.name for point in entry_points(group=FORMATS_GROUP)} | {"markdown"}
        for name in unknown:
            if name not in found:
                problems.append(f"{where}: unknown format {name!r} (installed: {', '.join(sorted(found))})")
    return names


def read_table(src: Path, config_file: Path | None) -> tuple[dict[str, Any], dict[str, Any], Path | None]:
    """Return (the kwdocs table, the whole document, the file it came from)."""
    path = config_file or src / "pyproject.toml"
    if not path.is_file():
        if config_file is not None:
            raise ConfigError([f"{config_file}: configuration file not found"])
        return {}, {}, None
    import tomllib  # here: a tree without pyproject.toml never pays for the import
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError([f"{path}: not valid TOML: {error}"]) from error
    if config_file is not None and "tool" not in document:
        return document, document, path  # a bare kwdocs.toml
    table = document.get("tool", {}).get("kwdocs", {})
    if not isinstance(table, dict):
        raise ConfigError([f"{path}: [tool.kwdocs] must be a table"])
    return table, document, path


FALLBACK_PROJECT_NAME = "project"
"""The name pages give a tree that names itself nowhere (never its folder's name: a clone
in another folder would make every page stale)."""


def tree_project_name(src: Path, pyproject: dict[str, Any] | None = None) -> str:
    """The project's name as the tree itself gives it: ``[project].name`` (or Poetry's) of pyproject.toml,
    package.json's ``name``, Cargo.toml's ``[package].name``, the last element of go.mod's
    module, CMakeLists.txt's ``project()``, the repository name of the git remote (read from
    ``.git/config``); else ``FALLBACK_PROJECT_NAME``.  ``pyproject`` is the parsed
    pyproject.toml when the caller has it."""
    finders: tuple[tuple[str, Callable[[str], Any]], ...] = (
        ("pyproject.toml", lambda text: _pyproject_name(_toml(text))),
        ("package.json", lambda text: json.loads(text).get("name")),
        ("Cargo.toml", lambda text: _toml(text).get("package", {}).get("name")),
        ("go.mod", lambda text: _last_part(_first_group(r"(?m)^module\s+\"?([^\s\"]+)", text))),
        ("CMakeLists.txt", lambda text: _first_group(r"(?im)^\s*project\s*\(\s*\"?([A-Za-z0-9_.+-]+)", text)),
    )
    for file, find in finders:
        try:
            if file == "pyproject.toml" and pyproject is not None:
                name = _pyproject_name(pyproject)
            else:
                name = find((src / file).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, AttributeError):
            continue    # absent, unreadable or not what it should be: the next source may know
        if isinstance(name, str) and name.strip():
            return name.strip()
    return _git_remote_name(src) or FALLBACK_PROJECT_NAME


def _pyproject_name(document: dict[str, Any]) -> Any:
    """``[project].name``, else Poetry's ``[tool.poetry].name``."""
    return document.get("project", {}).get("name") or document.get("tool", {}).get("poetry", {}).get("name")


def _toml(text: str) -> dict[str, Any]:
    import tomllib  # only for trees that need it
    return tomllib.loads(text)


def _first_group(pattern: str, text: str) -> str | None:
    found = re.search(pattern, text)
    return found.group(1) if found else None


def _last_part(module: str | None) -> str | None:
    """``github.com/user/tool/v2`` -> ``tool``: a major version suffix is not the name."""
    if not module:
        return None
    parts = [part for part in module.split("/") if part]
    if len(parts) > 1 and re.fullmatch(r"v\d+", parts[-1]):
        parts.pop()
    return parts[-1] if parts else None


def _git_remote_name(src: Path) -> str | None:
    """The repository name of the ``origin`` remote (else the first remote) in the tree's git
    configuration, read without running git; a worktree's ``.git`` file is followed."""
    git = src / ".git"
    try:
        if git.is_file():
            pointer = git.read_text(encoding="utf-8").strip()
            git = (src / pointer.removeprefix("gitdir:").strip()).resolve()
            common = git / "commondir"
            if common.is_file():
                git = (git / common.read_text(encoding="utf-8").strip()).resolve()
        config = (git / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    urls = re.findall(r'(?ms)^\s*\[remote\s+"([^"]*)"\]\s*$(.*?)(?=^\s*\[|\Z)', config)
    ordered = sorted(urls, key=lambda remote: remote[0] != "origin")
    for _, body in ordered:
        url = _first_group(r"(?m)^\s*url\s*=\s*(\S+)", body)
        if url:
            name = re.split(r"[/:\\]", url.rstrip("/"))[-1].removesuffix(".git")
            if name:
                return name
    return None


@functools.cache
def shipped_templates() -> Path:
    """The templates kwdocs ships: those of the checkout this code runs from, or the installed package's."""
    if (_CHECKOUT_TEMPLATES / "file_docs.md.j2").is_file():
        return _CHECKOUT_TEMPLATES
    # only an installed kwdocs, with no checkout's templates beside it, needs the package
    import kwdocs.templates as templates
    return templates.folder()


def _cache_url(value: str, base: Path | None) -> str:
    """A cache as a URL; a folder path (no ``scheme://``) made absolute, relative to the
    configuration file's folder (``base``) or, typed as a flag, to the shell's."""
    if not value or "://" in value:
        return value
    path = Path(value).expanduser()
    return (base / path if base is not None else path).resolve().as_posix()


def load_config(src: Path | str, config_file: Path | str | None = None,
                overrides: dict[str, Any] | None = None) -> Config:
    """Read, merge and validate; raises ConfigError listing every bad key."""
    src = Path(src).resolve()
    problems: list[str] = []
    if not src.is_dir():
        raise ConfigError([f"{src}: is a file, not a folder" if src.exists() else f"source folder not found: {src}"])
    table, document, origin = read_table(src, Path(config_file).resolve() if config_file else None)
    where = f"{origin}" if origin else "configuration"
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _KEYS:
            problems.append(f"{where}: unknown key '{key}' (known: {', '.join(CONFIG_KEYS)})")
            continue
        values[key] = value
    listed, flagged = table.get("formats", []), (overrides or {}).get("formats")
    values.update({key: value for key, value in (overrides or {}).items() if value is not None})
    if isinstance(listed, list) and flagged:    # --format adds to the configuration's formats
        values["formats"] = [*listed, *flagged]
    for key, value in values.items():
        expected, description = _KEYS[key]
        bad_type = not isinstance(value, expected) or (expected is int and isinstance(value, bool))
        bad_item = expected is list and not all(isinstance(item, str) for item in value)
        bad_value = (expected is int and value < 0) or (key == "cache_mode" and value not in CACHE_MODES) or (
            key == "empty_sections" and value not in EMPTY_SECTIONS) or (
            key == "source_url" and not _url_template(value)) or (
            key == "source_ref" and isinstance(value, str) and not re.fullmatch(r"[^\s{}]+", value)) or (
            key == "scheduler" and not re.fullmatch(r"|local|([a-z]+://)?[^\s/]+:\d+/?", value.strip()))
        if bad_type or bad_item or bad_value:
            problems.append(f"{where}: '{key}' must be {description}, not {value!r}")
    if problems:
        raise ConfigError(problems)

    base = origin.parent if origin else src
    if overrides and overrides.get("output") is not None:
        out = Path(overrides["output"]).resolve()  # a flag is relative to where it was typed
    elif "output" in table:
        out = (base / table["output"]).resolve()
    else:
        out = src / DEFAULT_OUTPUT
    templates = values.get("templates")
    templates_path = None
    if templates:
        templates_path = Path(templates) if Path(templates).is_absolute() else (base / templates)
        templates_path = templates_path.resolve()
        if not templates_path.is_dir():
            problems.append(f"{where}: 'templates' folder not found: {templates_path}")
    rules = tuple((base / rule).resolve() for rule in values.get("rules", []))
    problems += [f"{where}: 'rules' file not found: {rule}" for rule in rules if not rule.is_file()]
    if not problems and rules:
        # only a project with rule files: every command's start loads its settings, not the rules
        from kwdocs.rules.ruleset import RuleError, RuleSet
        try:
            RuleSet.load(extra_files=list(rules), replace=values.get("replace_rules", False))
        except RuleError as error:
            problems.append(f"{where}: 'rules': {error}")
    if out == src or src.is_relative_to(out):
        problems.append(f"{where}: 'output' ({out}) must not be the source folder or contain it")
    else:   # the output folder, or the first of its parents that exists, must be a folder
        existing = next((part for part in (out, *out.parents) if part.exists()), None)
        if existing is not None and not existing.is_dir():
            problems.append(f"{where}: 'output' ({out}): {existing} is a file, not a folder")
    typed = (overrides or {}).get("cache") is not None    # a flag's path is relative to the shell
    cache = _cache_url(values.get("cache", ""), None if typed else base)
    if cache and not re.fullmatch(r"([A-Za-z][A-Za-z0-9+.-]*://)?.+", cache):
        problems.append(f"{where}: 'cache' must be {_KEYS['cache'][1]}, not {cache!r}")
    key_file = None
    if values.get("cache_key_file"):    # relative to the configuration file's folder (a flag's is made absolute)
        key_file = (base / Path(values["cache_key_file"]).expanduser()).resolve()
        if not key_file.is_file():
            problems.append(f"{where}: 'cache_key_file' not found: {key_file}")
    formats = _format_names(values.get("formats", []), values.get("html", False), where, problems)
    if problems:
        raise ConfigError(problems)

    own_pyproject = origin is not None and origin == src / "pyproject.toml"
    name = values.get("project_name") or tree_project_name(src, document if own_pyproject else None)
    return Config(
        src=src,
        out=out,
        project_name=str(name),
        include=tuple(values.get("include", ())),
        exclude=tuple(values.get("exclude", ())),
        max_source_bytes=values.get("max_source_bytes", 256 * 1024),
        templates=templates_path,
        rules=rules,
        replace_rules=values.get("replace_rules", False),
        include_roots=tuple(values.get("include_roots", ())),
        skip_secret_files=values.get("skip_secret_files", True),
        secret_files=tuple(values.get("secret_files", DEFAULT_SECRET_FILES)),
        jobs=values.get("jobs", 0) or (os.cpu_count() or 1),
        html="html" in formats,
        formats=formats,
        cache=cache,
        cache_mode=values.get("cache_mode", "readwrite"),
        cache_max_mb=values.get("cache_max_mb", DEFAULT_CACHE_MB),
        cache_key_file=key_file,
        empty_sections=values.get("empty_sections", "omit"),
        source_url=values.get("source_url", ""),
        source_ref=values.get("source_ref", "HEAD"),
        front_matter=values.get("front_matter", False),
        scheduler=values.get("scheduler", "").strip(),
        config_file=origin,
    )

