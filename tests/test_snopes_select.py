"""Parsel-style selectors over one lxml tree (snopes/select.py)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from rwpost.snopes.select import (
    all_text,
    any_match,
    drop_tree,
    first,
    first_raw,
    parse_html,
    select,
    text_of,
    values,
)


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


def test_a_query_from_an_element_sees_its_ancestors_but_finds_only_under_it():
    page = parse_html(
        '<div class="card"><div class="body"><p class="x">in</p><h3 class="k"></h3><p>next</p></div>'
        '<p class="x">out</p></div>'
    )
    body = select(page, "div.body")[0]
    assert [p.text for p in select(body, "div.card p.x")] == ["in"]  # div.card is above the body
    assert [p.text for p in select(body, "h3.k + p")] == ["next"]
    assert select(body, "div.body") == [body]  # the element itself counts, as a match among its own
    assert values(body, "div.card > p.x::text") == []  # that one is outside the body


def test_queries_naming_what_a_page_lacks_find_nothing_and_other_pages_are_probed_afresh():
    with_card = parse_html('<div class="card" itemprop="review"><p>a</p></div>')
    without = parse_html('<div class="other"><p>b</p></div>')
    assert values(with_card, "div.card p::text, .nowhere::text") == ["a"]
    assert values(without, "div.card p::text") == []
    assert values(with_card, "[itemprop=review] p::text") == ["a"]
    assert values(without, "p::text") == ["b"]  # a selector naming no class or id is always run


def test_threads_reading_different_pages_get_each_page_own_values():
    pages = [parse_html(f'<div class="c{i % 2}"><p>{i}</p></div>') for i in range(40)]
    expected = [values(page, f"div.c{i % 2} p::text") for i, page in enumerate(pages)]
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(lambda ip: values(ip[1], f"div.c{ip[0] % 2} p::text"), enumerate(pages * 25)))
    assert found == expected * 25


def test_content_text_leaves_out_scripts_and_styles_and_a_drop_keeps_the_text_after():
    page = parse_html("<div><b>a</b><script>x()</script> b <style>p{}</style><i>c</i> d</div>")
    div = select(page, "div")[0]
    assert text_of(div, " ", strip=True) == "a b c d"
    assert all_text(div) == "a x() b p{} c d"  # every text node, as the crawl record reads them
    drop_tree(select(page, "i")[0])
    assert text_of(div) == "a b  d"


def test_a_group_finds_what_its_selectors_find_and_any_match_says_whether_it_finds_anything():
    page = parse_html(
        '<div class="a"><p class="x">1</p></div><section id="s"><p>2</p></section><p class="y">3</p>'
        '<span itemprop="n">4</span>'
    )
    assert values(page, "div.a p::text, p.y::text, section#s p::text") == ["1", "2", "3"]  # document order
    assert values(page, "p.x::text, p.y::text, p.z::text") == ["1", "3"]  # one pass over p for all three
    assert values(page, "p::text, p.y::text") == ["1", "2", "3"]
    assert any_match(page, "[itemprop=n], p.y") and any_match(page, "#s")
    assert not any_match(page, "p.z, [itemprop=m], div#s")
    body = select(page, "section")[0]
    assert any_match(body, "div.a ~ section p") and not any_match(body, "div.a p")
