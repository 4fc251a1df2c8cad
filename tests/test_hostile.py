"""Hostile and odd input: a tree nobody cleaned still builds, and says what was wrong.

The tree is made here (nothing downloaded): broken and unusual encodings and
line endings, NUL bytes, empty and huge files, a 300-level folder, Python too
deep for ``ast``, file names full of Markdown, files named like kwdocs' own
pages, symlink loops and links leaving the tree, an unreadable file, a named
pipe and a socket, and files deleted or replaced while the build runs.

For each: the build finishes with exit code 0, prints exactly the problem line
the table below expects (or none for a file that is merely unusual), every
other page is right, every link works, nothing is written outside the output
folder, and nothing from outside the tree shows up in a page.
"""
from __future__ import annotations

import builtins
import contextlib
import errno
import io
import os
import re
import signal
import socket
from pathlib import Path

import pytest

import kwdocs.sources
import kwdocs.engine.incremental
from kwdocs.cli import main
from tests.output_checks import broken_links, pages, run_build, temporaries, tree_state

OUTSIDE_MARKER = "KWDOCS-OUTSIDE-THE-TREE-7f3a"
BIG_FILE_BYTES = 50 * 1024 * 1024
DEPTH = 300
MARKDOWN_NAMES = ["with space.py", "ünïcødé名.py", "back`tick.py", "[link](target).py", "hash#1.py", "50%.py",
                  "star*.py", "pipe|.py", "<angle>.py", "-leading.py"]
FUNCTION = "def {name}():\n    return 1\n"

# rel -> the problem line's message; None: documented normally, no problem line.
EXPECTED = {
    "encoding/invalid_utf8.py": "not UTF-8; decoded as latin-1",
    "encoding/latin1_no_coding.py": "not UTF-8; decoded as latin-1",
    "encoding/utf16_bom.py": None,
    "encoding/utf8_bom.py": None,
    "encoding/crlf.py": None,
    "encoding/lone_cr.py": None,
    "odd/nul_bytes.py": "holds NUL bytes: documented as a binary file, not as Python Source",
    "odd/empty.py": None,
    "odd/big_50mb.txt": "larger than 3 MiB: only its metadata and beginning are documented",
    "odd/one_long_line.txt": "identifiers were looked for in the first 1,000,000 characters only",
    "odd/too_deep.py": "too deeply nested for Python's parser",
    "/".join(["deep"] * DEPTH) + "/leaf.py": None,
    **{f"names/{name}": None for name in MARKDOWN_NAMES},
    "names/[folder] #1 50%/inner.py": None,
    "index.md": None, "doc.md": None, "x_docs.md": None, "x": None,
    "links/loop_a": "skipped: symlink loop",
    "links/loop_b": "skipped: symlink loop",
    "links/passwd": "skipped: symlink points outside the source tree",
    "links/outside_file.txt": "skipped: symlink points outside the source tree",
    "links/outside_folder": "skipped: symlink points outside the source tree",
    "links/dangling.py": "skipped: dangling symlink (its target does not exist)",
    "links/inside.py": None,
    "special/unreadable.py": "could not be read: Permission denied",
    "special/pipe.py": "skipped: a named pipe, never opened",
    "special/socket": "skipped: a socket, never opened",
}


def make_hostile_tree(src: Path, outside: Path) -> None:
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{OUTSIDE_MARKER}\nSHOULD_NEVER_BE_DOCUMENTED = 1\n")
    src.mkdir()
    put = lambda rel, data: _put(src / rel, data)  # noqa: E731

    put("encoding/invalid_utf8.py", b'TEXT = "\xff\xfe\xfa"\n' + FUNCTION.format(name="after_bad_bytes").encode())
    put("encoding/latin1_no_coding.py", "# Café crème\n".encode("latin-1") + FUNCTION.format(name="cafe").encode())
    put("encoding/utf16_bom.py", FUNCTION.format(name="sixteen").encode("utf-16"))
    put("encoding/utf8_bom.py", b"\xef\xbb\xbf" + FUNCTION.format(name="bom").encode())
    put("encoding/crlf.py", b"import os\r\n\r\ndef first():\r\n    pass\r\n\r\ndef second():\r\n    pass\r\n")
    put("encoding/lone_cr.py", b"import os\r\rdef first():\r    pass\r\rdef second():\r    pass\r")

    put("odd/nul_bytes.py", b"def looks_like_code():\n    pass\n\x00\x00\x01\x02binary tail\n")
    put("odd/empty.py", b"")
    with open(src / "odd/big_50mb.txt", "wb") as handle:
        line = b"a line of a large log file, with identifiers like NCCL_DEBUG and init_process_group\n"
        handle.write(line * (BIG_FILE_BYTES // len(line) + 1))
    put("odd/one_long_line.txt", b"word MixedCase snake_case " * 100_000)   # 2.6 MB: under the analysis limit
    put("odd/too_deep.py", (FUNCTION.format(name="before_deep") + "x = " + "1 + " * 100_000 + "1\n"
                            + FUNCTION.format(name="after_deep")).encode())

    deep = src.joinpath(*["deep"] * DEPTH)
    deep.mkdir(parents=True)
    put(deep.relative_to(src).as_posix() + "/leaf.py", FUNCTION.format(name="leaf").encode())

    for index, name in enumerate(MARKDOWN_NAMES):
        put(f"names/{name}", FUNCTION.format(name=f"named_{index}").encode())
    put("names/[folder] #1 50%/inner.py", FUNCTION.format(name="inner").encode())
    put("index.md", b"# Not the folder index\n\nA file that happens to be called `index.md`.\n")
    put("doc.md", b"# Not the folder page\n")
    put("x_docs.md", b"# Named like the page of `x`\n")
    put("x", b"plain text named x\n")

    links = src / "links"
    links.mkdir()
    (links / "loop_a").symlink_to("loop_b")
    (links / "loop_b").symlink_to("loop_a")
    (links / "passwd").symlink_to("/etc/passwd")
    (links / "outside_file.txt").symlink_to(outside / "secret.txt")
    (links / "outside_folder").symlink_to(outside, target_is_directory=True)
    (links / "dangling.py").symlink_to("no_such_file.py")
    put("links/target.py", FUNCTION.format(name="target").encode())
    (links / "inside.py").symlink_to("target.py")

    special = src / "special"
    put("special/unreadable.py", f"HIDDEN = '{OUTSIDE_MARKER}'\n".encode())
    (special / "unreadable.py").chmod(0)
    os.mkfifo(special / "pipe.py")
    with contextlib.chdir(special), socket.socket(socket.AF_UNIX) as server:
        server.bind("socket")  # a relative name: socket paths are limited to 108 bytes


def _put(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


@contextlib.contextmanager
def permission_denied(path: Path, monkeypatch):
    """Make ``path`` unreadable even for root, at the operating-system boundary."""
    denied = os.fspath(path)
    real_os_open, real_open = os.open, builtins.open

    def os_open(file, *args, **kwargs):
        if isinstance(file, (str, os.PathLike)) and os.fspath(file) == denied:
            raise PermissionError(errno.EACCES, "Permission denied", denied)
        return real_os_open(file, *args, **kwargs)

    def open_(file, *args, **kwargs):
        if isinstance(file, (str, os.PathLike)) and os.fspath(file) == denied:
            raise PermissionError(errno.EACCES, "Permission denied", denied)
        return real_open(file, *args, **kwargs)

    with monkeypatch.context() as patch:
        if os.access(path, os.R_OK):  # root reads mode 000 files
            patch.setattr(os, "open", os_open)
            patch.setattr(builtins, "open", open_)
        yield


@contextlib.contextmanager
def time_limit(seconds: int):
    """Fail instead of hanging (a named pipe opened for reading blocks forever)."""
    def expire(signum, frame):
        raise TimeoutError(f"the build did not finish in {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def build_in_process(src: Path, out: Path, capsys, *extra: str) -> tuple[int, list[str]]:
    """``kwdocs build`` in this process (so faults can be injected); exit code and problem lines."""
    capsys.readouterr()
    with time_limit(120):
        code = main(["build", "--src", str(src), "--out", str(out), "-j", "1", *extra])
    printed = capsys.readouterr().out.splitlines()
    assert printed and printed[-1].startswith("kwdocs: "), printed
    return code, [line for line in printed if line.startswith("problem: ")]


def problem_lines(expected: dict[str, str | None]) -> list[str]:
    return sorted(f"problem: {rel}: {message}" for rel, message in expected.items() if message)


def kw_lines(out: Path, rel: str) -> dict[str, int]:
    """Keyword -> line, as the keyword page of ``rel`` lists them."""
    text = (out / f"{rel}_kw.md").read_text(encoding="utf-8")
    return {name: int(line) for name, line in re.findall(r"^- \*\*`(.+?)`\*\*: \[\w+, line (\d+)\]", text, re.M)}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """The tree, built once in this process with the unreadable file denied even to root."""
    root = tmp_path_factory.mktemp("hostile")
    src, outside, out = root / "src", root / "outside", root / "out"
    make_hostile_tree(src, outside)
    before = tree_state(root, skip=out)
    with pytest.MonkeyPatch.context() as monkeypatch, permission_denied(src / "special/unreadable.py", monkeypatch):
        capture = io.StringIO()
        with contextlib.redirect_stdout(capture):
            with time_limit(120):
                code = main(["build", "--src", str(src), "--out", str(out), "-j", "1"])
    printed = capture.getvalue().splitlines()
    yield dict(root=root, src=src, out=out, code=code, printed=printed, before=before,
               after=tree_state(root, skip=out))
    (src / "special/unreadable.py").chmod(0o644)


def test_build_finishes_with_one_problem_line_per_bad_file(hostile):
    assert hostile["code"] == 0, hostile["printed"]
    problems = sorted(line for line in hostile["printed"] if line.startswith("problem: "))
    assert problems == problem_lines(EXPECTED)
    assert hostile["printed"][-1].startswith("kwdocs: ")


def test_nothing_is_written_outside_the_output_folder(hostile):
    assert hostile["after"] == hostile["before"]
    assert temporaries(hostile["out"]) == []


def test_nothing_from_outside_the_tree_reaches_a_page(hostile):
    passwd = Path("/etc/passwd").read_text(errors="replace").splitlines()[:1]
    for folder, _, names in os.walk(hostile["out"]):
        for name in names:
            data = Path(folder, name).read_bytes()
            assert OUTSIDE_MARKER.encode() not in data, Path(folder, name)
            assert not any(line and line.encode() in data for line in passwd), Path(folder, name)


def test_every_link_works_whatever_the_file_names(hostile):
    assert broken_links(hostile["out"]) == []


def test_every_documented_file_has_its_pages(hostile):
    out, written = hostile["out"], pages(hostile["out"])
    for rel, message in EXPECTED.items():
        documented = not (message or "").startswith("skipped")
        assert (f"{rel}_docs.md" in written and f"{rel}_kw.md" in written) == documented, rel
    assert written["index.md"].startswith(b"# "), "the folder index of the root is kwdocs' own"
    assert b"index.md_docs.md" in written["index.md"], "the source file index.md is listed in it"
    depth_folder = "/".join(["deep"] * DEPTH)
    assert f"{depth_folder}/index.md" in written and f"{depth_folder}/leaf.py_docs.md" in written
    assert "leaf" in kw_lines(out, f"{depth_folder}/leaf.py")


def test_unusual_but_fine_files_are_documented_normally(hostile):
    out = hostile["out"]
    for rel in ("encoding/crlf.py", "encoding/lone_cr.py"):
        assert kw_lines(out, rel) == {"first": 3, "second": 6, "os": 1}, rel
        docs = (out / f"{rel}_docs.md").read_text(encoding="utf-8")
        assert "def first():\n    pass\n" in docs and "\r" not in docs
    assert kw_lines(out, "encoding/utf16_bom.py") == {"sixteen": 1}
    assert "utf-16" in (out / "encoding/utf16_bom.py_docs.md").read_text(encoding="utf-8")
    bom_page = (out / "encoding/utf8_bom.py_docs.md").read_text(encoding="utf-8")
    assert kw_lines(out, "encoding/utf8_bom.py") == {"bom": 1} and "\ufeff" not in bom_page
    assert "Café" in (out / "encoding/latin1_no_coding.py_docs.md").read_text(encoding="utf-8")
    assert "binary" in (out / "odd/nul_bytes.py_docs.md").read_text(encoding="utf-8")
    assert kw_lines(out, "odd/too_deep.py") == {"before_deep": 1, "after_deep": 4}
    big = (out / "odd/big_50mb.txt_docs.md").read_text(encoding="utf-8")
    assert len(big) < 1_000_000 and "bytes were left out" in big
    for index, name in enumerate(MARKDOWN_NAMES):
        assert kw_lines(out, f"names/{name}") == {f"named_{index}": 1}, name
    assert kw_lines(out, "links/inside.py") == {"target": 1}


def test_the_build_after_is_a_no_op_with_the_same_problems(hostile, monkeypatch, capsys):
    src, out = hostile["src"], hostile["out"]
    before = pages(out)
    with permission_denied(src / "special/unreadable.py", monkeypatch):
        code, problems = build_in_process(src, out, capsys)
    assert code == 0 and sorted(problems) == problem_lines(EXPECTED)
    assert pages(out) == before


def test_a_separate_process_with_two_jobs_agrees(hostile, tmp_path):
    """No fault injected here: as root the mode-000 file is readable, and documented."""
    expected = dict(EXPECTED)
    if os.access(hostile["src"] / "special/unreadable.py", os.R_OK):
        expected["special/unreadable.py"] = None
    result = run_build(hostile["src"], tmp_path / "out", "-j", "2", timeout=180)
    assert result.returncode == 0, result.stderr
    assert sorted(line for line in result.stdout.splitlines() if line.startswith("problem: ")) == \
        problem_lines(expected)


# ------------------------------------------------------------- files changing while the build runs

def test_files_deleted_or_replaced_while_the_build_runs(tmp_path, monkeypatch, capsys):
    src, out = tmp_path / "src", tmp_path / "out"
    for name in ("steady.py", "deleted.py", "replaced_by_pipe.py", "rewritten.py",
                 "deleted_before_check.py", "pipe_before_check.py"):
        _put(src / name, FUNCTION.format(name=name.removesuffix(".py")).encode())
    real_read, real_head, real_scan = (kwdocs.sources.read_source, kwdocs.sources.read_head,
                                       kwdocs.engine.incremental.scan)
    done: set[str] = set()

    def read_head(path: Path, limit: int, hashed: bool = True):
        """Change a file the moment before the build reads it for extraction, once."""
        change_once(path)
        return real_head(path, limit, hashed)

    def read_source(path: Path, limit: int | None = None) -> bytes:
        """And the same before it is read for its page."""
        change_once(path)
        return real_read(path, limit)

    def change_once(path: Path) -> None:
        name = Path(path).name
        if name not in done:
            done.add(name)
            if name == "deleted.py":
                os.unlink(path)
            elif name == "replaced_by_pipe.py":
                os.unlink(path)
                os.mkfifo(path)
            elif name == "rewritten.py":
                (src / "rewritten.tmp").write_text(FUNCTION.format(name="rewritten_anew"))
                os.replace(src / "rewritten.tmp", path)

    def scan(config, last=None):
        """Change files after the scan, before doit checks them."""
        scanned = real_scan(config, last)
        os.unlink(src / "deleted_before_check.py")
        os.unlink(src / "pipe_before_check.py")
        os.mkfifo(src / "pipe_before_check.py")
        return scanned

    monkeypatch.setattr(kwdocs.sources, "read_source", read_source)
    monkeypatch.setattr(kwdocs.sources, "read_head", read_head)
    monkeypatch.setattr(kwdocs.engine.incremental, "scan", scan)
    code, problems = build_in_process(src, out, capsys)
    assert code == 0
    assert sorted(problems) == [
        "problem: deleted.py: could not be read: No such file or directory",
        "problem: deleted_before_check.py: could not be read: No such file or directory",
        "problem: pipe_before_check.py: could not be read: not a regular file any more",
        "problem: replaced_by_pipe.py: could not be read: not a regular file any more",
    ]
    assert kw_lines(out, "rewritten.py") == {"rewritten_anew": 1}, "the file as it is now is documented"
    assert kw_lines(out, "steady.py") == {"steady": 1}

    monkeypatch.undo()
    code, problems = build_in_process(src, out, capsys)
    assert code == 0
    assert sorted(problems) == ["problem: pipe_before_check.py: skipped: a named pipe, never opened",
                                "problem: replaced_by_pipe.py: skipped: a named pipe, never opened"]
    clean = tmp_path / "clean"
    assert build_in_process(src, clean, capsys)[0] == 0
    assert pages(out) == pages(clean), "the next build must equal a clean build"
    assert broken_links(out) == []


def test_names_without_a_letter_never_overwrite_the_keyword_index(tmp_path, capsys):
    """``_`` once had the index letter '' and its page was keywords.md itself, over the letter bar."""
    src = tmp_path / "src"
    _put(src / "many.py", "".join(FUNCTION.format(name=f"f{index}") for index in range(2100)).encode())
    _put(src / "odd.py", (FUNCTION.format(name="_") + FUNCTION.format(name="__")).encode())
    assert build_in_process(src, tmp_path / "out", capsys)[0] == 0
    index = (tmp_path / "out" / "keywords.md").read_text(encoding="utf-8")
    assert "Pick a letter" in index and "keywords-other.md" in index
    assert "`_`" in (tmp_path / "out" / "keywords-other.md").read_text(encoding="utf-8")


def test_folders_named_like_pages_or_the_state_get_pages_of_their_own(tmp_path, capsys):
    """A source folder ``index.md/`` once failed the build: its output folder stood where its
    parent's index page belongs.  Such folders (and ``.kwdocs/``) get escaped output folders."""
    src, out = tmp_path / "src", tmp_path / "out"
    sources = ["index.md/mod.py", "pkg/doc.md/m.py", "a.py", "a.py_docs.md/w.py", "keywords-A.md/k.py",
               ".kwdocs/state.py", "index.md~/tilde.py", "site/s.py"]
    for number, rel in enumerate(sources):
        _put(src / rel, f"def function_{number}():\n    return {number}\n".encode())
    code, problems = build_in_process(src, out, capsys)
    assert (code, problems) == (0, [])
    written = pages(out)
    documented = {rel for rel in sources
                  if any(page.endswith(rel.rpartition("/")[2] + "_kw.md") and f"function_{sources.index(rel)}"
                         in text.decode() for page, text in written.items())}
    assert documented == set(sources)
    root_index = written["index.md"].decode()
    assert "| [`index.md/`](./index.md~/index.md) |" in root_index      # shown by its real name
    assert "| [`index.md~/`](./index.md~~/index.md) |" in root_index
    assert broken_links(out) == []
    assert main(["check", "--src", str(src), "--out", str(out)]) == 0


@pytest.mark.parametrize("secret_files", [None, ["*.secret", "keys/*.pem"], ["*.secret", "keys/**"]],
                         ids=["default", "a path glob", "a folder glob"])
def test_names_the_scan_lets_through_unchecked_are_exactly_those_that_pass_every_check(tmp_path, secret_files):
    """The scan asks one regex whether a name needs its per-name checks (printable, an editor's
    temporary, a secret file's); a name it waves through must pass all of them in
    any folder, or a secret file, an editor's swap file or a key would be documented."""
    from kwdocs import scan
    from kwdocs.config import load_config

    overrides = {"output": str(tmp_path / "out")} | ({"secret_files": secret_files} if secret_files else {})
    rules = scan._Rules(load_config(tmp_path, None, overrides))
    plain = scan._plain_names(rules)
    if secret_files and secret_files[-1].endswith("**"):    # any name may match: no shortcut
        assert plain is None
        return
    names = ["ok.py", "README.md", "a~", ".x.swp", ".x.swpx", "4913", "49130", ".env", ".env.local", "env",
             "id_rsa", "id_rsa.pub", "key.pem", "pem", "credentials", "my_credentials", ".#lock", "#auto#",
             "x.tmp", "x.tmpl", "tab\tname", "bell\x07", "del\x7f", "\udcff.py", "café.py", "naïve name.h", ".pgpass",
             "config", "config.json", "kubeconfig", "prod.env", ".npmrc", "x.secret", "AKIAIOSFODNN7EXAMPLQ.txt",
             "AKIA.txt", "hf_utils.py"]
    for name in names:
        checked = all(scan._printable_name(name) and not scan.EDITOR_TEMP_FILES.match(folder + name, name)
                      and not rules.secrets.match(folder + name, name)
                      for folder in ("", "keys/", "home/.kube/", "home/.docker/"))
        assert plain.is_plain(name) == checked, name
