"""The OpenAI-compatible Batch API (about half the price of synchronous calls, answers within 24 h).

:class:`BatchRunner` answers the requests the cache cannot: it uploads them as JSONL, creates a batch,
polls it, downloads the answers, validates each against its schema and puts it in the client's
:class:`~rwpost.llm.cache.LLMCache` with its tokens; the cost goes to the client's report at the batch
rate. The ordinary synchronous run that follows is then served from the cache, and asks the server
itself only for what the batch failed (an error line, an invalid answer, an expired batch's rest).

The batch id is recorded in a state file (by the fingerprint of the requests it holds) before polling, so
an interrupted run resumes the same batch instead of paying for it twice::

    runner = BatchRunner(client, state=Path("data/cache/llm.sqlite.batches.json"))
    runner.fill(requests)                     # uploads, polls, downloads; fills the cache
    client.run(requests)                      # cache hits, plus synchronous calls for the failures
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rwpost.errors import ConfigError, RwpostError
from rwpost.io import read_json, sha256_hex, write_json
from rwpost.llm.cache import cache_key
from rwpost.llm.client import LLMClient, parse_answer
from rwpost.llm.types import LLMRequest

if TYPE_CHECKING:  # imported where a batch is sent: importing the SDK is most of a command's start-up
    import openai

DONE = ("completed", "expired", "failed", "cancelled")
"""Batch states after which nothing more arrives."""

BATCH_DISCOUNT = 0.5
"""What a batch costs against synchronous calls at the same prices (OpenAI's Batch API: half)."""


class BatchRunner:
    """Fill ``client``'s cache through the Batch API (see the module docstring).

    ``state`` is the JSON file of the batches in flight (by request-set fingerprint); ``poll_s`` the wait
    between polls; ``max_wait_s`` how long one run waits before stopping with a line saying how to resume.
    """

    def __init__(
        self,
        client: LLMClient,
        state: Path,
        *,
        poll_s: float = 30.0,
        max_wait_s: float = 26 * 3600.0,
        discount: float = BATCH_DISCOUNT,
        max_requests: int = 50_000,
    ) -> None:
        if client.cache is None:
            raise ConfigError("the batch API fills the LLM answer cache: give the client a cache")
        self.client = client
        self.state = Path(state)
        self.poll_s = poll_s
        self.max_wait_s = max_wait_s
        self.discount = discount
        self.max_requests = max_requests
        self.counts = {"batches": 0, "resumed": 0, "sent": 0, "answered": 0, "failed": 0, "invalid": 0}
        self.answered_keys: set[str] = set()
        """The cache keys this runner's batches answered (a caller prices those calls at the batch rate)."""
        self._sdk: openai.OpenAI | None = None

    def report(self) -> dict[str, Any]:
        """What the batches did: batches submitted and resumed, requests sent, answered (cached), failed
        (left to synchronous calls: error lines, expired, and ``invalid`` answers)."""
        return {**self.counts, "discount": self.discount}

    def summary(self) -> str:
        """One line of what the batches did (for a run's log)."""
        c = self.counts
        return (
            f"batch API: {c['batches']} batches submitted, {c['resumed']} resumed, {c['sent']} requests "
            f"sent, {c['answered']} answered at {self.discount:g}x the price, {c['failed']} left to "
            "synchronous calls"
        )

    def cached(self, request: LLMRequest) -> dict[str, Any] | None:
        """The cached answer of ``request`` (after :meth:`fill`), or None."""
        hit = self.client.cache.get(cache_key(self.client.model, request))  # type: ignore[union-attr]
        return None if hit is None else hit.answer

    def fill(self, requests: Sequence[LLMRequest]) -> None:
        """Answer the uncached ``requests`` through batches (at most ``max_requests`` lines each)."""
        keyed: dict[str, LLMRequest] = {}
        for request in requests:
            key = cache_key(self.client.model, request)
            if key not in self.client.cache:  # type: ignore[operator]
                keyed.setdefault(key, request)
        items = list(keyed.items())
        for start in range(0, len(items), self.max_requests):
            self._one(dict(items[start : start + self.max_requests]))

    # --- internals ------------------------------------------------------------------------------------------

    def _client(self) -> openai.OpenAI:
        import openai

        if self._sdk is None:
            c = self.client
            self._sdk = openai.OpenAI(
                api_key=c._api_key or "no-key",
                base_url=c.base_url,
                timeout=c.timeout_s,
                max_retries=c.max_retries,
            )
        return self._sdk

    def _states(self) -> dict[str, Any]:
        return read_json(self.state) if self.state.exists() else {}

    def _record(self, fingerprint: str, value: dict[str, Any] | None) -> None:
        states = self._states()
        if value is None:
            states.pop(fingerprint, None)
        else:
            states[fingerprint] = value
        write_json(self.state, states)

    def _line(self, key: str, request: LLMRequest) -> dict[str, Any]:
        mode = "json_object" if self.client.response_mode == "json_object" else "json_schema"
        body: dict[str, Any] = {
            "model": self.client.model,
            "messages": self.client._messages(request, mode),
            "response_format": self.client._response_format(request, mode),
            "temperature": request.temperature,
        }
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        return {"custom_id": key, "method": "POST", "url": "/v1/chat/completions", "body": body}

    def _one(self, keyed: dict[str, LLMRequest]) -> None:
        if not keyed:
            return
        import openai

        sdk = self._client()
        fingerprint = sha256_hex("\n".join(sorted(keyed)))[:16]
        known = self._states().get(fingerprint)
        try:
            if known:  # an interrupted run's batch: poll it, never submit the same requests again
                batch_id = known["batch_id"]
                self.counts["resumed"] += 1
            else:
                content = "".join(
                    json.dumps(self._line(k, r), ensure_ascii=False) + "\n" for k, r in keyed.items()
                )
                upload = sdk.files.create(file=("requests.jsonl", content.encode("utf-8")), purpose="batch")
                batch = sdk.batches.create(
                    input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h"
                )
                batch_id = batch.id
                self._record(
                    fingerprint, {"batch_id": batch_id, "requests": len(keyed), "created": int(time.time())}
                )
                self.counts["batches"] += 1
                self.counts["sent"] += len(keyed)
            batch = self._wait(sdk, batch_id)
            answered = self._read(sdk, batch.output_file_id, keyed)
        except openai.APIError as exc:
            raise RwpostError(f"batch API at {self.client.base_url or 'api.openai.com'}: {exc}") from exc
        self.counts["answered"] += answered
        self.counts["failed"] += len(keyed) - answered
        self._record(fingerprint, None)  # done: its answers are in the cache

    def _wait(self, sdk: openai.OpenAI, batch_id: str) -> Any:
        began = time.monotonic()
        while True:
            batch = sdk.batches.retrieve(batch_id)
            if batch.status in DONE:
                return batch
            if time.monotonic() - began > self.max_wait_s:
                raise RwpostError(
                    f"batch {batch_id} is still {batch.status} after {self.max_wait_s:.0f} s; run again to "
                    f"resume it (recorded in {self.state})"
                )
            time.sleep(self.poll_s)

    def _read(self, sdk: openai.OpenAI, file_id: str | None, keyed: dict[str, LLMRequest]) -> int:
        """Cache the valid answers of an output file; returns how many. Error lines and invalid answers
        are left to the synchronous run."""
        if not file_id:
            return 0
        answered = 0
        for line in sdk.files.content(file_id).content.splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            request = keyed.get(row.get("custom_id"))
            response = row.get("response") or {}
            if request is None or response.get("status_code") != 200:
                continue
            body = response.get("body") or {}
            choices = body.get("choices") or [{}]
            content = (choices[0].get("message") or {}).get("content")
            usage = body.get("usage") or {}
            prompt_tokens, completion_tokens = (
                int(usage.get("prompt_tokens") or 0),
                int(usage.get("completion_tokens") or 0),
            )
            spent = self.client._usage(request.task)
            spent.prompt_tokens += prompt_tokens
            spent.completion_tokens += completion_tokens
            spent.cost_usd += self.client._cost(prompt_tokens, completion_tokens) * self.discount
            data, _problem = parse_answer(content, request.schema)
            if data is None:
                self.counts["invalid"] += 1
                continue
            self.client.cache.put(  # type: ignore[union-attr]
                row["custom_id"],
                model=self.client.model,
                request=request,
                answer=data,
                raw=content or "",
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
            )
            self.answered_keys.add(row["custom_id"])
            answered += 1
        return answered
