"""`knowgap serve` as a real server under hostile and concurrent clients (issue 35, item 12): real uvicorn servers
on free 127.0.0.1 ports, raw sockets for the bodies no well-behaved client sends (a Content-Length that lies, a
body a byte at a time, `Content-Length: abc`, 200 MB), many httpx clients labelling at once, the token, Origin.
Every wait is bounded (socket time-outs, join time-outs)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from knowgap.labels.store import LabelStore
from knowgap.web.access import Access
from knowgap.web.body import BodyLimits
from knowgap.web.server import KnowgapServer, make_server
from tests.labels.starter_runs import starter_run

pytestmark = pytest.mark.server

BODY_SECONDS = 2.0
LIMIT = 64 * 1024
TOKEN = "s3cret-token-for-tests-0123456789"
TEST_LIMITS = BodyLimits(max_bytes=LIMIT, seconds=BODY_SECONDS)


@contextmanager
def running(runs_root: Path, host: str = "127.0.0.1", token: str | None = None,
            limits: BodyLimits = TEST_LIMITS) -> Iterator[KnowgapServer]:
    """A real uvicorn server over ``runs_root`` on a free port of ``host``, served from a thread."""
    runs_root.mkdir(parents=True, exist_ok=True)
    server = make_server(runs_root, host, 0, token=token, limits=limits)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(15)
        assert not thread.is_alive(), "the server did not stop"


def connect(server: KnowgapServer, data: bytes = b"") -> socket.socket:
    sock = socket.create_connection(server.server_address, timeout=10)
    sock.sendall(data)
    return sock


def post_head(server: KnowgapServer, path: str, *headers: str) -> bytes:
    host, port = server.server_address
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}:{port}", "Content-Type: application/json", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def read_response(sock: socket.socket, timeout: float) -> tuple[int, bytes, bool]:
    """(status, everything read, whether the server closed the connection), reading for at most ``timeout`` s."""
    data = b""
    closed = False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sock.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        except ConnectionResetError:
            closed = True
            break
        if not chunk:
            closed = True
            break
        data += chunk
    status = re.match(rb"HTTP/1\.1 (\d{3})", data)
    return (int(status.group(1)) if status else 0), data, closed


def test_concurrent_label_writers_lose_none(tmp_path: Path, runs_root: Path) -> None:
    """8 clients, each its own connection and annotator, post 10 labels each at the same moment: all 80 are in
    the store with the value each sent, and labels.jsonl holds exactly 80 whole lines."""
    run = starter_run(tmp_path, runs_root)
    trials = sorted(LabelStore.open(run.run_id, runs_root).records())
    clients, per_client = 8, 10
    start = threading.Barrier(clients)
    failures: list[str] = []

    def label(n: int) -> None:
        with httpx.Client(base_url=url, timeout=30) as client:
            start.wait(timeout=30)
            for i in range(per_client):
                value = "true" if (n + i) % 2 else "false"
                got = client.post(f"/api/runs/{run.run_id}/labels", json={
                    "trial_id": trials[i], "field": "abstained", "annotator": f"ann{n}", "value": value})
                if got.status_code != 201:
                    failures.append(f"ann{n} #{i}: {got.status_code} {got.text}")

    with running(runs_root) as server:
        url = server.url
        threads = [threading.Thread(target=label, args=(n,)) for n in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads)
    assert failures == []
    store = LabelStore.open(run.run_id, runs_root)
    assert len(store.events()) == clients * per_client
    assert store.file.read_bytes().count(b"\n") == clients * per_client
    assert store.human_labels("abstained") == {
        f"ann{n}": {trials[i]: bool((n + i) % 2) for i in range(per_client)} for n in range(clients)}


def test_a_lying_or_slow_body_blocks_no_one_and_gets_408(runs_root: Path) -> None:
    """A client that declares 1,000 bytes and sends 10, one that sends its body a byte every 0.3 s and one that
    never finishes its headers: other requests are answered meanwhile, and the first two get 408 within the body
    deadline (plus a grace) with their connection closed. (The stdlib server froze every request here.)"""
    with running(runs_root) as server:
        started = time.monotonic()
        liar = connect(server, post_head(server, "/api/runs/x/labels", "Content-Length: 1000") + b'{"trial_id"')
        dripper = connect(server, post_head(server, "/api/runs/x/labels", "Content-Length: 100"))
        half_headers = connect(server, b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        stop = threading.Event()

        def drip() -> None:
            for _ in range(40):
                if stop.wait(0.3):
                    return
                try:
                    dripper.sendall(b" ")
                except OSError:
                    return

        dripping = threading.Thread(target=drip, daemon=True)
        dripping.start()
        try:
            time.sleep(0.3)
            for _ in range(5):  # answered while the three hang
                got = httpx.get(f"{server.url}/api/runs", timeout=BODY_SECONDS / 2)
                assert got.status_code == 200 and got.json() == []
            assert time.monotonic() - started < BODY_SECONDS
            for sock in (liar, dripper):
                status, data, closed = read_response(sock, BODY_SECONDS + 5)
                assert status == 408, data
                assert b"did not arrive within 2 s" in data and closed
            assert time.monotonic() - started < BODY_SECONDS + 3
        finally:
            stop.set()
            dripping.join(5)
            for sock in (liar, dripper, half_headers):
                sock.close()


def test_a_body_left_unread_closes_its_connection(runs_root: Path) -> None:
    """A request answered without reading its body (a GET declaring 1,000 bytes and sending 10, a POST to no
    route) gets its answer and then the connection closes: a client cannot keep it open by trickling the rest."""
    with running(runs_root) as server:
        host, port = server.server_address
        for head in (f"GET /api/runs HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Length: 1000\r\n\r\n",
                     f"POST /nowhere HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Length: 1000\r\n\r\n"):
            sock = connect(server, head.encode() + b"0123456789")
            status, data, closed = read_response(sock, 5)
            sock.close()
            assert status in (200, 404) and b"connection: close" in data.lower() and closed, data


def test_an_oversized_body_gets_413(runs_root: Path) -> None:
    """Declared over the limit: 413 at once, before a byte of it is read. Sent chunked with no length: 413 as soon
    as the limit is passed, the connection closed."""
    with running(runs_root) as server:
        declared = connect(server, post_head(server, "/api/runs/x/labels", f"Content-Length: {200 * 2 ** 20}"))
        status, data, closed = read_response(declared, 5)
        assert status == 413 and b"over the limit of 65536 bytes" in data and closed
        declared.close()
        chunked = connect(server, post_head(server, "/api/runs/x/labels", "Transfer-Encoding: chunked"))
        chunk = b"%x\r\n%s\r\n" % (16 * 1024, b"x" * 16 * 1024)
        try:
            for _ in range(LIMIT // (16 * 1024) + 2):
                chunked.sendall(chunk)
        except OSError:
            pass  # the server may close before the last chunk
        status, data, closed = read_response(chunked, 5)
        assert status == 413 and closed, data
        chunked.close()
        assert httpx.get(f"{server.url}/api/runs").status_code == 200


def test_a_malformed_content_length_gets_400(runs_root: Path) -> None:
    """`Content-Length: abc` (a traceback from the stdlib server), `-1` and two that disagree: 400, and the
    server goes on serving."""
    with running(runs_root) as server:
        for headers in (["Content-Length: abc"], ["Content-Length: -1"], ["Content-Length: 5", "Content-Length: 6"]):
            sock = connect(server, post_head(server, "/api/runs/x/labels", *headers) + b"{}")
            status, data, closed = read_response(sock, 5)
            sock.close()
            assert status == 400 and closed, (headers, data)
        assert httpx.get(f"{server.url}/api/runs").status_code == 200


def test_a_deeply_nested_body_is_a_400_not_a_crash(tmp_path: Path, runs_root: Path) -> None:
    run = starter_run(tmp_path, runs_root)
    with running(runs_root) as server:
        got = httpx.post(f"{server.url}/api/runs/{run.run_id}/labels", content=b"[" * 60_000,
                         headers={"Content-Type": "application/json"})
        assert got.status_code == 400 and "not valid JSON" in got.json()["error"]


def test_a_write_from_another_origin_is_refused(tmp_path: Path, runs_root: Path) -> None:
    """A label POST whose Origin is another site (or `null`) gets 403 and writes nothing; the app's own origin and
    a script sending no Origin are accepted; reads with a foreign Origin are not writes and are answered."""
    run = starter_run(tmp_path, runs_root)
    trial = sorted(LabelStore.open(run.run_id, runs_root).records())[0]
    label = {"trial_id": trial, "field": "abstained", "annotator": "ann", "value": "true"}
    with running(runs_root) as server:
        url = f"{server.url}/api/runs/{run.run_id}/labels"
        for origin in ("http://evil.example", "null", f"http://localhost.evil.example:{server.server_address[1]}",
                       "http://127.0.0.1:1"):
            refused = httpx.post(url, json=label, headers={"Origin": origin})
            assert refused.status_code == 403 and "another site" in refused.json()["error"], origin
        assert LabelStore.open(run.run_id, runs_root).events() == []
        assert httpx.post(url, json=label, headers={"Origin": server.url}).status_code == 201
        assert httpx.post(url, json=label).status_code == 201
        assert httpx.get(f"{server.url}/api/runs", headers={"Origin": "http://evil.example"}).status_code == 200
    assert len(LabelStore.open(run.run_id, runs_root).events()) == 2


def test_a_token_is_required_of_every_request_when_set(tmp_path: Path, runs_root: Path) -> None:
    """Token mode (forced by giving one; bound to 127.0.0.2, a loopback address the default Host check must also
    accept): 401 without it or with a wrong one, for pages, reads and writes; `Authorization: Bearer` works; a
    browser opening `/?token=...` gets an HttpOnly cookie and a redirect dropping the token from the address."""
    run = starter_run(tmp_path, runs_root)
    trial = sorted(LabelStore.open(run.run_id, runs_root).records())[0]
    label = {"trial_id": trial, "field": "abstained", "annotator": "ann", "value": "true"}
    with running(runs_root, host="127.0.0.2", token=TOKEN) as server:
        url = server.url
        assert url.startswith("http://127.0.0.2:")
        for path in ("/", "/static/app.js", "/api/runs", f"/api/runs/{run.run_id}"):
            assert httpx.get(url + path).status_code == 401, path
            assert httpx.get(url + path, headers={"Authorization": "Bearer wrong-token-0123456789"}).status_code == 401
        refused = httpx.post(f"{url}/api/runs/{run.run_id}/labels", json=label)
        assert refused.status_code == 401 and "needs its token" in refused.json()["error"]
        assert httpx.get(f"{url}/?token=wrong").status_code == 401
        assert LabelStore.open(run.run_id, runs_root).events() == []
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        assert [r["run_id"] for r in httpx.get(f"{url}/api/runs", headers=bearer).json()] == [run.run_id]
        assert httpx.post(f"{url}/api/runs/{run.run_id}/labels", json=label, headers=bearer).status_code == 201
        with httpx.Client(base_url=url) as browser:
            opened = browser.get("/", params={"token": TOKEN})
            assert opened.status_code == 303 and opened.headers["location"] == "/"
            cookie = opened.headers["set-cookie"]
            assert "HttpOnly" in cookie and "SameSite=lax" in cookie
            page = browser.get("/")
            assert page.status_code == 200 and '<script src="/static/app.js"></script>' in page.text
            assert browser.post(f"/api/runs/{run.run_id}/labels", json=label,
                                headers={"Origin": url}).status_code == 201
    assert len(LabelStore.open(run.run_id, runs_root).events()) == 2


def test_only_loopback_goes_without_a_token() -> None:
    """Bound to any address but loopback, the server generates a token when none is given; on loopback it asks
    none unless given one. A short token is refused. (No address outside 127.0.0.0/8 is bound here.)"""
    for host in ("0.0.0.0", "::", "192.168.1.20", "10.0.0.5", "myhost.example"):
        access = Access.for_host(host)
        assert access.token_generated and access.token and len(access.token) >= 40, host
        assert access.allowed_hosts is None
        assert not access.token_ok(None, None) and access.token_ok(f"Bearer {access.token}", None)
    assert Access.for_host("0.0.0.0").token != Access.for_host("0.0.0.0").token
    for host in ("127.0.0.1", "127.0.0.2", "localhost", "::1"):
        access = Access.for_host(host)
        assert access.token is None and access.token_ok(None, None), host
        assert access.host_ok(f"{host}:8765" if ":" not in host else f"[{host}]:8765")
        assert not access.host_ok("evil.example:8765")
    assert Access.for_host("0.0.0.0", TOKEN).token == TOKEN
    with pytest.raises(Exception, match="at least 16 printable characters"):
        Access.for_host("0.0.0.0", "short")


def test_the_cli_takes_the_token_from_the_environment(tmp_path: Path, runs_root: Path) -> None:
    """`knowgap serve` with KNOWGAP_SERVE_TOKEN: says a token is required without printing it, and asks for it."""
    runs_root.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "knowgap", "serve", "--runs-dir", str(runs_root), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "KNOWGAP_SERVE_TOKEN": TOKEN})
    try:
        assert proc.stdout is not None
        first, second = proc.stdout.readline(), proc.stdout.readline()
        url = first.split()[4].rstrip("/")
        assert "token required" in second and TOKEN not in first + second
        assert httpx.get(f"{url}/api/runs").status_code == 401
        assert httpx.get(f"{url}/api/runs", headers={"Authorization": f"Bearer {TOKEN}"}).json() == []
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def _name_of_this_machine_on_127() -> str | None:
    """This machine's host name when it resolves into 127.0.0.0/8 first (Debian's /etc/hosts does that)."""
    name = socket.gethostname()
    try:
        first = socket.getaddrinfo(name, 0, type=socket.SOCK_STREAM)[0][4][0]
    except OSError:
        return None
    return name if str(first).startswith("127.") and name.lower() != "localhost" else None


def test_a_host_name_gets_a_generated_token_printed_once(runs_root: Path) -> None:
    """`knowgap serve --host NAME` (a name, not a loopback address: it may resolve to anything) generates a token
    and prints it once; requests without it get 401, with it 200; the server's log never shows it, even after a
    browser opened `/?token=...`. The name used resolves into 127.0.0.0/8 (nothing else is bound here)."""
    name = _name_of_this_machine_on_127()
    if name is None:
        pytest.skip("this machine's host name does not resolve into 127.0.0.0/8")
    runs_root.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "knowgap", "serve", "--runs-dir", str(runs_root), "--host", name,
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first, second = proc.stdout.readline(), proc.stdout.readline()
        assert f"http://{name}:" in first
        token = re.search(r"\?token=(\S+)", second)
        assert token and "printed once" in second, second
        url = "http://127.0.0.1:" + first.split()[4].rstrip("/").rsplit(":", 1)[1]
        assert httpx.get(f"{url}/api/runs").status_code == 401
        assert httpx.get(f"{url}/api/runs", headers={"Authorization": f"Bearer {token.group(1)}"}).json() == []
        assert httpx.get(f"{url}/?token={token.group(1)}").status_code == 303
    finally:
        proc.terminate()
        _out, err = proc.communicate(timeout=15)
    assert token.group(1) not in err


def _peak_rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1))  # type: ignore[union-attr]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the peak RSS from /proc (Linux)")
def test_a_200_mb_post_costs_the_server_at_most_the_limit(runs_root: Path) -> None:
    """The real `knowgap serve` (limit 1 MiB): a 200 MB label POST, declared and then sent chunked with no length,
    raises the server's peak RSS by less than 16 MiB (the stdlib server read it whole: +473 MB)."""
    runs_root.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "knowgap", "serve", "--runs-dir", str(runs_root), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split()[4].rstrip("/")
        port = int(url.rsplit(":", 1)[1])
        assert httpx.get(f"{url}/api/runs").status_code == 200
        before = _peak_rss_kib(proc.pid)
        block = b"x" * 2 ** 20
        for framing in (f"Content-Length: {200 * 2 ** 20}", "Transfer-Encoding: chunked"):
            head = (f"POST /api/runs/x/labels HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                    f"Content-Type: application/json\r\n{framing}\r\n\r\n").encode()
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.sendall(head)
            chunk = block if framing.startswith("Content") else b"100000\r\n" + block + b"\r\n"
            sent = 0
            try:
                for _ in range(200):
                    sock.sendall(chunk)
                    sent += 1
            except OSError:
                pass
            status, data, _closed = read_response(sock, 5)
            sock.close()
            assert sent < 200 and status in (413, 0), (framing, sent, data)
        assert httpx.get(f"{url}/api/runs").status_code == 200
        grown_mib = (_peak_rss_kib(proc.pid) - before) / 1024
        assert grown_mib < 16, grown_mib
    finally:
        proc.terminate()
        proc.wait(timeout=15)
