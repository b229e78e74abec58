"""Link rules of a page: the real URL of an image, the URL an embedded post or player stands for, which
hrefs are links at all, and each link's kind (image, video or webpage) by extension and known hosts.

Shared by the crawler (the images it downloads) and the tagger (the links it numbers), so the link the
text gives is the one the crawler downloads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from html import unescape
from typing import Any
from urllib.parse import parse_qs, unquote, urljoin

from rwpost.records import LinkKind
from rwpost.snopes.select import Node, classes
from rwpost.urls import url_host, url_parts

IMAGE_EXTENSIONS = frozenset("jpg jpeg png gif webp bmp tif tiff svg avif heic jfif".split())
VIDEO_EXTENSIONS = frozenset("mp4 m4v mov webm mkv avi wmv flv mpeg mpg m3u8 3gp ogv gifv".split())
ARCHIVE_HOSTS = ("web.archive.org", "archive.org", "archive.today", "archive.ph", "archive.is", "archive.li")
ARCHIVE_HOSTS += ("archive.md", "archive.vn", "archive.fo", "perma.cc", "ghostarchive.org")
VIDEO_HOSTS = ("youtube.com", "youtu.be", "youtube-nocookie.com", "tiktok.com", "vimeo.com", "rumble.com")
VIDEO_HOSTS += ("dailymotion.com", "bitchute.com", "streamable.com", "twitch.tv")
VIDEO_HOSTS += ("jwplatform.com",)  # JW Player: content.jwplatform.com/players/<id>.html (2018 bodies)

IMAGE_SRC_ATTRIBUTES: tuple[str, ...] = ("data-lazy-src", "data-src", "data-original", "src")
"""Where an ``<img>`` keeps its real URL, lazy-load attributes first."""
IMAGE_SRCSET_ATTRIBUTES: tuple[str, ...] = ("data-lazy-srcset", "data-srcset", "srcset")

_SKIP_SCHEMES = ("mailto:", "javascript:", "tel:", "sms:", "data:", "about:")


def _host(url: str) -> str:
    host = url_host(url)
    return host[4:] if host.startswith("www.") else host


def _host_is(host: str, domains: tuple[str, ...]) -> bool:
    return any(host == d or host.endswith("." + d) for d in domains)


def _extension(path: str) -> str:
    last = unquote(path).rsplit("/", 1)[-1]
    return last.rsplit(".", 1)[-1].lower() if "." in last else ""


def link_kind(url: str) -> LinkKind:
    """Image, video or webpage, by file extension and by known hosts.

    Archive captures (archive.org, archive.today and mirrors, perma.cc) are webpages whatever they
    captured; video platforms and Facebook/Instagram video URLs are videos; X/Twitter posts are
    webpages (a post may hold a video, but the URL names the post); image CDNs that put the file
    in a query (``media-proxy.snopes.com/width/600?url=...png``, ``pbs.twimg.com/...?format=jpg``)
    are images.
    """
    parts = url_parts(url)
    host = _host(url)
    path = parts.path or ""
    if _host_is(host, ARCHIVE_HOSTS):
        return "webpage"
    if _host_is(host, VIDEO_HOSTS):
        return "video"
    if _host_is(host, ("facebook.com", "fb.watch")) and (
        host.endswith("fb.watch")
        or "/videos/" in path
        or path.startswith("/watch")
        or "/reel/" in path
        or path.startswith("/plugins/video.php")  # the Facebook video player (iframe ?href=.../videos/...)
    ):
        return "video"
    if _host_is(host, ("instagram.com",)) and ("/reel/" in path or "/reels/" in path or "/tv/" in path):
        return "video"
    extension = _extension(path)
    if extension in IMAGE_EXTENSIONS:
        return "image"
    if extension in VIDEO_EXTENSIONS:
        return "video"
    query = parse_qs(parts.query)
    for key in ("url", "src", "u"):
        for inner in query.get(key, []):
            inner_ext = _extension(url_parts(inner).path)
            if inner_ext in IMAGE_EXTENSIONS:
                return "image"
            if inner_ext in VIDEO_EXTENSIONS:
                return "video"
    fmt = (query.get("format") or [""])[0].lower()
    if fmt in IMAGE_EXTENSIONS:
        return "image"
    return "webpage"


_PLAIN_ABSOLUTE = re.compile(
    r"https?://[!$%&'()*+,\-.0-9:=@A-Z_a-z~]+(?:/[!$%&'()*+,\-./0-9:=@A-Z_a-z~]*)?"
    r"(?:\?[!$%&'()*+,\-./0-9:=?@A-Z_a-z~]+)?(?:#[!#$%&'()*+,\-./0-9:=?@A-Z_a-z~]+)?"
)
"""An absolute http(s) URL that ``urljoin`` returns unchanged (no parameters, brackets, spaces, empty query
or fragment, or other characters it would rewrite)."""


def join_url(base: str, url: str) -> str:
    """``urljoin(base, url)``, without its cost for an absolute URL it would return unchanged."""
    return url if _PLAIN_ABSOLUTE.fullmatch(url) else urljoin(base, url)


def resolve_link(url: str | None, base_url: str | None) -> str | None:
    """An absolute http(s) URL, or None for anchors, scripts, mail links and placeholders."""
    if not url:
        return None
    url = unescape(url).strip()
    if not url or url.startswith("#") or url.lower().startswith(_SKIP_SCHEMES):
        return None
    if url.startswith("//"):
        url = "https:" + url
    if base_url and not url.lower().startswith(("http://", "https://")):
        url = urljoin(base_url, url)  # absolute URLs stay exactly as written
    if not url.lower().startswith(("http://", "https://")):
        return None
    return url


def image_url_from_attrs(attrs: Mapping[str, Any]) -> str | None:
    """The real image URL of a possibly lazy-loaded ``<img>`` from its attributes; data: URLs skipped."""
    for attr in IMAGE_SRC_ATTRIBUTES:
        value = attrs.get(attr)
        if isinstance(value, str) and value.strip() and not value.strip().startswith("data:"):
            return value.strip()
    for attr in IMAGE_SRCSET_ATTRIBUTES:
        value = attrs.get(attr)
        if isinstance(value, str) and value.strip():
            candidates = [c.strip().split(" ")[0] for c in value.split(",") if c.strip()]
            if candidates:
                return candidates[-1]
    return None


def image_url(img: Node) -> str | None:
    """The real image URL of an ``<img>`` element."""
    return image_url_from_attrs(img.attrib)


def embed_url(node: Node) -> str | None:
    """The URL an embedded post or player stands for (iframes, tweet boxes, social blockquotes)."""
    if node.tag == "iframe":
        src = node.get("data-src") or node.get("src") or node.get("data-lazy-src")
        return src if isinstance(src, str) else None
    if node.tag == "video":
        src = node.get("src") or node.get("data-src")
        if not src:
            source = next(node.iterdescendants("source"), None)
            src = source.get("src") if source is not None else None
        return src if isinstance(src, str) else None
    tweet_id = node.get("data-tweet-id")
    if isinstance(tweet_id, str) and tweet_id.strip().isdigit():
        # Snopes renders tweets client-side from an empty div.twitter_tweet_display_box[data-tweet-id]
        return f"https://twitter.com/i/status/{tweet_id.strip()}"
    for attr in ("data-instgrm-permalink", "cite", "data-href"):
        value = node.get(attr)
        if isinstance(value, str) and value.strip():
            return value
    return None


def is_embed(node: Node) -> bool:
    """An embedded post or player (tagged as one link where it stands)."""
    names = classes(node)
    if node.tag in ("iframe", "video"):
        return True
    if node.get("data-tweet-id"):
        return True
    if node.tag == "blockquote" and re.search(r"twitter-tweet|instagram-media|tiktok-embed|fb-xfbml", names):
        return True
    return node.tag == "div" and bool(re.search(r"\bfb-(post|video)\b", names))


# --- one identity per file or post ---------------------------------------------------------------

SNOPES_UPLOADS = "https://www.snopes.com/uploads/"
"""The canonical form of a Snopes image (the form of the released RW-Post records)."""
_SNOPES_HOSTS = ("www.snopes.com", "snopes.com")
_PROXY_HOSTS = ("mediaproxy.snopes.com", "media-proxy.snopes.com")
_PROXY_PATH = re.compile(r"^/width/\d+/+(https?):/+(.+)$")
_YEAR_MONTH = re.compile(r"^/(\d{4}/\d{2}/.+)$")
_TWEET = re.compile(r"^/(?:i/(?:web/)?|[A-Za-z0-9_]+/)status(?:es)?/(\d+)")
_TWITTER_HOSTS = ("twitter.com", "x.com", "mobile.twitter.com", "mobile.x.com")


def canonical_image_url(url: str) -> str:
    """One URL per Snopes image file whatever era wrote it, else ``url`` unchanged.

    ``us-east-1.tchyn.io/snopes-production/uploads/Y/M/f`` (2018 bodies),
    ``www.snopes.com/tachyon/Y/M/f?resize=`` (2018-2021), ``media.snopes.com/Y/M/f``,
    ``mediaproxy.snopes.com/width/N/<url>`` and ``media-proxy.snopes.com/width/N?url=<url>`` (2022+)
    all become ``https://www.snopes.com/uploads/Y/M/f``, the form of the released records.
    """
    parts = url_parts(url)
    host = (parts.hostname or "").lower()
    path = parts.path or ""
    if host in _PROXY_HOSTS:
        match = _PROXY_PATH.match(path)
        if match:
            return canonical_image_url(f"{match.group(1)}://{match.group(2)}")
        inner = (parse_qs(parts.query).get("url") or [""])[0]
        return canonical_image_url(inner) if inner.startswith(("http://", "https://")) else url
    rest = None
    if host == "us-east-1.tchyn.io" and path.startswith("/snopes-production/uploads/"):
        rest = path[len("/snopes-production/uploads/") :]
    elif host in _SNOPES_HOSTS and path.startswith(("/uploads/", "/tachyon/")):
        rest = path.split("/", 2)[2]
    elif host == "media.snopes.com" and _YEAR_MONTH.match(path):
        rest = path[1:]
    return SNOPES_UPLOADS + rest if rest else url


def tweet_id(url: str) -> str | None:
    """The status id of an X/Twitter post URL (``x.com/u/status/N``, ``twitter.com/i/status/N``)."""
    parts = url_parts(url)
    host = (parts.hostname or "").lower()
    host = host[4:] if host.startswith("www.") else host
    if host not in _TWITTER_HOSTS:
        return None
    match = _TWEET.match(parts.path or "")
    return match.group(1) if match else None


def link_identity(url: str) -> str:
    """What makes two links one: a tweet's status id, a Snopes image's canonical URL, else the URL."""
    status = tweet_id(url)
    if status is not None:
        return f"tweet:{status}"
    return canonical_image_url(url)


def same_image(first: str, second: str) -> bool:
    """Two URLs of one image file (:func:`canonical_image_url`)."""
    return canonical_image_url(first) == canonical_image_url(second)
