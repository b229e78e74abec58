"""Files in and out (rwpost.io): atomic writes, outputs that are never an input, JSONL in id order."""

from __future__ import annotations

import os

import pytest

from rwpost.io import check_output, overlap, sort_jsonl_by_id


@pytest.mark.overwrite
class TestOverwrite:
    """No command writes over one of its inputs, or over an existing file unless asked (``--overwrite``);
    ``extract`` resumes into its folder and ``filter run`` reruns into its folder, as documented."""

    def test_check_output_refuses_the_input_through_a_symlink_and_a_hard_link(self, tmp_path):
        source = tmp_path / "in.jsonl"
        source.write_text("{}\n", encoding="utf-8")
        (tmp_path / "link.jsonl").symlink_to(source)
        os.link(source, tmp_path / "hard.jsonl")
        for alias in ("in.jsonl", "link.jsonl", "hard.jsonl", "./in.jsonl"):
            with pytest.raises(Exception, match="is also an input"):
                check_output(tmp_path / alias, [source], overwrite=True)
        assert check_output(tmp_path / "new.jsonl", [source]) == tmp_path / "new.jsonl"

    def test_overlap_names_how_an_output_meets_an_input_links_included(self, tmp_path):
        # the one answer both the stages' params and the evaluate runner refuse an output by
        data = tmp_path / "data"
        (data / "split").mkdir(parents=True)
        (tmp_path / "alias").symlink_to(data)
        (data / "a.jsonl").write_text("{}\n", encoding="utf-8")
        os.link(data / "a.jsonl", tmp_path / "hard.jsonl")
        assert overlap(tmp_path / "hard.jsonl", data / "a.jsonl") == "is also"
        assert overlap(tmp_path / "alias", data) == "is also"
        assert overlap(tmp_path / "alias" / "split" / "out.json", data) == "is inside"
        assert overlap(tmp_path, data / "a.jsonl") == "holds"
        assert overlap(tmp_path / "other", data) is None
        assert overlap(tmp_path / "datas", data) is None  # a name that merely begins alike


def test_sort_jsonl_by_id_keeps_lines_byte_for_byte_and_later_duplicates_last(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"id": "b", "v": 1}\n{"id": "a",  "v": 2}\n{"id": "b", "v": 3}')
    sort_jsonl_by_id(path)
    assert path.read_bytes() == b'{"id": "a",  "v": 2}\n{"id": "b", "v": 1}\n{"id": "b", "v": 3}\n'
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(b'{"id": "b"}\n{"id": "a"')  # a write cut short: left for the reader to report
    sort_jsonl_by_id(torn)
    assert torn.read_bytes() == b'{"id": "b"}\n{"id": "a"'
