"""A loopback server reply leaves in one write: on a kept-alive connection, headers and body written apart
wait for the client's delayed ACK (Nagle's algorithm), about 40 ms a reply, which every benchmark behind
these servers would count as latency."""

from __future__ import annotations

import http.client
import statistics
import time

from rwpost.testing.server import LoopbackHandler, LoopbackServer


class _Hello(LoopbackHandler):
    def do_GET(self) -> None:
        self.reply(200, {"Content-Type": "text/plain"}, b"hello " * 200)


class _HelloServer(LoopbackServer):
    handler = _Hello


def test_keep_alive_replies_do_not_wait_for_delayed_acks():
    with _HelloServer() as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        times = []
        for _ in range(15):
            began = time.perf_counter()
            connection.request("GET", "/")
            response = connection.getresponse()
            assert response.status == 200 and response.read() == b"hello " * 200
            times.append(time.perf_counter() - began)
        connection.close()
    assert statistics.median(times) < 0.02, f"median {statistics.median(times) * 1000:.1f} ms per reply"
