"""What the link step reads of each file's facts, saved beside them by the extract step, and
the digests that tell which of it changed."""
from __future__ import annotations

import sys

from kwdocs.engine.steps.common import digest
from kwdocs.extract.links import mentions_of
from kwdocs.facts import Facts
from kwdocs.pages import diagrams, model


def _link_inputs(files: dict[str, Facts]) -> dict[str, dict]:
    """What linking reads of each file: its imports, whether it is a test, the names it calls
    through imports, and its top-level definitions: ``defines`` (name -> anchor, what other
    pages' cross-references link to), ``defs`` (name -> line) and ``binds`` (as imported ->
    as bound), with which the link step sends a name imported elsewhere to its definition."""
    inputs = {}
    for rel, facts in files.items():
        info = {"language": facts.get("language", ""), "imports": facts.get("imports", []),
                "test": model.is_test(facts), "uses": facts.get("uses", []), **_names_of(facts), **mentions_of(facts)}
        if defines := model.top_definitions(facts):
            info["defines"] = defines
        if facts.get("installs"):   # what a build file installs, joined with the other files when linking
            info["installs"] = facts["installs"]
        if bases := diagrams.class_bases(facts):
            info["bases"] = bases
        inputs[rel] = info
    return inputs


def _names_of(facts: Facts) -> dict[str, dict]:
    """A file's top-level definitions (``defs``: name -> line) and the names its imports bind
    (``binds``: as imported -> as bound); none when it has none."""
    defs: dict[str, int] = {}
    binds: dict[str, str] = {}
    for symbol in facts.get("symbols", []):
        if symbol["kind"] == "import":
            if symbol.get("signature"):
                binds.setdefault(symbol["signature"], symbol["name"])
        elif symbol["kind"] in model.LINKED_KINDS and not symbol.get("parent"):
            defs.setdefault(symbol["name"], symbol["line"])
    return {key: value for key, value in (("defs", defs), ("binds", binds)) if value}


_DEFINITION_INPUTS = ("defs", "defines")


def _import_digest(inputs: dict[str, dict]) -> str:
    """A digest of a unit's link inputs but its definitions: what resolving imports reads."""
    return digest({rel: {key: value for key, value in info.items() if key not in _DEFINITION_INPUTS}
                   for rel, info in inputs.items()})


def _definitions_digest(inputs: dict[str, dict]) -> str:
    return digest({rel: [info.get(key) for key in _DEFINITION_INPUTS] for rel, info in inputs.items()})


def interned_inputs(info: dict) -> dict:
    """A file's link inputs as read, with one string object per distinct name it shares with
    other files (its imports' kinds, modules and names, what it uses and mentions, the names its
    imports bind), interned as they are read (after reading them all raises the peak): the
    tree's files are linked at once, and ``torch.Tensor`` is named by thousands."""
    for record in info.get("imports", []):
        if isinstance(record, dict):
            for key in ("kind", "module"):
                if isinstance(record.get(key), str):
                    record[key] = sys.intern(record[key])
            if isinstance(record.get("names"), list):
                record["names"] = interned_names(record["names"])
    for key in ("uses", "mentions"):
        if isinstance(info.get(key), list):
            info[key] = interned_names(info[key])
    if isinstance(info.get("binds"), dict):
        info["binds"] = {sys.intern(key): sys.intern(value) if isinstance(value, str) else value
                         for key, value in info["binds"].items()}
    return info


def interned_names(names: list) -> list:
    """``names`` with one string object per distinct name (see ``interned_inputs``)."""
    return [sys.intern(name) if isinstance(name, str) else name for name in names]


ANCHORED_PART = "anchored"      # the part of a links entry that is the link meta's ``anchored``
