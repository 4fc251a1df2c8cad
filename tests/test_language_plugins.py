"""The language seam as a plug-in author uses it: the guide's worked example, installed as a package
with an entry point in ``kwdocs.languages``, builds pages, and with a grammar wheel of its own
gets its source highlighted in the site; a build with nothing to do reads no entry point; the
page model asks a language what it declares, never its name."""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from kwdocs import languages
from kwdocs.extract import extract_bytes

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "extending.md"
MODEL = Path(__file__).resolve().parents[1] / "kwdocs" / "pages" / "model.py"
# the guide's INI language extended with ``highlight=Highlight("tree_sitter_toml")``, installed as
# pip leaves a package: its module and a dist-info naming its entry point
PLUGINS = Path(__file__).parent / "fixtures" / "plugins"
INI = "; Settings of the demo server\n[server]\nport = 8080\n\n[database]\nurl = sqlite://\n"


def example_blocks() -> tuple[str, str]:
    """The Python module and the pyproject.toml snippet of docs/extending.md's "Adding a language"."""
    section = GUIDE.read_text().split("## Adding a language", 1)[1].split("\n## ", 1)[0]
    python = re.search(r"```python\n(.*?)```", section, re.S)
    toml = re.search(r"```toml\n(.*?)```", section, re.S)
    assert python and toml, "docs/extending.md's worked example is missing"
    return python.group(1), toml.group(1)


def install_example(site: Path) -> None:
    """Install the example as pip would leave it: the module and a dist-info with its entry points."""
    module, snippet = example_blocks()
    site.mkdir()
    (site / "kwdocs_ini.py").write_text(module)
    points = tomllib.loads(snippet)["project"]["entry-points"]
    info = site / "kwdocs_ini-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: kwdocs-ini\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in entries.items())
        for group, entries in points.items()))
    (info / "top_level.txt").write_text("kwdocs_ini\n")


def kwdocs(tree: Path, site: Path | None, *code: str) -> subprocess.CompletedProcess:
    """``kwdocs build`` of ``tree`` in its own process, with the example installed when ``site``."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if site is not None:
        env["PYTHONPATH"] = str(site)
    script = ("import sys\nfrom kwdocs.cli import main\n"
              f"code = main(['build', '--src', {str(tree)!r}, '-j', '1'])\n" + "".join(code) + "sys.exit(code)\n")
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)


def test_readme_example_installed_through_its_entry_point_builds_pages(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "settings.ini").write_text(INI)
    (tree / "serve.py").write_text("PORT = 8080\n")
    out = tree / "kwdocs-out"

    plain = kwdocs(tree, None)
    assert plain.returncode == 0, plain.stderr
    assert "**Type**: Text File" in (out / "settings.ini_docs.md").read_text()

    site = tmp_path / "site"
    install_example(site)
    with_ini = kwdocs(tree, site)
    assert with_ini.returncode == 0, with_ini.stderr
    docs = (out / "settings.ini_docs.md").read_text()
    assert "**Type**: INI Settings" in docs and "```ini\n" in docs
    assert "Settings of the demo server" in docs
    keywords = (out / "settings.ini_kw.md").read_text()
    assert "Sections" in keywords and "`server`" in keywords and "`database`" in keywords

    again = kwdocs(tree, site)
    assert again.returncode == 0 and " 0 pages written" in again.stdout, again.stdout

    removed = kwdocs(tree, None)     # uninstalled: the file is text again
    assert removed.returncode == 0, removed.stderr
    assert "**Type**: Text File" in (out / "settings.ini_docs.md").read_text()


def test_a_build_with_nothing_to_do_reads_no_entry_point(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "notes.txt").write_text("Plain notes.\n")
    (tree / "tool.py").write_text("def tool():\n    return 1\n")
    assert kwdocs(tree, None).returncode == 0
    noop = kwdocs(tree, None, "from kwdocs import languages\n",
                  "print('read entry points:', languages._installed is not None)\n")
    assert noop.returncode == 0, noop.stderr
    assert " 0 pages written" in noop.stdout and "read entry points: False" in noop.stdout


def test_built_in_languages_are_declared_once_each_and_their_extractors_load():
    for language in languages.BUILT_IN:
        for suffix in language.suffixes:
            assert languages.REGISTRY.by_suffix[suffix] is language, suffix
        assert callable(language.extract) and languages._extractor(language.module or "text", language)
    facts, _, _ = extract_bytes("pkg/module.py", b"class Shape(Base, metaclass=Meta):\n    pass\n")
    assert facts["language"] == "python" and facts["type_label"] == "Python Source"
    assert languages.by_id("python").bases("(Base, metaclass=Meta)") == ["Base"]
    assert languages.by_id("cpp").bases("class Shape : public geo::Base<T>") == ["geo.Base"]


def test_an_installed_language_gets_its_source_highlighted_by_the_grammar_it_declares(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "settings.ini").write_text('# Settings of the demo server\n[server]\nport = 8080\nname = "demo"\n')
    out = tmp_path / "out"
    env = {**{key: value for key, value in os.environ.items() if key != "PYTHONPATH"}, "PYTHONPATH": str(PLUGINS)}
    built = subprocess.run([sys.executable, "-m", "kwdocs", "build", "--src", str(tree), "--out", str(out),
                            "--html", "-q"], capture_output=True, text=True, env=env, timeout=300)
    assert built.returncode == 0, built.stderr
    assert "**Type**: INI Settings" in (out / "settings.ini_docs.md").read_text()
    page = (out / "site" / "settings.ini_docs.html").read_text()
    source = page.split('<details class="kwdocs-source"', 1)[1].split("</details>", 1)[0]
    # the TOML grammar's query, through the site's token classes: comment, key, number, string
    for token in ("<i class=c># Settings of the demo server</i>", "[<i class=nc>server</i>]",
                  "<i class=nc>port</i> = <i class=m>8080</i>", '<i class=s>"demo"</i>'):
        assert token in source, source


def _language_id_literals(node: ast.AST, ids: frozenset[str]) -> list[str]:
    """The language ids ``node`` spells as string literals, itself or as items of a tuple, list or set."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return [item.value for item in items if isinstance(item, ast.Constant) and item.value in ids]


def test_the_page_model_compares_no_language_id():
    """``pages/model.py`` asks a file's ``Language`` (its doc parser, module conventions, test
    command ...), so a language from another package is presented as a built-in one is: no
    comparison with a language id, and no table keyed by one."""
    ids = languages.known_ids(installed=False)
    plain_words = {"text", "binary", "unreadable"}   # also a doc block's type ("t": "text"): counted beside "lang"
    found = []
    for node in ast.walk(ast.parse(MODEL.read_text())):
        if isinstance(node, ast.Compare):
            spelled = [name for operand in (node.left, *node.comparators)
                       for name in _language_id_literals(operand, ids)]
        elif isinstance(node, ast.Dict):
            spelled = [name for key in node.keys if key is not None for name in _language_id_literals(key, ids)]
        else:
            continue
        found += [f"line {node.lineno}: {name!r}" for name in spelled
                  if name not in plain_words or "lang" in ast.unparse(node)]
    assert not found, found


def test_an_installed_languages_keywords_are_the_same_when_a_step_runs_in_a_fresh_interpreter(tmp_path):
    """A large tree's link and keyword steps run in a fresh interpreter (``FreshWhenMany``), which
    reads the installed languages as the building process did: the pages are a build's in place."""
    tree, site = tmp_path / "tree", tmp_path / "site"
    tree.mkdir()
    (tree / "settings.ini").write_text(INI)
    (tree / "serve.py").write_text("PORT = 8080\n")
    install_example(site)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"} | {"PYTHONPATH": str(site)}
    for out, fresh in (("in-place", 10_000), ("fresh", 1)):
        script = ("import sys\nfrom kwdocs.cli import main\nfrom kwdocs.engine import tasks\n"
                  f"tasks.FRESH_STEP_UNITS = {fresh}\n"
                  f"sys.exit(main(['build', '--src', {str(tree)!r}, '--out', {str(tmp_path / out)!r}, '-j', '1']))\n")
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
        assert run.returncode == 0, run.stdout + run.stderr
    pages = {out: {path.relative_to(tmp_path / out): path.read_bytes() for path in (tmp_path / out).rglob("*.md")}
             for out in ("in-place", "fresh")}
    assert b"**Type**: INI Settings" in pages["fresh"][Path("settings.ini_docs.md")]
    assert pages["fresh"] == pages["in-place"]
