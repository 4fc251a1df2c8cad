"""Code-like names in prose and plain text: the words a reader would grep for.

A keyword index of a README is useful when it lists ``ProcessGroupNCCL``,
``NCCL_DEBUG``, ``init_process_group`` and ``torch.distributed.barrier``, and
useless when it lists ``The``, ``This`` and ``We``.  A word is kept when its
shape says "name in code":

- an inner capital (``DataLoader``, ``MSELoss``, ``PyTorch``), but not a plural
  acronym (``GPUs``);
- an underscore (``init_process_group``, ``NCCL_DEBUG``, ``__init__``), but not
  Markdown emphasis (``_word_``) or a reST link reference (``word_``), nor
  maths (``x_i``);
- dots between names (``torch.nn.Module``), but not file names, domains or
  abbreviations (``setup.py``, ``pytorch.org``, ``e.g``);
- letters with digits (``Conv2d``, ``float16``, ``GPU0``), but not hashes or
  short tags (``a3f5c9e1``, ``v2``, ``L124``);
- an acronym of three or more capitals (``DDP``, ``NCCL``, ``CUDA``), but not
  English in capitals (``NOTE``, ``THE``) nor the words of a sentence in
  capitals (licence text: ``THE SOFTWARE IS PROVIDED``);
- anything in inline code (`` `cuda` ``, ``:func:`torch.load```) that is a
  name, whatever its shape: the author marked it as code.

Plain words, capitalised or not, never match.  The scan is a few compiled
regular expressions over the text; Python code runs once per distinct
candidate, and the text scanned and the names kept are capped so a huge
one-line file costs milliseconds, with a note saying so.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

MAX_SCAN_CHARS = 1_000_000
MAX_IDENTIFIERS = 2_000
MAX_NAME_LENGTH = 80

# A name or dotted name not glued to a preceding word or dot, rejected early
# when it is a plain word (a letter then lowercase letters, not followed by a
# word character or ``.name``): most words of prose never leave the regex engine.
_CANDIDATE = re.compile(
    r"(?<![\w.])(?![A-Za-z][a-z]*(?!\w|\.[A-Za-z_]))[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*",
    re.ASCII,
)
# Inline code: Markdown code spans (any backtick run), reST literals and roles.
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)([^`\n]{1,200}?)(?<!`)\1(?!`)")
_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*", re.ASCII)
_CALL_SUFFIX = re.compile(r"\s*\(.*\)\s*$")
# URLs and e-mail addresses are blanked out before the scan (same length, so
# offsets stay right): their path segments are not names.
# Repetitions are bounded so a long run of word characters cannot make it quadratic.
_URL_OR_MAIL = re.compile(
    r"\b(?:[a-z][a-z0-9+.-]{0,30}://|www\.)[^\s<>()\[\]`'\"]+"
    r"|(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63})+",
    re.ASCII | re.IGNORECASE,
)

# reST hyperlink targets (``.. _ddp:``) name a place in the docs, not code.
_RST_TARGET = re.compile(r"^[ \t]*\.\. _[^:\n]*:", re.MULTILINE)

# Licence names (``RSALv2``, ``SSPLv1``, ``GPLv3``, ``LGPLv2``, ``MPLv2``, ``CDDLv1``): said in
# headers and READMEs, never a name in code.
_LICENCE_NAME = re.compile(r"(?:[A-Z]*PL|RSAL|SSPL|CDDL|EUPL|CC[A-Z]*|Apache|BSD)v?\d+", re.ASCII)
_INNER_CAPITAL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]", re.ASCII)
_PLURAL_ACRONYM = re.compile(r"[A-Z]+s", re.ASCII)
_HEX = re.compile(r"[0-9a-f]+|[0-9A-F]+", re.ASCII)
_LOWERCASE_RUN = re.compile(r"[a-z]+", re.ASCII)
_WORD = re.compile(r"\w{2,}", re.ASCII)

# File-name extensions: ``setup.py`` is a file, not a name in code.
_FILE_SUFFIXES = frozenset("""
    py pyi pyx pxd md rst txt h hh hpp hxx cpp cc cxx c cu cuh inl json yaml yml toml cfg ini
    sh bash bat ps1 cmd html htm css js mjs ts png jpg jpeg svg gif so dll dylib lib exe whl
    zip gz tgz bz2 xz tar pt pth pkl pickle npy npz log csv tsv ipynb cmake in lock xml bzl
    bazel mk am ac java kt go rs swift m mm jinja j2 tmpl proto pdf
""".split())
# Top-level domains: ``pytorch.org`` is a site.
_DOMAINS = frozenset("com org net io ai dev edu gov uk de fr cn jp info co us me ly gl be".split())
# English words and document markers that are written in capitals for
# emphasis, and acronyms too common to index.
_CAPITAL_WORDS = frozenset("""
    THE AND FOR NOT BUT ARE YOU ALL ANY CAN MAY USE HAS HAD WAS ONE TWO NEW OLD OUT SEE WHY HOW
    WHO ITS OUR HIS HER HIM SHE THEY THEM THEN THAN THAT THIS THESE THOSE THERE WHERE WHEN WHAT
    WHICH WILL WITH FROM INTO ONLY ALSO SOME MUST SHOULD WOULD COULD SHALL HAVE BEEN BEING DOES
    DONE DID NOR YET NOW GET SET PUT ADD END OFF YES NONE TRUE FALSE NULL VERY MORE MOST LESS
    MANY MUCH SUCH SAME OTHER EACH BOTH EVERY AFTER BEFORE ABOVE BELOW UNDER OVER ABOUT AGAIN
    HERE JUST LIKE MAKE SURE NEVER ALWAYS NOTE NOTES TODO FIXME XXX HACK WARNING WARNINGS
    IMPORTANT CAUTION DANGER TIP HINT ATTENTION INFO DEBUG WARN ERROR ERRORS FATAL DEPRECATED
    README LICENSE LICENCE CHANGELOG AUTHORS CONTRIBUTING API APIS URL URI FAQ ETC TBD WIP EOF
    WARRANTY WARRANTIES PROVIDED WITHOUT LIMITED DAMAGES
""".split())


@dataclass(frozen=True)
class IdentifierScan:
    """Names found, each once at its first line, in order of first appearance."""
    found: list[tuple[str, int]] = field(default_factory=list)
    note: str = ""  # why the scan stopped early, if it did


def find_identifiers(text: str, *, markup: str = "") -> IdentifierScan:
    """Code-like names of ``text`` with the 1-based line of their first use.

    ``markup`` (``markdown`` or ``rst``) turns on that language's reading of
    underscores at the ends of a word: emphasis in Markdown (``_word_``), a
    link reference in reST (``word_``).  Leave it empty for code and data.
    """
    note = ""
    if len(text) > MAX_SCAN_CHARS:
        text = text[:MAX_SCAN_CHARS]
        note = f"identifiers were looked for in the first {MAX_SCAN_CHARS:,} characters only"
    if "://" in text or "@" in text or "www." in text:
        text = _URL_OR_MAIL.sub(_blank, text)
    if markup == "rst" and ".. _" in text:
        text = _RST_TARGET.sub(_blank, text)
    first_offset = _inline_code_names(text)
    verdicts: dict[str, str | None] = {}
    for match in _CANDIDATE.finditer(text):
        token = match.group()
        if token not in verdicts:
            verdicts[token] = _code_like(token, markup)
        name = verdicts[token]
        if name and name not in first_offset:
            first_offset[name] = match.start()
    return _located(text, first_offset, note)


def _blank(match: re.Match[str]) -> str:
    """Spaces instead of the match: offsets (and so line numbers) stay right."""
    return " " * len(match.group())


def identifier_symbols(scan: IdentifierScan) -> list[dict]:
    """Symbols of kind ``identifier``, sorted by (line, name)."""
    return [{"name": name, "kind": "identifier", "line": line}
            for name, line in sorted(scan.found, key=lambda item: (item[1], item[0]))]


def _inline_code_names(text: str) -> dict[str, int]:
    """Names written as inline code, with the offset of their first use."""
    offsets: dict[str, int] = {}
    if "`" not in text:
        return offsets
    for match in _CODE_SPAN.finditer(text):
        name = _code_span_name(match.group(2))
        if name and name not in offsets:
            offsets[name] = match.start(2)
    return offsets


def _code_span_name(content: str) -> str | None:
    """The name a code span holds (``torch.load()``, ``~torch.nn.Linear``,
    ``text <target>``), or None when it holds an expression or a phrase."""
    content = content.strip()
    if content.endswith(">") and "<" in content:
        content = content[content.rfind("<") + 1:-1].strip()
    content = _CALL_SUFFIX.sub("", content.lstrip("~!@"))
    if len(content) < 2 or len(content) > MAX_NAME_LENGTH or not _NAME.fullmatch(content):
        return None
    if "." in content:
        return _dotted(content)
    return content if len(content.strip("_")) >= 2 else None


def _code_like(token: str, markup: str) -> str | None:
    """``token`` (possibly stripped of markup underscores) if it looks like code."""
    if len(token) > MAX_NAME_LENGTH:
        return None
    if "." in token:
        return _dotted(token)
    if "_" in token:
        core = token.strip("_")
        if "_" not in core and not (token.startswith("__") and token.endswith("__")):
            if markup == "markdown" or (markup == "rst" and not token.startswith("_")):
                return _plain_code_like(core)  # _emphasis_ (Markdown), link_ (reST)
        return _underscored(token, core)
    return _plain_code_like(token)


def _underscored(token: str, core: str) -> str | None:
    if not any(char.isalpha() for char in core):
        return None
    if "_" not in core:  # _private, __dunder__, trailing_
        return token if len(core) >= 2 else None
    parts = core.split("_")
    if max(len(part) for part in parts) < 2:
        return None  # maths: x_i, W_q
    return token


def _plain_code_like(word: str) -> str | None:
    """Verdict on a word of letters and digits only."""
    if not word:
        return None
    has_digit = not word.isalpha()
    if has_digit and _LICENCE_NAME.fullmatch(word):
        return None
    if has_digit:
        letters = sum(char.isalpha() for char in word)
        if letters < 2 or not word[0].isalpha():
            return None  # v2, L124, x86
        if len(word) >= 7 and _HEX.fullmatch(word):
            return None  # a hash
        if not word.isupper() and len(word) < 4:
            return None  # mp4, py3
    elif word.isupper():
        return word if len(word) >= 3 and word not in _CAPITAL_WORDS else None
    elif len(word) < 3 or not _INNER_CAPITAL.search(word) or _PLURAL_ACRONYM.fullmatch(word):
        return None
    if len(word) >= 12 and _looks_random(word):
        return None
    return word


def _looks_random(word: str) -> bool:
    """Base64 and keys switch case every char or two and have digits; names are
    made of words, whose lowercase parts are longer (``XlaTensorBF16``)."""
    if word.isalpha():
        return False  # random text has digits; isSetUpToDate has short words
    lowercase_runs = _LOWERCASE_RUN.findall(word)
    return len(lowercase_runs) >= 3 and sum(map(len, lowercase_runs)) < 3 * len(lowercase_runs)


def _dotted(name: str) -> str | None:
    """``torch.nn.Module`` yes; ``setup.py``, ``pytorch.org``, ``e.g`` no."""
    parts = name.split(".")
    if max(len(part) for part in parts) < 2:
        return None
    last = parts[-1].lower()
    if last in _FILE_SUFFIXES or last in _DOMAINS:
        return None
    if parts[0].lower() == "www":
        return None
    return name


def _located(text: str, first_offset: dict[str, int], note: str) -> IdentifierScan:
    """Attach line numbers, drop shouted capitals, apply the cap on names."""
    line_starts = [0] + [match.end() for match in re.finditer("\n", text)]
    shouted: dict[int, set[str]] = {}
    found: list[tuple[str, int]] = []
    for name, offset in sorted(first_offset.items(), key=lambda item: item[1]):
        line_index = bisect.bisect_right(line_starts, offset) - 1
        if name.isalpha() and name.isupper():
            if line_index not in shouted:
                shouted[line_index] = _shouted_words(text, line_starts, line_index)
            if name in shouted[line_index]:
                continue
        if len(found) == MAX_IDENTIFIERS:
            note = note or f"only the first {MAX_IDENTIFIERS:,} identifiers are listed"
            break
        found.append((name, line_index + 1))
    return IdentifierScan(found, note)


def _shouted_words(text: str, line_starts: list[int], line_index: int) -> set[str]:
    """Words of a line in runs of three or more words in capitals with an
    English word among them (licence text, banners): there they are English in
    capitals, not acronyms (while ``DDP FSDP XLA`` are acronyms)."""
    end = line_starts[line_index + 1] if line_index + 1 < len(line_starts) else len(text)
    shouted: set[str] = set()
    run: list[str] = []
    for word in _WORD.findall(text, line_starts[line_index], end) + [""]:
        if word.isalpha() and word.isupper():
            run.append(word)
            continue
        if len(run) >= 3 and any(len(item) == 2 or item in _CAPITAL_WORDS for item in run):
            shouted.update(run)
        run = []
    return shouted
