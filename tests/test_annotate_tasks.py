"""Label Studio configs and tasks (annotate/tasks.py): record values as choices, article HTML, blind order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args
from xml.etree import ElementTree

import pytest

from rwpost.annotate.sources import read_annotation_samples
from rwpost.annotate.tasks import PROJECTS, article_html, blind_order, explanation_task, load_config
from rwpost.errors import RecordError
from rwpost.records import ExplanationItem, ExplanationOutput, ImageRole, PostCheck, TaggedArticle
from tests.conftest import DEV as RELEASED
from tests.conftest import ROOT

CONFIGS = ROOT / "annotation" / "configs"


def _choices(xml: str, name: str) -> list[str]:
    tree = ElementTree.fromstring(xml)
    control = next(el for el in tree.iter("Choices") if el.get("name") == name)
    return [choice.get("alias") or choice.get("value") for choice in control.iter("Choice")]


def test_validation_config_choices_are_exactly_the_record_values():
    for key in ("validation", "adjudication"):
        xml = load_config(CONFIGS, PROJECTS[key])
        assert _choices(xml, "post_extraction") == list(get_args(PostCheck))
        assert _choices(xml, "image_role") == list(get_args(ImageRole))


def test_explanation_config_scores_every_output_on_three_criteria_zero_to_two():
    xml = load_config(CONFIGS, PROJECTS["explanation"])
    for slot in (1, 2, 3):
        for criterion in ("reasoning", "evidence", "label"):
            assert _choices(xml, f"{criterion}_{slot}") == ["0", "1", "2"]


def test_article_html_links_every_tag_by_its_link_table_id_and_escapes_text():
    article = TaggedArticle(
        id="rw-1",
        news_url="https://www.snopes.com/fact-check/x/",
        text="A <b>post</b> [IMAGE 1] and a page [LINK 2: https://wrong.example/].",
        links=[
            {"id": 1, "kind": "image", "url": "https://img.example/a.jpg"},
            {"id": 2, "kind": "webpage", "url": "https://page.example/"},
        ],
        word_count=7,
    )
    out = article_html(article)
    assert '<a href="https://img.example/a.jpg" target="_blank"' in out
    assert '<a href="https://page.example/"' in out and "wrong.example" not in out
    assert "&lt;b&gt;post&lt;/b&gt;" in out


def test_real_snopes_article_shows_every_link_of_its_table_as_a_clickable_link():
    import html as html_lib
    import re

    from rwpost.tagged import tag_article

    page = (ROOT / "tests" / "fixtures" / "snopes_html" / "robert-de-niro-trump-oscars.html").read_text()
    article = tag_article(page, "https://www.snopes.com/fact-check/robert-de-niro-trump-oscars/")
    out = article_html(article)
    hrefs = {html_lib.unescape(h) for h in re.findall(r'<a href="([^"]+)" target="_blank"', out)}
    assert article.links and {link.url for link in article.links} <= hrefs
    assert "[IMAGE 1: https://" in html_lib.unescape(out)


def test_blind_order_is_a_reproducible_permutation_that_varies_across_records():
    sources = ["agentfact", "gold", "lemma"]
    orders = {rid: tuple(blind_order(rid, sources, seed=13)) for rid in (f"rw-{i}" for i in range(30))}
    assert all(sorted(o) == sources for o in orders.values())
    assert blind_order("rw-5", sources, 13) == list(orders["rw-5"])
    assert len(set(orders.values())) > 1


def test_explanation_task_hides_sources_and_needs_three_outputs():
    sample = next(read_annotation_samples(RELEASED))
    gold = ExplanationOutput.gold(sample)
    item = ExplanationItem(
        id=sample.id,
        claim=sample.claim,
        outputs=[gold, *(gold.model_copy(update={"system": name}) for name in ("agentfact", "lemma"))],
    )
    task, key = explanation_task(item, image_url="/data/local-files/?d=images/x.png", seed=1)
    assert sorted(key.values()) == ["agentfact", "gold", "lemma"]
    text = json.dumps(task)
    assert "agentfact" not in text and "lemma" not in text and '"gold"' not in text
    item.outputs.pop()  # lemma's
    with pytest.raises(RecordError, match="expected 3 outputs"):
        explanation_task(item, image_url="x", seed=1)


def test_the_labeling_configs_and_guidelines_ship_and_are_found_from_any_folder(tmp_path, monkeypatch):
    # issue 39 §3 (new-user D8): from another folder, push said "labeling config annotation/configs/
    # validation.xml not found (pass --configs annotation/configs)", in the wheel and in a clone
    import zipfile

    from rwpost.annotate.tasks import packaged
    from tests.e2e.test_wheel_install import build_wheel

    monkeypatch.chdir(tmp_path)
    assert "<View" in load_config(Path("annotation/configs"), PROJECTS["validation"])
    assert (packaged(Path("annotation/guidelines")) / "validation.md").is_file()
    names = set(zipfile.ZipFile(build_wheel(tmp_path / "wheel")).namelist())
    for name in ("configs/validation.xml", "configs/explanation.xml", "guidelines/validation.md"):
        assert f"rwpost/annotate/data/{name}" in names
