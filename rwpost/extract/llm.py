"""The LLM extraction backend (paper III-B.3): post, rationale, then evidence per key point.

Per article, the post and rationale requests run together; the evidence request follows, since it
needs the key points. The model refers to links by tag id and :mod:`rwpost.extract.grounding` maps
them back to exact URLs. A record whose answers stay invalid is returned as an
:class:`ExtractionFailure` carrying every raw response, for the stage's rejects file.

The questions go to a :class:`~rwpost.llm.ChatModel`: an OpenAI-compatible server
(:class:`~rwpost.llm.ApiChatModel`; a bare :class:`~rwpost.llm.LLMClient` is wrapped in one) or a local
model folder (:class:`~rwpost.llm.LocalChatModel`, whose requests from many articles are batched).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rwpost.extract.grounding import LinkResolver, build_evidence, build_post
from rwpost.llm import ApiChatModel, ChatModel, LLMClient, LLMRequest, LLMResult, load_llm_schema
from rwpost.prompts import Prompt, load_prompt
from rwpost.records import Extraction, Provenance, Reject, TaggedArticle

TASKS = ("post", "rationale", "evidence")

PLACEHOLDER_KEY_POINTS = "\n".join(f"{i}. (key point {i})" for i in range(1, 6))
"""Stands in for the key points when a dry run estimates the evidence calls it cannot render yet."""


@dataclass
class ExtractionFailure:
    """An article set aside: which call failed, why, and the raw responses received."""

    id: str
    task: str
    error: str
    raw_responses: list[str] = field(default_factory=list)

    def as_reject(self) -> Reject:
        return Reject(
            id=self.id,
            stage="extract",
            reason=f"{self.task}: {self.error}",
            data={"task": self.task, "error": self.error, "raw_responses": self.raw_responses},
        )


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rsplit("\n", 1)[0] + "\n[... article truncated ...]"


class LLMExtractor:
    """Extracts with a :class:`ChatModel`; prompts from ``rwpost/prompts/`` unless given.

    ``backend`` is what provenance records: ``llm`` for a server, ``local`` for a local model folder.
    """

    def __init__(
        self,
        model: ChatModel | LLMClient,
        prompts: dict[str, Prompt] | None = None,
        *,
        max_article_chars: int = 60_000,
        max_tokens: int | None = 2_000,
        backend: str = "llm",
    ) -> None:
        self.model: ChatModel = ApiChatModel(model) if isinstance(model, LLMClient) else model
        self.backend = backend
        self.prompts = prompts or {task: load_prompt(task) for task in TASKS}
        self.schemas = {task: load_llm_schema(self.prompts[task].schema_name) for task in TASKS}
        self.max_article_chars = max_article_chars
        self.max_tokens = max_tokens

    @property
    def prompt_version(self) -> str:
        return "+".join(self.prompts[task].version for task in TASKS)

    def provenance(self) -> Provenance:
        return Provenance(backend=self.backend, model=self.model.name, prompt_version=self.prompt_version)

    def request(self, task: str, article: TaggedArticle, key_points: Sequence[str] = ()) -> LLMRequest:
        """The request of one task for one article."""
        prompt = self.prompts[task]
        values = {
            "claim": article.claim or "(not given)",
            "rating": article.rating or "(not given)",
            "article": _truncate(article.text, self.max_article_chars),
        }
        if task == "evidence":
            values["key_points"] = (
                "\n".join(
                    f"{i}. {kp.split('. ', 1)[-1] if kp[:1].isdigit() else kp}"
                    for i, kp in enumerate(key_points, 1)
                )
                if key_points
                else PLACEHOLDER_KEY_POINTS
            )
        return LLMRequest(
            key=article.id,
            task=task,
            system=prompt.system,
            user=prompt.render_user(**values),
            schema=self.schemas[task],
            schema_name=prompt.schema_name,
            prompt_version=prompt.version,
            max_tokens=self.max_tokens,
        )

    async def extract(self, article: TaggedArticle) -> Extraction | ExtractionFailure:
        """Post and rationale together, then evidence; grounded links; never raises for bad answers."""
        post, rationale = await asyncio.gather(
            self.model.complete(self.request("post", article)),
            self.model.complete(self.request("rationale", article)),
        )
        for result in (post, rationale):
            if not result.ok:
                return self._failure(article, result)
        key_points = [str(k) for k in rationale.data["key_points"]]
        evidence = await self.model.complete(self.request("evidence", article, key_points))
        if not evidence.ok:
            return self._failure(article, evidence)
        return assemble(article, post.data, rationale.data, evidence.data, self.provenance())

    def _failure(self, article: TaggedArticle, result: LLMResult) -> ExtractionFailure:
        return ExtractionFailure(
            article.id, result.task, result.error or "failed", list(result.raw_responses)
        )

    def run(
        self,
        articles: Iterable[TaggedArticle],
        on_done: Callable[[TaggedArticle, Extraction | ExtractionFailure], None] | None = None,
    ) -> list[Extraction | ExtractionFailure]:
        """Extract many articles concurrently (a server's client bounds the requests in flight; a local
        model batches the requests that wait together)."""

        async def one(article: TaggedArticle) -> Extraction | ExtractionFailure:
            outcome = await self.extract(article)
            if on_done is not None:
                on_done(article, outcome)
            return outcome

        async def main() -> list[Extraction | ExtractionFailure]:
            try:
                return list(await asyncio.gather(*(one(a) for a in articles)))
            finally:
                await self.model.aclose()

        return asyncio.run(main())

    def estimate(self, articles: Iterable[TaggedArticle]) -> dict[str, Any]:
        """A dry-run budget: every request of every article (evidence with placeholder key points)."""
        requests = []
        for article in articles:
            requests.extend(self.request(task, article) for task in TASKS)
        return self.model.estimate(requests)


def assemble(
    article: TaggedArticle,
    post_answer: dict[str, Any],
    rationale_answer: dict[str, Any],
    evidence_answer: dict[str, Any],
    provenance: Provenance,
) -> Extraction:
    """The :class:`Extraction` of three validated answers, every link checked against the table."""
    resolver = LinkResolver(article)
    key_points = [str(k).strip() for k in rationale_answer.get("key_points") or [] if str(k).strip()]
    post = build_post(post_answer, resolver)
    post = post.model_copy(update={"text": resolver.scrub(post.text)})
    evidence = build_evidence(evidence_answer, resolver, len(key_points))
    return Extraction(
        id=article.id,
        news_url=article.news_url,
        post=post,
        reasoning_logic=resolver.scrub(rationale_answer.get("reasoning_logic")),
        key_points=[resolver.scrub(k) or "" for k in key_points],
        evidence=evidence,
        hallucinated_urls=resolver.hallucinated,
        provenance=provenance,
    )
