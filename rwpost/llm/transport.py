"""A lean HTTP/1.1 transport under the ``openai`` SDK: the LLM client's connections without httpcore.

The SDK keeps everything it does above the transport: the request it builds, its retries and waits
(``Retry-After``), its timeouts (passed in each request's ``timeout`` extension), its errors and the event
hooks. A proxy named in the environment (``HTTPS_PROXY``, ...) is httpx's to reach, so with one set the
SDK keeps its own transport (:func:`lean_transport`). Below
it, httpcore's connection pool, h11 state machine and anyio streams cost about a third of a call's CPU
(``benchmarks/llm_cpu.py``); this transport writes the request in one piece on an asyncio stream, reads
the answer's head and body with two reads, and keeps the connection for the next request.
"""

from __future__ import annotations

import asyncio
import ssl
import urllib.request

try:  # the SDK's own HTTP library (httpx2 since openai 3); plain httpx before
    import httpx2
except ImportError:  # pragma: no cover - an SDK on plain httpx
    import httpx as httpx2  # type: ignore[no-redef]

_ENDS = b"\r\n\r\n"
_MAX_HEAD = 64 * 1024


class _Stale(Exception):
    """A kept-alive connection the server had closed before it answered: try a fresh one."""


class _Connection:
    __slots__ = ("reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    def usable(self) -> bool:
        return not (self.reader.at_eof() or self.writer.is_closing())

    def close(self) -> None:
        self.writer.close()


def _timeouts(request: httpx2.Request) -> tuple[float | None, float | None, float | None]:
    timeout = request.extensions.get("timeout") or {}
    return timeout.get("connect"), timeout.get("write"), timeout.get("read")


class LeanTransport(httpx2.AsyncBaseTransport):
    """HTTP/1.1 with keep-alive over asyncio streams, for the SDK's JSON posts (bodies of known length).

    Errors are httpx's own, as httpcore's would be: a timeout is ``ConnectTimeout`` / ``WriteTimeout`` /
    ``ReadTimeout``, a refused or broken connection ``ConnectError`` / ``WriteError`` / ``ReadError``, a
    server that closes without answering ``RemoteProtocolError`` (the SDK retries all of them). A kept
    connection the server closed meanwhile is replaced once, silently, as httpcore does."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None) -> None:
        self._ssl = ssl_context
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        https = url.scheme == "https"
        where = (url.scheme, url.host, url.port or (443 if https else 80))
        body = await request.aread()
        head = [b"%s %s HTTP/1.1" % (request.method.encode(), url.raw_path)]
        head += [b"%s: %s" % pair for pair in request.headers.raw]
        message = b"\r\n".join(head) + _ENDS + body
        idle = self._idle.setdefault(where, [])
        while idle:
            connection = idle.pop()
            if not connection.usable():
                connection.close()
                continue
            try:
                return await self._exchange(connection, where, request, message, reused=True)
            except _Stale:
                connection.close()
        connect, _, _ = _timeouts(request)
        try:
            async with asyncio.timeout(connect):
                reader, writer = await asyncio.open_connection(
                    where[1],
                    where[2],
                    ssl=(self._ssl or ssl.create_default_context()) if https else None,
                    server_hostname=where[1] if https else None,
                    limit=_MAX_HEAD,
                )
        except TimeoutError as exc:
            message = f"connecting to {where[1]}:{where[2]} timed out"
            raise httpx2.ConnectTimeout(message, request=request) from exc
        except OSError as exc:
            raise httpx2.ConnectError(str(exc) or type(exc).__name__, request=request) from exc
        return await self._exchange(_Connection(reader, writer), where, request, message, reused=False)

    async def _exchange(
        self,
        connection: _Connection,
        where: tuple[str, str, int],
        request: httpx2.Request,
        message: bytes,
        *,
        reused: bool,
    ) -> httpx2.Response:
        """Send ``message`` and read the answer; the connection goes back to the idle ones if it may."""
        _, write, read = _timeouts(request)
        reader, writer = connection.reader, connection.writer
        try:
            try:
                writer.write(message)
                async with asyncio.timeout(write):
                    await writer.drain()
            except TimeoutError as exc:
                raise httpx2.WriteTimeout("writing the request timed out", request=request) from exc
            except OSError as exc:
                if reused:
                    raise _Stale from exc
                raise httpx2.WriteError(str(exc) or type(exc).__name__, request=request) from exc
            try:
                async with asyncio.timeout(read) as deadline:
                    status, reason, version, headers = await self._head(reader, reused)
                    while 100 <= status < 200:  # interim answers (100 Continue) before the real one
                        status, reason, version, headers = await self._head(reader, False)
                    if read is not None:
                        deadline.reschedule(asyncio.get_running_loop().time() + read)
                    content, keep = await self._body(reader, request.method, status, version, headers)
            except TimeoutError as exc:
                raise httpx2.ReadTimeout("reading the answer timed out", request=request) from exc
            except asyncio.IncompleteReadError as exc:
                what = "in the middle of its answer" if exc.partial else "without sending a response"
                raise httpx2.RemoteProtocolError(f"Server disconnected {what}.", request=request) from exc
            except asyncio.LimitOverrunError as exc:
                raise httpx2.RemoteProtocolError("the answer's head is too long", request=request) from exc
            except ValueError as exc:
                raise httpx2.RemoteProtocolError(f"not an HTTP/1.1 answer: {exc}", request=request) from exc
            except OSError as exc:
                raise httpx2.ReadError(str(exc) or type(exc).__name__, request=request) from exc
        except BaseException:
            connection.close()
            raise
        if keep:
            self._idle.setdefault(where, []).append(connection)
        else:
            connection.close()
        return httpx2.Response(
            status,
            headers=headers,
            stream=httpx2.ByteStream(content),
            request=request,
            extensions={"http_version": version, "reason_phrase": reason},
        )

    @staticmethod
    async def _head(reader: asyncio.StreamReader, reused: bool) -> tuple[int, bytes, bytes, list]:
        """The status, reason, HTTP version and headers of one answer."""
        try:
            raw = await reader.readuntil(_ENDS)
        except asyncio.IncompleteReadError as exc:
            if not exc.partial and reused:
                raise _Stale from exc
            raise
        except ConnectionError as exc:
            if reused:
                raise _Stale from exc
            raise
        lines = raw[:-4].split(b"\r\n")
        version, _, rest = lines[0].partition(b" ")
        code, _, reason = rest.partition(b" ")
        if not version.startswith(b"HTTP/1.") or len(code) != 3 or not code.isdigit():
            raise ValueError(repr(lines[0][:80]))
        headers = []
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon:
                raise ValueError(f"header line without a colon: {line[:80]!r}")
            headers.append((name.strip(), value.strip()))
        return int(code), reason, version, headers

    @staticmethod
    async def _body(
        reader: asyncio.StreamReader, method: str, status: int, version: bytes, headers: list
    ) -> tuple[bytes, bool]:
        """The answer's body as sent (httpx decodes a ``Content-Encoding`` on reading), and whether the
        connection may carry another request."""
        length = chunked = None
        keep = version == b"HTTP/1.1"
        for name, value in headers:
            lower = name.lower()
            if lower == b"content-length":
                length = int(value)
            elif lower == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif lower == b"connection":
                keep = b"close" not in value.lower() and (keep or b"keep-alive" in value.lower())
        if method == "HEAD" or status in (204, 304):
            return b"", keep
        if chunked:
            parts = []
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
                if size == 0:
                    while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
                        pass
                    return b"".join(parts), keep
                parts.append((await reader.readexactly(size + 2))[:-2])
        if length is not None:
            return await reader.readexactly(length), keep
        return await reader.read(), False  # the body ends when the server closes

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()


PROXY_VARIABLES = frozenset({"http", "https", "all"})
"""The ``<scheme>_PROXY`` variables httpx reads (``NO_PROXY`` only narrows them)."""


def lean_transport(ssl_context: ssl.SSLContext) -> LeanTransport | None:
    """The transport for the SDK's HTTP client: :class:`LeanTransport`, or None (httpx's own, which goes
    through the proxies of the environment) when the environment names a proxy. httpx reads no proxy from
    the environment once it is given a transport, so the lean one is used only where there is none."""
    if PROXY_VARIABLES & set(urllib.request.getproxies_environment()):
        return None
    return LeanTransport(ssl_context)
