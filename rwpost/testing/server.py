"""One small loopback HTTP server base: a threaded server on 127.0.0.1 run from a background thread.

A subclass names its request handler (a :class:`LoopbackHandler`, which reaches the server object as
``self.server.owner``) and gets a bound port, ``start``/``stop``, use as a context manager, and
``serve_forever`` for a foreground server stopped with Ctrl-C::

    class Hello(LoopbackHandler):
        def do_GET(self) -> None:
            self.reply(200, {"Content-Type": "text/plain"}, b"hello")

    class HelloServer(LoopbackServer):
        handler = Hello

    with HelloServer() as server:
        urllib.request.urlopen(server.base_url + "/")
"""

from __future__ import annotations

import errno
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self

from rwpost.errors import ConfigError

HOST = "127.0.0.1"
"""Every loopback server binds here and nowhere else."""


class _HTTPServer(ThreadingHTTPServer):
    """The socket server under a :class:`LoopbackServer` (``owner``); a client hanging up is not an error."""

    # socketserver's default backlog of 5 drops connection attempts of a parallel crawler, which then
    # wait out TCP's SYN retransmission (1 s, 3 s, 7 s): a queue this deep keeps loopback crawls fast.
    request_queue_size = 256
    daemon_threads = True
    block_on_close = False

    def __init__(self, port: int, handler: type[BaseHTTPRequestHandler], owner: LoopbackServer) -> None:
        self.owner = owner
        super().__init__((HOST, port), handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A crawler refusing a huge page, a killed crawl or a client timing out (a scripted slow reply).
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


class LoopbackHandler(BaseHTTPRequestHandler):
    """A quiet HTTP/1.1 request handler; :attr:`owner` is the :class:`LoopbackServer` it serves."""

    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    @property
    def owner(self) -> Any:
        return self.server.owner

    def reply(self, status: int, headers: dict[str, str], body: bytes) -> None:
        """Send one whole response: status, ``headers``, ``Content-Length`` and ``body``, in one write.

        Headers and body written apart meet Nagle's algorithm and the client's delayed ACK on a kept-alive
        connection: about 40 ms per reply, which an LLM or crawl benchmark would count as latency.
        """
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self._headers_buffer += [b"\r\n", body]  # end_headers() with the body, then its one flush
        self.flush_headers()

    def log_message(self, format: str, *args: Any) -> None:  # quiet: servers record what they need
        return


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1 (``port=0``: a free one), bound on construction.

    Subclasses set :attr:`handler`. ``start`` serves from a daemon thread; ``stop`` shuts it down and
    closes the socket; ``with server:`` does both.
    """

    handler: ClassVar[type[LoopbackHandler]]
    thread_name: ClassVar[str] = "loopback-server"

    def __init__(self, port: int = 0) -> None:
        try:
            self.httpd = _HTTPServer(port, self.handler, self)
        except OSError as exc:  # the port is taken (or privileged): one line, not a traceback
            in_use = exc.errno == errno.EADDRINUSE
            problem = "address already in use" if in_use else (exc.strerror or str(exc))
            raise ConfigError(f"cannot listen on {HOST}:{port}: {problem} (choose another --port)") from exc
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://{HOST}:{self.port}"

    def start(self) -> Self:
        """Serve in a background thread; returns self."""
        self._thread = threading.Thread(target=self.httpd.serve_forever, name=self.thread_name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving (when started) and close the socket."""
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread = None
        self.httpd.server_close()

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted (Ctrl-C), then close the socket."""
        try:
            self.httpd.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            self.httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
