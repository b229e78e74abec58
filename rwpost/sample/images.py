"""Stand-in images of the sample site, drawn with Pillow (the release has image links, not the images).

Each is a photo-like JPEG (gradient sky, ground, shapes) with the record's real OCR text written on it
when it has one; a tiny PNG claiming 16000x16000 pixels tests the decompression-bomb refusal.
"""

from __future__ import annotations

import math
import random
from io import BytesIO

IMAGE_SIZES: tuple[tuple[int, int], ...] = (
    (480, 360),
    (640, 360),
    (400, 400),
    (160, 160),
    (600, 315),
    (360, 480),
    (180, 120),
    (512, 288),
)
"""Stand-in image sizes: social-media-like shapes, two of them below 200x200 (the size filter's case)."""


def draw_stand_in_image(seed: str, size: tuple[int, int], text: str | None) -> bytes:
    """A generated photo-like JPEG (gradient sky, ground, shapes) with ``text`` (the record's OCR) on it."""
    from PIL import Image, ImageDraw, ImageFilter, ImageFont

    rng = random.Random(seed)
    width, height = size
    top = tuple(rng.randint(40, 200) for _ in range(3))
    bottom = tuple(rng.randint(20, 160) for _ in range(3))
    image = Image.new("RGB", size)
    draw = ImageDraw.Draw(image)
    for y in range(height):
        t = y / max(1, height - 1)
        draw.line(
            [(0, y), (width, y)], fill=tuple(int(a + (b - a) * t) for a, b in zip(top, bottom, strict=True))
        )
    horizon = int(height * rng.uniform(0.5, 0.75))
    ground = tuple(rng.randint(30, 120) for _ in range(3))
    points = [(0, height), (0, horizon)]
    for x in range(0, width + 40, 40):
        points.append((x, horizon + int(12 * math.sin(x / 37 + rng.random()))))
    points.append((width, height))
    draw.polygon(points, fill=ground)
    for _ in range(rng.randint(3, 7)):
        x, y = rng.randint(0, width), rng.randint(0, height)
        r = rng.randint(max(4, width // 30), max(8, width // 6))
        colour = tuple(rng.randint(0, 255) for _ in range(3))
        if rng.random() < 0.5:
            draw.ellipse([x - r, y - r, x + r, y + r], fill=colour)
        else:
            draw.rectangle([x - r, y - r // 2, x + r, y + r], fill=colour)
    image = image.filter(ImageFilter.GaussianBlur(radius=1.2))
    if text:
        draw = ImageDraw.Draw(image)
        font = ImageFont.load_default(size=max(10, min(22, width // 24)))
        chars_per_line = max(8, int(width / (font.size * 0.55)))
        lines: list[str] = []
        for paragraph in text.splitlines():
            words, current = paragraph.split(), ""
            for word in words:
                if len(current) + len(word) + 1 > chars_per_line and current:
                    lines.append(current)
                    current = word
                else:
                    current = f"{current} {word}".strip()
            if current:
                lines.append(current)
        line_height = font.size + 4
        lines = lines[: max(1, (height - 10) // line_height)]
        box_height = line_height * len(lines) + 8
        draw.rectangle([0, 0, width, box_height], fill=(250, 250, 250))
        for index, line in enumerate(lines):
            draw.text((6, 4 + index * line_height), line, fill=(15, 15, 15), font=font)
    buffer = BytesIO()
    image.save(buffer, format="JPEG", quality=55, optimize=True)
    return buffer.getvalue()


def draw_decompression_bomb() -> bytes:
    """A tiny PNG that claims 16000x16000 pixels (1-bit): Pillow refuses it as a decompression bomb."""
    from PIL import Image

    buffer = BytesIO()
    Image.new("1", (16000, 16000)).save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()
