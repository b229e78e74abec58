"""Map the link references of an LLM answer back to the article's link table (paper III-B; links by id).

A reference is a tag id (preferred) or a URL copied from a tag. Anything that does not resolve to a
row of the article's link table is dropped and recorded, so a hallucinated URL never reaches the
dataset: :attr:`LinkResolver.hallucinated` ends up in ``Extraction.hallucinated_urls``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from rwpost.records import Evidence, Link, Post, TaggedArticle

_URL = re.compile(r"https?://[^\s<>\"'\]\)]+")


@dataclass
class LinkResolver:
    """Resolves tag ids / URLs against one article's link table and collects what did not resolve."""

    article: TaggedArticle
    hallucinated: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._by_id = {link.id: link for link in self.article.links}
        self._by_url = {link.url: link for link in self.article.links}
        self._by_url.update({link.url.rstrip("/"): link for link in self.article.links})

    def _flag(self, text: str) -> None:
        if text not in self.hallucinated:
            self.hallucinated.append(text)

    def resolve(self, ref: Any) -> Link | None:
        """The link a reference names, or None (recorded as hallucinated unless the ref is empty)."""
        if ref is None or ref == "":
            return None
        if isinstance(ref, bool):
            self._flag(f"tag:{ref}")
            return None
        if isinstance(ref, int) or (isinstance(ref, str) and ref.strip().isdigit()):
            link = self._by_id.get(int(ref))
            if link is None:
                self._flag(f"tag:{int(ref)}")
            return link
        text = str(ref).strip()
        tag = re.fullmatch(r"\[?(?:IMAGE|VIDEO|WEBPAGE)\s+(\d+)(?::\s*(\S+?))?\]?", text)
        if tag:
            return self.resolve(int(tag.group(1)))
        link = self._by_url.get(text) or self._by_url.get(text.rstrip("/"))
        if link is None:
            self._flag(text)
        return link

    def url(self, ref: Any) -> str | None:
        link = self.resolve(ref)
        return link.url if link else None

    def scrub(self, text: str | None) -> str | None:
        """Free text with every URL that is neither in the link table nor in the article removed."""
        if not text:
            return text

        def keep_or_drop(match: re.Match[str]) -> str:
            url = match.group(0).rstrip(".,;:")
            if url in self._by_url or url.rstrip("/") in self._by_url or url in self.article.text:
                return match.group(0)
            self._flag(url)
            return "[link removed]"

        return _URL.sub(keep_or_drop, text)


def build_post(answer: dict[str, Any], resolver: LinkResolver) -> Post:
    """The :class:`Post` of a ``post`` answer, links resolved through the table."""
    images = []
    for ref in answer.get("image_link_ids") or []:
        url = resolver.url(ref)
        if url and url not in images:
            images.append(url)
    return Post(
        text=answer.get("post_text") or None,
        image_links=images,
        video_link=resolver.url(answer.get("video_link_id")),
        post_link=resolver.url(answer.get("post_link_id")),
    )


def build_evidence(answer: dict[str, Any], resolver: LinkResolver, key_point_count: int) -> list[Evidence]:
    """The evidence items of an ``evidence`` answer; key point ids outside 1..count are dropped."""
    out = []
    for index, item in enumerate(answer.get("evidence") or [], start=1):
        out.append(
            Evidence(
                id=index,
                type=str(item.get("type") or "Text"),
                description=resolver.scrub(item.get("description")),
                content=resolver.scrub(item.get("content")),
                source=resolver.scrub(item.get("source")),
                url=resolver.url(item.get("link_id")),
                key_point_ids=sorted(
                    {int(k) for k in item.get("key_point_ids") or [] if 1 <= int(k) <= key_point_count}
                ),
            )
        )
    return out
