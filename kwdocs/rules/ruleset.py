"""Rules as data: what a file is for, its role, its idioms, and what to review.

The sections File Purpose, Architecture & Design, Code Patterns & Idioms,
Performance Considerations and Security & Safety are computed from a rule set
read from TOML (``rules.toml`` ships with kwdocs; a project can add, override
or disable rules by id).  Each ``[[rule]]`` table says *where* to look (path
globs, imports, decorators, class bases, symbol names, called names with
argument conditions, regular expressions over the text) and *what to say*
(a short Markdown sentence).  Keeping this as data means a project tunes its
pages by editing configuration, not kwdocs.

Each rule's globs and regexes are compiled once, when first used, and name lookups
are memoised, because ``evaluate`` runs on every file of a large tree.  Secret
patterns are rules too (``secret = true``); ``mask_secrets`` uses them so that
no page ever shows a credential in full.
"""
from __future__ import annotations

import bisect
import difflib
import functools
import hashlib
import importlib.resources
import json
import posixpath
import re
import string
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

import ahocorasick_rs

from kwdocs.context import per_config
from kwdocs.languages import by_id, known_ids

if TYPE_CHECKING:   # config sits above the rules (it checks a project's rule files when it loads)
    from kwdocs.config import Config

SECTIONS: tuple[str, ...] = ("purpose", "role", "patterns", "performance", "security")

ENGINE_VERSION = "3"
"""Bumped when evaluation changes meaning, so cached findings are recomputed."""

MEMO_NAMES = 32_768
"""How many names of one kind (calls, imports...) ``RuleSet._matching`` remembers before it starts
again: names repeat across files, but a worker or a watch session that reads a large tree meets
ever more of them, and the memo must not hold a share of every file's names."""

LABEL_LIMIT = 5
"""How many matched names ``{matches}`` lists before saying how many more there are."""

LABEL_WIDTH = 48
"""Longest matched text shown in a message (longer text is cut with an ellipsis)."""

SECRET_LABEL_WIDTH = 20
"""Longest masked secret shown in a finding: its kept prefix and some stars are enough."""

TRIGGERS: tuple[str, ...] = ("paths", "imports", "decorators", "bases", "symbols", "defines", "calls",
                             "annotated", "text", "installed")

PLACEHOLDERS: frozenset[str] = frozenset(
    {"path", "name", "folder", "folder_name", "where", "project", "type", "language", "match", "matches"})


class RuleError(ValueError):
    """A rule file or table that cannot be used; the message names file, rule id and key."""


# ---------------------------------------------------------------- schema

def _string_list(value: Any) -> list[str] | None:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    return None


def _string_table(value: Any) -> dict[str, str] | None:
    if isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return dict(value)
    return None


def _of_type(kind: type) -> Any:
    def check(value: Any) -> Any:
        # bool is an int in Python; a TOML ``keep = true`` is still a mistake
        return value if isinstance(value, kind) and not (kind is int and isinstance(value, bool)) else None
    return check


# key -> (converter returning None when the value is the wrong shape, what is expected)
SCHEMA: dict[str, tuple[Any, str]] = {
    "id": (_of_type(str), "a string"),
    "section": (_of_type(str), "one of " + ", ".join(SECTIONS)),
    "message": (_of_type(str), "a string (Markdown)"),
    "disable": (_of_type(bool), "true or false"),
    "fallback": (_of_type(bool), "true or false"),
    "match": (_of_type(str), '"any" or "all"'),
    "tags": (_string_list, "a list of strings"),
    "languages": (_string_list, "a list of language ids"),
    "paths": (_string_list, "a list of path globs"),
    "exclude_paths": (_string_list, "a list of path globs"),
    "imports": (_string_list, "a list of module names"),
    "decorators": (_string_list, "a list of decorator names"),
    "bases": (_string_list, "a list of base class names"),
    "symbols": (_string_list, "a list of symbol names"),
    "defines": (_string_list, "a list of defined function, method or class names (kind:name for one kind)"),
    "annotated": (_of_type(bool), "true or false"),
    "installed": (_of_type(bool), "true or false (a build file installs the file: decided when linking)"),
    "calls": (_string_list, "a list of called names"),
    "if_args": (_string_table, "a table of argument = regex"),
    "unless_args": (_string_table, "a table of argument = regex"),
    "text": (_string_list, "a list of regular expressions"),
    "text_ignore": (_string_list, "a list of regular expressions"),
    "text_requires": (_string_list, "a list of strings"),
    "text_holds": (_string_list, "a list of strings"),
    "secret": (_of_type(bool), "true or false"),
    "keep": (_of_type(int), "a whole number"),
}

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _unknown_languages(ids: list[str]) -> list[str]:
    """The ids no registered language has, so a typo in ``languages`` is caught."""
    return sorted(language for language in set(ids) if language not in known_ids(installed=False)
                  and language not in known_ids())


def _validate(raw: Any, source: str) -> dict[str, Any]:
    """Check one rule table and return it normalised (strings become lists)."""
    if not isinstance(raw, dict):
        raise RuleError(f"{source}: a rule must be a table, got {type(raw).__name__}")
    rule_id = raw.get("id")
    if not isinstance(rule_id, str) or not _ID.fullmatch(rule_id):
        raise RuleError(f"{source}: a rule needs an 'id' of letters, digits, '.', '_' or '-'"
                        f" (got {rule_id!r})")
    where = f"{source}: rule '{rule_id}'"
    rule: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in SCHEMA:
            close = difflib.get_close_matches(key, SCHEMA, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise RuleError(f"{where}: unknown key '{key}'{hint}")
        converted = SCHEMA[key][0](value)
        if converted is None:
            raise RuleError(f"{where}: key '{key}' must be {SCHEMA[key][1]}, got {value!r}")
        rule[key] = converted
    if rule.get("disable"):
        return rule
    for key in ("section", "message"):
        if key not in rule:
            raise RuleError(f"{where}: key '{key}' is missing")
    if rule["section"] not in SECTIONS:
        raise RuleError(f"{where}: key 'section' must be {SCHEMA['section'][1]}, got {rule['section']!r}")
    if rule.get("match", "any") not in ("any", "all"):
        raise RuleError(f"{where}: key 'match' must be \"any\" or \"all\", got {rule['match']!r}")
    for key in ("if_args", "unless_args"):
        if key in rule and not rule.get("calls"):
            raise RuleError(f"{where}: key '{key}' needs 'calls'")
    if not rule.get("fallback") and not any(rule.get(key) for key in TRIGGERS):
        raise RuleError(f"{where}: nothing to match on; give one of " + ", ".join(TRIGGERS)
                        + " (or mark it 'fallback = true')")
    for key in ("secret", "text_ignore", "text_requires", "text_holds"):
        if rule.get(key) and not rule.get("text"):
            raise RuleError(f"{where}: key '{key}' needs 'text' (the regular expressions)")
    if "" in rule.get("text_requires", []):
        raise RuleError(f"{where}: key 'text_requires' holds an empty string, which every line holds")
    if "" in rule.get("text_holds", []):
        raise RuleError(f"{where}: key 'text_holds' holds an empty string, which every file holds")
    if rule.get("text_requires") and rule.get("text_holds"):
        raise RuleError(f"{where}: keys 'text_requires' and 'text_holds' do not go together (the lines or the file)")
    if "keep" in rule and not rule.get("secret"):
        raise RuleError(f"{where}: key 'keep' needs 'secret = true'")
    if rule.get("keep", 0) < 0:
        raise RuleError(f"{where}: key 'keep' must be 0 or more, got {rule['keep']}")
    unknown = _unknown_languages(rule.get("languages", []))
    if unknown:
        raise RuleError(f"{where}: key 'languages' names unknown language(s) {', '.join(unknown)};"
                        f" known: {', '.join(sorted(known_ids()))}")
    try:
        fields = [name for _, name, _, _ in string.Formatter().parse(rule["message"]) if name is not None]
    except ValueError as error:
        raise RuleError(f"{where}: key 'message': {error} (write '{{{{' for a literal brace)") from None
    for name in fields:
        if name not in PLACEHOLDERS:
            raise RuleError(f"{where}: key 'message' uses unknown placeholder {{{name}}};"
                            f" known: {', '.join('{' + p + '}' for p in sorted(PLACEHOLDERS))}")
    return rule


# ---------------------------------------------------------------- compiled rules

@dataclass(frozen=True, eq=False)
class Rule:
    """One rule: its globs and regexes are compiled on first use, each once.  A file asks a few
    of them (its language's, those whose ``text_requires`` words it holds), and an edit's build
    compiling all of them cost more than its rules did."""

    id: str
    section: str
    message: str
    fallback: bool
    match_all: bool
    tags: tuple[str, ...]
    languages: frozenset[str] | None
    annotated: bool
    installed: bool     # fires only in the link step, for a file a build file installs
    text_requires: tuple[str, ...]
    secret: bool
    keep: int
    spec: dict[str, Any] = field(repr=False)     # the rule's table, which the patterns are compiled from
    where: str = field(repr=False)               # the rule named in an error
    folder_paths: bool = False   # every glob is ``.../**``: the answer depends on the folder alone
    triggers: tuple[str, ...] = ()
    text_holds: tuple[str, ...] = ()   # the regexes run over the whole text of a file holding one of these

    @property
    def text_words(self) -> tuple[str, ...]:
        """The words without one of which in a file the rule's regexes are not run."""
        return self.text_requires or self.text_holds

    def __post_init__(self) -> None:
        object.__setattr__(self, "triggers", tuple(key for key in TRIGGERS if self.spec.get(key)))

    @functools.cached_property
    def fixed_message(self) -> str | None:
        """The message as every file gets it when it has no placeholder (most folder rules'); else None."""
        if any(name is not None for _, name, _, _ in string.Formatter().parse(self.message)):
            return None
        return self.message.format_map({})    # only its doubled braces change

    @property
    def folder_only(self) -> bool:
        """Whether the folder alone decides this rule (most role rules): then it is memoised per folder."""
        return (self.folder_paths and self.triggers == ("paths",) and not self.spec.get("exclude_paths")
                and not self.fallback)

    def compile_all(self) -> None:
        """Every pattern compiled now, so that a bad one raises ``RuleError`` here."""
        for key in _PATTERN_KEYS:
            compiled = getattr(self, key)
            if isinstance(compiled, Globs):
                compiled.compile()

    @functools.cached_property
    def paths(self) -> Globs | None:
        return Globs.of(self.spec.get("paths", []), self.where, "paths")

    @functools.cached_property
    def exclude_paths(self) -> Globs | None:
        return Globs.of(self.spec.get("exclude_paths", []), self.where, "exclude_paths")

    @functools.cached_property
    def imports(self) -> re.Pattern | None:
        return _module_regex(self.spec.get("imports", []))

    @functools.cached_property
    def decorators(self) -> re.Pattern | None:
        return _name_regex(self.spec.get("decorators", []))

    @functools.cached_property
    def bases(self) -> re.Pattern | None:
        return _name_regex(self.spec.get("bases", []))

    @functools.cached_property
    def symbols(self) -> re.Pattern | None:
        return _name_regex(self.spec.get("symbols", []))

    @functools.cached_property
    def defines(self) -> re.Pattern | None:
        return _name_regex(self.spec.get("defines", []))

    @functools.cached_property
    def calls(self) -> re.Pattern | None:
        return _call_regex(self.spec.get("calls", []))

    @functools.cached_property
    def if_args(self) -> tuple[tuple[str, re.Pattern], ...]:
        return self._args("if_args")

    @functools.cached_property
    def unless_args(self) -> tuple[tuple[str, re.Pattern], ...]:
        return self._args("unless_args")

    @functools.cached_property
    def text(self) -> tuple[re.Pattern, ...]:
        return tuple(_regex(pattern, self.where, "text") for pattern in self.spec.get("text", []))

    @functools.cached_property
    def text_ignore(self) -> tuple[re.Pattern, ...]:
        return tuple(_regex(pattern, self.where, "text_ignore") for pattern in self.spec.get("text_ignore", []))

    def _args(self, key: str) -> tuple[tuple[str, re.Pattern], ...]:
        return tuple((name, _regex(value, self.where, key)) for name, value in sorted(self.spec.get(key, {}).items()))


_PATTERN_KEYS = ("paths", "exclude_paths", "imports", "decorators", "bases", "symbols", "defines", "calls",
                 "if_args", "unless_args", "text", "text_ignore")


def _regex(pattern: str, where: str, key: str) -> re.Pattern:
    try:
        return re.compile(pattern, re.MULTILINE)
    except re.error as error:
        raise RuleError(f"{where}: key '{key}': bad regular expression {pattern!r}: {error}") from None


_NAMED_GROUP = re.compile(r"\(\?P<\w+>")


_SIMPLE_GLOB = re.compile(r"[A-Za-z0-9_.\-/*?]+")
_FOLDER_GLOB = re.compile(r"/?((?:[A-Za-z0-9_.\-]+/)*[A-Za-z0-9_.\-]+)/\*\*")


WORDS_ONLY_PATHS = 64
"""How many paths a rule's globs answer by their words alone before their regex is compiled."""


class Globs:
    """A rule's path globs, matched as one regex compiled at the first path that could match.

    Most rules' globs name words a path must hold (``torch/nn/**``, ``**/test_*.py``): a path
    without them is answered without compiling, and an edit's build asks about one file."""

    def __init__(self, globs: list[str], where: str, key: str) -> None:
        self.globs, self.where, self.key = globs, where, key
        self._regex: re.Pattern | None = None
        # per glob, the literal words every path it matches holds; None when a glob is not that simple
        words: list[tuple[str, ...]] = []
        simple = True
        for glob in globs:
            if glob.startswith("!"):    # refused up front: it is cheap to tell and the user's mistake
                raise RuleError(f"{where}: key '{key}': {glob!r}: negated globs are not supported;"
                                " use 'exclude_paths'")
            parts = tuple(word for part in re.split(r"[*?]", glob) if (word := part.strip("/")))
            if _SIMPLE_GLOB.fullmatch(glob) and parts:
                words.append(parts)
            else:
                simple = False
        self._words: list[tuple[str, ...]] | None = words if simple else None
        self._unasked = WORDS_ONLY_PATHS

    @classmethod
    def of(cls, globs: list[str], where: str, key: str) -> Globs | None:
        """The globs, or None for none."""
        return cls(globs, where, key) if globs else None

    def compile(self) -> re.Pattern:
        """The regex, compiled now if it was not (a bad glob raises ``RuleError``)."""
        if self._regex is None:
            self._regex = _glob_regex(self.globs, self.where, self.key)
        return self._regex

    def match(self, path: str) -> re.Match | None:
        """The match of ``path`` (a folder's with a trailing ``/``), as ``re.Pattern.match``."""
        if self._regex is None and self._words is not None and self._unasked > 0 and not any(
                all(word in path for word in parts) for parts in self._words):
            # after many paths the regex is compiled anyway: it answers in a third of the words' time
            self._unasked -= 1
            return None
        return self.compile().match(path)


def _glob_regex(globs: list[str], where: str, key: str) -> re.Pattern:
    """One regex for a non-empty list of gitignore-style globs (a folder glob matches the files
    under it); ``Globs`` has refused negated ones."""
    parts = []
    for glob in globs:
        folder = _FOLDER_GLOB.fullmatch(glob)
        if folder is not None and not {".", ".."} & set(folder.group(1).split("/")):
            # a plain folder's files: what pathspec makes of it, without importing pathspec
            parts.append((glob, "(?:^" + re.escape(folder.group(1) + "/") + ")"))
            continue
        # pathspec only for the other globs: its import was a thirtieth of an edit's build
        from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern
        try:
            regex, _include = GitIgnoreSpecPattern.pattern_to_regex(glob)
        except ValueError as error:
            raise RuleError(f"{where}: key '{key}': bad glob {glob!r}: {error}") from None
        if regex is None:
            raise RuleError(f"{where}: key '{key}': glob {glob!r} matches nothing")
        parts.append((glob, "(?:" + _NAMED_GROUP.sub("(?:", regex) + ")"))
    try:
        return re.compile("|".join(part for _, part in parts))
    except re.error:    # name the glob at fault (compiling each one up front doubled the rules' load time)
        for glob, part in parts:
            try:
                re.compile(part)
            except re.error as error:
                raise RuleError(f"{where}: key '{key}': bad glob {glob!r}: {error}") from None
        raise


def _wildcards(pattern: str) -> str:
    """``*`` matches any run of characters, ``?`` one; everything else is literal."""
    return re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".")


def _module_regex(patterns: list[str]) -> re.Pattern | None:
    """Imports match by prefix on whole components: ``torch.cuda`` matches ``torch.cuda.amp``
    and ``pybind11`` matches the include ``pybind11/pybind11.h``."""
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{_wildcards(p)}(?:[./].*)?)" for p in patterns), re.DOTALL)


def _name_regex(patterns: list[str]) -> re.Pattern | None:
    """Names match on whole dotted components from the right: ``dataclass`` matches
    ``dataclasses.dataclass``, and ``torch.jit.script`` matches ``jit.script``."""
    if not patterns:
        return None
    alternatives = []
    for pattern in patterns:
        parts = pattern.replace("::", ".").split(".")
        for start in range(max(1, len(parts) - 1)):
            alternatives.append(_wildcards(".".join(parts[start:])))
    return re.compile(r"(?:.*\.)?(?:" + "|".join(alternatives) + ")", re.DOTALL)


def _call_regex(patterns: list[str]) -> re.Pattern | None:
    """Called names are resolved dotted names, matched whole (``subprocess.*``)."""
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{_wildcards(p)})" for p in patterns), re.DOTALL)


def _compile(spec: dict[str, Any], source: str) -> Rule:
    """The rule of a validated table; its patterns are compiled when first used."""
    languages = spec.get("languages")
    return Rule(
        id=spec["id"], section=spec["section"], message=spec["message"],
        fallback=spec.get("fallback", False), match_all=spec.get("match", "any") == "all",
        tags=tuple(spec.get("tags", ())),
        languages=frozenset(languages) if languages else None,
        annotated=spec.get("annotated", False),
        installed=spec.get("installed", False),
        text_requires=tuple(word.lower() for word in spec.get("text_requires", [])),
        text_holds=tuple(word.lower() for word in spec.get("text_holds", [])),
        secret=spec.get("secret", False), keep=spec.get("keep", 4),
        spec=spec, where=f"{source}: rule '{spec['id']}'",
        folder_paths=bool(spec.get("paths")) and all(glob.endswith("/**") for glob in spec["paths"]),
    )


# ---------------------------------------------------------------- loading

def _rule_tables(text: str, source: str) -> list[Any]:
    """The ``[[rule]]`` tables of a rule file."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise RuleError(f"{source}: not valid TOML: {error}") from None
    extra = sorted(set(document) - {"rule"})
    if extra:
        raise RuleError(f"{source}: unknown top-level key(s) {', '.join(extra)}; rules go in [[rule]] tables")
    rules = document.get("rule", [])
    if not isinstance(rules, list):
        raise RuleError(f"{source}: 'rule' must be an array of tables ([[rule]])")
    return rules


def _read_rule_file(path: Path) -> list[Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise RuleError(f"{path}: cannot read rule file: {error}") from None
    return _rule_tables(text, str(path))


def _shipped_text() -> str:
    return importlib.resources.files("kwdocs.rules").joinpath("rules.toml").read_text(encoding="utf-8")


def _merge(layers: Iterable[tuple[str, list[Any]]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Apply rule layers in order: a known id is replaced in place, ``disable`` removes it."""
    merged: dict[str, dict[str, Any]] = {}
    sources: dict[str, str] = {}
    for source, raws in layers:
        seen: set[str] = set()
        for index, raw in enumerate(raws, 1):
            spec = _validate(raw, f"{source} (rule #{index})")
            rule_id = spec["id"]
            if rule_id in seen:
                raise RuleError(f"{source}: rule '{rule_id}' is defined twice")
            seen.add(rule_id)
            if spec.get("disable"):
                if rule_id not in merged:
                    raise RuleError(f"{source}: rule '{rule_id}': key 'disable': no earlier rule has this id")
                del merged[rule_id]
                continue
            merged[rule_id] = spec
            sources[rule_id] = source
    return list(merged.values()), [sources[spec["id"]] for spec in merged.values()]


# ---------------------------------------------------------------- evaluation helpers

@dataclass
class _Hit:
    line: int | None
    label: str


@dataclass
class _Span:
    start: int
    end: int
    keep: int
    rule: Rule
    order: int


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


class _Words:
    """Every ``text_requires`` word of a rule set, found in a text in one pass (Aho-Corasick)
    rather than one search per word: a file is asked for dozens of words, each a full scan."""

    def __init__(self, words: Iterable[str]) -> None:
        self.words = sorted(set(words))
        self.index = {word: number for number, word in enumerate(self.words)}
        # DFAs: built once per rule set, they find the words in half the time of the default NFA;
        # most texts are ASCII, searched as bytes (whose offsets are then the text's) in less again
        dfa = ahocorasick_rs.Implementation.DFA
        self._automaton = ahocorasick_rs.AhoCorasick(self.words, implementation=dfa) if self.words else None
        self._ascii = ahocorasick_rs.BytesAhoCorasick(
            [word.encode() for word in self.words], implementation=dfa) if self.words else None

    def find(self, text: str) -> dict[str, list[int]]:
        """Word -> the offsets where it starts, ascending, found case-blind (ASCII case)."""
        if self._automaton is None or self._ascii is None:
            return {}
        lowered = text.lower()
        if lowered.isascii():
            matches = self._ascii.find_matches_as_indexes(lowered.encode("ascii"), overlapping=True)
        else:
            # a few characters lower-case to two; offsets must stay those of the text
            if len(lowered) != len(text):
                lowered = text.translate(_ASCII_LOWER)
            matches = self._automaton.find_matches_as_indexes(lowered, overlapping=True)
        found: dict[str, list[int]] = {}
        words = self.words
        for number, start, _ in matches:
            found.setdefault(words[number], []).append(start)     # a word's matches come in order
        return found


class _Text:
    """One file's text with what rules ask of it, each computed once and only if asked:
    line numbers of offsets, and the lines holding a ``text_requires`` word."""

    def __init__(self, text: str, words: _Words | None = None) -> None:
        self.text = text
        self.words = words
        self._starts: list[int] | None = None
        self._found: dict[str, list[int]] | None = None
        self._lines_with: dict[str, list[tuple[int, int]]] = {}
        self._counted = 0

    def line_of(self, offset: int) -> int:
        if self._starts is None:
            # most files are asked a few lines (one per listed match): counting is cheaper than indexing
            self._counted += 1
            if self._counted <= 8:
                return self.text.count("\n", 0, offset) + 1
            self._starts = [match.end() for match in re.finditer("\n", self.text)]
        return bisect.bisect_right(self._starts, offset) + 1

    @property
    def found(self) -> dict[str, list[int]]:
        """The rule set's words this text holds, each with the offsets where it starts."""
        if self._found is None:
            self._found = self.words.find(self.text) if self.words is not None else {}
        return self._found

    def holds(self, words: tuple[str, ...]) -> bool:
        """Whether the text holds one of the (lower-case) words, ignoring case."""
        if self.words is not None and all(word in self.words.index for word in words):
            return not self.found.keys().isdisjoint(words)   # found in the one pass over the text
        lowered = self.text.lower()
        return any(word in lowered for word in words)

    def ranges(self, words: tuple[str, ...]) -> list[tuple[int, int]]:
        """Where the regexes of a rule run: the whole text, or only the lines holding a word."""
        if not words:
            return [(0, len(self.text))]
        if self.words is not None and all(word in self.words.index for word in words):
            # the rule set's own words, found in one pass: most rules' words are not in a file
            held = self.found
            words = tuple(word for word in words if word in held)
            if len(words) <= 1:
                return self._lines_holding(words[0]) if words else []     # in order, each line once
        found: set[tuple[int, int]] = set()
        for word in words:
            found.update(self._lines_holding(word))
        return sorted(found)

    def _lines_holding(self, word: str) -> list[tuple[int, int]]:
        lines = self._lines_with.get(word)
        if lines is None:
            starts = self.found.get(word)
            if starts is None and (self.words is None or word not in self.words.index):
                starts = _Words((word,)).find(self.text).get(word)     # a word from outside the rule set
            lines = []
            text = self.text
            end = -1
            for position in starts or ():
                if position < end:      # a line already listed
                    continue
                start = text.rfind("\n", 0, position) + 1
                end = text.find("\n", position)
                end = len(text) if end == -1 else end
                lines.append((start, end))
            self._lines_with[word] = lines
        return lines

    def matches(self, rule: Rule) -> Iterator[re.Match]:
        """Every match of the rule's regexes, in the parts of the text it asks for."""
        if rule.text_holds and not self.holds(rule.text_holds):
            return
        ranges = self.ranges(rule.text_requires)
        if not ranges:
            return      # none of its words here: its regexes are not even compiled
        for regex in rule.text:
            for start, end in ranges:
                yield from regex.finditer(self.text, start, end)


def _short(text: str) -> str:
    """Text made safe and short for a Markdown code span."""
    text = " ".join(text.replace("`", "'").split())
    return text if len(text) <= LABEL_WIDTH else text[: LABEL_WIDTH - 1] + "…"


def _code_list(labels: list[str], lines: list[int] | None = None) -> str:
    """Matches as code spans, each with the first line it was found on when lines are given."""
    first: dict[str, int] = {}
    for label, line in zip(labels, lines or [0] * len(labels)):
        short = _short(label)
        if short not in first or (line and (not first[short] or line < first[short])):
            first[short] = line
    unique = sorted(first)
    shown = ", ".join(f"`{label}` at line {first[label]}" if first[label] else f"`{label}`"
                      for label in unique[:LABEL_LIMIT])
    more = len(unique) - LABEL_LIMIT
    return f"{shown} and {more} more" if more > 0 else shown


def _line(value: Any) -> int:
    """A hit's line as a whole number (0: not known)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _normal_decorator(text: str) -> str:
    return text.lstrip("@").split("(", 1)[0].strip()


@functools.cache
def _is_table(kind: type) -> bool:
    """Whether items of this type are mappings; memoised, as an ABC check costs more than a call."""
    return issubclass(kind, Mapping)


def _tables(value: Any) -> list[Mapping]:
    """The dict items of a facts list (or mappings: the Python extractor's calls); anything
    else is skipped, never raised on."""
    if not isinstance(value, list):
        return []
    if all(_is_table(kind) for kind in set(map(type, value))):
        return value    # the usual case, told from the few types the items are of
    return [item for item in value if _is_table(item.__class__)]


def _arg(call: Mapping, name: str) -> str | None:
    if name.isdigit():
        args = call.get("args")
        index = int(name)
        return str(args[index]) if isinstance(args, list) and index < len(args) else None
    kwargs = call.get("kwargs")
    value = kwargs.get(name) if isinstance(kwargs, dict) else None
    return None if value is None else str(value)


NAME_KINDS: tuple[str, ...] = ("imports", "decorators", "bases", "symbols", "defines", "calls")
"""The triggers matched against a file's names, each indexed once per file (``_Context.indexed``)."""


def _by_key(pairs: Iterable[tuple[str, int]]) -> dict[str, tuple[int, ...]]:
    grouped: dict[str, list[int]] = {}
    for key, position in pairs:
        grouped.setdefault(key, []).append(position)
    return {key: tuple(positions) for key, positions in grouped.items()}


class _PathScreen:
    """All of a plan's path globs as one regex, which matches a path if and only if one of them
    does: most files match none, and one regex says so.  Compiled after many paths (``Globs``)."""

    def __init__(self, globs: list[Globs]) -> None:
        self.globs = globs
        self._unasked = WORDS_ONLY_PATHS if globs else 0
        self._regex: re.Pattern | None = None

    def get(self) -> re.Pattern | None:
        """The regex, or None while the globs are still asked one by one (or cannot be joined)."""
        if self._unasked > 0:
            self._unasked -= 1
            if self._unasked == 0:
                try:
                    self._regex = re.compile("|".join(f"(?:{globs.compile().pattern})" for globs in self.globs))
                except re.error:    # each regex stands alone; joined, they are only a shortcut
                    self._regex = None
        return self._regex


@dataclass(frozen=True)
class _Plan:
    """Which of a language's rules a file is asked about, decided from what the file holds.

    Most rules can only match a file holding one of their words, names or secrets: a file is
    asked about those it holds (one set operation per kind of evidence, not one test per rule)
    and about the rules no such evidence decides."""

    by_folder: tuple[Rule, ...]     # decided by the folder alone
    ordinary: tuple[Rule, ...]
    fallbacks: tuple[Rule, ...]
    always: frozenset[int]          # positions in ``ordinary`` of the rules asked of every file
    folder_globs: tuple[int, ...]   # positions of the rules with folder globs (``Rule.folder_paths``)
    globs: tuple[int, ...]          # and of those with other path globs, which ``path_screen`` joins
    path_screen: _PathScreen
    by_word: dict[str, tuple[int, ...]]             # text_requires word -> positions
    by_name: dict[str, dict[str, tuple[int, ...]]]  # name kind -> rule id -> positions
    by_secret: dict[str, tuple[int, ...]]           # secret rule id -> positions
    secrets_always: tuple[int, ...]                 # positions in the secret rules of those without words
    secrets_by_word: dict[str, tuple[int, ...]]

    @classmethod
    def of(cls, rules: tuple[Rule, ...], secret_rules: tuple[Rule, ...], language: str) -> _Plan:
        def usable(rule: Rule) -> bool:
            return rule.languages is None or language in rule.languages

        # ``installed`` rules wait for the link step (``installed_findings``)
        kept = [rule for rule in rules if usable(rule) and not rule.installed]
        ordinary = tuple(rule for rule in kept if not rule.fallback and not rule.folder_only)
        always: set[int] = set()
        words: list[tuple[str, int]] = []
        names: dict[str, list[tuple[str, int]]] = {}
        secrets: list[tuple[str, int]] = []
        paths: list[int] = []
        for position, rule in enumerate(ordinary):
            # a rule matches only when one of its triggers finds something (all of them, with
            # ``match = "all"``): it is gated when each trigger needs evidence a file may lack
            if not all(key in NAME_KINDS or key == "paths" or (key == "text" and (rule.secret or rule.text_words))
                       for key in rule.triggers):
                always.add(position)
                continue
            for key in rule.triggers:
                if key == "paths":
                    paths.append(position)
                elif key in NAME_KINDS:
                    names.setdefault(key, []).append((rule.id, position))
                elif rule.secret:    # its text hits are the spans it found (``_Context._secrets``)
                    secrets.append((rule.id, position))
                else:
                    words.extend((word, position) for word in rule.text_words)
        globs = tuple(position for position in paths if not ordinary[position].folder_paths)
        secret_words: list[tuple[str, int]] = []
        secrets_always: list[int] = []
        for order, rule in enumerate(secret_rules):
            if usable(rule):
                if rule.text_words:
                    secret_words.extend((word, order) for word in rule.text_words)
                else:
                    secrets_always.append(order)
        return cls(
            by_folder=tuple(rule for rule in kept if rule.folder_only), ordinary=ordinary,
            fallbacks=tuple(rule for rule in kept if rule.fallback), always=frozenset(always),
            folder_globs=tuple(position for position in paths if ordinary[position].folder_paths), globs=globs,
            path_screen=_PathScreen([of for position in globs if (of := ordinary[position].paths) is not None]),
            by_word=_by_key(words), by_name={kind: _by_key(pairs) for kind, pairs in names.items()},
            by_secret=_by_key(secrets), secrets_always=tuple(secrets_always), secrets_by_word=_by_key(secret_words))

    def asked(self, context: _Context) -> Iterator[Rule]:
        """The ordinary rules that may match the file, in their order."""
        picked = set(self.always)
        ordinary = self.ordinary
        screen = self.path_screen.get()
        globs = self.globs if screen is None or screen.match(context.path) is not None else ()
        picked.update(position for position in (*self.folder_globs, *globs) if context.in_paths(ordinary[position]))
        found = context.scanned.found
        for word in self.by_word.keys() & found.keys():
            picked.update(self.by_word[word])
        for kind, rule_ids in self.by_name.items():
            for rule_id in rule_ids.keys() & context.indexed(kind).keys():
                picked.update(rule_ids[rule_id])
        if self.by_secret:
            for span in context.spans():
                picked.update(self.by_secret.get(span.rule.id, ()))
        return (ordinary[position] for position in sorted(picked))

    def secrets_asked(self, text: _Text) -> list[int]:
        """Positions of the secret rules that may match the text: those of its language whose words it holds."""
        picked = set(self.secrets_always)
        found = text.found
        for word in self.secrets_by_word.keys() & found.keys():
            picked.update(self.secrets_by_word[word])
        return sorted(picked)


# ---------------------------------------------------------------- the rule set

@dataclass
class RuleSet:
    """The effective rules: shipped rules, then each project layer on top."""

    specs: tuple[dict[str, Any], ...]
    sources: tuple[str, ...]             # the file each spec came from, for errors
    project: str = "this project"
    _plans: dict[str, _Plan] = field(default_factory=dict, repr=False, compare=False)
    _memo: dict[tuple[str, str], Any] = field(default_factory=dict, repr=False, compare=False)
    _names: dict[str, dict[str, tuple[Rule, ...]]] = field(default_factory=dict, repr=False, compare=False)
    _last_spans: tuple[_Text, str, list] | None = field(default=None, repr=False, compare=False)

    @functools.cached_property
    def rules(self) -> tuple[Rule, ...]:
        """The rules, each pattern compiled when first used (``Rule``): an edit's build needs
        their ``fingerprint`` and the few patterns its files ask."""
        return tuple(_compile(spec, source) for spec, source in zip(self.specs, self.sources))

    @functools.cached_property
    def _words(self) -> _Words:
        return _Words(word for rule in self.rules for word in rule.text_words)

    @functools.cached_property
    def _secret_rules(self) -> tuple[Rule, ...]:
        return tuple(rule for rule in self.rules if rule.secret)

    @classmethod
    def load(cls, extra_files: Iterable[Path] = (), extra_rules: Iterable[dict] = (),
             replace: bool = False, project: str = "", lazy: bool = False,
             extra_texts: Iterable[tuple[str, str]] = ()) -> RuleSet:
        """Shipped rules, then each extra file (or ``extra_texts``: a rule file's name and
        text, as a cluster worker gets them), then configuration tables.

        A rule with an id already defined replaces it; ``disable = true`` removes
        it; ``replace=True`` starts from nothing instead of the shipped set.
        ``project`` fills ``{project}`` in messages.  Raises ``RuleError`` (with
        ``lazy``, a bad pattern raises only when it is first used).
        """
        layers: list[tuple[str, list[Any]]] = []
        if not replace:
            layers.append(("kwdocs/rules/rules.toml", _rule_tables(_shipped_text(), "kwdocs/rules/rules.toml")))
        for path in extra_files:
            layers.append((str(path), _read_rule_file(Path(path))))
        for name, text in extra_texts:
            layers.append((name, _rule_tables(text, name)))
        extra = list(extra_rules)
        if extra:
            layers.append(("configuration", extra))
        specs, sources = _merge(layers)
        ruleset = cls(specs=tuple(specs), sources=tuple(sources), project=project or "this project")
        if not lazy:
            for rule in ruleset.rules:      # compile now, so that a bad pattern raises here
                rule.compile_all()
        return ruleset

    def fingerprint(self) -> str:
        """Stable hash of the effective rules, for cache keys."""
        document = {"engine": ENGINE_VERSION, "project": self.project, "rules": list(self.specs)}
        return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()

    # ------------------------------------------------------------ evaluation

    def evaluate(self, facts: Mapping[str, Any], text: str | None, calls: Sequence[Mapping]) -> dict[str, list]:
        """Findings of one file: a sorted list of Markdown sentences per section,
        security findings as ``{"line", "message", "rule"}`` sorted by line, the
        ``tags`` of the rules that matched, and ``secret_lines``.  Never raises
        on odd facts: what is not the expected shape is skipped."""
        path = str(facts.get("path", ""))
        language = str(facts.get("language", ""))
        plan = self._plan(language)
        context = _Context(self, facts, text, calls or [])
        out: dict[str, list] = {section: [] for section in SECTIONS}
        tags: set[str] = set()
        matched_sections: set[str] = set()
        folder_ids = context.folder_rules
        for rule in plan.by_folder:
            if rule.id in folder_ids:
                out[rule.section].append(context.format_unlabelled(rule))
                matched_sections.add(rule.section)
                tags.update(rule.tags)
        for rule in plan.asked(context):
            if self._apply(rule, path, context, out):
                matched_sections.add(rule.section)
                tags.update(rule.tags)
        for rule in plan.fallbacks:
            if rule.section not in matched_sections and self._apply(rule, path, context, out):
                matched_sections.add(rule.section)
                tags.update(rule.tags)
        result: dict[str, list] = {section: sorted(set(out[section])) for section in SECTIONS if section != "security"}
        unique = {(f["line"], f["rule"], f["message"]): f for f in out["security"]}
        result["security"] = [unique[key] for key in sorted(unique)]
        result["tags"] = sorted(tags)
        # the same lines mask_secrets() reports: a page of a file without any needs no masking pass
        result["secret_lines"] = sorted({context.scanned.line_of(span.start) for span in context.spans()})
        return result

    def installed_findings(self, path: str, language: str, build: str, line: int) -> dict[str, list[str]]:
        """Findings of the ``installed = true`` rules for a file that the build file ``build``
        installs at ``line`` (what linking joins from the build files' facts), per section;
        ``{matches}`` names the build file and line."""
        context = _Context(self, {"path": path, "language": language}, None, [])
        out: dict[str, list[str]] = {}
        for rule in self.rules:
            if not rule.installed or (rule.languages is not None and language not in rule.languages):
                continue
            if rule.exclude_paths is not None and rule.exclude_paths.match(path):
                continue
            if rule.paths is not None and not rule.paths.match(path):
                continue
            out.setdefault(rule.section, []).append(context.format(rule, [build], [line]))
        return {section: sorted(set(messages)) for section, messages in out.items()}

    def _plan(self, language: str) -> _Plan:
        """Which rules a file of ``language`` is asked about (``_Plan``), worked out once per language."""
        plan = self._plans.get(language)
        if plan is None:
            plan = self._plans[language] = _Plan.of(self.rules, self._secret_rules, language)
        return plan

    def _apply(self, rule: Rule, path: str, context: _Context, out: dict[str, list]) -> bool:
        """Add the rule's message(s) to ``out`` if it matches; say whether it did."""
        if rule.exclude_paths is not None and rule.exclude_paths.match(path):
            return False
        hits: list[_Hit] = []
        triggered = 0
        for key in rule.triggers:
            found = context.hits(rule, key)
            if found:
                triggered += 1
                hits.extend(found)
            elif rule.match_all:
                return False
        if not triggered and not (rule.fallback and not rule.triggers):
            return False
        if rule.section == "security":
            for hit in hits:
                message = context.format(rule, [hit.label] if hit.label else [])
                line = hit.line if isinstance(hit.line, int) and not isinstance(hit.line, bool) else 0
                out["security"].append({"line": line, "message": message, "rule": rule.id})
        else:
            out[rule.section].append(context.format(rule, [hit.label for hit in hits if hit.label],
                                                    [_line(hit.line) for hit in hits if hit.label]))
        return True

    def _folder_rules(self, folder: str) -> frozenset[str]:
        """Ids of the folder-glob rules that match files in ``folder``; memoised, folders hold many files."""
        key = ("folder", folder)
        found = self._memo.get(key)
        if found is None:
            probe = folder + "/" if folder else ""
            found = frozenset(rule.id for rule in self.rules
                              if rule.folder_paths and rule.paths is not None and rule.paths.match(probe))
            self._memo[key] = found
        return found

    def _matching(self, kind: str, value: str) -> tuple[Rule, ...]:
        """Rules whose ``kind`` patterns match ``value``; memoised, names repeat across files."""
        known = self._names.setdefault(kind, {})
        found = known.get(value)
        if found is None:
            screen = self._screen(kind)
            if screen is not None and not screen.fullmatch(value):
                found = ()  # most names match no rule: one regex says so
            else:
                found = tuple(rule for rule, pattern in self._patterns(kind) if pattern.fullmatch(value))
            if len(known) >= MEMO_NAMES:
                known.clear()   # cleared in place: ``_Context.indexed`` holds this dict while it asks
            known[value] = found
        return found

    def _screen(self, kind: str) -> re.Pattern | None:
        """All ``kind`` patterns as one alternation, which matches a name if and only if one
        of them does; None when they cannot be joined (mixed flags, groups)."""
        key = ("screen", kind)
        if key not in self._memo:
            patterns = [pattern for _, pattern in self._patterns(kind)]
            screen = None
            if patterns and all(pattern.flags == patterns[0].flags and not pattern.groups for pattern in patterns):
                try:
                    screen = re.compile("|".join(f"(?:{pattern.pattern})" for pattern in patterns), patterns[0].flags)
                except re.error:  # e.g. inline flags, which only the start of a regex may hold
                    screen = None
            self._memo[key] = screen
        return self._memo[key]

    def _patterns(self, kind: str) -> tuple[tuple[Rule, re.Pattern], ...]:
        """The rules with ``kind`` patterns, and those: a file's every symbol name is asked
        about, and one rule in a hundred looks at symbol names."""
        key = ("patterns", kind)
        found = self._memo.get(key)
        if found is None:
            found = tuple((rule, pattern) for rule in self.rules if (pattern := getattr(rule, kind)) is not None)
            self._memo[key] = found
        return found

    # ------------------------------------------------------------ secrets

    def _secret_spans(self, text: _Text, language: str) -> list[_Span]:
        """Where secrets are, overlaps resolved (the earlier rule wins a tie).  The last answer
        is kept: extraction masks a file's text and its rules then ask again for the same text."""
        last = self._last_spans
        if last is not None and last[0] is text and last[1] == language:
            return last[2]
        candidates: list[_Span] = []
        secret_rules = self._secret_rules
        for order in self._plan(language).secrets_asked(text):
            rule = secret_rules[order]
            for match in text.matches(rule):
                group = "secret" if "secret" in match.re.groupindex and match.group("secret") else 0
                secret = match.group(group)
                if not secret or any(ignore.search(secret) for ignore in rule.text_ignore):
                    continue
                start, end = match.span(group)
                candidates.append(_Span(start, end, rule.keep, rule, order))
        candidates.sort(key=lambda span: (span.start, -span.end, span.order))
        spans: list[_Span] = []
        for span in candidates:
            if not spans or span.start >= spans[-1].end:
                spans.append(span)
        self._last_spans = (text, language, spans)
        return spans

    def mask_secrets(self, text: str, language: str = "", fill: str = "*") -> tuple[str, list[int]]:
        """The text with each secret masked (a short prefix kept) and the lines where secrets were.

        ``language`` (an extraction language id) picks the rules that apply to it; the
        rules for settings files (``KEY=value``) are used only for their languages.
        ``fill`` replaces the hidden characters: parsers are given letters (a YAML value
        of stars is an alias), pages stars."""
        scanned = _Text(text, self._words)
        spans = self._secret_spans(scanned, language)
        if not spans:
            return text, []
        pieces: list[str] = []
        position = 0
        for span in spans:
            pieces.append(text[position:span.start])
            pieces.append(_mask(text[span.start:span.end], span.keep, fill))
            position = span.end
        pieces.append(text[position:])
        return "".join(pieces), sorted({scanned.line_of(span.start) for span in spans})


_HIDDEN = re.compile(r"(\r?\n[ \t]*)|[^\r\n]+")
"""What masking hides: all but line breaks and the indentation after them (group 1)."""


def _mask(secret: str, keep: int, fill: str = "*") -> str:
    """Keep at most a quarter of the secret; stars for the rest.  Line breaks and the indentation
    that follows them are kept, so lines stay put and a key in a YAML block scalar (or any
    indented block) keeps the file's structure."""
    keep = min(keep, len(secret) // 4)
    return secret[:keep] + _HIDDEN.sub(lambda match: match.group(1) or fill * len(match.group()), secret[keep:])


_DEFINED_KINDS = frozenset({"function", "method", "class"})
_ANNOTATION = re.compile(r"\w\s*:(?!=)|\)\s*->")
"""A parameter's annotation (``x: int``) or a return annotation (``) -> int``) in a signature."""

def _annotated(signature: Any) -> bool:
    return isinstance(signature, str) and (":" in signature or "->" in signature) \
        and _ANNOTATION.search(signature) is not None


_EMPTY_LIST = re.compile(r"\s*\(\{match(?:es)?\}\)")
"""A parenthesised ``({matches})`` is left out of a message when there is nothing to list."""


def _name_hit(symbol: Mapping, _value: str) -> _Hit:
    return _Hit(symbol.get("line"), str(symbol.get("name", "")))


_HIT_MAKERS: dict[str, Callable[[Mapping, str], Any]] = {
    "imports": lambda item, value: _Hit(item.get("line"), value),
    "decorators": _name_hit,
    "bases": _name_hit,
    "symbols": lambda symbol, _value: _Hit(symbol.get("line"), str(symbol.get("parent") or symbol.get("name", ""))),
    "defines": _name_hit,     # a ``kind:name`` match is labelled by the name
    "calls": lambda call, name: (call, _Hit(call.get("line"), name)),
}
"""Per name kind, the hit of a matching name (``_Context.indexed``); a call's keeps the call for its arguments."""


class NamedCalls(Protocol):
    """Calls kept by called name (the Python extractor's ``CallTable``): the rules ask about
    each name once, and see the calls of the names they match."""

    def names(self) -> Iterable[str]: ...

    def named(self, name: str) -> Sequence[Mapping]: ...


class _Context:
    """One file under evaluation: the facts indexed once, then shared by every rule."""

    def __init__(self, ruleset: RuleSet, facts: Mapping[str, Any], text: str | None, calls: Sequence[Mapping]) -> None:
        self.ruleset = ruleset
        self.facts = facts
        self.text = text
        self.calls = calls
        self.path = str(facts.get("path", ""))
        self.folder_rules = ruleset._folder_rules(posixpath.dirname(self.path))
        self._index: dict[str, dict[str, list[_Hit]]] = {}
        last = ruleset._last_spans   # the text extraction masked: its line index and spans are reused
        self.scanned = last[0] if last is not None and last[0].text is text else _Text(text or "", ruleset._words)
        self._spans: list[_Span] | None = None
        self._secret_hits: dict[str, list[_Hit]] | None = None

    # -- per-kind indexes: rule id -> hits, built on the first rule that asks

    def hits(self, rule: Rule, key: str) -> list[_Hit]:
        if key == "paths":
            return [_Hit(None, "")] if self.in_paths(rule) else []
        if key == "text":
            return self._text_hits(rule)
        if key == "annotated":
            return self._annotated()
        if key == "calls":
            return [_Hit(hit.line, self._call_label(rule, call))
                    for call, hit in self.indexed("calls").get(rule.id, []) if self._args_ok(rule, call)]
        return self.indexed(key).get(rule.id, [])

    def in_paths(self, rule: Rule) -> bool:
        """Whether the file's path matches the rule's ``paths`` globs."""
        if rule.folder_paths:
            return rule.id in self.folder_rules
        return rule.paths is not None and rule.paths.match(self.path) is not None

    def indexed(self, key: str) -> dict[str, list]:
        """Rule id -> the hits of the file's ``key`` names (imports, calls...) that the rule's patterns match."""
        index = self._index.get(key)
        if index is None:
            index = {}
            ruleset = self.ruleset
            known = ruleset._names.setdefault(key, {})    # looked up here first: a file asks about hundreds of names
            make_hit = _HIT_MAKERS[key]
            # a ``NamedCalls`` table: one look per called name, records of the matching ones only (told by
            # an attribute: ``isinstance`` of a runtime protocol costs 20 us, once per file)
            if key == "calls" and getattr(self.calls, "named", None) is not None:
                table = cast(NamedCalls, self.calls)
                for value in table.names():
                    matching = known.get(value)
                    if matching is None:
                        matching = ruleset._matching(key, value)
                    for item in table.named(value) if matching else ():
                        hit = make_hit(item, value)
                        for rule in matching:
                            index.setdefault(rule.id, []).append(hit)
            else:
                for value, item in getattr(self, f"_{key}")():
                    matching = known.get(value)
                    if matching is None:    # a new name: screened, matched and remembered by ``_matching``
                        matching = ruleset._matching(key, value)
                    if matching:
                        hit = make_hit(item, value)
                        for rule in matching:
                            index.setdefault(rule.id, []).append(hit)
            self._index[key] = index
        return index

    # Each yields (name to match, the table it is of): ``_HIT_MAKERS`` makes hits of the few that match.

    @functools.cached_property
    def _symbols_tables(self) -> list[Mapping]:
        return _tables(self.facts.get("symbols"))

    def _imports(self) -> Iterator[tuple[str, Mapping]]:
        for item in _tables(self.facts.get("imports")):
            module = str(item.get("module") or "")
            if not module:
                continue
            yield module, item
            for name in item.get("names") or []:
                if isinstance(name, str) and name != "*":
                    yield f"{module}.{name}", item

    def _decorators(self) -> Iterator[tuple[str, Mapping]]:
        for symbol in self._symbols_tables:
            for decorator in symbol.get("decorators") or []:
                yield _normal_decorator(str(decorator)), symbol

    def _bases(self) -> Iterator[tuple[str, Mapping]]:
        language = by_id(str(self.facts.get("language") or ""))
        base_names = language.bases if language is not None else None
        if base_names is None:
            return
        for symbol in self._symbols_tables:
            if symbol.get("kind") == "class" and symbol.get("signature"):
                for base in base_names(str(symbol["signature"])):
                    yield base, symbol

    def _symbols(self) -> Iterator[tuple[str, Mapping]]:
        for symbol in self._symbols_tables:
            if symbol.get("kind") not in ("import", "include"):
                yield str(symbol.get("name", "")), symbol

    def _defines(self) -> Iterator[tuple[str, Mapping]]:
        """Each definition by its name and as ``kind:name`` (``class:Test*`` matches classes only)."""
        for symbol in self._symbols_tables:
            if (kind := symbol.get("kind")) in _DEFINED_KINDS:
                name = str(symbol.get("name", ""))
                yield name, symbol
                yield f"{kind}:{name}", symbol

    def _annotated(self) -> list[_Hit]:
        """Functions and methods whose signature carries a type annotation (a parameter's or the return's)."""
        found = self._index.get("annotated")
        if found is None:
            found = {"": [_Hit(symbol.get("line"), str(symbol.get("name", "")))
                          for symbol in self._symbols_tables
                          if symbol.get("kind") in ("function", "method")
                          and _annotated(symbol.get("signature"))]}
            self._index["annotated"] = found
        return found[""]

    def _calls(self) -> Iterator[tuple[str, Mapping]]:
        for call in _tables(self.calls):
            name = call.get("name")
            if name and isinstance(name, str):
                yield name, call

    @staticmethod
    def _args_ok(rule: Rule, call: Mapping) -> bool:
        for name, regex in rule.if_args:
            value = _arg(call, name)
            if value is None or not regex.search(value):
                return False
        return not any((value := _arg(call, name)) is not None and regex.search(value)
                       for name, regex in rule.unless_args)

    @staticmethod
    def _call_label(rule: Rule, call: Mapping) -> str:
        """The called name, with the arguments the rule looked at (``subprocess.run(..., shell=True)``)."""
        shown = [f"{name}={value}" for name, _ in (*rule.if_args, *rule.unless_args)
                 if not name.isdigit() and (value := _arg(call, name)) is not None]
        name = str(call.get("name", ""))
        return f"{name}(..., {', '.join(shown)})" if shown else name

    def _text_hits(self, rule: Rule) -> list[_Hit]:
        if self.text is None:
            return []
        if rule.secret:
            return self._secrets().get(rule.id, [])
        every = rule.section == "security"
        # a sentence needs one match, or a few to list; only security reports every one
        enough = LABEL_LIMIT + 1 if "{match" in rule.message else 1
        hits: list[_Hit] = []
        for match in self.scanned.matches(rule):
            group = "name" if "name" in match.re.groupindex and match.group("name") else 0
            if any(ignore.search(match.group(group)) for ignore in rule.text_ignore):
                continue
            line = self.scanned.line_of(match.start(group))
            hits.append(_Hit(line, self._masked(*match.span(group))))
            if not every and len(hits) >= enough:
                break
        return hits

    def spans(self) -> list[_Span]:
        if self._spans is None:
            self._spans = self.ruleset._secret_spans(self.scanned, str(self.facts.get("language", "")))
        return self._spans

    def _masked(self, start: int, end: int) -> str:
        """``text[start:end]`` with any secret inside it masked, as on the page."""
        assert self.text is not None   # only text hits are masked
        piece = self.text[start:end]
        for span in self.spans():
            if span.start < end and span.end > start:
                secret = self.text[span.start:span.end]
                masked = _mask(secret, span.keep)
                low, high = max(start, span.start), min(end, span.end)
                piece = piece[:low - start] + masked[low - span.start:high - span.start] + piece[high - start:]
        return piece

    def _secrets(self) -> dict[str, list[_Hit]]:
        if self._secret_hits is None:
            assert self.text is not None   # asked for by text rules only
            self._secret_hits = {}
            for span in self.spans():
                masked = _mask(self.text[span.start:span.end], span.keep)
                shown = next((line.strip() for line in masked.split("\n") if line.strip()), masked)
                if len(shown) > SECRET_LABEL_WIDTH:
                    shown = shown[:SECRET_LABEL_WIDTH] + "…"
                self._secret_hits.setdefault(span.rule.id, []).append(
                    _Hit(self.scanned.line_of(span.start), shown))
        return self._secret_hits

    # -- messages

    @functools.cached_property
    def _file_values(self) -> dict[str, str]:
        """The placeholders that depend on the file alone, worked out once for its every message."""
        folder = posixpath.dirname(self.path)
        return {
            "path": self.path,
            "name": posixpath.basename(self.path),
            "folder": folder or ".",
            "folder_name": posixpath.basename(folder) or ".",
            "where": f"the `{folder}` folder" if folder else "the root folder",
            "project": self.ruleset.project,
            "type": str(self.facts.get("type_label") or self.facts.get("language") or "file"),
            "language": str(self.facts.get("language") or ""),
        }

    def format(self, rule: Rule, labels: list[str], lines: list[int] | None = None) -> str:
        """The rule's message for these matches; with ``lines``, each listed match names its line."""
        values = {
            **self._file_values,
            "match": f"`{_short(min(labels))}`" if labels else "",
            "matches": _code_list(labels, lines),
        }
        message = rule.message if labels else _EMPTY_LIST.sub("", rule.message)
        return message.format_map(values)

    def format_unlabelled(self, rule: Rule) -> str:
        """``format(rule, [])``; the same text for every file when the message has no placeholder."""
        return rule.fixed_message if rule.fixed_message is not None else self.format(rule, [])


@functools.lru_cache(maxsize=1)
def _shipped() -> RuleSet:
    return RuleSet.load()


def mask_secrets(text: str, rules: RuleSet | None = None, language: str = "") -> tuple[str, list[int]]:
    """``text`` with every secret-looking string masked, and the lines where secrets were.

    Uses the shipped secret rules unless a ``RuleSet`` (with a project's own
    secret rules) is given.
    """
    return (rules or _shipped()).mask_secrets(text, language)


@per_config
def rules_for(config: Config) -> RuleSet:
    """The rules of ``config``'s project, kept in its build context.  Lazy: an edit's build needs
    only their fingerprint; config validation compiled them once."""
    return RuleSet.load(extra_files=list(config.rules), replace=config.replace_rules, project=config.project_name,
                        lazy=True)
