"""Files in and out (rwpost.io): atomic writes, outputs that are never an input, JSONL in id order."""

from __future__ import annotations

import json
import os
import signal

import pytest

from rwpost.errors import sigterm_interrupts
from rwpost.io import (
    check_output,
    json_for_fields,
    merge_jsonl_by_id,
    overlap,
    read_records,
    sort_jsonl_by_id,
    write_jsonl,
    write_text,
)


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


def test_merge_jsonl_by_id_is_the_sort_of_the_files_joined(tmp_path):
    parts = [tmp_path / f"{i}.jsonl" for i in range(3)]
    parts[0].write_bytes(b'{"id": "b", "v": 1}\n\n{"id": "d"}\n')
    parts[1].write_bytes(b'{"id": "a",  "v": 2}\n{"id": "b", "v": 3}')  # no newline at the end
    parts[2].write_bytes(b"")
    merged, joined = tmp_path / "merged.jsonl", tmp_path / "joined.jsonl"
    assert merge_jsonl_by_id(parts, merged) == 4
    joined.write_bytes(
        b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in parts[:2]).replace(b"\n\n", b"\n")
    )
    sort_jsonl_by_id(joined)
    assert (
        merged.read_bytes()
        == joined.read_bytes()
        == (b'{"id": "a",  "v": 2}\n{"id": "b", "v": 1}\n{"id": "b", "v": 3}\n{"id": "d"}\n')
    )
    # a line that is not JSON: no order can be kept, so the files are joined as they are
    parts[2].write_bytes(b'{"id": "0"}\n{"id": \n')
    merge_jsonl_by_id(parts, merged)
    assert merged.read_bytes() == (
        b'{"id": "b", "v": 1}\n{"id": "d"}\n{"id": "a",  "v": 2}\n{"id": "b", "v": 3}\n{"id": "0"}\n{"id": \n'
    )


def test_lines_are_keyed_by_the_standard_librarys_values_where_orjson_reads_otherwise(tmp_path):
    # the fast parse (orjson) keys only lines whose key fields it reads as json does: an id json reads as
    # an integer past 64 bits (orjson: a float), NaN, a lone surrogate (orjson refuses both) keep json's
    # value, so the order is the one json.loads gives
    lines = [
        b'{"id": 18446744073709551617}',  # str(): "18446744073709551617", not "1.8446744073709552e+19"
        b'{"id": "\\ud800", "v": NaN}',
        b'{"id": "a", "v": 1e400}',
        b'{"id": 2.5}',
        b'{"id": "b"}',
    ]
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    sort_jsonl_by_id(path)
    by_json = sorted(lines, key=lambda raw: str(json.loads(raw).get("id") or ""))
    assert path.read_bytes() == b"\n".join(by_json) + b"\n"
    assert by_json[:2] == [lines[0], lines[3]]  # "1844..." < "2.5" < "a"
    for raw in (*lines, b"[1, 2]", b'{"id": null}', b'{"x": "no id"}', b'{"id": "\xc3\xa9"}'):
        assert json.dumps(json_for_fields(raw, ("id",))) == json.dumps(json.loads(raw))  # NaN != NaN
    with pytest.raises(UnicodeDecodeError):
        json_for_fields(b'{"id": "\xff"}', ("id",))  # what json.loads raises for bytes not UTF-8


def test_read_records_select_validates_only_the_rows_it_keeps(tmp_path):
    from rwpost.records import Reject

    path = tmp_path / "rows.jsonl"
    path.write_bytes(
        b'{"id": "keep", "stage": "s", "reason": "r"}\n'
        b'{"id": "other", "stage": 1}\n'  # invalid, but not this reader's: not validated, not set aside
        b'{"id": "keep2"}\n'  # invalid and selected: set aside
        b"not json\n"  # no id to select by: set aside as without select
    )
    rejects: list[Reject] = []
    rows = list(read_records(path, Reject, rejects=rejects, select=lambda rid: rid.startswith("keep")))
    assert [row.id for row in rows] == ["keep"]
    assert [(r.id, r.line) for r in rejects] == [("keep2", 3), (None, 4)]


def test_a_shards_reader_selects_by_the_ids_json_reads_whatever_the_line(tmp_path):
    # a shard skips the other shards' rows by their ids read fast (orjson); the lines orjson reads
    # otherwise, or not at all, are decided on json's reading as before: every shard's rows together are
    # the whole file's, once each, and its set-aside lines are those of the plain read
    from rwpost.records import Reject

    path = tmp_path / "rows.jsonl"
    path.write_bytes(
        b'\xef\xbb\xbf{"id": "bom", "stage": "s", "reason": "r"}\n'  # a BOM on line 1: json reads it
        b'{"id": "a", "stage": "s", "reason": "r"}\n'
        b'{"id": 18446744073709551617, "stage": "s", "reason": "r"}\n'  # no string id: the shard of ""
        b'{"id": "nan", "stage": "s", "reason": "r", "x": NaN}\n'  # orjson refuses NaN, json reads it
        b'{"id": "\\ud800", "stage": "s", "reason": "r"}\n'  # a lone surrogate: json's string
        b'\xef\xbb\xbf{"id": "b", "stage": "s", "reason": "r"}\n'  # a BOM past line 1: not JSON
        b'[1, 2]\n{"id": null, "stage": "s", "reason": "r"}\n{"id": "c", "stage": 1}\n{not json\n'
    )
    whole_rejects: list[Reject] = []
    whole = [row.model_dump() for row in read_records(path, Reject, rejects=whole_rejects)]
    ids = ["bom", "a", "nan", "\ud800", "b", "c", ""]
    shards: list[dict] = []
    shard_rejects: list[Reject] = []
    for mine in (ids[:3], ids[3:]):
        rejects: list[Reject] = []
        rows = read_records(path, Reject, rejects=rejects, select=lambda rid, mine=mine: rid in mine)
        shards.extend(row.model_dump() for row in rows)
        shard_rejects.extend(r for r in rejects if (r.id or "") in mine)  # as extract keeps them
    key = lambda row: json.dumps(row, sort_keys=True, default=str)  # noqa: E731
    assert sorted(shards, key=key) == sorted(whole, key=key) and len(whole) == 4  # bom, a, \\ud800, null
    lines = [3, 4, 6, 7, 9, 10]  # each set aside once: by its shard, or by the shard of ""
    assert sorted(r.line for r in shard_rejects) == sorted(r.line for r in whole_rejects) == lines


class TestSignals:
    """A SIGTERM or Ctrl-C never leaves a writer's temporary file behind (issue 39 §1: under load a
    ``.dev.parquet.XXXX.tmp`` survived the split stage's SIGTERM). The signal is a real one, raised at
    the instant that lost the file: just after it was created, and while a first stop's cleanup runs."""

    def test_a_sigterm_the_instant_the_temporary_file_exists_leaves_no_file(self, tmp_path, monkeypatch):
        real_open = os.open

        def open_then_signal(path, flags, *args, **kwargs):
            fd = real_open(path, flags, *args, **kwargs)
            if str(path).endswith(".tmp"):
                signal.raise_signal(signal.SIGTERM)  # before: it landed inside mkstemp, path unknown
            return fd

        monkeypatch.setattr(os, "open", open_then_signal)
        with sigterm_interrupts(), pytest.raises(KeyboardInterrupt, match="SIGTERM"):
            write_text(tmp_path / "out.json", "{}\n")
        assert list(tmp_path.iterdir()) == []

    def test_a_second_signal_during_the_cleanup_does_not_stop_it(self, tmp_path, monkeypatch):
        real_unlink = os.unlink

        def signal_then_unlink(path, *args, **kwargs):
            if str(path).endswith(".tmp"):
                signal.raise_signal(signal.SIGTERM)  # before: it stopped the cleanup before the unlink
            return real_unlink(path, *args, **kwargs)

        monkeypatch.setattr(os, "unlink", signal_then_unlink)
        (tmp_path / "out.json").write_text("old\n", encoding="utf-8")

        def rows():
            yield {"id": "new"}
            raise KeyboardInterrupt("SIGINT")  # the first stop, mid-write

        with sigterm_interrupts(), pytest.raises(KeyboardInterrupt):
            write_jsonl(tmp_path / "out.json", rows())
        assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]
        assert (tmp_path / "out.json").read_text(encoding="utf-8") == "old\n"
