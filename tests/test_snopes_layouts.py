"""Layouts as data, shared by the crawl record and the tagger (snopes/layouts.py, snopes/body.py)."""

from __future__ import annotations

from rwpost.snopes.body import BODY_SELECTORS, LEAD_IMAGE_SELECTORS
from rwpost.snopes.layouts import LAYOUTS


def test_every_layout_body_and_lead_image_is_known_to_the_tagger():
    for layout in LAYOUTS:
        for selector in layout.body.split(","):
            assert selector.strip() in BODY_SELECTORS, (layout.name, selector)
    assert LEAD_IMAGE_SELECTORS == tuple(layout.lead_image for layout in LAYOUTS if layout.lead_image)
