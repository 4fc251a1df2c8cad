"""Rendering: page models into Markdown through Jinja2 templates.

Templates hold layout only; this module gives them the Markdown-safe filters
(inline code, fences, escaping) and finds them: a project's templates folder
first, then the ones shipped with kwdocs, by file name.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from pathlib import Path
from typing import Any

import jinja2
import jinja2.bccache
import jinja2.compiler
import jinja2.filters
import jinja2.runtime
import jinja2.utils

from kwdocs.config import STATE_FOLDER, Config, shipped_templates
from kwdocs.context import per_config
from kwdocs.store import writer as output
from kwdocs.store.snapshot import code_fingerprint
from kwdocs.store.state import TEMPLATES

SHIPPED_PREFIX = "shipped"
_BACKTICKS = re.compile(r"`+")
# HTML's three as entities, a line break as a space, Markdown's marks backslashed, in this order:
# the backslash and ``&`` first, so that no replacement's own backslash or ``&`` is escaped again
_MD_ESCAPES = (("\\", "\\\\"), ("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("\n", " "),
               *((mark, "\\" + mark) for mark in "`*_[]|#!"))


def inline_code(text: object) -> str:
    """An inline code span that holds any text, backticks included."""
    text = str(text).replace("\n", " ")
    if "`" not in text and text.strip() == text and text:
        return f"`{text}`"
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    # a span that begins and ends with a space loses one at each end: padding keeps them
    pad = " " if (text.startswith(("`", " ")) and text.endswith(("`", " "))) or not text.strip() \
        or text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def cell_code(text: object) -> str:
    """An inline code span in a Markdown table's cell, its ``|`` escaped: GFM ends a cell at
    one even inside a code span."""
    return inline_code(text).replace("|", "\\|")


def fenced(text: str, info: str = "") -> str:
    """A fenced block that embedded fences cannot break out of."""
    # most sources hold no run of three backticks: then one substring search settles it
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0) if "```" in text else 0
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{fence}{info}\n{body}{fence}"


# Mermaid's entity codes: a label's quote, a backtick (a Markdown fence), ``#`` (which starts a
# code), angle brackets and ``&`` (which Mermaid reads as HTML) are written as codes, a line as a space
_MERMAID_CODES = str.maketrans({"#": "#35;", '"': "#quot;", "`": "#96;", "<": "#lt;", ">": "#gt;", "&": "#38;",
                                "\n": " ", "\r": " "})


def mermaid_label(text: object) -> str:
    """Text for a quoted Mermaid node label (``id["text"]``), shown as written."""
    return str(text).translate(_MERMAID_CODES)


def escape_md(text: object) -> str:
    """Plain text that Markdown shows as written, and HTML cannot be smuggled through."""
    text = str(text)
    # a search per mark, most absent, rather than ``str.translate``, whose table of longer
    # replacements it looks each character up in: a third of the time over a build's texts
    for mark, replacement in _MD_ESCAPES:
        if mark in text:
            text = text.replace(mark, replacement)
    # python-markdown's attr_list (MkDocs') reads ``{...}`` right after a code span or a link as
    # that element's attributes, ``onclick`` too: text, which may follow one, starts with no brace
    if text.startswith("{"):
        return "\\" + text
    # text that may open a line opens no list or rule there (``- x``, ``+ x``, ``1. x``, ``---`` said as text)
    return _LIST_MARK.sub(lambda mark: mark[0][:-1] + "\\" + mark[0][-1], text, count=1) \
        if text[:1] in "-+0123456789" else text


# a bullet, a number and its ``.`` or ``)``, or the first of three dashes or more and nothing else
# (``---``, ``-- -``: a horizontal rule)
_LIST_MARK = re.compile(r"^(?:(?:[-+]|\d{1,9}[.)])(?=\s|$)|-(?=(?:[ \t]*-){2,}[ \t]*$))")


# reST's inline literal: ``text`` with no blank just inside, no `` within, and the marks set off
# from the words around them (a docstring about backticks, ``:func:`x``` say, keeps its own)
_DOUBLE_BACKTICKS = re.compile(r"""(?<![^\s(\[{<'"])``(?=\S)((?:(?!``).)+?)(?<=\S)``(?![^\s)\]}>'".,;:!?-])""",
                               re.DOTALL)


def prose(text: object) -> str:
    """A docstring's or README's prose, escaped as ``escape_md`` escapes it, but for its
    double-backtick literals (reStructuredText's inline code, and Markdown's too), which become
    code spans: escaped, they read as backslashed backticks around backslashed text."""
    text = str(text)
    if "``" not in text:
        return escape_md(text)
    pieces = []
    position = 0
    for literal in _DOUBLE_BACKTICKS.finditer(text):
        pieces.append(escape_md(text[position:literal.start()]))
        pieces.append(inline_code(literal.group(1)))
        position = literal.end()
    pieces.append(escape_md(text[position:]))
    return "".join(pieces)


def spans_markdown(spans: list[dict]) -> str:
    """A run of a doc's spans (``kwdocs.pages.docstrings``) as one line of Markdown (the
    templates' ``spans`` filter): text escaped, code as code, marks, safe links."""
    out = []
    for span in spans:
        kind = span["t"]
        if kind == "text":      # most spans: asked first
            out.append(escape_md(span["v"]))
        elif kind == "code":
            out.append(f"[{inline_code(span['v'])}]({span['link']})" if span.get("link") else inline_code(span["v"]))
        elif kind == "strong":
            out.append("**")
        elif kind == "em":
            out.append("*")
        elif kind == "link":
            out.append(f"[{escape_md(span['v'])}]({span['link']})")
        else:
            out.append(escape_md(span["v"]))
    return "".join(out)


def code_list(values: list, prefix: str = "") -> str:
    """Names as code spans, a comma between two (``@`` before each of a definition's decorators)."""
    return ", ".join(inline_code(f"{prefix}{value}") for value in values)


def human_size(size: int) -> str:
    """``5,314 bytes (5.19 KB)``, the seeds' format."""
    if size < 1024:
        return f"{size:,} bytes"
    for unit, scale in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if size >= scale:
            return f"{size:,} bytes ({size / scale:.2f} {unit})"
    return f"{size:,} bytes"


def short_size(size: int) -> str:
    for unit, scale in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"


# {% extends/include/import/from "name" %}: found without parsing the template, which every build
# would pay for (a name in a comment only adds a dependency; names in variables are not followed)
_REFERENCE = re.compile(r"""\{%[-+]?\s*(?:extends|include|import|from)\s+["']([^"']+)["']""")


class StateBytecodeCache(jinja2.BytecodeCache):
    """Compiled templates kept in the state folder: compiling the five templates is a
    third of a one-file edit's render time.  Jinja checks each entry against the
    template's source and the Python version, so a stale entry is just compiled again."""

    def __init__(self, out: Path):
        self.out = out
        self.folder = out / STATE_FOLDER / TEMPLATES

    def get_cache_key(self, name: str, filename: str | None = None) -> str:
        # Jinja checks the template's source; the code compiled from it is also the code
        # generator's (``_ModelCodeGenerator``, Jinja's version): keyed by kwdocs' code
        return hashlib.sha256(f"{super().get_cache_key(name, filename)}\0{code_fingerprint()}".encode()).hexdigest()

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        # sealed: Jinja checks an entry's source, not its code, and changed code would render wrong pages
        data = output.read_sealed(self.folder / f"{bucket.key}.cache")
        if data is None:
            return
        try:
            bucket.bytecode_from_string(data)
        except (ValueError, EOFError, TypeError):
            pass

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        output.write_sealed(self.out, self.folder / f"{bucket.key}.cache", bucket.bytecode_to_string())


class _ModelCodeGenerator(jinja2.compiler.CodeGenerator):
    """``item.name`` compiled to a key lookup in place when ``item`` is a dict (a page model),
    and to Jinja's ``environment.getattr`` otherwise: a cold build reads millions of them."""

    @jinja2.compiler.optimizeconst
    def visit_Getattr(self, node: jinja2.nodes.Getattr, frame: jinja2.compiler.Frame) -> None:
        if self.environment.is_async:
            super().visit_Getattr(node, frame)
            return
        # the condition runs first, binding the object once; a nested lookup in it is done by then
        self.write(f"(__model[{node.attr!r}] if type(__model := ")
        self.visit(node.node, frame)
        self.write(f") is dict and {node.attr!r} in __model else environment.getattr(__model, {node.attr!r}))")

    def visit_Template(self, node: jinja2.nodes.Template, frame: jinja2.compiler.Frame | None = None) -> None:
        # the root function may be buffered only when no parent template renders after it
        self._root_buffered = node.find(jinja2.nodes.Extends) is None
        super().visit_Template(node, frame)

    def blockvisit(self, nodes: Iterable[jinja2.nodes.Node], frame: jinja2.compiler.Frame) -> None:
        """A block's (or a template's root's) output gathered in a list and yielded once: Jinja
        yields each piece, and a cold build's pages are some twenty million of them."""
        if self.environment.is_async or frame.buffer is not None or not (
                frame.block_frame or (frame.rootlevel and self._root_buffered)):
            super().blockvisit(nodes, frame)
            return
        self.buffer(frame)
        super().blockvisit(nodes, frame)
        self.writeline(f"yield concat({frame.buffer})")


# callables a template calls often, by whether Jinja hands them the evaluation context (a
# macro does, a block or a joiner nothing): what Context.call finds out on every call
_KNOWN_CALLABLES = {jinja2.runtime.Macro: True, jinja2.runtime.BlockReference: False, jinja2.utils.Joiner: False}


class _ModelContext(jinja2.runtime.Context):
    """Jinja's context, calling a macro, a block or a joiner without inspecting it each time:
    a cold build's pages make some 200,000 such calls."""

    def call(__self, __obj: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        passes_context = _KNOWN_CALLABLES.get(type(__obj))
        if passes_context is None:
            return super().call(__obj, *args, **kwargs)
        kwargs.pop("_block_vars", None)
        kwargs.pop("_loop_vars", None)
        try:
            return __obj(__self.eval_ctx, *args, **kwargs) if passes_context else __obj(*args, **kwargs)
        except StopIteration:   # as Jinja answers it
            return __self.environment.undefined("value was undefined because a callable raised a"
                                                " StopIteration exception")


class ModelEnvironment(jinja2.Environment):
    """Page models are plain dicts: ``item.name`` looks the key up first.

    Jinja tries an attribute first and falls back to the key after a failed
    ``getattr``; on a large folder that exception per lookup was half of
    rendering its index.
    """

    code_generator_class = _ModelCodeGenerator
    context_class = _ModelContext

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._loaded: dict[tuple[str, str | None], jinja2.Template] = {}

    def get_template(self, name: str | jinja2.Template, parent: str | None = None,
                     globals: MutableMapping[str, Any] | None = None) -> jinja2.Template:
        """Jinja's, remembered by name: with ``auto_reload`` off a loaded template never changes, and
        Jinja's cache makes a weak reference and takes a lock on each of a cold build's 60,000 asks."""
        if globals is not None or self.auto_reload or not isinstance(name, str):
            return super().get_template(name, parent, globals)
        found = self._loaded.get((name, parent))
        if found is None:
            found = self._loaded[name, parent] = super().get_template(name, parent)
        return found

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)


def render_template(template: jinja2.Template, model: dict) -> str:
    """``template.render(model)``, and the model freed as soon as the text is made."""
    context = template.new_context(model)
    try:
        return "".join(template.root_render_func(context))
    finally:
        # a template's macros close over its context, which holds the model: a cycle that kept
        # every page's model of a step alive until the collector ran
        context.vars.clear()


class Renderer:
    """A Jinja2 environment over the override folder and the shipped templates."""

    def __init__(self, override: Path | Mapping[str, bytes] | None = None, out: Path | None = None):
        # a mapping of template name to bytes is an override folder sent to a cluster worker;
        # a template is decoded when first loaded, as from a folder
        overrides: list[jinja2.BaseLoader] = []
        if isinstance(override, Mapping):
            sent = dict(override)
            overrides.append(jinja2.FunctionLoader(
                lambda name: sent[name].decode("utf-8") if name in sent else None))
        folders = ([str(override)] if isinstance(override, Path) else []) + [str(shipped_templates())]
        # ``shipped/<name>``: kwdocs' own template, which an override can extend (a docs-page
        # section added in an override's file_docs.md.j2 keeps the shipped ones)
        shipped = jinja2.PrefixLoader({SHIPPED_PREFIX: jinja2.FileSystemLoader(str(shipped_templates()))})
        self.env = ModelEnvironment(
            loader=jinja2.ChoiceLoader([*overrides, jinja2.FileSystemLoader(folders), shipped]),
            bytecode_cache=StateBytecodeCache(out) if out is not None else None,
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
            autoescape=False,  # Markdown, not HTML: escaping is explicit through the filters
            # no time stamp check of the template file on every page (50,000 in a cold build): a
            # process that sees templates change (watch mode) makes a new Renderer (``context.drop_contexts``)
            auto_reload=False,
        )
        self.env.filters.update(code=inline_code, cell_code=cell_code, code_list=code_list, spans=spans_markdown,
                                fence=fenced, md=escape_md, prose=prose, mermaid=mermaid_label,
                                size=human_size, short_size=short_size,
                                num=lambda value: f"{value:,}")
        # jinja's own sync filters, without the wrapper that asks on each call whether the
        # environment is async (it is not): a file's keyword page joins once per keyword
        self.env.filters.update(join=jinja2.filters.sync_do_join, map=jinja2.filters.sync_do_map)

    def render(self, template: str, model: dict) -> str:
        return render_template(self.env.get_template(template), model)

    def macro(self, template: str, name: str) -> Callable[..., str]:
        """A macro of a template, to render one part of a page (say, one table row) on its own."""
        found = getattr(self.env.get_template(template).module, name, None)
        if not callable(found):
            raise jinja2.TemplateError(f"template {template} defines no macro '{name}'")
        return found

    def fingerprint(self, template: str) -> str:
        """Hash of a template and every template it includes, extends or imports by name."""
        digest = hashlib.sha256()
        seen: set[str] = set()
        pending = [template]
        while pending:
            name = pending.pop()
            if name in seen:
                continue
            seen.add(name)
            try:
                source, _, _ = self.env.loader.get_source(self.env, name)  # type: ignore[union-attr]  # made with one
            except jinja2.TemplateNotFound:
                if name == template:
                    raise
                continue    # named in a comment or a raw block, say: not a real dependency
            digest.update(name.encode() + b"\0" + source.encode() + b"\0")
            pending.extend(sorted(set(_REFERENCE.findall(source))))
        return digest.hexdigest()


@per_config
def renderer_for(config: Config) -> Renderer:
    """One environment per build context (templates compile once), its compiled templates
    cached in the output's state folder."""
    return Renderer(config.templates, config.out)
