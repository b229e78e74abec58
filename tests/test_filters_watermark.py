"""Local OCR on a rendered image (few on purpose: rapidocr takes a second or two per image on 2 cores)."""

from __future__ import annotations

from pathlib import Path

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
