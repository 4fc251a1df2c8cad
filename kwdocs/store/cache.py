"""The shared extraction cache: a file's facts, keyed by the content hashes they were made from.

A fresh clone (a CI job, a new developer) would extract every file again; with
``cache = "URL"`` the facts another build made of the same bytes at the same path,
by the same code, rules, languages and ctags (``extraction_key``), are fetched
instead.  Any store fsspec reaches: a folder (``file:///...`` or a plain path), an
S3 bucket (``s3://bucket/prefix``, through s3fs), and so on.

Safe to share:

- an entry is a header line (its key, the inputs it claims, its body's size and
  SHA-256) and the value as JSON, or (``encode_parts``: pages) a line naming the
  parts and their sizes, then their bytes; all are checked before use, and an entry
  that fails is ignored with one line and replaced (``readwrite``);
- entries are published whole: a folder's written under a temporary name and moved
  into place, an object store's by one PUT of the whole object;
- a store that fails or does not answer within ``TIMEOUT`` seconds is not asked
  again by this process: the build goes on without it (the circuit breaker);
- facts are made from masked text (secrets never reach them), so entries hold none;
- with a key (``KWDOCS_CACHE_KEY``, or the file ``cache_key_file`` names), an entry's header
  is signed (HMAC-SHA256): entries made by anyone without the key are ignored, counted in
  one line per build, and made again.  The key itself is held in memory only.

fsspec is imported only when a cache is configured.
"""
from __future__ import annotations

import errno
import hashlib
import hmac
import os
import queue
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

import orjson

from kwdocs.config import Config, ConfigError
from kwdocs.store.writer import write_all

FORMAT = 2              # 2: pages entries hold their pages' bytes, not JSON
TIMEOUT = 10.0          # seconds a batch of requests may take before the store counts as down
FAN_OUT = 2             # entries live under <root>/v1/<key[:2]>/<key>
RENEW_NS = 3600 * 10**9  # a folder entry used that is older than this gets a new time (its use, for eviction)
KEY_VARIABLE = "KWDOCS_CACHE_KEY"
SIGNATURE = "hmac_sha256"   # the header field holding an entry's signature
# a failed write that says the store as a whole cannot take entries (not only this one)
STORE_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EROFS}
T = TypeVar("T")


class StoreDown(Exception):
    """The store failed or did not answer in time."""


class Unsigned(ValueError):
    """An entry without a signature by this build's key (counted, not named one by one)."""


def entry_key(kind: str, *inputs: str) -> str:
    """The key of an entry of ``kind`` made from ``inputs`` (hashes, a path, keys; never a
    time or an absolute path)."""
    return hashlib.sha256(orjson.dumps(["kwdocs", kind, FORMAT, *inputs])).hexdigest()


def encode_entry(claims: dict[str, str], value: Any, key: bytes | None = None) -> bytes:
    """An entry: a header line naming what it holds (``claims``: its key and inputs) and how to
    check it, then ``value`` as JSON; signed with ``key`` when given."""
    return encode_body(claims, orjson.dumps(value, option=orjson.OPT_SORT_KEYS), key)


def encode_body(claims: dict[str, str], body: bytes, key: bytes | None = None) -> bytes:
    """An entry holding ``body``, under a header of ``claims`` and the body's size and hash,
    and with ``key`` the header's signature (which the body's hash ties the body to)."""
    header: dict[str, Any] = {**claims, "format": FORMAT, "size": len(body),
                              "body_sha256": hashlib.sha256(body).hexdigest()}
    if key is not None:
        header[SIGNATURE] = _signature(key, header)
    return orjson.dumps(header, option=orjson.OPT_SORT_KEYS) + b"\n" + body


def _signature(key: bytes, header: dict[str, Any]) -> str:
    """The HMAC-SHA256 of a header without its signature, in one canonical form."""
    signed = {name: value for name, value in header.items() if name != SIGNATURE}
    return hmac.new(key, orjson.dumps(signed, option=orjson.OPT_SORT_KEYS), hashlib.sha256).hexdigest()


def decode_entry(data: bytes, claims: dict[str, str], key: bytes | None = None) -> Any:
    """The value an entry holds, once its header claims exactly ``claims``, is signed with
    ``key`` (if given) and its body is whole and what the header says; ValueError says what is
    wrong (``Unsigned`` for a signature that is missing or not by ``key``)."""
    body = _checked(data, claims, key)
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as error:
        raise ValueError("its content is not JSON") from error


def encode_parts(claims: dict[str, str], parts: dict[str, bytes], key: bytes | None = None) -> bytes:
    """An entry of named byte strings (pages, as written): its body is a line naming each part
    and its size, then the parts one after another, all under the body's hash; no JSON to parse
    and no text to encode again on the way to the page."""
    index = orjson.dumps([[name, len(data)] for name, data in parts.items()])
    return encode_body(claims, b"".join([index, b"\n", *parts.values()]), key)


def decode_parts(data: bytes, claims: dict[str, str], key: bytes | None = None) -> dict[str, bytes]:
    """The parts an ``encode_parts`` entry holds, checked as ``decode_entry`` checks an entry, and
    their sizes against its content; ValueError says what is wrong."""
    index, newline, body = _checked(data, claims, key).partition(b"\n")
    try:
        parts = orjson.loads(index) if newline else None
    except orjson.JSONDecodeError:
        parts = None
    if not isinstance(parts, list) or not all(
            isinstance(part, list) and len(part) == 2 and isinstance(part[0], str)
            and isinstance(part[1], int) and part[1] >= 0 for part in parts) \
            or sum(size for _, size in parts) != len(body):
        raise ValueError("its parts do not add up to its content")
    found: dict[str, bytes] = {}
    start = 0
    for name, size in parts:
        found[name] = body[start:start + size]
        start += size
    if len(found) != len(parts):
        raise ValueError("it names a part twice")
    return found


def _checked(data: bytes, claims: dict[str, str], key: bytes | None) -> bytes:
    """An entry's body, once its header claims exactly ``claims``, is signed with ``key`` (if
    given) and its body is whole and what the header says; ValueError says what is wrong."""
    head, newline, body = data.partition(b"\n")
    if not newline:
        raise ValueError("no header")
    try:
        header = orjson.loads(head)
    except orjson.JSONDecodeError as error:
        raise ValueError("its header is not JSON") from error
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError("not an entry of this format")
    if key is not None:     # before anything else is believed: whoever forged it chose the rest
        signature = header.get(SIGNATURE)
        if not isinstance(signature, str) or not hmac.compare_digest(signature, _signature(key, header)):
            raise Unsigned("not signed with this build's key")
    if any(header.get(name) != value for name, value in claims.items()):
        raise ValueError("it claims other inputs than its key's")
    if header.get("size") != len(body):
        raise ValueError(f"{len(body)} bytes instead of {header.get('size')} (truncated?)")
    if header.get("body_sha256") != hashlib.sha256(body).hexdigest():
        raise ValueError("its content does not match its hash")
    return body


_said: list[str] = []
_unsigned = [0]


def warn(line: str) -> None:
    """Keep a line for the build's summary to print (doit holds a task's own output back)."""
    _said.append(f"kwdocs: {line}")


def ignored(error: ValueError, line: str) -> None:
    """An entry that failed its checks: ``line`` kept for the summary, or, not signed with the
    key, only counted (a cache written without the key would say so once per entry)."""
    if isinstance(error, Unsigned):
        _unsigned[0] += 1
    else:
        warn(line)


def said() -> list[str]:
    """The lines kept since the last call."""
    lines = _said[:]
    _said.clear()
    return lines


def cache_report() -> dict[str, Any]:
    """A task's values about the cache since the last call: the lines kept (``cache_said``)
    and how many entries were not signed with the key (``cache_unsigned``)."""
    unsigned, _unsigned[0] = _unsigned[0], 0
    return {"cache_said": said(), "cache_unsigned": unsigned}


def unsigned_line(url: str, count: int) -> str:
    """The one line a build says about the entries it ignored for their signature."""
    return (f"kwdocs: cache {url}: {count:,} entr{'y' if count == 1 else 'ies'} not signed with this "
            f"build's key ignored and made again")


class _Requests:
    """The store's requests, run one after another on a daemon thread of their own, each given
    ``timeout`` seconds: a hung store never holds the build (nor its exit: the thread is left
    behind), and no thread is started per request."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def run(self, call: Callable[[], T], timeout: float) -> T:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._serve, daemon=True, name="kwdocs-cache")
            self._thread.start()
        done = threading.Event()
        result: list[Any] = []
        self._jobs.put((call, result, done))
        if not done.wait(timeout):
            raise StoreDown(f"no answer within {timeout:g} s")
        ok, value = result[0]
        if not ok:
            raise StoreDown(f"{type(value).__name__}: {value}") from value
        return value

    def _serve(self) -> None:
        while True:
            call, result, done = self._jobs.get()
            try:
                result.append((True, call()))
            except BaseException as error:  # noqa: BLE001  (handed to the caller's thread, which raises it)
                result.append((False, error))
            done.set()


class SharedCache:
    """One process's handle on the store at ``url``."""

    def __init__(self, url: str, writable: bool, max_bytes: int, key: bytes | None = None) -> None:
        self.url = url
        self.key = key      # entries are signed with it, and only entries signed with it are used
        self.writable = writable
        self.max_bytes = max_bytes
        self.down = url in _found_down      # a replaced worker's successor does not ask again
        self.pid = os.getpid()
        self._fs: Any = None
        self._root = ""
        self._requests = _Requests()

    def _filesystem(self) -> tuple[Any, str]:
        if self._fs is None:
            import fsspec  # here: builds without a cache never import it
            self._fs, self._root = fsspec.core.url_to_fs(self.url, **storage_options(self.url))
            self._root = self._root.rstrip("/")
        return self._fs, self._root

    @property
    def local(self) -> bool:
        return "file" in _protocols(self._filesystem()[0])

    def path(self, key: str) -> str:
        return f"{self._filesystem()[1]}/v{FORMAT}/{key[:FAN_OUT]}/{key}"

    def _trip(self, error: Exception) -> None:
        if not self.down:
            warn(f"cache {self.url}: {error}; building without it")
        self.down = True

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        """The entries found under ``keys`` (none when the store is down), fetched in one batch
        (concurrently on an object store)."""
        if self.down or not keys:
            return {}
        try:
            fs, _ = self._filesystem()
            paths = {self.path(key): key for key in keys}
            read = _read_local if self.local else lambda found: fs.cat(found, on_error="return")
            found = self._requests.run(lambda: read(list(paths)), TIMEOUT)
        except Exception as error:  # noqa: BLE001  (a bad URL, missing credentials, a closed port, a timeout)
            self._trip(error)
            return {}
        entries: dict[str, bytes] = {}
        for path, value in found.items():
            key = paths.get(path) or paths.get(fs._strip_protocol(path))
            if isinstance(value, bytes):
                if key is not None:
                    entries[key] = value
            elif isinstance(value, FileNotFoundError):
                continue
            elif isinstance(value, OSError) and not isinstance(value, (ConnectionError, TimeoutError)):
                # one entry that cannot be read (a folder in its place, no permission): that
                # entry is a miss, the store's other entries are still good
                warn(f"cache entry {(key or path)[:16]} cannot be read ({type(value).__name__}); made again")
            else:
                self._trip(value)
                return {}
        return entries

    def put_many(self, entries: dict[str, bytes]) -> int:
        """Publish entries whole; the number stored (0 when read-only or down)."""
        if not self.writable or self.down or not entries:
            return 0
        fs, _ = self._filesystem()
        try:
            if self.local:
                return self._requests.run(lambda: self._put_local(entries), TIMEOUT)
            # one PUT of a whole object is atomic
            self._requests.run(lambda: fs.pipe({self.path(key): data for key, data in entries.items()}), TIMEOUT)
        except Exception as error:  # noqa: BLE001  (a store that fails never fails the build)
            self._trip(error)
            return 0
        return len(entries)

    def _put_local(self, entries: dict[str, bytes]) -> int:
        """Written under a name of this process's own, then moved into place: a reader sees a
        whole entry or none, and two builds writing the same entry write the same bytes.  A
        write that fails leaves no temporary file; one entry that cannot be replaced (a folder
        in its place) is skipped, a full or read-only store raises.  The number stored."""
        stored = 0
        for key, data in entries.items():
            final = self.path(key)
            temporary = f"{final}.{uuid.uuid4().hex}.tmp"
            try:
                os.makedirs(os.path.dirname(final), exist_ok=True)
                _write_new(temporary, data)
                try:
                    os.replace(temporary, final)
                except OSError:
                    _remove(temporary)
                    raise
            except OSError as error:
                if error.errno in STORE_FULL:
                    raise
                warn(f"cache entry {key[:16]} cannot be stored ({type(error).__name__}: {error.strerror})")
                continue
            stored += 1
        return stored

    def evict(self) -> int:
        """A folder cache over ``max_bytes`` loses its least recently used entries (by mtime, which
        a hit renews) until it is under 90% of it; the number removed.  Object stores: their own
        lifecycle rules."""
        if self.down or not self.writable or self.max_bytes <= 0 or not self.local:
            return 0
        root = os.path.join(self._filesystem()[1], f"v{FORMAT}")
        entries = []
        total = 0
        for folder in _scandir(root):
            for entry in _scandir(folder.path):
                try:
                    info = entry.stat()
                except OSError:
                    continue
                total += info.st_size
                entries.append((max(info.st_mtime_ns, info.st_atime_ns), info.st_size, entry.path))
        if total <= self.max_bytes:
            return 0
        removed = 0
        for _, size, path in sorted(entries):
            if total <= self.max_bytes * 0.9:
                break
            try:
                os.remove(path)
            except OSError:
                continue
            total -= size
            removed += 1
        return removed


def _read_local(paths: list[str]) -> dict[str, bytes | Exception]:
    """A folder's entries, read with plain system calls (fsspec's file objects cost more than the
    reading); one that is old gets a new time, which eviction counts as its last use."""
    found: dict[str, bytes | Exception] = {}
    renew = time.time_ns() - RENEW_NS
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as error:
            found[path] = error
            continue
        try:
            info = os.fstat(fd)
            chunks = []
            while chunk := os.read(fd, max(info.st_size, 1 << 16)):
                chunks.append(chunk)
            found[path] = b"".join(chunks)
            if info.st_mtime_ns < renew:
                try:
                    os.utime(fd)
                except OSError:
                    pass    # a cache another user owns: its entries are still good to read
        except OSError as error:
            found[path] = error
        finally:
            os.close(fd)
    return found


def _write_new(path: str, data: bytes) -> None:
    """``data`` as the new file ``path``, or no file at all when writing it fails (a full disk)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        write_all(fd, data)
    except BaseException:
        os.close(fd)
        _remove(path)
        raise
    os.close(fd)


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass    # never written, or already gone: nothing of ours is left either way


def _scandir(path: str) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as found:
            return [entry for entry in found if not entry.name.endswith(".tmp")]
    except OSError:
        return []


def _protocols(fs: Any) -> tuple[str, ...]:
    protocol = fs.protocol
    return (protocol,) if isinstance(protocol, str) else tuple(protocol)


def storage_options(url: str) -> dict[str, Any]:
    """Options that bound an object store's own requests: one attempt, short timeouts (the
    build is the fallback, not a retry).  Endpoints and credentials come from the store's
    usual settings (for S3: ``AWS_*`` variables, ``~/.aws``, ``FSSPEC_S3_ENDPOINT_URL``)."""
    if url.startswith(("s3://", "s3a://")):
        return {"config_kwargs": {"connect_timeout": 3, "read_timeout": TIMEOUT,
                                  "retries": {"max_attempts": 1}}}
    return {}


_caches: dict[tuple[str, bool, int, int, bytes | None], SharedCache] = {}
_found_down: set[str] = set()   # stores a worker of this build found down (``note_down``)


def known_down() -> list[str]:
    """The stores this process knows to be down: found by it, or by the workers before it (for
    the worker forked in its place, or the process that started it)."""
    pid = os.getpid()
    return sorted(_found_down.union(ident[0] for ident, cache in _caches.items() if ident[3] == pid and cache.down))


def note_down(urls: list[str]) -> None:
    """Stores a worker found down: workers forked from this process afterwards start without
    them, instead of each waiting out the store's timeout and warning again."""
    _found_down.update(urls)


def signing_key(config: Config) -> bytes | None:
    """The key entries are signed with: ``KWDOCS_CACHE_KEY`` when set, else the content of the
    file ``cache_key_file`` names (surrounding whitespace left out), else None (entries are
    not signed).  A key file that cannot be read, or an empty one, is the user's mistake."""
    value = os.environ.get(KEY_VARIABLE, "")
    if value:
        return value.encode("utf-8", "surrogateescape")
    path = config.cache_key_file
    if path is None:
        return None
    try:
        key = path.read_bytes().strip()
    except OSError as error:
        raise ConfigError([f"'cache_key_file' ({path}): {error.strerror or error}"]) from None
    if not key:
        raise ConfigError([f"'cache_key_file' ({path}): the file is empty"])
    return key


def shared_cache(config: Config) -> SharedCache | None:
    """This process's handle on the configured cache, None without one (one per process: a
    worker forked from the build does not share its parent's connections)."""
    if not config.cache:
        return None
    key = signing_key(config)
    ident = (config.cache, config.cache_mode == "readwrite", config.cache_max_mb, os.getpid(), key)
    if ident not in _caches:
        _caches[ident] = SharedCache(config.cache, ident[1], config.cache_max_mb * 1024 * 1024, key)
    return _caches[ident]


def check_store(config: Config) -> None:
    """A configured cache whose store fsspec does not know, or whose package is not installed, is
    the user's mistake (ConfigError): checked once a build has work to do, so that a no-op build
    never imports fsspec."""
    if not config.cache:
        return
    signing_key(config)     # a key file that cannot be read: said before anything is built
    # fsspec only for a build with a shared cache
    import fsspec
    protocol = fsspec.core.split_protocol(config.cache)[0] or "file"
    try:
        fsspec.get_filesystem_class(protocol)
    except (ValueError, ImportError) as error:
        raise ConfigError([f"'cache' ({config.cache}): {str(error).splitlines()[0]}"]) from error
