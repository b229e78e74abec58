"""Local OCR on a rendered image (few on purpose: rapidocr takes a second or two per image on 2 cores)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont
from skimage import data as skdata

from rwpost.filters.watermark import WatermarkFilter
from rwpost.records import Candidate

DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")


def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(DEJAVU), size) if DEJAVU.exists() else ImageFont.load_default(size=size)


def test_stamp_over_a_photo_is_read_and_dropped(tmp_path: Path) -> None:
    # generated: scikit-image's bundled 'chelsea' photo with a red 'FALSE' stamp, as in a CMYK JPEG
    image = Image.fromarray(skdata.chelsea()).convert("RGB")
    draw = ImageDraw.Draw(image)
    draw.rectangle((60, 110, 390, 200), outline=(200, 0, 0), width=6)
    draw.text((80, 120), "FALSE", fill=(200, 0, 0), font=_font(64))
    path = tmp_path / "stamped.jpg"
    image.convert("CMYK").save(path, "JPEG", quality=90)
    flt = WatermarkFilter()
    measurement = flt.measure(Candidate(id="rw-1", image_path=str(path)))
    assert measurement["ocr_source"] == "rapidocr"
    assert "FALSE" in measurement["ocr_text"].upper()
    decision = flt.decide(measurement, flt.Params())
    assert (decision.keep, decision.reason) == (False, "watermark")
    assert decision.details["matched_keywords"] == ["false"]
    assert decision.details["matches"][0]["isolated"]


def test_ocr_text_on_the_record_is_used_instead_of_the_image(tmp_path: Path) -> None:
    flt = WatermarkFilter()
    given = flt.measure(
        Candidate(id="rw-1", image_path=str(tmp_path / "absent.jpg"), ocr_text="MISCAPTIONED")
    )
    assert given["ocr_source"] == "given"
    assert flt.decide(given, flt.Params()).details["matched_keywords"] == ["miscaptioned"]
    # a vision-LLM second opinion plugs in as a callable (Table S1 answer format)
    photo = tmp_path / "p.jpg"
    Image.fromarray(skdata.coffee()).save(photo)
    seen: list[str] = []

    def judge(prompt: str, image: Path) -> dict:
        seen.append(prompt)
        return {"watermarked": True, "matched_keywords": ["altered"], "reason": "stamp reads ALTERED"}

    with_llm = WatermarkFilter(judge=judge, judge_id="test-judge")
    assert with_llm.version != flt.version
    m = with_llm.measure(Candidate(id="rw-2", image_path=str(photo), ocr_text="A cup of coffee"))
    assert "April Fools" in seen[0] and m["llm"]["watermarked"] is True
    assert with_llm.decide(m, with_llm.Params(combine="either")).reason == "watermark"
    assert with_llm.decide(m, with_llm.Params(combine="both")).keep
    assert with_llm.decide(m, with_llm.Params(combine="ocr")).keep


def _card(text: str, width: int = 520) -> Image.Image:
    card = Image.new("RGB", (width, 150), "white")
    draw = ImageDraw.Draw(card)
    for i, line in enumerate(text.splitlines()):
        draw.text((16, 14 + 44 * i), line, fill=(20, 20, 20), font=_font(30))
    return card


def test_passes_read_what_rapidocr_reads_alone_or_batched(tmp_path: Path) -> None:
    # generated: two text cards (lines of many widths, so recognition has chunks of several padded
    # widths), a stamped photo, an image with no text (detection alone ends it), an undecodable file
    from rapidocr_onnxruntime import RapidOCR

    from rwpost.filters import ocr
    from rwpost.images import ImageRefused

    sky = np.linspace(60, 220, 320 * 240 * 3).reshape(240, 320, 3).astype(np.uint8)
    photo = Image.fromarray(sky)  # a smooth gradient: no text box
    stamped = Image.fromarray(skdata.chelsea()).convert("RGB")
    ImageDraw.Draw(stamped).text((80, 120), "SATIRE", fill=(200, 0, 0), font=_font(64))
    images = [
        _card("FACT CHECK: FALSE\nshared 10k times\nno"),
        _card("Photo shows the senate flood rally\nMISLEADING", 640),
        stamped,
        photo,
    ]
    paths = []
    for i, image in enumerate(images):
        paths.append(tmp_path / f"{i}.jpg")
        image.save(paths[-1], quality=90)
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"\xff\xd8 not a jpeg")
    reference = RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1)
    expected = []
    for path in paths:
        result, _ = reference(ocr._bgr(path))
        lines = [
            {
                "text": t,
                "confidence": round(float(s), 4),
                "box": [[round(float(x)), round(float(y))] for x, y in b],
            }
            for b, t, s in (result or [])
        ]
        expected.append(
            sorted(lines, key=lambda x: (min(p[1] for p in x["box"]), min(p[0] for p in x["box"])))
        )
    assert expected[3] == [] and all(expected[:3])  # the photo has no text; the others do
    batched = ocr.ocr_images([*paths, broken])
    assert batched[:4] == expected
    assert isinstance(batched[4], ImageRefused)
    assert [ocr.ocr_image(path) for path in paths] == expected
    # the watermark filter measures a batch as it measures each record
    flt = WatermarkFilter(use_given_ocr=False)
    candidates = [Candidate(id=f"rw-{i}", image_path=str(p)) for i, p in enumerate([*paths, broken])]
    assert flt.measure_many(candidates) == [flt.measure(c) for c in candidates]
    assert flt.measure(candidates[4])["error"].startswith("unreadable")


def test_float32_detection_input_is_rapidocrs_float64_arithmetic() -> None:
    # every byte value in each channel (a different order per channel, so a channel mix-up shows), through
    # rapidocr's own preprocessing (normalise, HWC to CHW, a batch of one, float32) and through the engine's
    from rapidocr_onnxruntime.ch_ppocr_det.utils import DetPreProcess

    from rwpost.filters.ocr import det_input

    ramp = np.arange(256, dtype=np.uint8).reshape(2, 128)
    values = np.stack([ramp, ramp[::-1], np.roll(ramp, 77)], axis=2)
    prepare = DetPreProcess(736, "min", [0.5] * 3, [0.5] * 3)
    theirs = np.expand_dims(prepare.permute(prepare.normalize(values)), axis=0).astype(np.float32)
    ours = det_input(values, prepare)
    assert ours.shape == (1, 3, 2, 128) and ours.dtype == np.float32 and ours.flags.c_contiguous
    assert ours.tobytes() == theirs.tobytes()


def test_cuda_asked_for_without_a_cuda_provider_runs_on_the_cpu() -> None:
    import onnxruntime
    import pytest

    from rwpost.errors import ConfigError
    from rwpost.filters import ocr

    if ocr.CUDA in onnxruntime.get_available_providers():
        pytest.skip("this onnxruntime offers CUDA")
    assert ocr.providers("auto") == ocr.providers("cuda") == ocr.providers("cpu") == [ocr.CPU]
    engine = ocr.OcrEngine(device="cuda")
    assert engine.device == "cpu"
    assert engine.rapid.text_rec.session.session.get_providers() == [ocr.CPU]
    assert "+cuda" not in WatermarkFilter().version
    with pytest.raises(ConfigError, match="OCR device 'gpu'"):
        ocr.providers("gpu")
