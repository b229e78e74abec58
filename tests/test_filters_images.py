"""Bad images are decisions with reasons, never crashes (issue 6): truncated, bomb, GIF, CMYK, 404.

Every image here is generated in the test (photos from scikit-image's bundled samples, or synthetic).
"""

from __future__ import annotations

import http.server
import struct
import threading
import zlib
from pathlib import Path

import pytest
from PIL import Image
from skimage import data as skdata

from rwpost.filters.candidates import fetch_missing
from rwpost.filters.images import open_rgb, probe_image
from rwpost.filters.neardup import NearDuplicateFilter
from rwpost.filters.size import SizeFilter
from rwpost.records import Candidate


def _decide(candidate: Candidate, **params):
    flt = SizeFilter()
    return flt.decide(flt.measure(candidate), flt.Params(**params))


def _photo(path: Path, fmt: str = "JPEG", mode: str = "RGB", size: tuple[int, int] | None = None) -> Path:
    image = Image.fromarray(skdata.astronaut())
    if size:
        image = image.resize(size)
    image.convert(mode).save(path, fmt)
    return path


def _png_bomb(path: Path, side: int = 100_000) -> Path:
    """A tiny PNG file whose header claims side x side pixels (10^10): the classic decompression bomb."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body))
            + kind
            + body
            + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)  # 1-bit greyscale
    row = b"\x00" + b"\x00" * (side // 8)
    body = zlib.compress(row * 16)  # a few rows is enough: Pillow must refuse before decoding
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", body) + chunk(b"IEND", b"")
    )
    return path


def test_truncated_jpeg_is_dropped_with_reason(tmp_path: Path) -> None:
    whole = _photo(tmp_path / "whole.jpg").read_bytes()
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(whole[: len(whole) // 2])
    decision = _decide(Candidate(id="rw-1", word_count=500, image_path=str(cut)))
    assert not decision.keep
    assert decision.reason == "image_truncated"
    assert "truncated" in decision.details["image"]["message"]


def test_png_bomb_is_refused_without_decoding(tmp_path: Path) -> None:
    bomb = _png_bomb(tmp_path / "bomb.png")
    assert bomb.stat().st_size < 20_000
    probe = probe_image(bomb)
    assert probe["status"] == "bomb"
    decision = _decide(Candidate(id="rw-1", word_count=500, image_path=str(bomb)))
    assert (decision.keep, decision.reason) == (False, "image_bomb")


def test_animated_gif_is_dropped_and_static_gif_kept(tmp_path: Path) -> None:
    frames = [Image.new("RGB", (300, 300), colour) for colour in ("red", "blue", "green")]
    animated = tmp_path / "anim.gif"
    frames[0].save(animated, save_all=True, append_images=frames[1:], duration=100, loop=0)
    static = tmp_path / "static.gif"
    Image.fromarray(skdata.coffee()).convert("P").save(static)
    assert _decide(Candidate(id="a", word_count=500, image_path=str(animated))).reason == "image_animated"
    kept = _decide(Candidate(id="b", word_count=500, image_path=str(static)))
    assert kept.keep and kept.details["image"]["format"] == "GIF"
    assert not _decide(
        Candidate(id="c", word_count=500, image_path=str(animated)), drop_animated=False
    ).reason.startswith("image_animated")


def test_cmyk_jpeg_is_kept_and_decodes_to_rgb(tmp_path: Path) -> None:
    cmyk = _photo(tmp_path / "cmyk.jpg", mode="CMYK")
    decision = _decide(Candidate(id="rw-1", word_count=500, image_path=str(cmyk)))
    assert decision.keep and decision.details["image"]["mode"] == "CMYK"
    assert open_rgb(cmyk).mode == "RGB"
    hashes = NearDuplicateFilter().measure(Candidate(id="rw-1", image_path=str(cmyk)))
    assert len(hashes["phash"]) == 16 and "error" not in hashes


def test_size_bounds_come_from_params(tmp_path: Path) -> None:
    photo = _photo(tmp_path / "p.jpg")
    small = _photo(tmp_path / "s.jpg", size=(199, 400))
    assert _decide(Candidate(id="a", word_count=89, image_path=str(photo))).reason == "too_short"
    assert _decide(Candidate(id="a", word_count=90, image_path=str(photo))).keep
    assert _decide(Candidate(id="a", word_count=2001, image_path=str(photo))).reason == "too_long"
    assert _decide(Candidate(id="a", word_count=2001, image_path=str(photo)), max_words=5000).keep
    assert _decide(Candidate(id="a", word_count=500, image_path=str(small))).reason == "image_too_small"
    assert _decide(Candidate(id="a", word_count=500, image_path=str(small)), min_width=150).keep


def test_missing_file_and_not_an_image(tmp_path: Path) -> None:
    gone = _decide(Candidate(id="a", word_count=500, image_path=str(tmp_path / "nope.jpg")))
    assert gone.reason == "image_missing"
    text = tmp_path / "page.jpg"
    text.write_text("<html>not an image</html>")
    assert _decide(Candidate(id="a", word_count=500, image_path=str(text))).reason == "image_unreadable"
    assert _decide(Candidate(id="a", word_count=500)).reason == "image_missing"


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass


@pytest.fixture()
def image_server(tmp_path: Path):
    root = tmp_path / "site"
    root.mkdir()
    _photo(root / "ok.jpg")
    handler = lambda *a, **k: _Handler(*a, directory=str(root), **k)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_image_url_that_404s_is_a_decision(tmp_path: Path, image_server: str) -> None:
    candidates = [
        Candidate(id="gone", word_count=500, image_url=f"{image_server}/missing.jpg"),
        Candidate(id="ok", word_count=500, image_url=f"{image_server}/ok.jpg"),
    ]
    fetched = {c.id: c for c in fetch_missing(candidates, tmp_path / "store", allow_loopback=True)}
    assert fetched["gone"].image_error == "http 404" and fetched["gone"].image_path is None
    decision = _decide(fetched["gone"])
    assert (decision.keep, decision.reason) == (False, "image_unavailable")
    assert decision.details["image"]["message"] == "http 404"
    assert Path(fetched["ok"].image_path).is_file() and len(fetched["ok"].image_sha256) == 64
    assert _decide(fetched["ok"]).keep


def test_unreachable_host_is_a_decision(tmp_path: Path) -> None:
    # port 9 on loopback: nothing listens there, the connection is refused at once
    fetched = fetch_missing(
        [Candidate(id="x", word_count=500, image_url="http://127.0.0.1:9/a.jpg")],
        tmp_path,
        allow_loopback=True,
    )
    assert fetched[0].image_error.startswith("ConnectError")
    assert _decide(fetched[0]).reason == "image_unavailable"
