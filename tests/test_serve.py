"""``kwdocs serve`` as a user runs it: a subprocess, a browser, an editor saving a file, and raw requests."""
from __future__ import annotations

import queue
import re
import socket
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.browser import chromium, watch

STARTUP_SECONDS = 60


@dataclass
class Served:
    process: subprocess.Popen
    port: int
    url: str
    lines: queue.Queue
    tree: Path

    def wait_for_line(self, pattern: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=max(0.05, deadline - time.monotonic()))
            except queue.Empty:
                break
            if re.search(pattern, line):
                return line
        raise AssertionError(f"kwdocs serve printed no line matching {pattern!r} within {timeout} s")

    def printed(self) -> str:
        """What the server printed and no ``wait_for_line`` took (for a failure's message)."""
        taken = []
        while True:
            try:
                taken.append(self.lines.get_nowait())
            except queue.Empty:
                return "".join(taken)

    def stop(self) -> int:
        self.process.terminate()
        try:
            return self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise


@pytest.fixture
def served(golden_tree):
    process = subprocess.Popen([sys.executable, "-m", "kwdocs", "serve", "--src", str(golden_tree), "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
    lines: queue.Queue = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True)
    reader.start()
    server = Served(process, 0, "", lines, golden_tree)
    try:
        ready = server.wait_for_line(r"serving http://", STARTUP_SECONDS)
        server.url = re.search(r"(http://\S+/)", ready).group(1)
        server.port = int(re.search(r":(\d+)/", server.url).group(1))
        yield server
    finally:
        if process.poll() is None:
            server.stop()
        reader.join(timeout=10)       # it ends at end of output; closing under it would raise in it
        process.stdout.close()


def test_a_saved_source_updates_the_open_page_without_a_reload(served):
    assert served.url.startswith("http://127.0.0.1:")
    with chromium() as browser:
        from playwright.sync_api import TimeoutError as PlaywrightTimeout  # installed: chromium() gave a browser

        page = browser.new_page(viewport={"width": 1280, "height": 800})
        watched = watch(page)
        page.goto(served.url + "geometry/shapes/circle.py_docs.html")
        page.wait_for_selector("html[data-kwdocs-live]")          # the page is polling the server
        assert "perimeter" not in page.locator("article").inner_text()
        page.evaluate("window.scrollTo(0, 700)")

        circle = served.tree / "geometry" / "shapes" / "circle.py"
        started = time.monotonic()
        circle.write_text(circle.read_text() + "\n    def perimeter(self) -> float:\n"
                                               "        return 2 * math.pi * self.radius\n")
        try:
            page.wait_for_function("() => document.querySelector('article').innerText.includes('perimeter')",
                                   timeout=15000)
        except PlaywrightTimeout:
            raise AssertionError("the page never showed the saved method; kwdocs serve printed:\n"
                                 + served.printed()) from None
        elapsed = time.monotonic() - started
        print(f"edit to updated page: {elapsed:.2f} s")
        assert elapsed < 5
        assert abs(page.evaluate("window.scrollY") - 700) < 50     # the reader stays where they were
        served.wait_for_line(r"site updated", 5)

        page.fill("#kwdocs-search", "perimeter")                   # the search index followed
        hit = page.locator("#kwdocs-results a.result").first
        hit.wait_for()
        assert "Circle.perimeter" in hit.inner_text()
        assert watched.clean(), watched
        page.close()
    assert served.stop() == 0                                      # SIGTERM stops it cleanly


def test_a_save_rebuilds_that_files_pages_as_watch_does_and_editor_temp_files_are_ignored(served):
    """serve runs on watch's loop: the status line names the one saved file, editor temp files
    written in the same burst change nothing, other files' pages are not rewritten, and the
    version the open pages poll moves on, so they reload."""
    out = served.tree / "kwdocs-out"
    others = {page: page.stat().st_mtime_ns for page in out.rglob("*_docs.md") if "circle.py" not in page.name}
    assert others
    version = int(request(served.port, "/__kwdocs_version")[2])
    shapes = served.tree / "geometry" / "shapes"
    (shapes / ".circle.py.swp").write_bytes(b"vim swap")
    (shapes / "circle.py~").write_text("backup")
    circle = shapes / "circle.py"
    circle.write_text(circle.read_text() + "\n    def perimeter(self) -> float:\n"
                                           "        return 2 * math.pi * self.radius\n")
    line = served.wait_for_line(r"pages written", 15)
    assert re.search(r"kwdocs: \S+ geometry/shapes/circle\.py changed: \d+ pages written, 0 removed", line), line
    served.wait_for_line(r"site updated", 5)
    assert int(request(served.port, "/__kwdocs_version")[2]) > version
    status, _, body = request(served.port, "/geometry/shapes/circle.py_docs.html")
    assert status == 200 and b"perimeter" in body
    assert {page: page.stat().st_mtime_ns for page in others} == others
    assert not list(out.rglob("*circle.py~*")) and not list(out.rglob("*.swp*"))


def request(port: int, target: str, host: str | None = None, method: str = "GET") -> tuple[int, dict, bytes]:
    """One raw HTTP request, exactly as written (no client-side normalisation of ``..``)."""
    host = host if host is not None else f"127.0.0.1:{port}"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(f"{method} {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := connection.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in header_lines)}
    return int(status_line.split()[1]), headers, body


ESCAPES = ["/../pyproject.toml", "/%2e%2e/%2e%2e/pyproject.toml", "/%2E%2E%2F%2E%2E%2Fpyproject.toml",
           "/..%2f..%2f..%2f..%2f..%2f..%2fetc%2fpasswd", "//etc/passwd", "/etc/passwd", "/./../../etc/passwd",
           "/..\\..\\etc\\passwd", "/../.kwdocs/html.json", "/%2e%2e/.kwdocs/lock", "/leak/pyproject.toml",
           "/%00", "/index.html%00.txt", "/../../../../../../../../etc/passwd"]


def test_the_server_serves_the_site_folder_and_nothing_else(served):
    site = served.tree / "kwdocs-out" / "site"
    (site / "leak").symlink_to(served.tree)                        # a link out of the site is not followed
    absolute = f"http://127.0.0.1:{served.port}/../../../etc/passwd"
    for target in ESCAPES + [absolute]:
        status, _, body = request(served.port, target)
        assert status in (400, 404), (target, status)
        assert b"root:" not in body and b"[tool.kwdocs]" not in body, target

    for listing in ("/_kwdocs/", "/leak/", "/geometry/shapes/nothing/"):
        status, _, body = request(served.port, listing)
        assert status == 404 and b"Directory listing" not in body, listing

    status, headers, body = request(served.port, "/geometry/shapes/circle.py_docs.html")
    assert status == 200 and b"Documentation: <code>geometry/shapes/circle.py</code>" in body
    assert "script-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    assert request(served.port, "/", host=f"localhost:{served.port}")[0] == 200
    assert request(served.port, "/", host="attacker.example")[0] == 403        # DNS rebinding
    assert request(served.port, "/index.html", method="POST")[0] == 501
    assert request(served.port, "/index.html")[0] == 200                        # still serving after all that
    status, headers, body = request(served.port, "/geometry/shapes/circle.py")  # an "Original File" link
    assert status == 200 and headers["content-type"].startswith("text/plain") and b"class Circle" in body


def test_the_server_listens_on_loopback_only(served):
    table = Path("/proc/net/tcp")
    if not table.exists():
        pytest.skip("no /proc/net/tcp on this system")
    listening = [line.split()[1] for line in table.read_text().splitlines()[1:]
                 if line.split()[3] == "0A" and int(line.split()[1].split(":")[1], 16) == served.port]
    assert listening == ["0100007F:%04X" % served.port]                  # 127.0.0.1, nothing else


def test_a_busy_port_is_a_clear_error(golden_tree, capsys):
    from kwdocs.config import load_config
    from kwdocs.webserver import serve

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        assert serve(load_config(golden_tree), port=taken.getsockname()[1]) == 1
    assert "cannot listen on 127.0.0.1:" in capsys.readouterr().err


def threads_of(pid: int) -> int:
    status = Path(f"/proc/{pid}/status")
    if not status.exists():
        pytest.skip("no /proc on this system")
    return int(re.search(r"^Threads:\s+(\d+)", status.read_text(), re.M).group(1))


def drained(lines: queue.Queue, seconds: float) -> list[str]:
    """What the server printed within ``seconds``."""
    found, deadline = [], time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            found.append(lines.get(timeout=0.1))
        except queue.Empty:
            pass
    return found


IDLE_CONNECTIONS = 60


def test_idle_connections_hold_no_thread_each_and_disconnects_are_quiet(served):
    """Idle clients once held one thread each for ever; a client leaving mid-answer printed a
    BrokenPipeError traceback."""
    site = served.tree / "kwdocs-out" / "site"
    (site / "big.txt").write_bytes(b"x" * (8 << 20))
    before = threads_of(served.process.pid)
    idle = [socket.create_connection(("127.0.0.1", served.port), timeout=10) for _ in range(IDLE_CONNECTIONS)]
    try:
        time.sleep(1.0)
        assert threads_of(served.process.pid) <= before + 2      # not one per connection
    finally:
        for connection in idle:
            connection.close()
    for _ in range(5):      # ask for a large file and leave at once, resetting the connection
        connection = socket.create_connection(("127.0.0.1", served.port), timeout=10)
        connection.sendall(f"GET /big.txt HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n\r\n".encode())
        connection.recv(1024)
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        connection.close()
    printed = drained(served.lines, 2.0)
    assert not [line for line in printed if "Traceback" in line or "Error" in line], printed
    assert request(served.port, "/index.html")[0] == 200                        # still serving


def test_a_silent_connection_is_dropped_and_a_crowd_of_them_is_bounded(tmp_path):
    from kwdocs.webserver import LiveVersion, make_server

    (tmp_path / "index.html").write_text("<p>hello</p>\n")
    server = make_server(tmp_path, "127.0.0.1", 0, LiveVersion(), timeout=0.5)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    baseline = threading.active_count()
    try:
        crowd = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(IDLE_CONNECTIONS)]
        started = time.monotonic()
        time.sleep(0.2)
        assert threading.active_count() == baseline
        for connection in crowd:        # every one is closed by the server, none waits for ever
            assert connection.recv(1) == b""
            connection.close()
        assert time.monotonic() - started < 5.0
        assert request(port, "/index.html")[0] == 200
    finally:
        server.shutdown()
        server.server_close()


SLOW_CLIENTS = 32


def test_slow_clients_trickling_their_headers_never_lock_out_a_quick_request(tmp_path):
    """32 clients sending a byte every 3 s held every thread and every waiting place: the
    server closed any other connection at once (each byte reset the silence timeout)."""
    from kwdocs.webserver import LiveVersion, make_server

    (tmp_path / "index.html").write_text("<p>hello</p>\n")
    server = make_server(tmp_path, "127.0.0.1", 0, LiveVersion())
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    slow = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(SLOW_CLIENTS)]
    try:
        for step in range(3):       # a byte from each at 0 s, 3 s and 6 s: always short of whole headers
            for connection in slow:
                connection.sendall(b"GET / HTTP/1.1\r\n"[step:step + 1])
            time.sleep(0.5)
            started = time.monotonic()
            assert request(port, "/index.html")[0] == 200
            assert time.monotonic() - started < 2.0
            time.sleep(2.5)
    finally:
        for connection in slow:
            connection.close()
        server.shutdown()
        server.server_close()


def test_a_client_that_never_finishes_its_headers_is_closed_at_the_deadline(tmp_path, monkeypatch):
    from kwdocs import webserver

    monkeypatch.setattr(webserver, "HEADER_DEADLINE", 1.0)
    (tmp_path / "index.html").write_text("<p>hello</p>\n")
    server = webserver.make_server(tmp_path, "127.0.0.1", 0, webserver.LiveVersion(), timeout=0.5)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
            started = time.monotonic()
            closed = False
            for byte in b"GET /index.html HTTP/1.1\r\nHost: x\r\n" * 4:      # never the blank line
                try:
                    connection.sendall(bytes([byte]))       # faster than the silence timeout
                except OSError:     # reset: the server closed it
                    closed = True
                    break
                time.sleep(0.2)
                if time.monotonic() - started > 5.0:
                    break
            if not closed:
                connection.settimeout(2.0)
                try:
                    closed = connection.recv(1) == b""
                except OSError:
                    closed = True
            assert closed and time.monotonic() - started < 3.0, "kept open past the headers' deadline"
        assert request(port, "/index.html")[0] == 200
    finally:
        server.shutdown()
        server.server_close()
