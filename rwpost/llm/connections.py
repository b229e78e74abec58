"""The LLM client's SDK and connections: ``openai.AsyncOpenAI`` over the SDK's aiohttp backend
(``openai[aiohttp]``).

The SDK keeps everything it does above the transport: the request it builds, its retries and waits
(``Retry-After``), its timeouts, its errors and the event hooks; httpx2 picks the proxy of the environment
(``HTTPS_PROXY``, ``NO_PROXY``, ...) and aiohttp reaches it. aiohttp's connections cost about a quarter less
CPU per call than httpx's own (``benchmarks/llm_cpu.py``). One thing is ours: the SDK's adapter maps a
server that hangs up without answering to a *connect timeout* and lets a reply that is no HTTP escape as
aiohttp's own error (out of the SDK's retries, as a traceback); :class:`_Errors` makes both httpx's
``RemoteProtocolError``, as httpx's own transport reports them (retried, then ``APIConnectionError``), and
sends a base URL's credentials as httpx does (the Basic ``Authorization`` header its auth flow set, the URL
without them: aiohttp refuses a request carrying both).
:class:`SDK` parses each route's URL once per client, and builds a POST's options once per route.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import httpx2
import openai
from openai._models import FinalRequestOptions


class _Errors(httpx2.AsyncBaseTransport):
    """The adapter's transport: the two aiohttp errors it maps wrongly or not at all made httpx's, and a URL's
    credentials sent only as the header httpx's auth flow made of them."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.userinfo:  # httpx's auth flow made them the Basic Authorization header already;
            request.url = request.url.copy_with(userinfo=b"")  # aiohttp refuses both at once
        try:
            return await self._inner.handle_async_request(request)
        except httpx2.ConnectTimeout as exc:
            cause = exc.__cause__
            if isinstance(cause, aiohttp.ServerDisconnectedError):  # a hang-up, not a timeout
                raise httpx2.RemoteProtocolError(
                    f"server disconnected without answering ({cause})"
                ) from cause
            if isinstance(cause, aiohttp.ClientOSError):  # e.g. a reset connection
                raise httpx2.ReadError(str(cause) or type(cause).__name__) from cause
            raise
        except aiohttp.ClientResponseError as exc:  # a reply aiohttp cannot parse as HTTP
            message = " ".join(str(exc.message).split())[:200]
            raise httpx2.RemoteProtocolError(f"the server's reply is not HTTP: {message}") from exc

    async def aclose(self) -> None:
        await self._inner.aclose()


class Connections(openai.DefaultAioHttpClient):  # type: ignore[misc,valid-type]
    """The SDK's aiohttp client, its transports (direct and through proxies) wrapped in :class:`_Errors`."""

    def _init_transport(self, *args: Any, **kwargs: Any) -> httpx2.AsyncBaseTransport:
        return _Errors(super()._init_transport(*args, **kwargs))

    def _init_proxy_transport(self, *args: Any, **kwargs: Any) -> httpx2.AsyncBaseTransport:
        return _Errors(super()._init_proxy_transport(*args, **kwargs))


class SDK(openai.AsyncOpenAI):
    """The SDK's client, each route's URL (``/chat/completions`` joined to the base URL) parsed once: the
    SDK parses and joins it on every call and retry (about a tenth of its request building, profiled)."""

    _urls: dict[tuple[int, str], tuple[httpx2.URL, httpx2.URL]]

    async def post_json(self, path: str, body: dict[str, Any]) -> bytes:
        """``post(path, body=body, cast_to=bytes)`` from options built once per route and copied with the
        body (the SDK builds them anew on each call, deep-copying each field's default)."""
        templates = self.__dict__.setdefault("_posts", {})
        template = templates.get(path)
        if template is None:
            template = templates[path] = FinalRequestOptions.construct(
                method="post", url=path, json_data=None, content=None, files=None
            )
        return await self.request(bytes, template.model_copy(update={"json_data": body}))

    def _prepare_url(self, url: str) -> httpx2.URL:
        urls = self.__dict__.setdefault("_urls", {})
        base = self.base_url  # a new object whenever the base URL is set
        found = urls.get((id(base), url))
        if found is None or found[0] is not base:
            found = urls[(id(base), url)] = (base, super()._prepare_url(url))
        return found[1]
