"""``kwdocs serve``: the HTML site over HTTP on loopback, rebuilt and reloaded as sources change.

Three small parts:

- ``make_server``: an HTTP server with a bounded pool of threads, one thread that reads every
  connection's request headers under a deadline (so slow clients hold no worker), and
  per-connection timeouts, that serves the site folder and nothing else: no
  directory listings, no path that resolves outside it
  (``..``, encoded or not, symbolic links), only Host headers that name this
  server when bound to loopback (so a web page cannot reach it through DNS
  rebinding), and the site's Content-Security-Policy as a header too.
- ``SourceFiles``: the documented source files, read-only, where the site's "Original File"
  links lead: a page links its source by a relative path out of the site, which a browser
  resolves against ``file://`` to the file itself and, over HTTP, stops at the server's root,
  so the link names ``/<the source folder, from where it and the output folder part>/<file>``.
  Only a file the site documents is served (never the output folder, its state, a dot-folder
  or a path through a symbolic link out of the tree), with its secrets masked as on its page.
- ``LiveVersion``: a counter the pages poll at ``/__kwdocs_version``; a rebuild
  that changed the site bumps it and open pages reload themselves.
- ``serve``: ``kwdocs watch``'s loop (``kwdocs.engine.on_save``), which builds the site
  after every rebuild and starts the server after the first.
"""
from __future__ import annotations

import io
import os
import queue
import selectors
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from http import HTTPStatus
from http.server import HTTPServer, SimpleHTTPRequestHandler
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from kwdocs import languages, layout, sources
from kwdocs.config import Config
from kwdocs.engine.on_save import watch
from kwdocs.extract.decode import decode, is_binary
from kwdocs.rules.ruleset import rules_for
from kwdocs.site.html import DIAGRAM_CSP, build_site, site_root

if TYPE_CHECKING:
    from kwdocs.engine.incremental import Outcome

VERSION_PATH = "/__kwdocs_version"
CONNECTION_TIMEOUT = 10.0   # seconds a connection may stay silent before the server drops it
HEADER_DEADLINE = 10.0      # seconds a client has to send a request's headers, however it trickles them
HEADER_LIMIT = 64 * 1024    # bytes of headers read at most (the request line and headers' own limits are less)
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


class LiveVersion:
    """The site's version as the pages see it; starts from the clock so a restarted server reloads pages too."""

    def __init__(self) -> None:
        self._value = time.time_ns() // 1_000_000
        self._lock = threading.Lock()

    @property
    def value(self) -> int:
        with self._lock:
            return self._value

    def bump(self) -> int:
        with self._lock:
            self._value += 1
            return self._value


class SourceFiles:
    """The source files an "Original File" link may open over HTTP, by URL path."""

    def __init__(self, config: Config) -> None:
        src, out = os.path.realpath(config.src), os.path.realpath(config.out)
        common = os.path.commonpath([src, out])
        prefix = Path(os.path.relpath(src, common)).as_posix()
        self.prefix = "" if prefix == "." else prefix + "/"
        self.src, self.out, self.site = src, out, os.path.realpath(site_root(config))
        self.config = config

    def path_of(self, url_path: str) -> str | None:
        """The real path of the documented source file ``url_path`` names, or None."""
        rel = unquote(url_path).removeprefix("/")
        if not rel.startswith(self.prefix):
            return None
        rel = rel[len(self.prefix):]
        parts = rel.split("/")
        if not rel or "\x00" in rel or "\\" in rel or any(not part or part.startswith(".") for part in parts):
            return None     # no dot-folder (``..``, ``.git``, ``.kwdocs``), no empty or escaped part
        real = os.path.realpath(os.path.join(self.src, *parts))
        if real != os.path.join(self.src, *parts) or real == self.out or real.startswith(self.out + os.sep):
            return None     # through a symbolic link, or into the output folder
        if not os.path.isfile(os.path.join(self.site, layout.html_page(layout.docs_page(rel)))):
            return None     # a file the site does not document (ignored, or not there)
        return real if os.path.isfile(real) else None

    def read(self, real: str) -> tuple[bytes, str]:
        """The file's bytes as served, and their content type: text with its secrets masked."""
        data = sources.read_source(real)
        if is_binary(data):
            return data, "application/octet-stream"
        rel = Path(os.path.relpath(real, self.src)).as_posix()
        text, _ = rules_for(self.config).mask_secrets(decode(data)[0], languages.language_of(rel).id)
        return text.encode("utf-8"), "text/plain; charset=utf-8"


class SiteHandler(SimpleHTTPRequestHandler):
    """Serves files below ``site`` only; subclassed per server by ``make_server``."""

    site: str = ""                                  # real path of the site folder
    live: LiveVersion
    sources: SourceFiles | None = None              # where "Original File" links lead, if served
    allowed_hosts: frozenset[str] | None = None     # None: any Host (bound beyond loopback on purpose)
    log_requests: bool = False
    server_version = "kwdocs"
    sys_version = ""
    extensions_map = {  # noqa: RUF012 - the base class's instance attribute, set here for every request
        **SimpleHTTPRequestHandler.extensions_map, ".html": "text/html; charset=utf-8",
        ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=self.site, **kwargs)

    def setup(self) -> None:
        super().setup()
        head = getattr(self.server, "heads", {}).pop(self.request, None)
        if head is not None:    # the headers were read before a worker took the connection
            self.rfile = io.BytesIO(head)

    def do_GET(self) -> None:
        self._answer(head=False)

    def do_HEAD(self) -> None:
        self._answer(head=True)

    def _answer(self, head: bool) -> None:
        """GET and HEAD alike: refuse unknown hosts, answer the version probe, else serve a file."""
        if self._refused():
            return
        if urlsplit(self.path).path == VERSION_PATH:
            self._send_version(head=head)
            return
        if head:
            super().do_HEAD()
        else:
            super().do_GET()

    def _refused(self) -> bool:
        host = self.headers.get("Host")
        if self.allowed_hosts is not None and host is not None and host.lower() not in self.allowed_hosts:
            self.send_error(HTTPStatus.FORBIDDEN, "Unknown host")
            return True
        return False

    def _send_version(self, head: bool) -> None:
        body = f"{self.live.value}\n".encode()
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def send_head(self):
        """Refuse anything that does not resolve to a path inside the site (links included)."""
        path = self.translate_path(self.path)
        if not os.path.exists(path) and self.sources is not None and (found := self._source()) is not None:
            return found
        if not self._inside_site(path):
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        return super().send_head()

    def _source(self) -> io.BytesIO | None:
        """A source file that an "Original File" link names, with its headers sent; None if none."""
        assert self.sources is not None
        real = self.sources.path_of(urlsplit(self.path).path)
        if real is None:
            return None
        try:
            body, content_type = self.sources.read(real)
        except OSError:
            return None
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)

    def _inside_site(self, path: str) -> bool:
        if "\x00" in path or "\x00" in unquote(self.path):
            return False
        real = os.path.realpath(path)
        return real == self.site or real.startswith(self.site + os.sep)

    def list_directory(self, path):
        """No listings: a folder without ``index.html`` is simply not found."""
        self.send_error(HTTPStatus.NOT_FOUND, "File not found")
        return None

    def end_headers(self) -> None:
        # the loosest of the site's policies: each page's own (its meta tag) holds it to its own, since
        # both apply, and a page with a diagram needs Mermaid's inline styles
        self.send_header("Content-Security-Policy", DIAGRAM_CSP + "; frame-ancestors 'none'")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, format: str, *args) -> None:
        if self.log_requests:
            super().log_message(format, *args)


class _Server(HTTPServer):
    """An HTTP server whose connections a fixed pool of ``WORKERS`` threads answers.

    One thread reads the request headers of up to ``PENDING`` connections at once, without
    blocking on any: a connection is handed to a worker only once its headers are whole, and
    is closed when they are not within ``HEADER_DEADLINE`` seconds or it stays silent for the
    handler's ``timeout``; when ``PENDING`` connections are waiting, a new one pushes out the
    oldest.  So clients trickling their headers a byte at a time hold no worker, and a crowd
    of them cannot keep a quick request waiting.  At most ``WORKERS`` whole requests wait for
    a worker; further ones are closed at once.  A client that goes away mid-answer is not an
    error worth a traceback.
    """

    WORKERS = 16
    PENDING = 64

    def __init__(self, *args, **kwargs) -> None:
        self.heads: dict[socket.socket, bytes] = {}     # each ready connection's headers, for its handler
        self._waiting: queue.Queue = queue.Queue(maxsize=self.WORKERS)
        self._arrived: queue.SimpleQueue = queue.SimpleQueue()
        # the accepting thread wakes the reader through this pair; closing it stops the reader
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._reader: threading.Thread | None = None
        super().__init__(*args, **kwargs)       # binds: a busy port raises here (and closes the server)
        for number in range(self.WORKERS):
            threading.Thread(target=self._work, name=f"kwdocs-http-{number}", daemon=True).start()
        self._reader = threading.Thread(target=self._read_heads, name="kwdocs-http-headers", daemon=True)
        self._reader.start()

    def process_request(self, request, client_address) -> None:
        self._arrived.put((request, client_address))
        try:
            self._wake_w.send(b"\0")
        except OSError:
            pass    # the reader is already woken (its wake-up socket is full)

    def _read_heads(self) -> None:
        """Read every new connection's headers as they come; hand the whole ones to the workers."""
        timeout = getattr(self.RequestHandlerClass, "timeout", None) or CONNECTION_TIMEOUT
        selector = selectors.DefaultSelector()
        selector.register(self._wake_r, selectors.EVENT_READ)
        # socket -> [address, bytes so far, when its headers are due, when it last spoke]
        pending: dict[socket.socket, list] = {}
        while True:
            now = time.monotonic()
            due = min((min(entry[2], entry[3] + timeout) for entry in pending.values()), default=now + 60)
            events = selector.select(max(0.0, due - now))
            now = time.monotonic()
            for selected, _ in events:
                connection = selected.fileobj
                if connection is self._wake_r:
                    if not self._take_arrivals(selector, pending, now):     # the server is closed
                        for left in list(pending):
                            self._drop(selector, pending, left)
                        selector.close()
                        self._wake_r.close()
                        return
                    continue
                assert isinstance(connection, socket.socket)
                entry = pending[connection]
                try:
                    data = connection.recv(4096)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:        # the client left before asking anything
                    self._drop(selector, pending, connection)
                    continue
                entry[1] += data
                entry[3] = now
                if b"\r\n\r\n" in entry[1] or b"\n\n" in entry[1] or len(entry[1]) >= HEADER_LIMIT:
                    selector.unregister(connection)
                    del pending[connection]
                    self._hand_over(connection, entry[0], bytes(entry[1]))
            for connection, entry in list(pending.items()):
                if now >= entry[2] or now >= entry[3] + timeout:   # too slow, or silent
                    self._drop(selector, pending, connection)

    def _take_arrivals(self, selector: selectors.BaseSelector, pending: dict[socket.socket, list],
                       now: float) -> bool:
        """The connections accepted since the last call, now read; False once the server is closed."""
        try:
            while True:
                if not self._wake_r.recv(4096):
                    return False
        except BlockingIOError:
            pass
        except OSError:
            return False
        while True:
            try:
                request, client_address = self._arrived.get_nowait()
            except queue.Empty:
                return True
            if len(pending) >= self.PENDING:     # the oldest makes room: a new client is never refused
                self._drop(selector, pending, min(pending, key=lambda connection: pending[connection][2]))
            request.setblocking(False)
            selector.register(request, selectors.EVENT_READ)
            pending[request] = [client_address, bytearray(), now + HEADER_DEADLINE, now]

    def _drop(self, selector: selectors.BaseSelector, pending: dict[socket.socket, list],
              connection: socket.socket) -> None:
        selector.unregister(connection)
        del pending[connection]
        self.shutdown_request(connection)

    def _hand_over(self, request: socket.socket, client_address, head: bytes) -> None:
        request.setblocking(True)
        self.heads[request] = head
        try:
            self._waiting.put_nowait((request, client_address))
        except queue.Full:
            self.heads.pop(request, None)
            self.shutdown_request(request)

    def _work(self) -> None:
        while True:
            request, client_address = self._waiting.get()
            try:
                self.finish_request(request, client_address)
            except Exception:   # noqa: BLE001 - as socketserver's threads do: report, go on
                self.handle_error(request, client_address)
            finally:
                self.heads.pop(request, None)
                self.shutdown_request(request)

    def server_close(self) -> None:
        super().server_close()
        self._wake_w.close()
        if self._reader is None:    # never started (the port was busy): nothing else closes it
            self._wake_r.close()

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):   # closed, reset, idle
            super().handle_error(request, client_address)


class _Server6(_Server):
    address_family = socket.AF_INET6


def is_loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def make_server(site: Path, host: str, port: int, live: LiveVersion, log_requests: bool = False,
                timeout: float = CONNECTION_TIMEOUT, sources: SourceFiles | None = None) -> HTTPServer:
    """A server for ``site`` on ``host:port`` (port 0: any free port), not yet serving;
    ``timeout``: how long a connection may stay silent; ``sources``: the source files it serves too."""
    server_class = _Server6 if ":" in host else _Server
    handler: type[SiteHandler] = type("BoundSiteHandler", (SiteHandler,), {
        "site": os.path.realpath(site), "live": live, "log_requests": log_requests, "timeout": timeout,
        "sources": sources})
    server = server_class((host, port), handler)
    bound_port = server.server_address[1]
    if is_loopback(host):
        names = set(LOOPBACK_NAMES) | {url_host(host)}
        handler.allowed_hosts = frozenset(f"{name}:{bound_port}" for name in names) | (
            frozenset(names) if bound_port == 80 else frozenset())
    return server


# ---------------------------------------------------------------- the loop

def serve(config: Config, host: str = "127.0.0.1", port: int = 8000, log_requests: bool = False,
          reload: Callable[[], Config] | None = None) -> int:
    """Build, serve and keep the site fresh until interrupted (Ctrl-C or SIGTERM): ``kwdocs watch``'s
    loop rebuilds what a save changed, then the site is brought up to date and open pages reload."""
    # the site's file pages are made beside their Markdown pages, so every build here makes them
    config = replace(config, html=True)
    settings = reload

    def reload_with_site() -> Config:
        assert settings is not None
        return replace(settings(), html=True)
    live = LiveVersion()
    servers: list[HTTPServer] = []

    def site(config: Config, outcome: Outcome) -> None:
        if outcome.code != 0:
            print("kwdocs: the build failed; serving the last good pages", file=sys.stderr)
        started = time.monotonic()
        made = outcome.html_written or outcome.html_removed    # file pages, in the build's render step
        if (any(build_site(config).values()) or made) and servers:
            version = live.bump()
            seconds = outcome.seconds + time.monotonic() - started
            print(f"kwdocs: site updated in {seconds:.2f} s (version {version})", flush=True)

    def listen(config: Config) -> int | None:
        try:
            server = make_server(site_root(config), host, port, live, log_requests, sources=SourceFiles(config))
        except OSError as error:
            print(f"kwdocs: cannot listen on {url_host(host)}:{port}: {error.strerror or error}", file=sys.stderr)
            return 1
        servers.append(server)
        threading.Thread(target=server.serve_forever, name="kwdocs-http", daemon=True).start()
        if not is_loopback(host):
            print(f"kwdocs: warning: serving beyond this machine on {host}: anyone who can reach it "
                  "can read these pages and the sources they show", file=sys.stderr)
        print(f"kwdocs: serving http://{url_host(host)}:{server.server_address[1]}/ (Ctrl-C to stop)", flush=True)
        return None

    try:
        return watch(config, jobs=1, quiet=True, reload=reload_with_site if settings else None, after_build=site,
                     started=listen)
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
