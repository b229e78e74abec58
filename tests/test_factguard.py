"""FactGuard end to end: the runner, the loopback LLM server (scripted turns), the loopback search server
(FactProbe through Serper's format), and videos written in the test with OpenCV."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest

from rwpost.errors import ConfigError
from rwpost.evaluate import RunSpec, evaluate
from rwpost.evaluate.detectors.factguard import FactGuardDetector
from rwpost.evaluate.runner import read_predictions
from rwpost.labels import Label
from rwpost.llm import Price
from rwpost.testing.llm import FakeLLMServer
from rwpost.testing.search import SearchServer, result
from tests.evaluate_helpers import killing, make_sample, run_until_killed, schema_of
from tests.video_helpers import Turns, color, write_video

cv2 = pytest.importorskip("cv2")


def spec(llm, search, tmp_path, videos: Path, setting="T+W", **extra) -> RunSpec:
    config = {
        "model": "test-model",
        "base_url": llm.base_url,
        "cache_path": str(tmp_path / "llm.sqlite"),
        "video_dir": str(videos),
        "search": "loopback",
        "search_options": {"base_url": search.base_url},
        "timeout_s": 10.0,
        **extra,
    }
    return RunSpec(
        "factguard",
        config=config,
        secrets={"api_key": "sk-test"},
        setting=setting,
        n_resamples=10,
        batch_size=1,
        prices={"test-model": Price(input_per_mtok=1.0, output_per_mtok=2.0)},
    )


def images_of(body) -> list:
    """The images of a chat request, decoded."""
    from PIL import Image

    out = []
    for message in body["messages"]:
        for part in message["content"] if isinstance(message["content"], list) else []:
            if part.get("type") == "image_url":
                data = part["image_url"]["url"].split(",", 1)[1]
                out.append(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB"))
    return out


def near(a, b, tolerance=24) -> bool:
    return all(abs(x - y) <= tolerance for x, y in zip(a, b, strict=True))


def test_clipscout_tiles_four_frames_of_the_asked_interval_and_factprobe_drops_social_and_fact_checks(
    tmp_path,
):
    videos = tmp_path / "videos"
    videos.mkdir()
    sample = make_sample(1, Label.FALSE, video_link="https://cdn.example.org/v/clip-1.mp4")
    write_video(videos / "clip-1.mp4")  # found by the link's file name
    found = [
        result("https://www.youtube.com/watch?v=1", "A video", "reupload"),
        result("https://www.snopes.com/fact-check/flood/", "Fact check", "False"),
        result(
            "https://news.example.org/flood", "Flood in 2012", "The footage dates from 2012.", "Mar 1, 2012"
        ),
    ]
    with FakeLLMServer(Turns()) as llm, SearchServer({"flood video 2020": found}) as search:
        metrics = evaluate([sample], spec(llm, search, tmp_path, videos), tmp_path / "run").dump()
        first, second = llm.requests
        assert search.queries == ["flood video 2020"]
    # turn 1 saw an overview of the whole video; turn 2 that overview again (eq. 2: the original input),
    # then the ClipScout grid of 1-3 s: frames at 1.25, 1.75, 2.25, 2.75 s (frames 12, 17, 22, 27), left to
    # right, top to bottom
    [overview], [again, grid] = images_of(first), images_of(second)
    assert overview.size == grid.size == (64, 48) and again.tobytes() == overview.tobytes()
    corners = [grid.getpixel((x, y)) for y in (12, 36) for x in (16, 48)]
    assert all(near(c, color(i)) for c, i in zip(corners, (12, 17, 22, 27), strict=True)), corners
    turn2 = next(m for m in second["messages"] if m["role"] == "user")["content"]
    text = "\n".join(p.get("text", "") for p in turn2 if isinstance(p, dict))
    assert "The footage dates from 2012." in text and "youtube" not in text and "snopes" not in text
    assert "ClipScout: 4 frames of 1-3 s" in text
    row = json.loads((tmp_path / "run" / "predictions.jsonl").read_text())
    assert row["label"] == "False" and metrics["accuracy"] == 1.0
    assert row["explanation"].splitlines()[0] == "FactGuard answer: fake (RW-Post view, adapted: False)"
    assert row["evidence_urls"] == ["https://news.example.org/flood"]
    agents = [c["agent"] for c in row["calls"] if c["agent"]]
    assert agents == ["turn1", "tool:FactProbe", "tool:ClipScout", "turn2"]
    names = sorted(c["name"] for c in row["calls"] if c["agent"] is None)
    assert names == ["factprobe:excluded:social", "leakage-guard:dropped:blocked:snopes.com"]
    assert metrics["ledger"]["by_agent"]["tool:ClipScout"]["calls"] == 1


def test_an_undecodable_video_fails_its_sample_and_the_run_goes_on(tmp_path):
    videos = tmp_path / "videos"
    videos.mkdir()
    broken, good = make_sample(2, Label.FALSE), make_sample(3, Label.TRUE)
    (videos / f"{broken.id}.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"not a video" * 50)
    write_video(videos / f"{good.id}.mp4")
    with FakeLLMServer(Turns(first="real")) as llm, SearchServer() as search:
        metrics = evaluate([broken, good], spec(llm, search, tmp_path, videos, "T"), tmp_path / "run").dump()
        assert llm.chat_requests == 1  # the broken one never reached the model
    rows = {r["id"]: r for r in map(json.loads, (tmp_path / "run" / "predictions.jsonl").open())}
    assert rows[broken.id]["label"] is None
    assert rows[broken.id]["error"] == f"video unreadable: {broken.id}.mp4 does not decode"
    assert rows[good.id]["label"] == "True" and metrics["coverage"]["no_label"] == 1
    assert rows[good.id]["explanation"].splitlines()[1] == "answered in the first turn: clear"


def test_samples_without_a_video_are_refused_up_front(tmp_path):
    videos = tmp_path / "videos"
    videos.mkdir()
    with FakeLLMServer(Turns()) as llm, SearchServer() as search:
        with pytest.raises(
            ConfigError, match=r"factguard reads videos: 1 of 1 samples have no video file in "
        ):
            evaluate([make_sample(4, Label.TRUE)], spec(llm, search, tmp_path, videos, "T"), tmp_path / "run")
        assert llm.chat_requests == 0
    assert not (tmp_path / "run").exists()  # refused before anything is written: no run.json either


def test_the_video_refusal_is_one_line_naming_the_count_and_the_folder_option(tmp_path):
    videos = tmp_path / "videos"
    videos.mkdir()
    samples = [make_sample(n, Label.TRUE) for n in (11, 12, 13)]
    write_video(videos / f"{samples[0].id}.mp4")
    (tmp_path / "run").mkdir()
    with FakeLLMServer(Turns()) as llm, SearchServer() as search:
        with pytest.raises(ConfigError) as refused:
            evaluate(samples, spec(llm, search, tmp_path, videos, "T"), tmp_path / "run")
    message = str(refused.value)
    assert "\n" not in message and "2 of 3 samples have no video file in " in message
    assert "give --set video_dir=FOLDER" in message
    assert list((tmp_path / "run").iterdir()) == []


def test_a_rerun_answers_from_the_caches_without_a_model_or_search_call(tmp_path):
    videos = tmp_path / "videos"
    videos.mkdir()
    samples = [make_sample(5, Label.FALSE), make_sample(6, Label.FALSE)]
    for s in samples:
        write_video(videos / f"{s.id}.mp4")
    with FakeLLMServer(Turns()) as llm, SearchServer({"flood video 2020": []}) as search:
        evaluate(samples[:1], spec(llm, search, tmp_path, videos), tmp_path / "first")
        asked, searched = llm.chat_requests, list(search.queries)
        evaluate(samples[:1], spec(llm, search, tmp_path, videos), tmp_path / "again")
        assert llm.chat_requests == asked and search.queries == searched
    row = json.loads((tmp_path / "again" / "predictions.jsonl").read_text())
    assert all(c["cached"] for c in row["calls"] if c["agent"] in ("turn1", "turn2", "tool:FactProbe"))


KillingFactGuard = killing(FactGuardDetector)


def test_a_killed_run_resumes_without_one_model_or_search_call(tmp_path):
    videos = tmp_path / "videos"
    videos.mkdir()
    samples = [make_sample(7, Label.FALSE), make_sample(8, Label.FALSE)]
    for s in samples:
        write_video(videos / f"{s.id}.mp4")
    arm = tmp_path / "arm"
    arm.write_text("kill")
    found = [result("https://news.example.org/flood", "Flood in 2012", "The footage dates from 2012.")]
    with FakeLLMServer(Turns()) as llm, SearchServer({"flood video 2020": found}) as search:
        run_spec = spec(llm, search, tmp_path, videos, arm_file=str(arm))
        run_spec.detector = "tests.test_factguard:KillingFactGuard"
        run_until_killed(run_spec, samples, tmp_path / "run")
        assert not arm.exists()
        assert len(read_predictions(tmp_path / "run" / "predictions.jsonl")) == 1
        asked, searched = llm.chat_requests, list(search.queries)
        assert asked == 4 and searched == ["flood video 2020"]  # both samples answered, one search cached

        metrics = evaluate(samples, run_spec, tmp_path / "run").dump()
        assert llm.chat_requests == asked  # zero model calls: the LLM cache answers both turns
        assert search.queries == searched  # zero searches: the tool cache answers FactProbe
    assert metrics["n_samples"] == 2 and metrics["accuracy"] == 1.0
    rows = read_predictions(tmp_path / "run" / "predictions.jsonl")
    resumed = [c for c in rows[(0, samples[1].id)]["calls"] if c["agent"]]
    assert [c["agent"] for c in resumed] == ["turn1", "tool:FactProbe", "tool:ClipScout", "turn2"]
    assert all(c["cached"] for c in resumed if c["agent"] != "tool:ClipScout")  # ClipScout is local


def test_video_frames_are_bounded_and_times_clamped(tmp_path):
    from rwpost.evaluate.video import find_video, frame_times, probe

    path = write_video(tmp_path / "s.mp4")
    video = probe(path)
    assert (video.frames, video.fps, video.duration_s) == (40, 10.0, 4.0)
    assert frame_times(video, 2.0, 99.0) == pytest.approx([2.25, 2.75, 3.25, 3.75])  # clamped to 4 s
    assert frame_times(video, 3.0, 1.0) == pytest.approx([0.5, 1.5, 2.5, 3.5])  # reversed: whole video
    assert find_video("s", None, tmp_path) == path
    assert find_video("x", "https://cdn/../../etc/passwd", tmp_path) is None


# --- the local path: a tiny random vision-language model on CPU ----------------------------------------

LOCAL_ANSWER = {"reasoning": "look closer", "label": "fake", "search_query": None}
LOCAL_ANSWER |= {"clip": {"start_s": 1.0, "end_s": 3.0}}
"""What the scripted tiny model writes for both turns: it satisfies both schemas; in the first turn the
interval calls ClipScout (no search query), in the second the label answers."""


def test_the_local_path_runs_both_turns_and_clipscout_on_cpu(tmp_path):
    pytest.importorskip("transformers")
    from tests.evaluate_helpers import build_tiny_vlm

    build_tiny_vlm(tmp_path / "model", scripted=True, answer=LOCAL_ANSWER)
    videos = tmp_path / "videos"
    videos.mkdir()
    samples = [make_sample(21, Label.FALSE), make_sample(22, Label.TRUE)]
    for s in samples:
        write_video(videos / f"{s.id}.mp4")
    options = {
        "backend": "local",
        "model": str(tmp_path / "model"),
        "device": "cpu",
        "max_new_tokens": 8,
        "video_dir": str(videos),
    }
    run_spec = RunSpec("factguard", config=options, setting="T", n_resamples=10, batch_size=2)
    metrics = evaluate(samples, run_spec, tmp_path / "run").dump()
    rows = {r["id"]: r for r in map(json.loads, (tmp_path / "run" / "predictions.jsonl").open())}
    for s in samples:
        row = rows[s.id]
        assert row["label"] == "False", row["error"]
        assert [c["agent"] for c in row["calls"]] == ["turn1", "tool:ClipScout", "turn2"]
        assert row["explanation"].splitlines()[1] == "second turn after ClipScout: look closer"
        assert all(c["tokens_in"] > 0 for c in row["calls"] if c["kind"] == "model")
    assert metrics["accuracy"] == 0.5 and metrics["ledger"]["by_agent"]["tool:ClipScout"]["calls"] == 2
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["device"] == "cpu" and manifest["detector_config"]["backend"] == "local"
    assert manifest["detector_config"]["model"] == str(tmp_path / "model")


def test_each_turn_of_every_sample_is_one_local_batch(tmp_path):
    """Straight through the detector: the turn-1 requests of both samples are one generation, the turn-2
    requests (each with the overview and the ClipScout grid) another."""
    pytest.importorskip("transformers")
    from rwpost.evaluate.contract import RunContext
    from rwpost.evaluate.task import EvalTask
    from tests.evaluate_helpers import build_tiny_vlm

    build_tiny_vlm(tmp_path / "model", scripted=True, answer=LOCAL_ANSWER)
    videos = tmp_path / "videos"
    videos.mkdir()
    samples = [make_sample(23, Label.FALSE), make_sample(24, Label.FALSE)]
    for s in samples:
        write_video(videos / f"{s.id}.mp4")
    detector = FactGuardDetector.build(
        {"backend": "local", "model": str(tmp_path / "model"), "device": "cpu", "max_new_tokens": 8,
         "video_dir": str(videos), "view": "native"}
    )  # fmt: skip
    task = EvalTask.of("T", samples)
    ctx = RunContext(seed=1)
    predictions = detector.predict([task.blind(s) for s in samples], task, ctx)
    assert [p.label for p in predictions] == [Label.FALSE, Label.FALSE], [p.error for p in predictions]
    # per sample (the overview in turn 1, the overview and grid in turn 2), in the run's transcripts (the
    # runner counts them as it takes their rows)
    assert sum(ctx.transcript(s.id).images_sent for s in samples) == 2
    report = detector.chat.report()
    assert report["batches"] == 2 and report["device"] == "cpu"
    for p in predictions:  # the two rows of a turn share their batch's time
        turns = [c.latency_s for c in p.calls if c.agent in ("turn1", "turn2")]
        assert len(turns) == 2
    first = [next(c.latency_s for c in p.calls if c.agent == "turn1") for p in predictions]
    assert first[0] == first[1]


def _label_enum(body) -> list:
    return body["response_format"]["json_schema"]["schema"]["properties"]["label"]["enum"]


@pytest.mark.parametrize(
    ("view", "labels"), [("rw-post", ["real", "fake", "unverifiable"]), ("native", ["real", "fake"])]
)
def test_turn_two_sees_the_overview_again_and_its_labels_are_the_views(tmp_path, view, labels):
    """Eq. 2: the second stage conditions on the original input, so after a FactProbe-only first turn the
    verdict still sees the video overview; its label enum is the run's view, as in turn 1."""
    videos = tmp_path / "videos"
    videos.mkdir()
    sample = make_sample(31, Label.FALSE)
    write_video(videos / f"{sample.id}.mp4")
    found = [result("https://news.example.org/flood", "Flood in 2012", "The footage dates from 2012.")]
    with FakeLLMServer(Turns(clip=None)) as llm, SearchServer({"flood video 2020": found}) as search:
        evaluate([sample], spec(llm, search, tmp_path, videos, view=view), tmp_path / "run")
        first, second = llm.requests
    [overview], [again] = images_of(first), images_of(second)
    assert again.tobytes() == overview.tobytes()
    assert [x for x in _label_enum(first) if x is not None] == labels
    assert _label_enum(second) == labels


class Tagged:
    """A trained FactGuard checkpoint's replies (``<think>`` / ``<answer>``, Qwen's ``<tool_call>``): the
    sample whose claim names ``search`` asks FactProbe, then answers ``Fake.``; the others answer at once
    with ``answer``."""

    def __init__(self, search: str, answer: str) -> None:
        self.search, self.answer = search, answer

    def __call__(self, body):
        from rwpost.testing.llm import Reply

        user = json.dumps(body["messages"])
        if schema_of(body) == "factguard_answer":
            return Reply.text("<think>The footage is older.</think>\n<answer>Fake.</answer>")
        if self.search in user:
            call = {"name": "FactProbe", "arguments": {"query": "flood video 2020"}}
            return Reply.text(f"<think>I need the date.</think><tool_call>{json.dumps(call)}</tool_call>")
        return Reply.text(f"<think>It looks staged.</think> <answer>{self.answer}</answer>")


def test_a_trained_checkpoints_think_answer_and_tool_call_tags_are_read(tmp_path):
    videos = tmp_path / "videos"
    videos.mkdir()
    samples = [make_sample(32, Label.FALSE), make_sample(33, Label.TRUE), make_sample(34, Label.TRUE)]
    for s in samples:
        write_video(videos / f"{s.id}.mp4")
    found = [result("https://news.example.org/flood", "Flood in 2012", "The footage dates from 2012.")]
    handler = Tagged("number 32.", "Real")
    with FakeLLMServer(handler) as llm, SearchServer({"flood video 2020": found}) as search:
        run_spec = spec(llm, search, tmp_path, videos, view="native")
        evaluate(samples[:2], run_spec, tmp_path / "run")
        handler.answer = "maybe"  # no label of the view: the sample fails with the model's reason
        evaluate(samples[2:], run_spec, tmp_path / "bad")
        assert search.queries == ["flood video 2020"]
    rows = {r["id"]: r for r in map(json.loads, (tmp_path / "run" / "predictions.jsonl").open())}
    searched, answered = rows[samples[0].id], rows[samples[1].id]
    assert searched["label"] == "False" and answered["label"] == "True", (
        searched["error"],
        answered["error"],
    )
    assert searched["explanation"].splitlines() == [
        "FactGuard answer: fake",
        "second turn after FactProbe: The footage is older.",
    ]
    assert answered["explanation"].splitlines() == [
        "FactGuard answer: real",
        "answered in the first turn: It looks staged.",
    ]
    assert searched["evidence_urls"] == ["https://news.example.org/flood"]
    [failed] = map(json.loads, (tmp_path / "bad" / "predictions.jsonl").open())
    assert failed["label"] is None and "model answer rejected (turn1)" in failed["error"]
