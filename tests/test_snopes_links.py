"""Link identity, kinds and canonical image URLs (snopes/links.py)."""

from __future__ import annotations

from urllib.parse import urljoin

import pytest

from rwpost.snopes.links import canonical_image_url, join_url, link_identity, link_kind
from rwpost.tagged import tag_html


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("https://us-east-1.tchyn.io/snopes-production/uploads/2018/04/x.jpg", "https://www.snopes.com/uploads/2018/04/x.jpg"),
        ("https://www.snopes.com/uploads/2018/04/x.jpg", "https://www.snopes.com/uploads/2018/04/x.jpg"),
        ("https://www.snopes.com/tachyon/2018/11/x.jpg?resize=865,452", "https://www.snopes.com/uploads/2018/11/x.jpg"),
        ("https://media.snopes.com/2023/06/q.png", "https://www.snopes.com/uploads/2023/06/q.png"),
        ("https://mediaproxy.snopes.com/width/600/https://media.snopes.com/2023/06/q.png", "https://www.snopes.com/uploads/2023/06/q.png"),
        ("https://media-proxy.snopes.com/width/600?url=https://media.snopes.com/2024/02/s.png", "https://www.snopes.com/uploads/2024/02/s.png"),
        ("https://example.com/uploads/2018/04/x.jpg", "https://example.com/uploads/2018/04/x.jpg"),
    ],
)  # fmt: skip
def test_canonical_image_url(url, canonical):
    assert canonical_image_url(url) == canonical


def test_one_identity_per_tweet_and_video_kinds():
    assert link_identity("https://x.com/a/status/12?s=20") == link_identity("https://twitter.com/i/status/12")
    assert link_identity("https://x.com/a/status/12") != link_identity("https://x.com/a/status/13")
    fb = "https://www.facebook.com/plugins/video.php?href=https%3A%2F%2Fwww.facebook.com%2Fa%2Fvideos%2F1%2F"
    assert link_kind(fb) == "video"
    assert link_kind("https://content.jwplatform.com/players/X8vj1YQT-Rw1YG0C0.html") == "video"
    html = (
        '<div class="entry-content"><p>See <a href="https://example.com/full.jpg">'
        '<img src="https://example.com/full-300x200.jpg" alt="meme"></a></p></div>'
    )
    tagged = tag_html(html, "https://www.snopes.com/fact-check/x/")
    assert [(link.kind, link.url, link.anchor) for link in tagged.links] == [
        ("image", "https://example.com/full.jpg", "meme")
    ]


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("https://www.youtube.com/watch?v=1zNr8Pf1QkY", "video"),
        ("https://youtu.be/abc", "video"),
        ("https://www.tiktok.com/@user/video/7477409691056950574", "video"),
        ("https://vimeo.com/12345", "video"),
        ("https://www.instagram.com/reel/Cabc/", "video"),
        ("https://www.instagram.com/p/DXw34faDgEt/", "webpage"),
        ("https://www.facebook.com/anonews.co/videos/1982299498448266/?hc_ref=x", "video"),
        ("https://www.facebook.com/photo.php?fbid=1", "webpage"),
        ("https://x.com/sot6ixtv/status/1896415374754918673", "webpage"),
        ("https://web.archive.org/web/2019/https://example.com/photo.jpg", "webpage"),
        ("https://archive.ph/IZsNO", "webpage"),
        ("https://www.snopes.com/uploads/2017/09/Patriot-Voice-Kirkmere-Picture.jpg", "image"),
        (
            "https://mediaproxy.snopes.com/width/600/https://media.snopes.com/2023/06/reddit-quaker.png",
            "image",
        ),
        ("https://media-proxy.snopes.com/width/600?url=https://media.snopes.com/2024/02/sign.png", "image"),
        ("https://pbs.twimg.com/media/abc?format=jpg&name=small", "image"),
        ("https://example.com/clip.MP4", "video"),
        ("https://lawler.house.gov/uploadedfiles/pikerowens-final-text.pdf", "webpage"),
    ],
)
def test_link_kind_by_extension_and_known_hosts(url, kind):
    assert link_kind(url) == kind


@pytest.mark.parametrize(
    "href",
    [
        "https://www.snopes.com/fact-check/x/",
        "http://Example.com/a/../b",
        "HTTPS://example.com/a",
        "https://example.com/a?b=1#c",
        "http://",
        "https:///path",
        "http://[::1]/x",
        "/relative/path",
        "other.html",
        "//cdn.example.com/i.png",
        "https://ex ample.com/a b",
    ],
)
def test_join_url_is_urljoin(href):
    base = "https://www.snopes.com/fact-check/some-claim/"
    assert join_url(base, href) == urljoin(base, href)


@pytest.mark.parametrize(
    "base",
    ["https://www.snopes.com/a/b", "http://h?q=1", "https://u@h:80/x#f", "http://[::1]/x", "ftp://h/x"],
)
@pytest.mark.parametrize(
    "href", ["/uploads/a.jpg", "/a/", "/a//b", "/a/./b", "/a/../b", "/.x", "/a;b", "/a?", "/a#", "/a b", "/"]
)
def test_join_url_of_a_path_from_the_root_is_urljoin(base, href):
    assert join_url(base, href) == urljoin(base, href)
