"""The offline extraction backend: deterministic rules over a tagged article, no API needed.

It is the default when no API key is set, so ``dvc repro`` runs anywhere; the dataset card names the
backend (``Provenance.backend == "offline"``). The rules follow how Snopes articles are written:

- the **post** is described in the opening paragraphs: the first social-media or archive link there is
  the post link, images there (and the lead image) are the post's images, a video link there is its
  video, and the first block quotation (else the first long quotation) there is its text;
- the **rationale** is in the conclusion: paragraphs that state the verdict ("we rated ...", "is
  false", the rating word) give the reasoning logic, and verdict plus evidence-bearing sentences give
  3-5 key points;
- the **evidence** is every other link of the article, described by the sentence around it.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from rwpost.errors import RecordError
from rwpost.records import Evidence, Extraction, Link, Post, Provenance, TaggedArticle
from rwpost.snopes.links import ARCHIVE_HOSTS
from rwpost.tagged import TAG_RE, sentence_spans, strip_tags

PROMPT_VERSION = "offline-rules-v1"

SOCIAL_HOSTS = (
    "twitter.com",
    "x.com",
    "facebook.com",
    "fb.watch",
    "instagram.com",
    "tiktok.com",
    "reddit.com",
    "threads.net",
    "bsky.app",
    "truthsocial.com",
    "t.me",
    "youtube.com",
    "youtu.be",
    "linkedin.com",
    "pinterest.com",
    "tumblr.com",
    "gab.com",
    "rumble.com",
    "gettr.com",
    "parler.com",
)
OPENING_PARAGRAPHS = 4
"""How many paragraphs (after the lead image) describe the claim and its post, on Snopes."""

_VERDICT = re.compile(
    r"\b(we(?:'ve| have)? rated|rated (?:this|the|it|that)|our rating|in (?:sum|short|conclusion)|"
    r"therefore|as such|thus|is (?:false|true|fake|fabricated|satire|miscaptioned|misleading|unproven)|"
    r"(?:claim|rumor|story|post|video|photograph|image|picture|meme) (?:is|was) "
    r"(?:false|true|fake|fabricated|satire|not|mostly|a hoax))\b",
    re.IGNORECASE,
)
_QUOTE = re.compile(r"[\"“]([^\"“”]{30,}?)[\"”]")


def _host(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower()
    return host[4:] if host.startswith("www.") else host


def _on(url: str, domains: tuple[str, ...]) -> bool:
    host = _host(url)
    return any(host == d or host.endswith("." + d) for d in domains)


def _paragraphs(text: str) -> list[str]:
    return [p for p in text.split("\n\n") if p.strip()]


def _link_ids(paragraph: str) -> list[int]:
    return [int(m.group(2)) for m in TAG_RE.finditer(paragraph)]


def _sentences(paragraph: str) -> list[str]:
    return [paragraph[a:b].strip() for a, b in sentence_spans(paragraph) if paragraph[a:b].strip()]


def _is_lead_image(paragraph: str, links: dict[int, Link]) -> bool:
    ids = _link_ids(paragraph)
    return len(ids) == 1 and links[ids[0]].kind == "image" and paragraph.lstrip().startswith("[IMAGE")


def extract_post(article: TaggedArticle) -> Post:
    """The claim's post from the opening paragraphs (see the module docstring)."""
    links = {link.id: link for link in article.links}
    paragraphs = _paragraphs(article.text)
    images: list[str] = []
    if paragraphs and _is_lead_image(paragraphs[0], links):
        images.append(links[_link_ids(paragraphs[0])[0]].url)
        paragraphs = paragraphs[1:]
    opening = paragraphs[:OPENING_PARAGRAPHS]
    post_link = video_link = None
    text = None
    fallback_link = None
    for paragraph in opening:
        for link_id in _link_ids(paragraph):
            link = links[link_id]
            if link.kind == "image" and link.url not in images:
                images.append(link.url)
            elif link.kind == "video" and video_link is None:
                video_link = link.url
            if post_link is None and (_on(link.url, SOCIAL_HOSTS) or _on(link.url, ARCHIVE_HOSTS)):
                post_link = link.url
            if fallback_link is None and link.kind == "webpage" and not _on(link.url, ("snopes.com",)):
                fallback_link = link.url
        if text is None and paragraph.startswith(">"):
            quoted = strip_tags(paragraph)
            if len(quoted.split()) >= 6:
                text = quoted  # a blockquote in the opening: the post as the article shows it
        if text is None:
            quote = _QUOTE.search(strip_tags(paragraph))
            if quote and len(quote.group(1).split()) >= 6:
                text = quote.group(1).strip()
    return Post(
        text=text,
        image_links=images,
        video_link=video_link,
        post_link=post_link or fallback_link or video_link,
    )


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\s+([.,;:!?)])", r"\1", strip_tags(text))).strip()


def extract_rationale(article: TaggedArticle) -> tuple[str | None, list[str]]:
    """Reasoning logic from the verdict paragraphs, and 3-5 key points (verdict and evidence sentences)."""
    links = {link.id: link for link in article.links}
    raw = _paragraphs(article.text)
    if raw and _is_lead_image(raw[0], links):
        raw = raw[1:]
    paragraphs = [p for p in (_clean(p) for p in raw) if len(p.split()) >= 4]
    rating = (article.rating or "").lower()
    verdict = [
        p
        for p in paragraphs
        if _VERDICT.search(p) or (rating and re.search(rf"\b{re.escape(rating)}\b", p.lower()))
    ]
    chosen = verdict[:2] or paragraphs[-2:]
    reasoning = " ".join(chosen).strip() or None
    candidates: list[str] = []
    for paragraph in chosen:
        candidates.extend(s for s in _sentences(paragraph) if _VERDICT.search(s))
    for paragraph in raw[1:]:
        ids = _link_ids(paragraph)
        if not ids or all(_on(links[i].url, SOCIAL_HOSTS + ARCHIVE_HOSTS) for i in ids):
            continue  # no link, or only the post and its captures: context, not findings
        sentences = _sentences(paragraph)
        for index, sentence in enumerate(sentences):
            if TAG_RE.search(sentence):
                text = _clean(sentence)
                if len(text.split()) < 5 and index > 0:  # "(source [WEBPAGE 3: ...])." ends a finding
                    text = _clean(sentences[index - 1] + " " + sentence)
                candidates.append(text)
    for paragraph in chosen:
        candidates.extend(_sentences(paragraph))  # filler, so there are 3 when the article allows
    key_points: list[str] = []
    for sentence in candidates:
        sentence = _clean(sentence)
        if len(sentence.split()) >= 5 and sentence not in key_points:
            key_points.append(sentence)
        if len(key_points) == 5:
            break
    return reasoning, [f"{i}. {kp}" for i, kp in enumerate(key_points, 1)]


_EVIDENCE_TYPE = {"image": "Image", "video": "Video", "webpage": "Text"}


def extract_evidence(article: TaggedArticle, post: Post, key_points: list[str]) -> list[Evidence]:
    """One evidence item per link cited as a finding, aligned to the key point quoting its sentence.

    The post's own links and archive captures in the opening count as evidence only when the article
    cites them again later (e.g. quoting the post's source as a finding).
    """
    links = {link.id: link for link in article.links}
    raw = _paragraphs(article.text)
    if raw and _is_lead_image(raw[0], links):
        raw = raw[1:]
    cited_later = {i for p in raw[OPENING_PARAGRAPHS:] for i in _link_ids(p)}
    cited_later |= {i for p in raw[1:OPENING_PARAGRAPHS] if not p.startswith(">") for i in _link_ids(p)}
    post_urls = {post.post_link, post.video_link, *post.image_links}
    evidence: list[Evidence] = []
    for link in article.links:
        if link.id not in cited_later and (link.url in post_urls or _on(link.url, ARCHIVE_HOSTS)):
            continue
        context = link.context or link.anchor or None
        aligned = [
            i for i, kp in enumerate(key_points, 1) if context and kp.split(". ", 1)[-1][:60] in context
        ]
        evidence.append(
            Evidence(
                id=len(evidence) + 1,
                type=_EVIDENCE_TYPE[link.kind],
                description=context,
                content=context,
                source=_host(link.url) or None,
                url=link.url,
                key_point_ids=aligned,
            )
        )
    return evidence


class OfflineExtractor:
    """Deterministic extraction; same interface as the LLM backend's per-article call."""

    backend = "offline"

    def provenance(self) -> Provenance:
        return Provenance(backend=self.backend, model=None, prompt_version=PROMPT_VERSION)

    def extract(self, article: TaggedArticle) -> Extraction:
        """Post, rationale and evidence of one article by the rules of this module.

        A text that tags a link id its link table lacks raises :class:`RecordError` (the stage sets the
        article aside): the rules look every tag up.
        """
        known = {link.id for link in article.links}
        for match in TAG_RE.finditer(article.text):
            if int(match.group(2)) not in known:
                problem = f"the text tags link {match.group(2)}, which the link table lacks"
                raise RecordError(problem, record_id=article.id, field="links")
        post = extract_post(article)
        reasoning, key_points = extract_rationale(article)
        return Extraction(
            id=article.id,
            news_url=article.news_url,
            post=post,
            reasoning_logic=reasoning,
            key_points=key_points,
            evidence=extract_evidence(article, post, key_points),
            provenance=self.provenance(),
        )
