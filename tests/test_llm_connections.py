"""The LLM client's connections (aiohttp, rwpost.llm.connections) against a raw socket
server on 127.0.0.1 that writes its answers byte by byte as scripted: chunked and close-delimited bodies, a
kept-alive connection the server closed meanwhile, a server that hangs up without answering or answers with
no HTTP, a proxy named in the environment; the request's head and body; and the SDK's retry policy."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from email.utils import formatdate

import pytest

from rwpost.llm import LLMClient, LLMRequest, load_llm_schema
from rwpost.llm.connections import MAX_RETRY_AFTER_S, retry_wait

RATIONALE = {"reasoning_logic": "The photo predates the event.", "key_points": ["1. a", "2. b", "3. c"]}
COMPLETION = json.dumps(
    {
        "choices": [{"message": {"content": json.dumps(RATIONALE)}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7},
    }
).encode()

Answer = Callable[[int], tuple[bytes, bool]]
"""The n-th request on a connection (from 0) -> the raw bytes to send, and whether to close after them."""


class RawServer:
    """One thread per connection; each request is read whole (head and Content-Length body)."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.requests = 0
        self.connections = 0
        self.bodies: list[bytes] = []
        self.on_head: Callable[[bytes], object] = lambda head: None
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{self._socket.getsockname()[1]}/v1"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._socket.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as reader:
            for n in range(1000):
                head = b""
                while not head.endswith(b"\r\n\r\n"):
                    line = reader.readline()
                    if not line:
                        return
                    head += line
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                self.bodies.append(reader.read(length))
                self.on_head(head)
                self.requests += 1
                data, close = self.answer(n)
                conn.sendall(data)
                if close:
                    return

    def close(self) -> None:
        self._socket.close()


@pytest.fixture
def serve() -> Iterator[Callable[[Answer], RawServer]]:
    servers: list[RawServer] = []

    def start(answer: Answer) -> RawServer:
        servers.append(RawServer(answer))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def _requests(n: int) -> list[LLMRequest]:
    schema = load_llm_schema("rationale")
    return [
        LLMRequest(
            key=f"rw-{i}",
            task="rationale",
            system="Extract the rationale.",
            user=f"article {i}",
            schema=schema,
            schema_name="rationale",
            prompt_version="transport-test",
        )
        for i in range(n)
    ]


def _client(server: RawServer, **options: object) -> LLMClient:
    return LLMClient(model="m", base_url=server.base_url, api_key="k", timeout_s=5.0, **options)  # type: ignore[arg-type]


def _head(extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + extra


def test_a_chunked_answer_is_read_whole_and_the_connection_kept(serve):
    def chunked(n: int) -> tuple[bytes, bool]:
        half = len(COMPLETION) // 2
        parts = [COMPLETION[:half], COMPLETION[half:]]
        body = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\nX-Trailer: t\r\n\r\n"
        return _head(b"Transfer-Encoding: chunked\r\n\r\n") + body, False

    server = serve(chunked)
    results = _client(server, concurrency=1).run(_requests(3))
    assert [r.data for r in results] == [RATIONALE] * 3
    assert [r.attempts for r in results] == [1, 1, 1]
    assert (server.requests, server.connections) == (3, 1)


def test_an_answer_that_ends_when_the_server_closes_is_read_whole(serve):
    server = serve(lambda n: (_head(b"Connection: close\r\n\r\n") + COMPLETION, True))
    results = _client(server, concurrency=1).run(_requests(2))
    assert [r.data for r in results] == [RATIONALE] * 2
    assert (server.requests, server.connections) == (2, 2)


def test_a_kept_connection_the_server_closed_is_replaced_and_nothing_is_asked_twice(serve):
    """The server answers with keep-alive, then closes each connection after its first answer: the next
    request goes out on a fresh one. aiohttp drops a kept connection whose close it has seen; one whose close
    is still in flight fails the POST before the server reads it (aiohttp resends no POST), and the SDK's
    retry sends it again: at most one extra attempt, and the server answers each request once."""
    length = b"Content-Length: %d\r\n\r\n" % len(COMPLETION)
    server = serve(lambda n: (_head(length) + COMPLETION, True))
    client = _client(server, concurrency=1)
    results = client.run(_requests(3))
    assert [r.data for r in results] == [RATIONALE] * 3
    assert all(r.attempts in (1, 2) for r in results)
    assert client.report()["total"]["http_calls"] == sum(r.attempts for r in results)
    assert server.requests == 3


def test_a_server_that_hangs_up_without_answering_is_a_transport_failure_retried(serve):
    server = serve(lambda n: (b"", True))
    [result] = _client(server, max_retries=2).run(_requests(1))
    assert not result.ok
    assert "APIConnectionError after 3 attempt(s)" in result.error
    assert server.requests == 3


def test_an_answer_that_is_no_http_is_a_transport_failure(serve):
    server = serve(lambda n: (b"SSH-2.0-OpenSSH\r\n\r\n", True))
    [result] = _client(server, max_retries=0).run(_requests(1))
    assert not result.ok and "APIConnectionError after 1 attempt(s)" in result.error


def test_a_gzipped_answer_is_decoded(serve):
    packed = gzip.compress(COMPLETION)
    extra = b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(packed)
    server = serve(lambda n: (_head(extra) + packed, False))
    [result] = _client(server).run(_requests(1))
    assert result.data == RATIONALE


def test_a_proxy_named_in_the_environment_is_still_used(serve, monkeypatch):
    """With ``HTTP_PROXY`` set, the request goes to the proxy (httpx2 picks it, aiohttp reaches it), here a
    server that answers in place of the unreachable API."""
    seen: list[bytes] = []
    proxy = serve(lambda n: (_head(b"Content-Length: %d\r\n\r\n" % len(COMPLETION)) + COMPLETION, False))
    proxy.on_head = seen.append
    for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy.base_url.removesuffix("/v1"))
    client = LLMClient(model="m", base_url="http://127.0.0.1:9/v1", api_key="k", timeout_s=5.0, max_retries=0)
    [result] = client.run(_requests(1))
    assert result.data == RATIONALE
    assert seen[0].startswith(b"POST http://127.0.0.1:9/v1/chat/completions HTTP/1.1")


def test_a_host_named_in_no_proxy_is_reached_directly(serve, monkeypatch):
    """``NO_PROXY`` wins over the proxy the environment names (as httpx read it): the unreachable proxy is
    never tried and the server answers."""
    server = serve(lambda n: (_head(b"Content-Length: %d\r\n\r\n" % len(COMPLETION)) + COMPLETION, False))
    for name in ("no_proxy", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    [result] = _client(server, max_retries=0).run(_requests(1))
    assert result.data == RATIONALE and server.requests == 1


def test_the_connections_of_an_ended_event_loop_are_closed_by_the_next_one(serve):
    """A client used from two ``asyncio.run`` calls without ``aclose``: the second closes the first loop's
    connections (else aiohttp reports an unclosed session when it is collected)."""
    server = serve(lambda n: (_head(b"Content-Length: %d\r\n\r\n" % len(COMPLETION)) + COMPLETION, False))
    client = _client(server)
    first, second = _requests(2)
    assert asyncio.run(client.complete(first)).data == RATIONALE
    ended = client._connections
    assert ended is not None and not ended.is_closed()
    assert asyncio.run(client.complete(second)).data == RATIONALE
    assert ended.is_closed() and client._connections is not ended


def _answering(n: int) -> tuple[bytes, bool]:
    return _head(b"Content-Length: %d\r\n\r\n" % len(COMPLETION)) + COMPLETION, False


def _fields(head: bytes) -> tuple[str, dict[str, str]]:
    """A request's line and its header fields (names in lower case)."""
    line, *rest = head.decode("latin-1").split("\r\n")
    return line, {k.lower(): v.strip() for k, _, v in (field.partition(":") for field in rest if field)}


def test_the_request_is_one_json_post_with_the_key_as_bearer(serve):
    heads: list[bytes] = []
    server = serve(_answering)
    server.on_head = heads.append
    [result] = _client(server, max_retries=0).run(_requests(1))
    assert result.ok
    line, fields = _fields(heads[0])
    assert line == "POST /v1/chat/completions HTTP/1.1"
    assert fields["authorization"] == "Bearer k"
    assert fields["content-type"] == "application/json" and fields["accept"] == "application/json"
    body = server.bodies[0]
    assert json.loads(body)["model"] == "m" and json.loads(body)["messages"][1]["content"] == "article 0"
    assert body == json.dumps(json.loads(body), ensure_ascii=False, separators=(",", ":")).encode()


def test_a_base_urls_credentials_go_as_the_basic_header_and_the_url_without_them(serve):
    """As httpx sends them: ``user:password`` percent-decoded, UTF-8, base64; no Bearer header beside it."""
    heads: list[bytes] = []
    server = serve(_answering)
    server.on_head = heads.append
    url = server.base_url.replace("http://", "http://us%20%C3%A9r:p%40ss@")
    [result] = LLMClient(model="m", base_url=url, api_key="k", timeout_s=5.0, max_retries=0).run(_requests(1))
    assert result.ok
    line, fields = _fields(heads[0])
    assert line == "POST /v1/chat/completions HTTP/1.1"
    assert fields["authorization"] == "Basic " + base64.b64encode("us ér:p@ss".encode()).decode()
    assert "Bearer" not in heads[0].decode("latin-1")


@pytest.mark.parametrize(
    ("status", "headers", "expected"),
    [
        (429, {"retry-after": "0.3"}, 0.3),
        (503, {"retry-after-ms": "250", "retry-after": "9"}, 0.25),  # milliseconds first
        (429, {"retry-after": str(int(MAX_RETRY_AFTER_S) + 1)}, None),  # too long a wait: not retried
        (429, {"retry-after": "1e999"}, None),  # an overflowing wait is a long one
        (400, {}, None),
        (404, {"retry-after": "1"}, None),
        (400, {"x-should-retry": "true", "retry-after": "2"}, 2.0),
        (503, {"x-should-retry": "false"}, None),
        (408, {"retry-after": "1"}, 1.0),
        (409, {"retry-after": "1"}, 1.0),
        (500, {"retry-after": "1"}, 1.0),
    ],
)
def test_the_retry_policy_is_the_sdks(status, headers, expected):
    assert retry_wait(0, status, headers) == expected


def test_without_a_servers_wait_the_backoff_doubles_from_half_a_second_to_eight_with_jitter():
    for retries_taken, full in ((0, 0.5), (1, 1.0), (3, 4.0), (4, 8.0), (9, 8.0)):
        no_wait_given = retry_wait(retries_taken, 503, {"retry-after": "0"})
        for wait in (retry_wait(retries_taken, None, None), no_wait_given):
            assert wait is not None and 0.75 * full <= wait <= full
    later = formatdate(time.time() + 30, usegmt=True)  # an HTTP date
    wait = retry_wait(0, 429, {"retry-after": later})
    assert wait is not None and 25 < wait <= 30
