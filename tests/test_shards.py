"""Shards and completion markers: the extract stage split by record id gives the bytes of one plain run,
a rerun does only the shards without a marker, and a merge with a shard missing is refused by name."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from rwpost.errors import ConfigError
from rwpost.executors import ShardStore, shard_keys, shard_names, shard_of
from rwpost.stages import extract as stage
from tests.shard_helpers import COMPARED, SITE, outputs, params, plain_run, write_tagged_sample


@pytest.fixture(scope="module")
def tagged(tmp_path_factory) -> Path:
    return write_tagged_sample(tmp_path_factory.mktemp("tagged") / "articles.jsonl")


@pytest.fixture(scope="module")
def plain(tagged, tmp_path_factory) -> dict[str, bytes]:
    return plain_run(tagged, tmp_path_factory.mktemp("plain") / "extract")


def test_shard_of_is_stable_and_spreads_ids():
    ids = [f"rw-{i:016x}" for i in range(700)]
    assert [shard_of(i, 7) for i in ids] == [shard_of(i, 7) for i in ids]
    counts = [sum(1 for i in ids if shard_of(i, 7) == k) for k in range(7)]
    assert min(counts) > 60, counts
    assert shard_of("rw-0123", 7) == 2  # pinned: a change would orphan every shard on disk
    assert shard_names(3) == ["00000-of-00003", "00001-of-00003", "00002-of-00003"]


def test_seven_shards_give_the_bytes_of_one_plain_run(tagged, plain, tmp_path):
    assert set(plain) == set(COMPARED)  # the sample has set-aside lines: rejects.jsonl is compared too
    out = tmp_path / "extract"
    report = stage.run(params(tagged, out, shards=7))
    assert outputs(out) == plain
    assert report.counts["shards"] == 7
    store = ShardStore(tmp_path / "extract.shards")
    assert store.pending(shard_keys(tagged, 7)) == []
    two = tmp_path / "two"
    stage.run(params(tagged, two, shards=2, work=str(tmp_path / "elsewhere")))
    assert outputs(two) == plain
    assert len(list((tmp_path / "elsewhere" / "done").glob("*.json"))) == 2


def _rerun_after(tagged: Path, tmp_path: Path, index: int, lose) -> tuple[Path, Any, list[int], int]:
    """Run 7 shards, let ``lose(store, shard)`` damage shard ``index``, and run again: the output folder,
    the rerun's report, the articles it extracted, and the input lines shard ``index`` holds. Only that
    shard runs again, and afterwards every shard is done."""
    out = tmp_path / "extract"
    stage.run(params(tagged, out, shards=7))
    store = ShardStore(tmp_path / "extract.shards")
    lose(store, shard_names(7)[index])
    done: list[int] = []
    report = stage.run(params(tagged, out, shards=7), progress=done.append)
    in_shard = sum(1 for line in tagged.read_text().splitlines() if _shard_of_line(line, 7) == index)
    assert 0 < len(done) <= in_shard  # only that shard's articles were extracted again
    assert store.pending(shard_keys(tagged, 7)) == []
    return out, report, done, in_shard


def test_a_rerun_does_only_the_shards_without_a_marker(tagged, plain, tmp_path):
    def died(store: ShardStore, shard: str) -> None:  # a shard that died before finishing
        store.marker(shard).unlink()
        (store.folder(shard) / "extractions.jsonl").unlink()

    out, report, done, in_shard = _rerun_after(tagged, tmp_path, 3, died)
    assert outputs(out) == plain
    # the run's bill is this run's, as a resumed plain run's: the other shards' records were skipped
    lines = len(tagged.read_text().splitlines())
    assert report.counts["counts"]["extracted"] == len(done)
    assert report.counts["counts"]["skipped"] == lines - in_shard
    again = stage.run(params(tagged, out, shards=7)).counts
    assert again["counts"]["extracted"] == 0 and again["counts"]["skipped"] == lines
    assert again["total"] == {"cost_usd": 0.0, "requests": 0}
    assert again["summary"] == report.counts["summary"]  # what the outputs hold: the same


def test_a_shard_file_a_crash_cut_short_after_its_marker_is_done_again(tagged, plain, tmp_path):
    # a shard's files are written without fsync (io.unsynced): its marker's hashes vouch for them, so a
    # machine crash that leaves one cut short behind a marker on disk costs that shard a rerun, never a
    # wrong merge
    def crashed(store: ShardStore, shard: str) -> None:
        cut = store.folder(shard) / "extractions.jsonl"
        data = cut.read_bytes()
        cut.write_bytes(data[: len(data) // 2] + bytes(4096))  # what delayed allocation leaves
        assert store.pending(shard_keys(tagged, 7)) == [shard]

    out, _report, _done, _in_shard = _rerun_after(tagged, tmp_path, 2, crashed)
    assert outputs(out) == plain


def test_only_the_merged_outputs_are_fsynced(tagged, tmp_path, monkeypatch):
    synced: list[Path] = []
    fsync = os.fsync

    def recording(fd: int) -> None:
        synced.append(Path(os.readlink(f"/proc/self/fd/{fd}")))
        fsync(fd)

    monkeypatch.setattr(os, "fsync", recording)
    out = tmp_path / "extract"
    stage.run(params(tagged, out, shards=3, workers=1))  # here: a pool's workers record their own
    assert {path.parent for path in synced} == {out}  # nothing under extract.shards/
    assert {path.name.split(".")[1] for path in synced} >= {"extractions", "rejects", "summary", "funnel"}


def _shard_of_line(line: str, count: int) -> int:
    try:
        row = json.loads(line)
    except json.JSONDecodeError:
        return shard_of("", count)
    return shard_of(row.get("id") if isinstance(row.get("id"), str) else "", count)


def test_merge_names_the_missing_shard_and_publishes_nothing(tagged, tmp_path):
    out = tmp_path / "extract"
    p = params(tagged, out, shards=7)
    stage.run(p)
    before = outputs(out)
    store = ShardStore(tmp_path / "extract.shards")
    store.marker(shard_names(7)[5]).unlink()
    (store.folder(shard_names(7)[2]) / "extractions.jsonl").write_text("")  # changed after its marker
    with pytest.raises(
        ConfigError, match=r"2 of 7 shards have not finished \(00002-of-00007, 00005-of-00007"
    ):
        stage.merge(p)
    assert outputs(out) == before


def test_new_input_records_make_only_their_shard_pending(tagged, tmp_path):
    out = tmp_path / "extract"
    copy = tmp_path / "articles.jsonl"
    lines = tagged.read_text().splitlines(keepends=True)
    copy.write_text("".join(lines[:-5] + lines[-2:]))
    stage.run(params(copy, out, shards=7))
    copy.write_text("".join(lines))
    store = ShardStore(tmp_path / "extract.shards")
    arrived = {_shard_of_line(line, 7) for line in lines[-5:-2]}
    assert store.pending(shard_keys(copy, 7)) == [shard_names(7)[i] for i in sorted(arrived)]


def test_limit_needs_one_local_shard(tagged, tmp_path):
    p = stage.Params.of(input=tagged, out=tmp_path / "x", backend="offline", limit=3, executor={"shards": 2})
    with pytest.raises(ConfigError, match="extract.limit needs one local shard"):
        stage.run(p)


def test_more_shards_than_articles_are_refused_before_any_folder(tagged, tmp_path):
    # issue 39 L9: executor.shards 100000 for 105 articles churned, 1,156 shard folders after 200 s
    articles = len(tagged.read_text(encoding="utf-8").splitlines())
    p = stage.Params.of(input=tagged, out=tmp_path / "x", backend="offline", executor={"shards": 100000})
    with pytest.raises(ConfigError, match=rf"executor.shards: 100000 shards for {articles} records"):
        stage.run(p)
    assert list(tmp_path.iterdir()) == []


def test_params_yaml_executor_section_is_optional_and_defaults_to_one_local_shard():
    from rwpost.stages.base import load_params

    whole = load_params(Path(__file__).resolve().parents[1] / "params.yaml")
    assert stage.Params.from_params(whole).executor.sharded is False
    whole.pop("executor", None)
    assert stage.Params.from_params(whole).executor.name == "local"
    whole["executor"] = {"name": "cloud"}
    with pytest.raises(ConfigError, match="executor.name"):
        stage.Params.from_params(whole)


# --- the evaluation plan: one shard per planned run -------------------------------------------------------


@pytest.fixture(scope="module")
def version(tmp_path_factory) -> Path:
    from rwpost.dataset import write_parquet
    from rwpost.rwpost_format import read_released

    main = read_released(SITE.parents[0] / "released" / "rwpost_dev_main.head.jsonl")
    root = tmp_path_factory.mktemp("rwpost")
    write_parquet(root / "v9" / "main" / "dev.parquet", main[:20])
    write_parquet(root / "v9" / "main" / "test.parquet", main[20:])
    return root


def evaluate_params(version: Path, out: Path, **executor):
    from rwpost.stages import evaluate

    section = {
        "out": str(out),
        "subsets": ["main"],
        "bootstrap": 20,
        "key_points": False,
        "detectors": [{"name": "majority"}, {"name": "stratified", "settings": ["T+I", "T+I+E"]}],
    }
    whole = {"dataset": {"root": str(version), "version": "v9"}, "evaluate": section}
    if executor:
        whole["executor"] = executor
    return evaluate, evaluate.Params.from_params(whole)


def board(out: Path) -> tuple[bytes, list]:
    rows = json.loads((out / "leaderboard" / "leaderboard.json").read_text())
    return Path(f"{out}-summary.json").read_bytes(), [(r["system"], r["macro_f1"]) for r in rows]


def test_evaluation_runs_as_shards_publish_what_one_plain_run_does(version, tmp_path):
    evaluate, plain = evaluate_params(version, tmp_path / "plain")
    evaluate.run(plain)
    evaluate, sharded = evaluate_params(version, tmp_path / "sharded", shards=2)
    evaluate.run(sharded)
    assert board(tmp_path / "sharded") == board(tmp_path / "plain")
    store = ShardStore(tmp_path / "sharded.shards")
    markers = sorted(p.name for p in (store.root / "done").iterdir())
    assert len(markers) == 3 and markers[0].endswith("__main__majority-TI.json")
    # a rerun finds every marker: no run is evaluated again (their metrics.json are not rewritten)
    stamps = {p: p.stat().st_mtime_ns for p in (tmp_path / "sharded" / "main").glob("*/metrics.json")}
    evaluate.run(sharded)
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps
    lost = next(p for p in (store.root / "done").iterdir() if "stratified-TIE" in p.name)
    lost.unlink()
    with pytest.raises(ConfigError, match=r"evaluate: 1 of 3 shards have not finished \(.*stratified-TIE"):
        evaluate.merge(sharded)


def test_evaluation_slurm_tasks_run_here_and_merge(version, tmp_path):
    from rwpost.executors.__main__ import main as executors_main

    evaluate, params = evaluate_params(version, tmp_path / "reports", name="slurm")
    report = evaluate.run(params)
    assert report.counts == {"shards": 3, "pending": 3}
    job = tmp_path / "reports.shards" / "slurm" / "job.json"
    assert executors_main(["merge", str(job)]) == 1  # refused: no run finished
    for index in range(3):  # what each array task runs (the script's last line)
        assert executors_main(["shard", str(job), str(index)]) == 0
    assert executors_main(["merge", str(job)]) == 0
    _, plain = evaluate_params(version, tmp_path / "plain")
    evaluate.run(plain)
    assert board(tmp_path / "reports") == board(tmp_path / "plain")


def test_the_evaluate_command_writes_slurm_tasks_that_run_here_and_merge_to_its_local_run(tmp_path, capsys):
    """``rwpost evaluate --executor slurm`` (the command, not the stage): its job's tasks run the command's
    planned runs, and the merge writes the leaderboard the local run writes."""
    from rwpost.cli import main
    from rwpost.executors.__main__ import main as executors_main
    from rwpost.io import write_jsonl
    from rwpost.labels import Label
    from tests.evaluate_helpers import make_sample

    labels = [Label.FALSE, Label.TRUE, Label.FALSE, Label.FALSE, Label.UNPROVEN, Label.FALSE]
    data = tmp_path / "samples.jsonl"
    write_jsonl(data, [make_sample(i, g) for i, g in enumerate(labels)])
    common = ["evaluate", "--data", str(data), "--setting", "T", "--bootstrap", "0", "--no-progress"]
    common += [
        "--no-key-points",
        "--detector",
        "majority",
        "--detector",
        "stratified",
        "--train-fraction",
        "0.5",
    ]
    assert main([*common, "--out", str(tmp_path / "slurm"), "--executor", "slurm"]) == 0
    job = tmp_path / "slurm.shards" / "slurm" / "job.json"
    said = capsys.readouterr()
    assert (
        f"evaluate: 2 of 2 runs to run; submit with: bash {job.parent / 'submit.sh'}" in said.out + said.err
    )
    assert not (tmp_path / "slurm" / "leaderboard").exists()  # nothing ran here
    assert executors_main(["merge", str(job)]) == 1  # refused: no run finished
    for index in range(2):  # what each array task runs (the script's last line)
        assert executors_main(["shard", str(job), str(index)]) == 0
    assert executors_main(["merge", str(job)]) == 0
    assert main([*common, "--out", str(tmp_path / "local")]) == 0
    boards = [
        json.loads((tmp_path / o / "leaderboard" / "leaderboard.json").read_text())
        for o in ("slurm", "local")
    ]
    assert [[(r["system"], r["macro_f1"], r["n"]) for r in b] for b in boards[:1]] == [
        [(r["system"], r["macro_f1"], r["n"]) for r in boards[1]]
    ]
    assert len(boards[0]) == 2
