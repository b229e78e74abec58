"""An outage is not an answer, for images too (issue 27): an article image whose fetch failed for a
transport reason (HTTP 5xx, a connection error, a timeout) is fetched again by the next crawl, which
says how many; a 404, a refusal or bytes that are no image stay final."""

from __future__ import annotations

import pytest

from rwpost.crawl import run_crawl
from rwpost.images import transient_image_error
from rwpost.io import read_records
from rwpost.records import CrawledArticle
from rwpost.sample.serve import SampleServer
from tests.killing import SITE, crawl_options

ARTICLES = 4


class ImageOutage(SampleServer):
    """The sample site, whose images answer 520 (a 5xx the run does not retry itself) while ``down``,
    except the first image asked for, which is gone for good (404)."""

    def __init__(self, site_dir) -> None:
        super().__init__(site_dir)
        self.down = True
        self.gone: str | None = None

    def respond(self, path: str, host: str = "127.0.0.1") -> tuple[int, dict[str, str], bytes]:
        if path.startswith("/uploads/"):
            self.gone = self.gone or path
            if path == self.gone:
                return 404, {"Content-Type": "text/plain"}, b"not found"
            if self.down:
                return 520, {"Content-Type": "text/plain"}, b"origin error"
        return super().respond(path, host)


def images(out) -> dict[str, tuple[str, str | None]]:
    """Every stored image URL's path -> (its article's id, its error; None: stored)."""
    found = {}
    for record in read_records(out / "articles.jsonl", CrawledArticle):
        for image in record.images:
            found[image.url.split("/", 3)[3]] = (record.id, image.error)
    return found


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        ("HTTP 503", True),
        ("HTTP 520", True),
        ("HTTP 429", True),
        ("DownloadConnectionRefusedError: Connection was refused by other side: 111.", True),
        ("TimeoutError: Getting http://x/a.jpg took longer than 30.0 seconds.", True),
        ("ResponseNeverReceived: [<twisted.python.failure.Failure ConnectionLost>]", True),
        ("refused: cannot resolve host 'cdn.example' ([Errno -3] Temporary failure)", True),
        ("HTTP 404", False),
        ("HTTP 403", False),
        ("IgnoreRequest: Forbidden by robots.txt", False),
        ("refused: larger than the image size cap (10485760 bytes)", False),
        ("refused: 10.0.0.1 resolves to a private, link-local or reserved address (10.0.0.1)", False),
        ("not an image: the bytes are no known image format", False),
        ("broken image: image file is truncated", False),
        ("decompression bomb: 20000x20000 = 400000000 pixels > 50000000", False),
        (None, False),
    ],
)
def test_outages_are_told_from_answers(error, transient):
    assert transient_image_error(error) is transient


def test_images_an_outage_failed_are_fetched_again_by_the_next_crawl(tmp_path):
    out = tmp_path / "crawl"
    with ImageOutage(SITE) as server:
        first = run_crawl(crawl_options(server, out, max_articles=ARTICLES))
        failed = images(out)
        gone = server.gone.lstrip("/")
        assert failed[gone][1] == "HTTP 404"
        outage = sorted(path for path, (_id, error) in failed.items() if error == "HTTP 520")
        assert outage and first["this_run"]["images_retried"] == 0

        server.down = False  # the next run (which also fetches new articles up to its budget)
        second = run_crawl(crawl_options(server, out, max_articles=ARTICLES))
        assert second["this_run"]["images_retried"] == len(outage)
        assert second["this_run"]["refetch_failed_images"] == len({failed[path][0] for path in outage})
        after = images(out)
        assert all(after[path][1] is None for path in outage) and after[gone][1] == "HTTP 404"

        third = run_crawl(crawl_options(server, out, max_articles=ARTICLES))
        assert third["this_run"]["images_retried"] == third["this_run"]["refetch_failed_images"] == 0
