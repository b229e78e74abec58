"""FakeSV, FakeTT and FakeVV from small folders in their released layouts (rwpost.evaluate.datasets): the
fields read, the temporal split, odd and broken rows as one-line errors, and FactGuard run on a FakeSV
folder from the command line against the loopback LLM and search servers."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from rwpost.cli import main
from rwpost.errors import ConfigError, RecordError
from rwpost.evaluate.datasets import parse_data_spec
from rwpost.evaluate.datasets.fakesv import paper_scores, read_fakesv, read_fakett
from rwpost.evaluate.datasets.fakevv import read_fakevv
from rwpost.labels import Label
from tests.evaluate_helpers import QUIET_OPTIONS

DAY = 86_400


def ms(day: int) -> int:
    """Unix milliseconds of 2021-01-01 plus ``day`` days (FakeSV's publish_time_norm)."""
    return int((datetime(2021, 1, 1, tzinfo=UTC).timestamp() + day * DAY) * 1000)


def fakesv_rows(n: int = 10) -> list[dict]:
    """``n`` labelled FakeSV records published a day apart (alternating fake and real), and a debunk."""
    rows = [
        {
            "video_id": f"70{i:02d}",
            "title": f"视频标题 {i}",
            "keywords": f"事件 {i // 2}",
            "annotation": "假" if i % 2 else "真",
            "publish_time_norm": ms(i),
            "ocr": f"字幕 {i}",
        }
        for i in range(n)
    ]
    return [
        *rows,
        {"video_id": "3xdebunk", "title": "辟谣", "annotation": "辟谣", "publish_time_norm": ms(99)},
    ]


def write_lines(path: Path, rows: list, raw: dict[int, str] | None = None) -> Path:
    """Rows as JSON lines (``raw``: line index -> text written as is instead)."""
    lines = [json.dumps(r, ensure_ascii=False) for r in rows]
    for index, text in (raw or {}).items():
        lines[index] = text
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_fakesv_holds_out_the_most_recent_15_percent_and_leaves_debunks_out(tmp_path):
    write_lines(tmp_path / "data_complete.json", fakesv_rows())
    test, train, every = (read_fakesv(tmp_path, split) for split in ("test", "train", "all"))
    assert [s.id for s in test] == ["fakesv-7008", "fakesv-7009"]  # ceil(15% of 10): the two latest
    assert len(train) == 8 and not {s.id for s in train} & {s.id for s in test}
    assert len(every) == 11 and every[-1].label is None and every[-1].label_original == "辟谣"
    latest = test[1]
    assert (latest.claim, latest.ocr, latest.category) == ("视频标题 9", "字幕 9", "事件 4")
    assert (latest.label, latest.label_original) == (Label.FALSE, "假")
    assert latest.claim_time == date(2021, 1, 10) and latest.video_link == "7009.mp4"
    assert latest.provenance.source == "data_complete.json:10"
    # the release's own temporal split wins over the publish times
    (tmp_path / "data-split" / "temporal").mkdir(parents=True)
    (tmp_path / "data-split" / "temporal" / "vid_time3_test.txt").write_text("7001\n7002\n3xdebunk\n")
    assert [s.id for s in read_fakesv(tmp_path)] == ["fakesv-7001", "fakesv-7002"]
    assert len(read_fakesv(tmp_path, "train")) == 8


def test_fakett_reads_descriptions_events_and_second_timestamps(tmp_path):
    rows = [
        {
            "video_id": 7332393503843962144 + i,
            "description": f"UFO recorded in Romania #{i}",
            "event": "UFO spotted in Romania",
            "annotation": "fake" if i < 4 else "real",
            "publish_time": 1_700_000_000 + i * DAY,
        }
        for i in range(7)
    ]
    write_lines(tmp_path / "data.json", rows)
    (tmp_path / "video").mkdir()
    earlier, latest = read_fakett(tmp_path)  # ceil(15% of 7) = 2: the two latest
    assert (earlier.id, latest.id) == ("fakett-7332393503843962149", "fakett-7332393503843962150")
    assert latest.label == Label.TRUE and latest.claim_time == date(2023, 11, 20)
    assert latest.category == "UFO spotted in Romania" and latest.claim == "UFO recorded in Romania #6"
    spec = parse_data_spec(f"fakett:{tmp_path}")
    assert spec.media_root() == tmp_path / "video" and spec.source() == tmp_path / "data.json"


def fakevv_record(key: str, title: str, answer: str, audio: str | None = None) -> dict:
    heard = f", the news audio is '{audio}'" if audio else ""
    prompt = (
        f"<image><image> The news title is '{title}'{heard}, is this multimodal content manipulated? "
        "Please answer yes or no."
    )
    return {
        "messages": [{"content": prompt, "role": "user"}, {"content": answer, "role": "assistant"}],
        "images": [f"./{key}/{key}_frame_{i}.png" for i in range(1, 3)],
    }


def test_fakevv_reads_both_titles_of_a_video_with_their_answers(tmp_path):
    real_title, fake_title = "UK chancellor says she 'won't do it again.'", "UK PM says she 'won't.'"
    records = [
        fakevv_record("9e52", real_title, "<answer>No.</answer>"),
        fakevv_record("9e52", fake_title, "<answer> Yes. </answer>", "hole"),
    ]
    (tmp_path / "reasoning_test_data_image_with_audio.json").write_text(json.dumps(records, indent=2))
    real, fake = read_fakevv(tmp_path)
    assert (real.claim, fake.claim) == (real_title, fake_title)
    assert (real.label, fake.label, fake.post_text) == (Label.TRUE, Label.FALSE, "hole")
    assert real.video_link == fake.video_link == "9e52.mp4" and real.id != fake.id
    assert fake.provenance.source == "reasoning_test_data_image_with_audio.json:18"


GOOD = fakesv_rows(3)
SV = "data_complete.json"


@pytest.mark.parametrize(
    ("reader", "name", "text", "problem"),
    [
        (read_fakesv, SV, '{"video_id": "1", "title"', f"{SV}:2: not valid JSON"),
        (read_fakesv, SV, '{"video_id": "1", "title": "t", "annotation": "maybe"}',
         f"{SV}:2, field 'annotation': expected one of 真, 假, 辟谣, found 'maybe'"),
        (read_fakesv, SV, '{"video_id": "../x", "title": "t", "annotation": "真"}',
         f"{SV}:2, field 'video_id': expected a video id"),
        (read_fakesv, SV, '{"video_id": "1", "title": " ", "annotation": "真"}',
         f"{SV}:2, field 'title': no text"),
        (read_fakesv, SV, json.dumps(GOOD[0]), f"{SV}:2, field 'video_id': video id repeats line 1"),
        (read_fakesv, SV, '{"video_id": "9", "title": "t", "annotation": "真"}',
         f"{SV}:2, field 'publish_time_norm': no readable publish time (expected Unix seconds or "
         "milliseconds, or an ISO date"),
        (read_fakett, "data.json", '["not", "an", "object"]', "data.json:2: expected an object, found list"),
    ],
)  # fmt: skip
def test_a_broken_row_is_one_error_naming_file_and_line(tmp_path, reader, name, text, problem):
    rows = [
        dict(GOOD[0], annotation="real", description="d") if reader is read_fakett else GOOD[0],
        {},
        GOOD[2],
    ]
    write_lines(tmp_path / name, rows, raw={1: text})
    with pytest.raises(RecordError) as bad:
        reader(tmp_path)
    message = str(bad.value)
    assert problem in message and "\n" not in message, message


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ({"messages": [], "images": []}, "field 'messages': expected a user turn naming the news title"),
        (fakevv_record("k", "t", "maybe"), "field 'messages': expected an <answer>Yes</answer> or No"),
        (dict(fakevv_record("k", "t", "<answer>No</answer>"), images=["https://www.youtube.com/watch?v=x"]),
         "field 'images': expected frame paths"),
    ],
)  # fmt: skip
def test_a_broken_fakevv_record_is_one_error_naming_file_and_line(tmp_path, record, problem):
    records = [fakevv_record("a1", "fine", "<answer>No.</answer>"), record]
    (tmp_path / "reasoning_test_data_image_with_audio.json").write_text(json.dumps(records, indent=2))
    with pytest.raises(RecordError) as bad:
        read_fakevv(tmp_path)
    message = str(bad.value)
    assert "reasoning_test_data_image_with_audio.json:18, " + problem in message and "\n" not in message


def test_a_folder_without_the_release_files_is_refused_naming_them(tmp_path, capsys):
    with pytest.raises(ConfigError, match="no fakesv annotations \\(data_complete.json or "):
        read_fakesv(tmp_path)
    capsys.readouterr()
    args = ["evaluate", "--data", f"fakevv:{tmp_path}", "--detector", "majority", "--setting", "T"]
    assert main([*args, "--train-fraction", "0.5", "--out", str(tmp_path / "o")]) == 2
    [line] = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert "no FakeVV test set (reasoning_test_data_image_with_audio.json or" in line
    assert not (tmp_path / "o").exists()


def test_factguard_on_a_fakesv_folder_from_the_command_line(tmp_path, monkeypatch):
    pytest.importorskip("cv2")
    from rwpost.testing.llm import FakeLLMServer
    from rwpost.testing.search import SearchServer
    from tests.video_helpers import Turns, write_video

    root = tmp_path / "FakeSV"
    write_lines(root / "data_complete.json", fakesv_rows())
    (root / "videos").mkdir()
    for i in (8, 9):  # the test split's videos (the rest need none)
        write_video(root / "videos" / f"70{i:02d}.mp4")
    out = tmp_path / "run"
    with FakeLLMServer(Turns(label="fake")) as llm, SearchServer({"flood video 2020": []}) as search:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-fakesv")
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        code = main(
            ["evaluate", "--data", f"fakesv:{root}", "--detector", "factguard", "--model", "test-model",
             "--setting", "T+W", "--set", "search=loopback",
             "--set", "search_options=" + json.dumps({"base_url": search.base_url}),
             "--set", "view=native", "--set", f"cache_path={tmp_path / 'llm.sqlite'}",
             "--out", str(out), *QUIET_OPTIONS]
        )  # fmt: skip
        assert code == 0
        assert llm.chat_requests == 4 and search.queries == ["flood video 2020"] * 2  # one per sample
    rows = {r["id"]: r for r in map(json.loads, (out / "predictions.jsonl").open())}
    assert set(rows) == {"fakesv-7008", "fakesv-7009"}
    assert all(r["label"] == "False" for r in rows.values())
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["data"]["benchmark"] == "fakesv" and manifest["data"]["split"] == "test"
    metrics = json.loads((out / "metrics.json").read_text())
    # 7008 is real, 7009 fake: half right; the fake class: precision 1/2, recall 1/1
    scores = paper_scores(metrics)
    assert scores == pytest.approx({"accuracy": 0.5, "precision": 0.5, "recall": 1.0, "f1": 2 / 3})


def test_factguard_without_the_videos_is_refused_in_one_line_writing_nothing(tmp_path, capsys, monkeypatch):
    root = tmp_path / "FakeSV"
    write_lines(root / "data_complete.json", fakesv_rows())
    (root / "videos").mkdir()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fakesv")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # never reached
    capsys.readouterr()
    out = tmp_path / "run"
    args = ["evaluate", "--data", f"fakesv:{root}", "--detector", "factguard", "--model", "test-model"]
    assert main([*args, "--setting", "T", "--out", str(out), *QUIET_OPTIONS]) == 2
    [line] = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert f"factguard reads videos: 2 of 2 samples have no video file in {root / 'videos'}" in line
    assert "give --set video_dir=FOLDER" in line
    assert not out.exists()


def test_a_fakevv_run_reports_factguards_table_1_columns(tmp_path, capsys):
    """FakeVV is scored in its own labels (real, fake) and its report gives FactGuard's fake-class scores."""
    from rwpost.evaluate.datasets import parse_data_spec
    from tests.conftest import run_cli

    records = [
        fakevv_record("9e52", "A real title.", "<answer>No.</answer>"),
        fakevv_record("9e52", "A fake title.", "<answer>Yes.</answer>"),
        fakevv_record("77ab", "Another real title.", "<answer>No.</answer>"),
    ]
    (tmp_path / "reasoning_test_data_image_with_audio.json").write_text(json.dumps(records, indent=2))
    samples = parse_data_spec(f"fakevv:{tmp_path}").samples()
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"id": s.id, "label": "False"}) + "\n" for s in samples))
    out = tmp_path / "run"
    code, err = run_cli(capsys, "evaluate", "--data", f"fakevv:{tmp_path}", "--predictions", answers,
                        "--out", out, "--bootstrap", "0", "--no-progress", "--no-key-points")  # fmt: skip
    assert code == 0, err
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["primary_view"] == "fakevv"
    # all answered fake: 1 of 3 right; the fake class: precision 1/3, recall 1
    assert metrics["benchmark_scores"]["FactGuard Table 1 (fake class)"] == pytest.approx(
        {"accuracy": 1 / 3, "precision": 1 / 3, "recall": 1.0, "f1": 0.5}
    )
