"""The log's HTTP server under clients that misbehave: connections bounded in number and in idle time,
a refused POST's body never read as a request, a Content-Length only of ASCII digits, a client that
waits for 100 Continue answered its refusal instead (open, and with an add key)."""

from __future__ import annotations

import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.transparency.note import Signer
from service.transparency.server import LogServer
from service.transparency.stores import FolderStore

KEY = "k" * 32


@pytest.fixture(params=[None, KEY], ids=["open", "keyed"])
def log(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[LogServer]:
    signer = Signer("maubinh.test/log", bytes(range(32)))
    server = LogServer(
        ("127.0.0.1", 0), FolderStore(tmp_path / "log"), signer, "maubinh.test/log", 0.2, request.param,
        most_connections=3, idle_seconds=0.5,
    )  # fmt: skip
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    serving.start()
    yield server
    server.stop()
    serving.join(5)


def address(server: LogServer) -> tuple[str, int]:
    host, port = server.server_address[:2]
    return str(host), int(port)


def healthy(server: LogServer) -> bool:
    host, port = address(server)
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/healthz", timeout=2) as answer:
            return answer.status == 200
    except OSError:
        return False


def slots_given_back(server: LogServer) -> None:
    deadline = time.monotonic() + 3
    while not healthy(server):
        assert time.monotonic() < deadline, "the slots were not given back"
        time.sleep(0.05)


def exchange(server: LogServer, raw: bytes) -> bytes:
    """What the log answers ``raw`` on one connection, until it closes it."""
    with socket.create_connection(address(server), timeout=5) as connection:
        connection.sendall(raw)
        answered = b""
        while chunk := connection.recv(65536):
            answered += chunk
        return answered


def test_connections_past_the_most_are_closed_unanswered_and_idle_ones_time_out(log: LogServer) -> None:
    idle = [socket.create_connection(address(log), timeout=5) for _ in range(3)]  # every slot held, silent
    try:
        time.sleep(0.1)
        assert not healthy(log)  # one more is closed, no thread made for it
        started = time.monotonic()
        assert all(held.recv(1) == b"" for held in idle)  # the log closes each after its idle time
        assert time.monotonic() - started < 3
    finally:
        for held in idle:
            held.close()
    slots_given_back(log)


def test_connections_sending_their_request_a_byte_at_a_time_are_closed_once_it_is_late(log: LogServer) -> None:
    """Each byte within the idle time keeps a connection past it, so the whole request head must come in
    that time: else readers trickling bytes would hold every connection of the public log for good."""
    trickling = [socket.create_connection(address(log), timeout=5) for _ in range(3)]
    try:
        started = time.monotonic()
        for held in trickling:
            held.sendall(b"GET /checkpoint HTTP/1.1\r\n")
        closed: set[int] = set()
        while len(closed) < 3 and time.monotonic() - started < 5:
            for k, held in enumerate(trickling):
                if k not in closed:
                    try:
                        held.sendall(b"X")  # a byte every 0.1 s: never idle for the 0.5 s the log waits
                    except OSError:
                        closed.add(k)
            time.sleep(0.1)
        assert len(closed) == 3 and time.monotonic() - started < 3  # closed once their heads were late
    finally:
        for held in trickling:
            held.close()
    slots_given_back(log)


def test_a_refused_posts_body_is_never_read_as_a_request(log: LogServer) -> None:
    smuggled = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    for path, headers in (("/add/", f"Content-Length: {len(smuggled)}\r\n"), ("/add", "Content-Length: \u00b2\r\n")):
        request = f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n{headers}\r\n"
        request = request.encode("latin-1") + smuggled
        answered = exchange(log, request)
        assert answered.count(b"HTTP/1.1 ") == 1, answered  # one answer, then the connection closed
        assert b"Connection: close" in answered
        assert answered.startswith(b"HTTP/1.1 404" if path == "/add/" else b"HTTP/1.1 411")


def test_a_client_waiting_to_send_its_body_is_answered_the_refusal_first(log: LogServer) -> None:
    def head(headers: str) -> bytes:
        return f"POST /add HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n{headers}\r\n".encode()

    keyed = f"Authorization: Bearer {KEY}\r\n"
    refused = {"Content-Length: 10\r\n": 401} if log.add_key else {}
    refused[keyed + f"Content-Length: {10**9}\r\n"] = 413
    refused[keyed + "Content-Length: x\r\n"] = 411
    for headers, status in refused.items():
        answered = exchange(log, head(headers))  # no body sent: the log closes the connection once it has said why
        assert answered.startswith(f"HTTP/1.1 {status}".encode()), answered
        assert b"100 Continue" not in answered
    with socket.create_connection(address(log), timeout=5) as connection:
        connection.sendall(head(keyed + "Content-Length: 3\r\n"))
        assert connection.recv(65536).startswith(b"HTTP/1.1 100 Continue\r\n")
        connection.sendall(b"abc")
        assert connection.recv(65536).startswith(b"HTTP/1.1 400")  # read, and not an entry bundle


def test_with_an_add_port_readers_holding_every_connection_keep_no_ruling_out(tmp_path: Path) -> None:
    """Readers' connections (anyone's, the log being public) fill the read port; the service's additions
    are taken on a port of their own, and only there, so that they are never the ones closed unanswered."""
    from service.transparency.tiles import bundle

    signer = Signer("maubinh.test/log", bytes(range(32)))
    server = LogServer(
        ("127.0.0.1", 0), FolderStore(tmp_path / "log"), signer, "maubinh.test/log", 0.2, KEY,
        most_connections=2, idle_seconds=5, add_address=("127.0.0.1", 0),
    )  # fmt: skip
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    serving.start()
    assert server.adding is not None
    adds = ("127.0.0.1", int(server.adding.server_address[1]))
    body = bundle([b"a ruling", b"another"])
    post = f"POST /add HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\nContent-Length: {len(body)}\r\n\r\n"
    try:
        answered = exchange(server, post.encode() + body)  # the read port takes no addition
        assert answered.startswith(b"HTTP/1.1 404") and b"add port" in answered
        for path in ("/checkpoint", "/healthz"):  # nor the add port a read: refused, and the connection closed
            with socket.create_connection(adds, timeout=5) as connection:
                connection.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\nGET {path} HTTP/1.1\r\n\r\n".encode())
                answered = b""
                while chunk := connection.recv(65536):
                    answered += chunk
            assert answered.startswith(b"HTTP/1.1 404") and answered.count(b"HTTP/1.1 ") == 1
        held = [socket.create_connection(address(server), timeout=5) for _ in range(2)]  # every read slot, silent
        try:
            time.sleep(0.1)
            assert not healthy(server)
            with socket.create_connection(adds, timeout=5) as connection:
                connection.sendall(post.encode() + body)
                connection.shutdown(socket.SHUT_WR)  # no more requests: the log closes once it has answered
                answered = b""
                while chunk := connection.recv(65536):
                    answered += chunk
            assert answered.startswith(b"HTTP/1.1 200") and b'"first": 0, "count": 2' in answered
        finally:
            for connection in held:
                connection.close()
    finally:
        server.stop()
        serving.join(5)
    assert not serving.is_alive() and server._adding_thread is not None and not server._adding_thread.is_alive()


def test_log_serve_names_the_ports_it_cannot_listen_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tlog_server import new_key

    from service.cli import main

    monkeypatch.setenv("MAUBINH_LOG_KEY_FILE", str(new_key(tmp_path)))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = str(taken.getsockname()[1])
        argv = ["log", "serve", "--dir", str(tmp_path / "log"), "--port", "0", "--add-port", busy]
        assert main(argv) == 2  # a usage error, said in one line: no traceback


@pytest.mark.parametrize(
    "head",
    [
        "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: {n}\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
        "POST /add HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\nContent-Length: {n}\r\n"
        "Transfer-Encoding: chunked\r\n\r\n",
        "POST /add HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\nContent-Length: {n}\r\n"
        "Content-Length: 1\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nX\xff: y\r\nConnection: close\r\nContent-Length: {n}\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n",
    ],
    ids=[
        "a GET with a body",
        "chunked",
        "chunked and a length",
        "two lengths",
        "a header not ASCII",
        "chunked, waiting",
    ],
)
def test_a_request_framed_two_ways_is_refused_and_nothing_after_it_read(log: LogServer, head: str) -> None:
    """What follows a head whose framing another reader (a proxy in front) could take otherwise is never
    read as a request of its own: one answer, 400, and the connection closed."""
    smuggled = b"GET /checkpoint HTTP/1.1\r\nHost: x\r\n\r\n"
    raw = head.format(n=len(smuggled), key=KEY).encode("latin-1") + smuggled
    answered = exchange(log, raw)
    assert answered.startswith(b"HTTP/1.1 400") and answered.count(b"HTTP/1.1 ") == 1, answered  # no 100 first
    assert b"Connection: close" in answered and b'{"error": ' in answered


def test_a_bundle_of_more_entries_than_one_add_may_bring_is_refused(log: LogServer) -> None:
    from service.transparency.server import MAX_ADD_ENTRIES
    from service.transparency.tiles import bundle

    body = bundle([b""] * (MAX_ADD_ENTRIES + 1))  # 100 KB of empty entries
    head = f"POST /add HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\nContent-Length: {len(body)}\r\n"
    answered = exchange(log, head.encode() + b"Connection: close\r\n\r\n" + body)
    assert answered.startswith(b"HTTP/1.1 400") and f"at most {MAX_ADD_ENTRIES} entries".encode() in answered


def test_clients_gone_mid_request_are_counted_and_said_a_while_and_a_fault_whole(
    log: LogServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client resetting its connections over and over flooded the log's stderr, one line each; and any
    exception was said as a client gone, which hid a fault of the log's own (a disk full, a folder where
    a file should be): that is answered 500 and said with its traceback."""
    import logging

    from service.transparency import bounded_http

    monkeypatch.setattr(bounded_http, "SAID_EVERY", 0.3)
    logger = logging.getLogger("maubinh.log")
    heard: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = heard.append  # type: ignore[method-assign]
    logger.addHandler(handler)

    def broken(name: str) -> bytes:
        raise IsADirectoryError(21, "Is a directory", name)

    try:
        for _ in range(50):
            try:
                raise ConnectionResetError(104, "Connection reset by peer")
            except ConnectionResetError:
                log.handle_error(None, ("203.0.113.9", 4000))
        time.sleep(0.8)  # the rest of the flood, said once its while has passed, with no new one to say it
        monkeypatch.setattr(log.store, "read", broken)
        answered = exchange(log, b"GET /checkpoint HTTP/1.1\r\nHost: x\r\n\r\n")
    finally:
        logger.removeHandler(handler)
    early = [r.getMessage() for r in heard if "ended early" in r.getMessage()]
    assert early == [
        "1 request(s) ended early, the last from 203.0.113.9",
        "49 request(s) ended early, the last from 203.0.113.9",
    ]
    (fault,) = [r for r in heard if "failed" in r.getMessage()]
    assert fault.exc_info is not None and fault.exc_info[0] is IsADirectoryError
    assert (
        answered.startswith(b"HTTP/1.1 500") and answered.count(b"HTTP/1.1 ") == 1 and b"Connection: close" in answered
    )


def test_a_body_cut_short_is_no_request_and_adds_nothing(log: LogServer) -> None:
    """The connection ends before the body its Content-Length said: what came is not the bundle, and
    taking it would log entries the client never learns of (and sends again)."""
    from service.transparency.tiles import bundle

    whole, part = bundle([b"entry-one", b"entry-two-is-longer"]), bundle([b"entry-one"])
    head = f"POST /add HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\nContent-Length: {len(whole)}\r\n\r\n"
    with socket.create_connection(address(log), timeout=5) as connection:
        connection.sendall(head.encode() + part)
        connection.shutdown(socket.SHUT_WR)  # the body ends short
        assert connection.recv(65536) == b""  # no answer: the connection closed
    host, port = address(log)
    with urllib.request.urlopen(f"http://{host}:{port}/healthz", timeout=2) as answer:
        assert b'"sequenced": 0' in answer.read()


def test_one_address_holds_at_most_its_share_and_a_connection_lives_a_while(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader that keeps asking (a request every few seconds on each of its connections) or reads its
    pipelined answers slowly is no idle client: with --most-per-client it holds that many connections at
    most, and any connection is closed after the answer it writes once CONNECTION_SECONDS old."""
    from service.transparency import bounded_http

    signer = Signer("maubinh.test/log", bytes(range(32)))
    server = LogServer(
        ("127.0.0.1", 0), FolderStore(tmp_path / "log"), signer, "maubinh.test/log", 0.2, None,
        most_connections=4, idle_seconds=5, most_per_client=2,
    )  # fmt: skip
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    serving.start()
    try:
        held = [socket.create_connection(address(server), timeout=5) for _ in range(3)]
        try:
            time.sleep(0.1)
            assert held[2].recv(1) == b""  # the third from this address: closed unanswered
            assert not healthy(server)  # a fourth, too: the address has its two
        finally:
            for connection in held:
                connection.close()
        slots_given_back(server)
        monkeypatch.setattr(bounded_http, "CONNECTION_SECONDS", 0.2)
        with socket.create_connection(address(server), timeout=5) as connection:
            time.sleep(0.3)
            connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" * 3)  # pipelined
            answered = b""
            while chunk := connection.recv(65536):
                answered += chunk
        assert answered.count(b"HTTP/1.1 200") == 1  # the one being answered, then closed
    finally:
        server.stop()
        serving.join(5)


def test_log_serve_refuses_a_bound_per_client_below_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tlog_server import new_key

    from service.cli import main

    monkeypatch.setenv("MAUBINH_LOG_KEY_FILE", str(new_key(tmp_path)))
    assert main(["log", "serve", "--dir", str(tmp_path / "log"), "--port", "0", "--most-per-client", "0"]) == 2
