"""The authors' test split text (``rwpost_test_main.jsonl`` in ``xudanni0927/AgentFact`` at ``076daced``)
is read by ``import-released`` as it is: a slice of it (tests/fixtures/agentfact/README.md) becomes a
Parquet split whose images are found under ``--image-root`` (the images are not in that repository)."""

from __future__ import annotations

from pathlib import Path

from rwpost.dataset import read_samples
from rwpost.labels import Label
from tests.conftest import run_cli

SLICE = Path(__file__).parent / "fixtures" / "agentfact" / "rwpost_test_main.slice.jsonl"


def test_import_released_reads_the_authors_test_split(tmp_path, capsys):
    out = tmp_path / "test.parquet"
    code, err = run_cli(capsys, "import-released", SLICE, "--out", out)
    assert code == 0, err
    samples = read_samples(out)
    assert [s.label for s in samples] == [Label.TRUE, Label.FALSE]
    assert [s.image.path for s in samples] == [
        "./post_images/split_data_3/5.jpg",
        "./post_images/split_data_216/1.jpg",
    ]
    assert samples[0].news_url == "https://www.snopes.com/fact-check/water-park-in-china/"
    assert len(samples[0].evidence) == 6 and samples[0].key_points[0].startswith("The video is authentic")
    assert str(samples[1].claim_time) == "2024-02-29"
