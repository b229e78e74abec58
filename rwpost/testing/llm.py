"""A small OpenAI-compatible server on 127.0.0.1 for tests, benchmarks and offline reports.

It speaks real HTTP (``/v1/chat/completions``, ``/v1/models``, and the Batch API's ``/v1/files`` and
``/v1/batches``) from a background thread (a
:class:`~rwpost.testing.server.LoopbackServer`) and answers from a script: a queue of :class:`Reply`
objects or a function of the request body. Replies can be slow, rate limited (429 with
``Retry-After``), server errors, invalid JSON, refusals, bodies that are no chat completion, or long
enough to time the client out. The server counts requests and the most it ever had in flight.

A batch is answered line by line by the same responder once it has been polled ``batch_polls`` times: a
line whose reply is not 200 goes to the batch's error file (partial failures); with ``batch_expire_after``
the batch expires with only that many lines answered, the rest in the error file as ``batch_expired``.

:class:`Recorder` wraps a responder and writes each answer to a JSONL file keyed by
:func:`request_hash`; :class:`Replayer` answers from such a file, so a report can be rebuilt from
recorded answers without any model::

    from rwpost.testing.llm import FakeLLMServer, Reply

    with FakeLLMServer([Reply.rate_limited(retry_after=0.1), Reply.answer({"ok": True})]) as server:
        client = LLMClient(model="test-model", base_url=server.base_url, api_key="test")
        ...
        assert server.chat_requests == 2
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from rwpost.testing.server import LoopbackHandler, LoopbackServer

Responder = Callable[[dict[str, Any]], "Reply"]
"""A function from the JSON body of a chat completions request to the reply."""


FAST_RETRY_S = 0.001
"""The ``Retry-After`` of scripted 429 and 5xx replies: the client waits a server's ``Retry-After`` when it
is above 0 (else the ``openai`` SDK's backoff from 0.5 s, :func:`rwpost.llm.connections.retry_wait`), so
tests retry in a millisecond."""


def _retry_after(seconds: float | None) -> dict[str, str]:
    return {} if seconds is None else {"Retry-After": f"{seconds:g}"}


@dataclass(frozen=True)
class Reply:
    """One scripted reply: an assistant message, or an HTTP error, after an optional delay."""

    status: int = 200
    content: str | None = None
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    finish_reason: str = "stop"
    refusal: str | None = None
    body: str | None = None
    """Sent as the whole HTTP body instead of a chat completion (a proxy's page, another shape)."""

    @classmethod
    def answer(cls, obj: Any, delay_s: float = 0.0) -> Reply:
        """A valid answer: ``obj`` as JSON in the assistant message."""
        return cls(content=json.dumps(obj, ensure_ascii=False), delay_s=delay_s)

    @classmethod
    def text(cls, content: str, delay_s: float = 0.0) -> Reply:
        """An assistant message with exactly this text (e.g. invalid JSON)."""
        return cls(content=content, delay_s=delay_s)

    @classmethod
    def rate_limited(cls, retry_after: float | None = FAST_RETRY_S) -> Reply:
        """HTTP 429, with a ``Retry-After`` header in seconds unless ``retry_after`` is None."""
        return cls(status=429, headers=_retry_after(retry_after), error="rate limit reached (scripted)")

    @classmethod
    def refused(cls, text: str = "I'm sorry, I can't help with that.") -> Reply:
        """The model declines: no content, ``message.refusal`` set (as OpenAI's structured outputs do)."""
        return cls(content=None, refusal=text)

    @classmethod
    def raw(cls, body: str, status: int = 200) -> Reply:
        """An HTTP body that is no chat completion, with ``status`` (e.g. a login page with 200)."""
        return cls(status=status, body=body)

    @classmethod
    def server_error(cls, status: int = 500, retry_after: float | None = FAST_RETRY_S) -> Reply:
        """An HTTP 5xx, with a ``Retry-After`` header in seconds unless ``retry_after`` is None."""
        return cls(
            status=status, headers=_retry_after(retry_after), error=f"server error {status} (scripted)"
        )

    @classmethod
    def echoing_credentials(cls, status: int = 400) -> Reply:
        """An HTTP error whose message repeats the request's ``Authorization`` header, as proxies and
        gateways do (``{authorization}`` in ``error`` is replaced by it)."""
        retry = _retry_after(FAST_RETRY_S) if status >= 500 else {}
        return cls(status=status, headers=retry, error="bad request; you sent Authorization: {authorization}")

    def slow(self, delay_s: float) -> Reply:
        """The same reply after ``delay_s`` seconds (longer than the client timeout = a timeout)."""
        return replace(self, delay_s=delay_s)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Reply:
        return cls(**data)


def message_text(body: dict[str, Any], role: str) -> str:
    """The text of the first message with ``role`` in a request body (image parts left out)."""
    for message in body.get("messages", []):
        if message.get("role") == role:
            content = message.get("content")
            if isinstance(content, list):
                return "\n".join(part.get("text", "") for part in content if part.get("type") == "text")
            return content or ""
    return ""


def request_hash(body: dict[str, Any]) -> str:
    """SHA-256 of what determines an answer: model and messages (image data URLs included)."""
    key = {"model": body.get("model"), "messages": body.get("messages")}
    text = json.dumps(key, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ScriptedResponder:
    """Replies from a queue, in order; when it runs out, from ``then`` (or a 500 saying so)."""

    def __init__(self, replies: Iterable[Reply], then: Responder | None = None) -> None:
        self._queue: deque[Reply] = deque(replies)
        self._then = then
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self._then is not None:
            return self._then(body)
        return Reply(status=500, headers=_retry_after(FAST_RETRY_S), error="script exhausted")


class Recorder:
    """Wraps a responder and appends each reply to a JSONL file, keyed by :func:`request_hash`."""

    def __init__(self, responder: Responder, path: str | Path) -> None:
        self.responder = responder
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        reply = self.responder(body)
        if reply.status == 200:
            row = {"request_hash": request_hash(body), "model": body.get("model"), "reply": reply.to_dict()}
            with self._lock, open(self.path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
        return reply


class Replayer:
    """Answers from a file written by :class:`Recorder`; an unknown request gets HTTP 404."""

    def __init__(self, path: str | Path, delay_s: float = 0.0) -> None:
        self.replies: dict[str, Reply] = {}
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    row = json.loads(line)
                    self.replies[row["request_hash"]] = Reply.from_dict(row["reply"])
        self.delay_s = delay_s
        self.misses = 0

    def __call__(self, body: dict[str, Any]) -> Reply:
        reply = self.replies.get(request_hash(body))
        if reply is None:
            self.misses += 1
            return Reply(status=404, error=f"no recorded answer for request {request_hash(body)[:12]}")
        return reply.slow(self.delay_s) if self.delay_s else reply


class _LLMHandler(LoopbackHandler):
    """The OpenAI routes: ``GET /v1/models`` and ``POST /v1/chat/completions``."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        server: FakeLLMServer = self.owner
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/v1/models"):
            data = {"object": "list", "data": [{"id": m, "object": "model"} for m in server.models]}
            self._send(200, data)
        elif "/v1/batches/" in path:
            batch = server._poll_batch(path.rsplit("/", 1)[-1])
            self._send(200, batch) if batch else self._send(404, {"error": {"message": f"no batch {path}"}})
        elif "/v1/files/" in path and path.endswith("/content"):
            content = server.files.get(path.split("/")[-2])
            if content is None:
                self._send(404, {"error": {"message": f"no file {path}"}})
            else:
                self.reply(200, {"Content-Type": "application/octet-stream"}, content["bytes"])
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:  # noqa: N802
        server: FakeLLMServer = self.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/v1/files"):
            self._send(200, server._store_upload(self.headers.get("Content-Type", ""), raw))
            return
        if path.endswith("/v1/batches"):
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                self._send(400, {"error": {"message": "request body is not JSON"}})
                return
            batch = server._create_batch(body)
            self._send(200, batch) if "id" in batch else self._send(400, batch)
            return
        if not path.endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._send(400, {"error": {"message": "request body is not JSON"}})
            return
        with server._lock:
            server.chat_requests += 1
            server.requests.append(body)
            server.in_flight += 1
            server.max_in_flight = max(server.max_in_flight, server.in_flight)
        try:
            status, data, headers = server._answer(body)
        finally:
            with server._lock:
                server.in_flight -= 1
                server.status_counts[status] = server.status_counts.get(status, 0) + 1
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, dict) and "{authorization}" in str(error.get("message")):  # a gateway's echo
            error["message"] = error["message"].replace(
                "{authorization}", self.headers.get("Authorization", "")
            )
        self._send(status, data, headers)

    def _send(self, status: int, data: dict[str, Any] | str, headers: dict[str, str] | None = None) -> None:
        # A client that gave up (a scripted timeout) makes the write fail; the server base ignores that.
        body = data.encode() if isinstance(data, str) else json.dumps(data).encode()
        self.reply(status, {"Content-Type": "application/json", **(headers or {})}, body)


class FakeLLMServer(LoopbackServer):
    """An OpenAI-compatible HTTP server on 127.0.0.1 answering from a script (a context manager).

    ``responder`` is a list of replies (served in order) or a function of the request body.
    ``latency_s`` is added to every chat reply. With ``json_schema_supported=False`` a request with
    ``response_format.type == "json_schema"`` gets HTTP 400, as from servers without that feature.
    """

    handler = _LLMHandler
    thread_name = "fake-llm"

    def __init__(
        self,
        responder: Responder | Iterable[Reply],
        *,
        latency_s: float = 0.0,
        models: tuple[str, ...] = ("test-model",),
        json_schema_supported: bool = True,
        port: int = 0,
    ) -> None:
        self.responder: Responder = responder if callable(responder) else ScriptedResponder(responder)
        self.latency_s = latency_s
        self.models = models
        self.json_schema_supported = json_schema_supported
        self.requests: list[dict[str, Any]] = []
        self.chat_requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.status_counts: dict[int, int] = {}
        self.files: dict[str, dict[str, Any]] = {}
        self.batch_requests = 0
        """Lines of batches answered (not counted in ``chat_requests``)."""
        self.batches: dict[str, dict[str, Any]] = {}
        self.batch_polls = 1
        """Retrievals of a batch before it finishes (each one reports it in progress)."""
        self.batch_expire_after: int | None = None
        """Expire every batch with only this many lines answered (None: batches complete)."""
        self._lock = threading.Lock()
        super().__init__(port)

    @property
    def base_url(self) -> str:
        """The ``base_url`` to give an OpenAI client (ends in ``/v1``)."""
        return f"{super().base_url}/v1"

    def _answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any] | str, dict[str, str]]:
        response_format = body.get("response_format") or {}
        if not self.json_schema_supported and response_format.get("type") == "json_schema":
            return 400, {"error": {"message": "response_format json_schema is not supported"}}, {}
        reply = self.responder(body)
        delay = reply.delay_s + self.latency_s
        if delay > 0:
            time.sleep(delay)
        if reply.body is not None:
            return reply.status, reply.body, dict(reply.headers)
        if reply.status != 200:
            error = {
                "message": reply.error or f"HTTP {reply.status}",
                "type": "scripted",
                "code": reply.status,
            }
            return reply.status, {"error": error}, dict(reply.headers)
        prompt_chars = sum(len(json.dumps(m.get("content"))) for m in body.get("messages", []))
        prompt_tokens = max(1, prompt_chars // 4)
        completion_tokens = max(1, len(reply.content or reply.refusal or "") // 4)
        data = {
            "id": f"chatcmpl-{request_hash(body)[:16]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", ""),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content, "refusal": reply.refusal},
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        return 200, data, dict(reply.headers)

    # --- the Batch API: files, batches, polling -------------------------------------------------------------

    def _file(self, content: bytes, filename: str, purpose: str) -> dict[str, Any]:
        with self._lock:
            file_id = f"file-{len(self.files) + 1}"
            record = {
                "id": file_id,
                "object": "file",
                "bytes": len(content),
                "created_at": int(time.time()),
                "filename": filename,
                "purpose": purpose,
                "status": "processed",
            }
            self.files[file_id] = {**record, "bytes": content}
        return record

    def _store_upload(self, content_type: str, raw: bytes) -> dict[str, Any]:
        """A multipart ``POST /v1/files`` (fields ``purpose`` and ``file``) kept in memory."""
        from email.parser import BytesParser
        from email.policy import default

        message = BytesParser(policy=default).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + raw
        )
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            fields[str(name)] = (part.get_filename(), part.get_payload(decode=True) or b"")
        filename, content = fields.get("file", ("upload.jsonl", b""))
        return self._file(
            content, filename or "upload.jsonl", fields.get("purpose", (None, b"batch"))[1].decode()
        )

    def _create_batch(self, body: dict[str, Any]) -> dict[str, Any]:
        if body.get("input_file_id") not in self.files:
            return {"error": {"message": f"no file {body.get('input_file_id')}"}}
        with self._lock:
            batch_id = f"batch_{len(self.batches) + 1}"
            self.batches[batch_id] = {
                "id": batch_id,
                "object": "batch",
                "endpoint": body.get("endpoint"),
                "input_file_id": body["input_file_id"],
                "completion_window": body.get("completion_window", "24h"),
                "status": "validating",
                "created_at": int(time.time()),
                "output_file_id": None,
                "error_file_id": None,
                "request_counts": {"total": 0, "completed": 0, "failed": 0},
                "polls": 0,
            }
        return self._public(self.batches[batch_id])

    @staticmethod
    def _public(batch: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in batch.items() if k != "polls"}

    def _poll_batch(self, batch_id: str) -> dict[str, Any] | None:
        """``GET /v1/batches/{id}``: in progress for ``batch_polls`` retrievals, then answered."""
        batch = self.batches.get(batch_id)
        if batch is None:
            return None
        if batch["status"] in ("validating", "in_progress"):
            batch["polls"] += 1
            if batch["polls"] <= self.batch_polls:
                batch["status"] = "in_progress"
            else:
                self._finish_batch(batch)
        return self._public(batch)

    def _finish_batch(self, batch: dict[str, Any]) -> None:
        lines = [json.loads(x) for x in self.files[batch["input_file_id"]]["bytes"].splitlines() if x.strip()]
        outputs, errors = [], []
        for number, line in enumerate(lines):
            custom_id = line.get("custom_id")
            if self.batch_expire_after is not None and number >= self.batch_expire_after:
                error = {
                    "code": "batch_expired",
                    "message": "This request could not be executed before the completion window expired.",
                }
                errors.append(
                    {"id": f"req-{number}", "custom_id": custom_id, "response": None, "error": error}
                )
                continue
            with self._lock:
                self.batch_requests += 1
            status, data, _ = self._answer(line.get("body") or {})
            row = {
                "id": f"req-{number}",
                "custom_id": custom_id,
                "response": {"status_code": status, "request_id": f"r{number}", "body": data},
                "error": None,
            }
            (outputs if status == 200 else errors).append(row)

        def as_file(rows: list[dict[str, Any]], name: str) -> str | None:
            if not rows:
                return None
            content = b"".join(json.dumps(r).encode() + b"\n" for r in rows)
            return self._file(content, name, "batch_output")["id"]

        batch["output_file_id"] = as_file(outputs, f"{batch['id']}_output.jsonl")
        batch["error_file_id"] = as_file(errors, f"{batch['id']}_error.jsonl")
        batch["request_counts"] = {"total": len(lines), "completed": len(outputs), "failed": len(errors)}
        batch["status"] = "expired" if self.batch_expire_after is not None else "completed"
