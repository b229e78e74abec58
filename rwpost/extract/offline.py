"""The offline extraction backend: deterministic rules over a tagged article, no API needed.

It is the default when no API key is set, so ``dvc repro`` runs anywhere; the dataset card names the
backend (``Provenance.backend == "offline"``). The rules follow how real Snopes articles of every era
are written (tuned on the four real 2018 articles with the authors' record, checked on the other
hand-labelled real pages; see ``tests/test_extract_offline.py``):

- the **post** is described in the origin text, the paragraphs before the verdict: a social-media or
  archive link in a sentence that says where the claim was shared ("posted to the Facebook page",
  "a video spread online", "One TikTok user posted a clip"), else the image, video or embedded post a
  paragraph introduces with a colon ("... circulated on social media:", "featured the following
  image:"), else a web page in a sentence that says it published or spread the claim. The rating
  icon, author, tag, related-article and share links are never the post;
- the **rationale** is in the conclusion: paragraphs that state the verdict ("we rated ...", "is
  false", the rating word) give the reasoning logic, and verdict plus evidence-bearing sentences give
  3-5 key points;
- the **evidence** is every link the article cites as a source, the post included, less what is
  never evidence: Snopes' own pages (tags, authors, ratings, related articles; its uploaded images
  stay), share and hashtag links, a tweet's own picture links, captures that repeat the link just
  before them ("(archived)"), runs of three or more links in one sentence (examples of the
  claim spreading, not findings), and the image a sentence citing a web page introduces with a colon
  (a picture of that page: its clipping, the photo it licenses; the page is the source, cited once).
"""

from __future__ import annotations

import re

from rwpost.errors import RecordError
from rwpost.records import Evidence, Extraction, Link, Post, Provenance, TaggedArticle
from rwpost.snopes.links import ARCHIVE_HOSTS, link_identity
from rwpost.tagged import TAG_RE, link_context, sentence_spans, strip_tags
from rwpost.urls import evidence_key, url_host, url_parts

PROMPT_VERSION = "offline-rules-v4"
RULE_CHANGES = {
    "offline-rules-v4": "since offline-rules-v3, the article's cover (its lead image) is evidence only where "
    "the body cites it, in the body's place and described by the body's sentence; v3 made it the first "
    "evidence item of each article whose body shows it, described by its alt text (`cover`)",
}
"""What each version of these rules changed in the records (a published card names it)."""

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
CAPTURE_HOSTS = (*ARCHIVE_HOSTS, "perma.cc", "ghostarchive.org")
ORIGIN_PARAGRAPHS = 6
"""How many prose paragraphs (after the lead image) may describe the claim's post, at most."""
INTRODUCED_WITHIN = 4
"""How many paragraphs after a colon an introduced image, video or embedded post may stand."""

_PLATFORM = re.compile(
    r"\b(facebook|twitter|tweet\w*|x user|on x|instagram|tiktok|reddit|youtube|threads|bluesky|"
    r"truth social|telegram|social media|social|online|internet|viral|meme|chain (?:e-?mail|letter)|"
    r"(?:page|account|user|group|profile)s?\b)",
    re.IGNORECASE,
)
_SPREAD = re.compile(
    r"\b(shar(?:e|ed|ing)|post(?:ed|ing)?|circulat\w*|spread\w*|viral|went around|making the rounds|"
    r"passed around|claim\w*|purport\w*|alleg\w*|rumou?r\w*|hoax|meme|appear\w*|stat(?:ed|ing)|"
    r"read(?:s|ing)?|reported|published|wrote|tweet\w*|uploaded|screenshot|featured|the following|"
    r"(?:image|photo\w*|picture|video|clip|footage|graphic|message|article|story|post)s?\b)",
    re.IGNORECASE,
)
_PUBLISHED = re.compile(
    r"\b(publish\w*|posted|shared|circulat\w*|spread|viral|claimed|reported that|fake news|junk news|"
    r"hoax|satir\w*|website|web site|blog)\b",
    re.IGNORECASE,
)
_VERDICT = re.compile(
    r"\b(we(?:'ve| have)? rated|rated (?:this|the|it|that)|our rating|in (?:sum|short|conclusion)|"
    r"therefore|as such|thus|is (?:false|true|fake|fabricated|satire|miscaptioned|misleading|unproven)|"
    r"(?:claim|rumor|story|post|video|photograph|image|picture|meme) (?:is|was) "
    r"(?:false|true|fake|fabricated|satire|not|mostly|a hoax))\b",
    re.IGNORECASE,
)
_QUOTE = re.compile(r"[\"“]([^\"“”]{30,}?)[\"”]")
_NOT_A_POST_PATH = re.compile(
    r"^/(?:hashtag|search|intent|share|sharer|home|i/flow|explore|tags?|watch\?|plugins/(?!video))",
    re.IGNORECASE,
)
_SNOPES_PAGES = re.compile(r"^/(?!uploads/|tachyon/|wp-content/|\d{4}/\d{2}/[^/]+\.\w{3,4}$)")


def _host(url: str) -> str:
    host = url_host(url)
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


def _is_media(paragraph: str) -> bool:
    """A paragraph that is only tags (an image, a player, an embedded post), maybe with a caption."""
    body = paragraph.lstrip("> ").strip()
    return bool(TAG_RE.match(body)) and len(strip_tags(body).split()) <= 12


def _is_lead_image(paragraph: str, links: dict[int, Link]) -> bool:
    ids = _link_ids(paragraph)
    return len(ids) == 1 and links[ids[0]].kind == "image" and paragraph.lstrip().startswith("[IMAGE")


def is_snopes_page(url: str) -> bool:
    """A Snopes page (article, tag, author, rating, category), not a file Snopes hosts."""
    return _on(url, ("snopes.com",)) and bool(_SNOPES_PAGES.match(url_parts(url).path or "/"))


def is_never_evidence(url: str) -> bool:
    """Links that are never evidence nor the post: Snopes' own pages, share, hashtag, search, a tweet's
    ``t.co`` picture link, social profiles without a post."""
    if is_snopes_page(url):
        return True
    host, path = _host(url), url_parts(url).path or "/"
    if host in ("t.co", "bit.ly", "ads.example.com") or _NOT_A_POST_PATH.match(path):
        return True
    if _on(url, ("twitter.com", "x.com")) and "/status" not in path:
        return True  # a profile, a hashtag or a list, not a post
    segments = [s for s in path.split("/") if s]
    if _on(url, (*SOCIAL_HOSTS, "flickr.com")) and not _on(url, ("youtu.be",)) and not url_parts(url).query:
        return len(segments) - (segments[:1] == ["photos"]) <= 1  # a user's profile, not a post
    return False


def _is_post_like(link: Link) -> bool:
    """A link that can be the post itself: a social post, a capture of one, a player or an image."""
    if is_never_evidence(link.url):
        return False
    return link.kind in ("image", "video") or _on(link.url, SOCIAL_HOSTS) or _on(link.url, CAPTURE_HOSTS)


def _sentence_of(paragraph: str, link_id: int) -> str:
    for sentence in _sentences(paragraph):
        if any(i == link_id for i in _link_ids(sentence)):
            return sentence
    return paragraph


def _origin(article: TaggedArticle) -> tuple[list[str], str | None]:
    """The paragraphs before the verdict (at most :data:`ORIGIN_PARAGRAPHS` prose ones), and the lead image
    URL when the text opens with one."""
    links = {link.id: link for link in article.links}
    paragraphs = _paragraphs(article.text)
    lead = None
    if paragraphs and _is_lead_image(paragraphs[0], links):
        lead = links[_link_ids(paragraphs[0])[0]].url
        paragraphs = paragraphs[1:]
    origin: list[str] = []
    prose = 0
    for paragraph in paragraphs:
        is_prose = not paragraph.startswith(">") and not _is_media(paragraph)
        if is_prose:
            if prose >= ORIGIN_PARAGRAPHS or (prose and _VERDICT.search(strip_tags(paragraph))):
                break
            prose += 1
        origin.append(paragraph)
    return origin, lead


def _introduced(origin: list[str], index: int, links: dict[int, Link]) -> list[Link]:
    """Post-like links of the media and quoted paragraphs that the paragraph at ``index`` introduces."""
    found: list[Link] = []
    for paragraph in origin[index + 1 : index + 1 + INTRODUCED_WITHIN]:
        if (
            not paragraph.startswith(">")
            and not _is_media(paragraph)
            and strip_tags(paragraph).count(" ") > 3
        ):
            break  # the next prose paragraph: the introduction is over
        found.extend(links[i] for i in _link_ids(paragraph) if _is_post_like(links[i]))
    return found


def _best_of_embed(candidates: list[Link]) -> Link:
    """Of the links of one introduced embed, the post itself (a status beats a player beats an image)."""
    for link in candidates:
        if _on(link.url, SOCIAL_HOSTS) and link.kind != "image":
            return link
    return candidates[0]


def find_post_link(article: TaggedArticle) -> tuple[Link | None, list[Link]]:
    """The post's link by the rules of the module docstring, and the post-like links of the origin."""
    links = {link.id: link for link in article.links}
    origin, _ = _origin(article)
    seen: list[Link] = []
    for index, paragraph in enumerate(origin):
        if paragraph.startswith(">") or _is_media(paragraph):
            continue
        ids = _link_ids(paragraph)
        for link_id in ids:  # 1. a social post or capture where the sentence says it was shared there
            link = links[link_id]
            sentence = strip_tags(_sentence_of(paragraph, link_id))
            if _is_post_like(link) and link.kind != "image" and _PLATFORM.search(sentence):
                if _SPREAD.search(sentence) and len(set(_link_ids(_sentence_of(paragraph, link_id)))) < 4:
                    return link, seen
        text = strip_tags(paragraph).rstrip()
        if text.endswith(":") and _SPREAD.search(text):  # 2. what a colon introduces
            introduced = _introduced(origin, index, links)
            if introduced:
                return _best_of_embed(introduced), seen
        for link_id in ids:  # 3. a web page said to have published or spread the claim
            link = links[link_id]
            sentence = strip_tags(_sentence_of(paragraph, link_id))
            if (
                link.kind == "webpage"
                and not is_never_evidence(link.url)
                and not _on(link.url, SOCIAL_HOSTS)
                and _PUBLISHED.search(sentence)
                and index < 2
            ):
                return link, seen
        seen.extend(links[i] for i in ids)
    return None, seen


def extract_post(article: TaggedArticle) -> Post:
    """The claim's post from the origin text (see the module docstring)."""
    links = {link.id: link for link in article.links}
    origin, _ = _origin(article)  # the lead image is the article's illustration, not the post
    post, _ = find_post_link(article)
    images: list[str] = []
    video_link = None
    if post is not None:
        if post.kind == "image":
            images.append(post.url)
        elif post.kind == "video":
            video_link = post.url
    # images and videos the origin introduces with a colon are the post's too ("... shared online:")
    for index, paragraph in enumerate(origin):
        if paragraph.startswith(">") or _is_media(paragraph):
            continue
        text = strip_tags(paragraph).rstrip()
        if text.endswith(":") and _SPREAD.search(text):
            introduced = _introduced(origin, index, links)
            for link in introduced:
                if link.kind == "image" and link.url not in images:
                    images.append(link.url)
                elif link.kind == "video" and video_link is None:
                    video_link = link.url
            if introduced:
                break
        for link_id in _link_ids(paragraph):
            link = links[link_id]
            sentence = strip_tags(_sentence_of(paragraph, link_id))
            if link.kind == "video" and video_link is None and _SPREAD.search(sentence):
                video_link = link.url
    text = None
    for paragraph in origin:
        if text is None and paragraph.startswith(">"):
            quoted = strip_tags(paragraph)
            if len(quoted.split()) >= 6:
                text = quoted  # a blockquote in the origin: the post as the article shows it
        if text is None:
            quote = _QUOTE.search(strip_tags(paragraph))
            if quote and len(quote.group(1).split()) >= 6:
                text = quote.group(1).strip()
    post_link = post.url if post is not None and post.kind != "image" else None  # an image is image_links
    return Post(text=text, image_links=images, video_link=video_link, post_link=post_link)


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
        if not ids or all(_on(links[i].url, SOCIAL_HOSTS + CAPTURE_HOSTS) for i in ids):
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


def _repeats_previous(text: str, match: re.Match[str]) -> bool:
    """A capture right after another link ("[post] (archived [capture])"): the same post again."""
    before = text[max(0, match.start() - 40) : match.start()]
    return bool(re.search(r"\]\s*\(?\s*(?:archived|archive|captured|saved)\s*(?:here|version)?\s*$", before))


def _cites_a_page(link: Link, excluded: set[int]) -> bool:
    """A web page cited as a source: not a post, a capture or a player, and not set aside."""
    return (
        link.kind == "webpage"
        and link.id not in excluded
        and not is_never_evidence(link.url)
        and not _on(link.url, SOCIAL_HOSTS + CAPTURE_HOSTS)
    )


def _pictures_of_cited_pages(article: TaggedArticle, links: dict[int, Link], excluded: set[int]) -> set[int]:
    """Images a sentence citing a web page introduces with a colon ("Here is a blurb [page] about the
    stunt:", "A second photograph available via Getty Images [page] shows ...:"): a picture of that page
    (its clipping, the photo it licenses, a screenshot), so one source, cited once, by its link. An image
    introduced after a post or a capture is the post's own picture and stays."""
    pictures: set[int] = set()
    paragraphs = _paragraphs(article.text)
    for before, paragraph in zip(paragraphs, paragraphs[1:], strict=False):
        if before.startswith(">") or _is_media(before) or not strip_tags(before).rstrip().endswith(":"):
            continue
        if _is_media(paragraph) and any(_cites_a_page(links[i], excluded) for i in _link_ids(before)):
            pictures.update(i for i in _link_ids(paragraph) if links[i].kind == "image")
    return pictures


def evidence_links(article: TaggedArticle) -> list[Link]:
    """The links the article cites as sources, in the body's order, one per identity (see the module
    docstring). The cover (the lead image, tagged first) illustrates the article: it is evidence only where
    the body cites it again, in that place and with the body's sentence as its context."""
    links = {link.id: link for link in article.links}
    paragraphs = _paragraphs(article.text)
    lead = paragraphs[0] if paragraphs and _is_lead_image(paragraphs[0], links) else None
    body = article.text.split(lead, 1)[1] if lead is not None else article.text
    cited = [links[i] for i in dict.fromkeys(int(m.group(2)) for m in TAG_RE.finditer(body))]
    if lead is not None:
        cover = _link_ids(lead)[0]
        cited = [
            link.model_copy(update={"anchor": "", "context": link_context(body, cover)})
            if link.id == cover
            else link
            for link in cited
        ]
    excluded: set[int] = set()
    for paragraph in _paragraphs(article.text):
        for sentence in _sentences(paragraph):
            ids = list(dict.fromkeys(_link_ids(sentence)))
            if len(ids) >= 3 and not _is_media(sentence):
                excluded.update(ids)  # "many [1] of [2] these [3] images": examples, not findings
        for match in TAG_RE.finditer(paragraph):
            link_id = int(match.group(2))
            if _on(links[link_id].url, CAPTURE_HOSTS) and _repeats_previous(paragraph, match):
                excluded.add(link_id)
    excluded |= _pictures_of_cited_pages(article, links, excluded)
    chosen: list[Link] = []
    identities: set[str] = set()
    for link in cited:
        if link.id in excluded or is_never_evidence(link.url):
            continue
        identity = link_key(link.url)
        if identity in identities:
            continue
        identities.add(identity)
        chosen.append(link)
    return chosen


def link_key(url: str) -> str:
    """One key per linked thing: tweets by status, Snopes images by file, videos by id, else the URL as
    evidence is compared (:func:`rwpost.urls.evidence_key`)."""
    identity = link_identity(url)
    video = re.search(
        r"(?:youtube(?:-nocookie)?\.com/(?:embed/|watch\?v=|shorts/)|youtu\.be/)([\w-]{6,})", url
    )
    if video:
        return f"youtube:{video.group(1)}"
    return evidence_key(identity) if identity.lower().startswith(("http://", "https://")) else identity


def extract_evidence(article: TaggedArticle, post: Post, key_points: list[str]) -> list[Evidence]:
    """One evidence item per link cited as a source, aligned to the key point quoting its sentence."""
    evidence: list[Evidence] = []
    for link in evidence_links(article):
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
