"""Parsel-style selectors over one lxml tree (snopes/select.py)."""

from __future__ import annotations

from rwpost.snopes.select import first, first_raw, parse_html, values


def test_text_queries_give_own_text_nodes_in_document_order():
    page = parse_html(
        '<div class="a"><span class="b">inner</span> after <!-- note --></div>'
        '<p class="c" data-x="1">x &amp;amp; y</p><p class="c">  </p>'
    )
    assert values(page, ".a::text") == [" after "]  # own text only, comments are not text
    assert values(page, ".a::text, .b::text") == ["inner", " after "]  # a group: document order
    assert values(page, "p::attr(data-x)") == ["1"]
    assert first(page, ".missing::text", "p.c::text") == "x & y"  # entities decoded, as parsel did
    assert first_raw(page, ".a::text") == " after " and first_raw(page, "nav::text") is None
