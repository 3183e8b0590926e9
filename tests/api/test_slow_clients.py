"""Slow and idle clients are cut (app/api/slow_clients.py), others are served meanwhile: a
real server started the documented way (`ffn-lab`, i.e. `python -m app.cli`), over TCP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from tests.serverproc import ROOT, free_port, stop_server, wait_ready

TIMEOUT_S = 2
GUARD_BYTES = 40
"""A client still connected after this many one-per-second bytes was never cut."""


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, int]]:
    port = free_port()
    env = {
        **os.environ,
        "FFN_LAB_HEADER_TIMEOUT_S": str(TIMEOUT_S),
        "FFN_LAB_BODY_TIMEOUT_S": str(TIMEOUT_S),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_ready(proc, f"http://127.0.0.1:{port}/api/health")
        yield "127.0.0.1", port
    finally:
        stop_server(proc)


def _trickle(address: tuple[str, int], request: bytes, served: list[int]) -> tuple[int, bytes]:
    """Send `request` one byte a second (the pace is the recv's 1 s timeout); every few
    bytes a normal client is served meanwhile (its status appended to `served`). Returns
    (bytes sent before the server closed, what the server answered)."""
    with socket.create_connection(address) as sock:
        sock.settimeout(1.0)
        answer = b""
        for sent, byte in enumerate(request[:GUARD_BYTES]):
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                return sent, answer
            try:
                chunk = sock.recv(4096)
            except TimeoutError:
                if sent % 3 == 0:
                    served.append(
                        httpx.get(f"http://{address[0]}:{address[1]}/api/health").status_code
                    )
                continue
            except OSError:
                return sent, answer
            answer += chunk
            if not chunk or b"\r\n\r\n" in answer:
                return sent + 1, answer
        return GUARD_BYTES, answer


HEADERS = b"POST /api/forward HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"


def test_a_client_sending_its_headers_a_byte_a_second_is_cut(server: tuple[str, int]) -> None:
    served: list[int] = []
    sent, answer = _trickle(server, HEADERS * 4 + b"\r\n", served)
    assert sent < GUARD_BYTES, "the slow client was never cut"
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert served and set(served) == {200}


def test_a_client_sending_its_body_a_byte_a_second_is_cut(server: tuple[str, int]) -> None:
    body = b'{"d_model": 8, "d_ff": 16, "num_tokens": 2' + b" " * 200 + b"}"
    head = HEADERS + f"content-length: {len(body)}\r\n\r\n".encode()
    served: list[int] = []
    with socket.create_connection(server) as sock:
        sock.sendall(head)
        sock.settimeout(1.0)
        answer = b""
        sent = 0
        for byte in body[:GUARD_BYTES]:
            try:
                sock.sendall(bytes([byte]))
                sent += 1
                answer += sock.recv(4096)
                break
            except TimeoutError:
                served.append(httpx.get(f"http://{server[0]}:{server[1]}/api/health").status_code)
            except OSError:
                break
    assert sent < GUARD_BYTES, "the slow body was never cut"
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert served and set(served) == {200}


def test_an_idle_connection_is_cut(server: tuple[str, int]) -> None:
    with socket.create_connection(server) as sock:
        sock.settimeout(TIMEOUT_S * 10)  # a guard: without the cut, recv would wait forever
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 408"), answer


def test_a_normal_request_is_served(server: tuple[str, int]) -> None:
    body = {"d_model": 8, "d_ff": 16, "num_tokens": 2}
    response = httpx.post(f"http://{server[0]}:{server[1]}/api/forward", json=body)
    assert response.status_code == 200
