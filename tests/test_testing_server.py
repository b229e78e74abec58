"""The one loopback server base (rwpost.testing.server) under the sample site and the LLM test server."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from rwpost.testing.server import LoopbackHandler, LoopbackServer


class Echo(LoopbackHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self.owner.paths.append(self.path)
        self.reply(200, {"Content-Type": "text/plain", "X-Echo": "1"}, self.path.encode())


class EchoServer(LoopbackServer):
    handler = Echo

    def __init__(self) -> None:
        self.paths: list[str] = []
        super().__init__()


def test_serves_on_a_free_loopback_port_from_a_thread_and_closes_on_exit():
    with EchoServer() as server:
        assert server.port > 0 and server.base_url == f"http://127.0.0.1:{server.port}"
        with urllib.request.urlopen(f"{server.base_url}/a?b=1", timeout=5) as response:
            assert response.read() == b"/a?b=1"
            assert response.headers["X-Echo"] == "1" and response.headers["Content-Length"] == "6"
        assert server.paths == ["/a?b=1"]
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"{server.base_url}/again", timeout=5)


def test_stop_without_start_does_not_hang():
    server = EchoServer()
    server.stop()
    assert server.httpd.socket.fileno() == -1


def test_a_client_hanging_up_is_not_reported_but_other_errors_are(capsys):
    with EchoServer() as server:
        for exc in (BrokenPipeError(), ConnectionResetError()):
            try:
                raise exc
            except OSError:
                server.httpd.handle_error(None, ("127.0.0.1", 1))
        assert capsys.readouterr().err == ""
        try:
            raise ValueError("a real bug")
        except ValueError:
            server.httpd.handle_error(None, ("127.0.0.1", 1))
        assert "a real bug" in capsys.readouterr().err
