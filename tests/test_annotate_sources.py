"""Annotation samples and articles read from released and sample files (annotate/sources.py)."""

from __future__ import annotations

import itertools
import json

import pytest

from rwpost.annotate.sources import read_annotation_samples, read_articles
from rwpost.errors import RecordError
from rwpost.records import Reject
from tests.conftest import DEV as RELEASED


def test_released_records_become_samples_with_stable_ids():
    rejects: list[Reject] = []
    samples = list(read_annotation_samples(RELEASED, rejects))
    assert len(samples) == 46 and not rejects
    assert samples[0].id.startswith("rw-") and samples[0].provenance.backend == "released"
    assert samples[0].claim.startswith("Flooding caused by Hurricane Harvey")


def test_annotation_samples_mix_sample_and_released_lines_and_set_bad_ones_aside(tmp_path):
    released = RELEASED.read_text(encoding="utf-8").splitlines()[1]  # another record than ``sample``
    sample, other = list(itertools.islice(read_annotation_samples(RELEASED), 2))
    broken = sample.model_dump(mode="json")
    del broken["claim"]
    path = tmp_path / "mixed.jsonl"
    lines = [sample.model_dump_json(), json.dumps(broken), released, json.dumps({"claim": "no url"})]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rejects: list[Reject] = []
    got = list(read_annotation_samples(path, rejects))
    assert [s.id for s in got] == [sample.id, other.id]
    assert [(r.line, r.stage) for r in rejects] == [(2, "annotate"), (4, "annotate")]
    assert "not a Sample" in rejects[0].reason and "'claim'" in rejects[0].reason
    with pytest.raises(RecordError, match=r"mixed\.jsonl:2, field 'claim': not a Sample"):
        list(read_annotation_samples(path))


def test_articles_are_read_by_id_and_a_bad_one_names_its_line(tmp_path):
    path = tmp_path / "articles.jsonl"
    good = {"id": "rw-1", "news_url": "https://www.snopes.com/fact-check/x/", "text": "t", "word_count": 1}
    path.write_text(json.dumps(good) + "\n" + json.dumps({"id": "rw-2"}) + "\n", encoding="utf-8")
    with pytest.raises(RecordError, match=r"articles\.jsonl:2, record rw-2, field .*not a TaggedArticle"):
        read_articles(path)
    path.write_text(json.dumps(good) + "\n", encoding="utf-8")
    assert list(read_articles(path)) == ["rw-1"]
