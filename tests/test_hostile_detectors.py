"""The built-in detectors and the LLM client against a hostile environment: a refused key, answers that are
no chat completion, refusals, search outages, pages dated "3 days ago", image bombs, unsupported model
folders; and the blinding of every agent prompt in every input cell, read off the loopback server."""

from __future__ import annotations

import io
import json
from datetime import date

import pytest

from rwpost.cli import main
from rwpost.evaluate import RunSpec, evaluate
from rwpost.evaluate.outages import RetrievalFailed
from rwpost.evaluate.search.dates import parse_result_date
from rwpost.labels import Label
from rwpost.llm import LLMAccessError, LLMClient, LLMRequest, load_llm_schema
from rwpost.records import Evidence, Image
from rwpost.testing.llm import FakeLLMServer, Replayer, Reply
from rwpost.testing.search import SearchServer, page, result
from tests.evaluate_helpers import (
    Agents,
    agentfact_spec,
    build_tiny_vlm,
    image_bytes,
    make_sample,
    news,
    released_head,
)

KEY = "sk-hostile-detectors-key-0123456789"
VERDICT = {"label": "False", "confidence": 0.9, "explanation": "The photo is older.", "evidence_urls": []}
RATIONALE = {"reasoning_logic": "The photo predates the event.", "key_points": ["1. a", "2. b", "3. c"]}


def request(key: str = "rw-1") -> LLMRequest:
    return LLMRequest(
        key=key,
        task="rationale",
        system="Extract the rationale.",
        user=f"article {key}",
        schema=load_llm_schema("rationale"),
        schema_name="rationale",
        prompt_version="hostile-test",
    )


def client(server: FakeLLMServer, **kw) -> LLMClient:
    options = {"timeout_s": 5.0, "api_key": KEY}
    return LLMClient(model="test-model", base_url=server.base_url, **{**options, **kw})


# --- the LLM client ------------------------------------------------------------------------------------


def test_a_refused_key_stops_the_run_in_one_line_and_a_rerun_with_a_good_key_answers(
    tmp_path, monkeypatch, capsys
):
    """Before: each sample was recorded as a failed prediction (exit 0, coverage 0/n), and the rerun with
    the right key resumed those failures without asking anything."""
    data, root = released_head(tmp_path)
    echo = f"Incorrect API key provided: {KEY}"  # a server that echoes the key it was given
    with FakeLLMServer(lambda body: Reply(status=401, error=echo)) as llm:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        args = [
            "evaluate", "--data", str(data), "--detector", "vlm", "--setting", "T+I", "--model", "test-model",
            "--image-root", str(root), "--out", str(tmp_path / "run"), "--no-progress",
            "--bootstrap", "10",
        ]  # fmt: skip
        capsys.readouterr()
        assert main(args) == 2
        err = capsys.readouterr().err
        [line] = [x for x in err.splitlines() if x.strip()]
        assert "refused model 'test-model' (HTTP 401" in line and "OPENAI_API_KEY" in line
        assert KEY not in err
        predictions = tmp_path / "run" / "predictions.jsonl"
        assert not predictions.exists() or predictions.read_text() == ""

        llm.responder = lambda body: Reply.answer(VERDICT)
        assert main(args) == 0
    rows = [json.loads(x) for x in predictions.read_text().splitlines()]
    assert len(rows) == 3 and all(r["label"] == "False" and not r["error"] for r in rows)


@pytest.mark.parametrize("detector", ["vlm", "agentfact"])
def test_a_missing_key_is_refused_in_one_line_before_anything_is_written(
    tmp_path, monkeypatch, capsys, detector
):
    """Before: run.json was written and the first batch failed with the error, leaving a folder that
    looked like a started run."""
    data, _ = released_head(tmp_path, 1)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    out = tmp_path / "run"
    out.mkdir()
    capsys.readouterr()
    code = main(["evaluate", "--data", str(data), "--detector", detector, "--model", "test-model",
                 "--setting", "T", "--out", str(out), "--no-progress"])  # fmt: skip
    assert code == 2
    [line] = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert line == "error: no LLM endpoint: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)"
    assert list(out.iterdir()) == []


def test_agentfact_stops_at_a_refused_key_too(tmp_path):
    with FakeLLMServer(lambda body: Reply(status=403, error="project has no access")) as llm:
        spec = RunSpec(
            "agentfact",
            config={"model": "test-model", "base_url": llm.base_url},
            secrets={"api_key": KEY},
            setting="closed-book",
            n_resamples=10,
        )
        with pytest.raises(LLMAccessError, match="HTTP 403: project has no access"):
            evaluate([make_sample(0, Label.FALSE)], spec, tmp_path / "run", encode=None)
        assert llm.chat_requests == 1  # the first refusal ends the sample's workflow


def test_an_unknown_model_stops_but_a_replay_miss_fails_one_request_only(tmp_path):
    unknown = Reply(
        status=404, error="The model `test-model` does not exist or you do not have access to it."
    )
    with FakeLLMServer([unknown]) as server, pytest.raises(LLMAccessError, match="does not exist"):
        client(server).run([request()])
    (tmp_path / "empty.jsonl").write_text("")
    with FakeLLMServer(Replayer(tmp_path / "empty.jsonl")) as server:
        [miss] = client(server).run([request()])
    assert not miss.ok and "NotFoundError" in miss.error


@pytest.mark.parametrize(
    ("reply", "begins"),
    [
        (Reply.raw("<html><body>Sign in to the proxy</body></html>"), "<html>"),
        (Reply.raw("[1, 2]"), "[1, 2]"),
        (Reply.raw('{"id": "x", "choices": [{"index": 0, "message": null}]}'), None),
    ],
)
def test_a_body_that_is_no_chat_completion_fails_its_request_only(reply, begins):
    """Before: an AttributeError or JSONDecodeError escaped ``complete`` and ended the run as an internal
    error (for AgentFact, every sample of the batch with it)."""
    with FakeLLMServer([reply, Reply.answer(RATIONALE)]) as server:
        bad, good = client(server, concurrency=1).run([request("rw-1"), request("rw-2")])
    assert not bad.ok and good.ok
    if begins is not None:
        assert "not a chat completion" in bad.error and begins in bad.error


def test_a_refusal_is_not_asked_again_and_keeps_its_words():
    """Before: a refusal was an "empty answer", asked again twice (billed three times), its text lost."""
    with FakeLLMServer([Reply.refused("I can't help with that request."), Reply.answer(RATIONALE)]) as server:
        llm = client(server)
        [refused] = llm.run([request()])
        assert server.chat_requests == 1
    assert not refused.ok and refused.error == "the model refused to answer: I can't help with that request."
    assert refused.raw_responses == ["I can't help with that request."]
    total = llm.report()["total"]
    assert (total["failures"], total["http_calls"]) == (1, 1)
    assert total["completion_tokens"] == refused.completion_tokens > 0


# --- search ----------------------------------------------------------------------------------------------


def test_a_search_outage_is_not_cached_as_no_results(tmp_path):
    """Before: the empty result of a failed search went into the search cache, so every later run (a
    resume, a new folder) reasoned without evidence and answered Unproven without searching again."""
    sample = make_sample(0, Label.FALSE)
    with FakeLLMServer(Agents()) as llm, SearchServer(news) as search:
        search.failures = 10**6
        with pytest.raises(RetrievalFailed):  # every search failed: reported, then refused (issue 27)
            evaluate(
                [sample], agentfact_spec(llm, search, tmp_path, secret=KEY), tmp_path / "outage", encode=None
            )
        assert json.loads((tmp_path / "outage" / "predictions.jsonl").read_text())["label"] == "Unproven"
        search.failures, asked = 0, len(search.queries)
        evaluate([sample], agentfact_spec(llm, search, tmp_path, secret=KEY), tmp_path / "after", encode=None)
        assert len(search.queries) > asked
    assert json.loads((tmp_path / "after" / "predictions.jsonl").read_text())["label"] == "False"


def test_pages_dated_relatively_are_recent_and_dropped_after_the_claim(tmp_path):
    """Before: Google's "3 days ago" was no date, so such pages were kept as undated for a 2020 claim."""
    today = date(2024, 5, 10)
    assert parse_result_date("3 days ago", today) == date(2024, 5, 7)
    assert parse_result_date("an hour ago", today) == today
    assert parse_result_date("2 weeks ago", today) == date(2024, 4, 26)
    assert parse_result_date("yesterday", today) == date(2024, 5, 9)
    assert parse_result_date("3 days ago") is None and parse_result_date("Mar 3, 2020", today) == date(
        2020, 3, 3
    )

    def recent(query):
        when = ["3 days ago", "2 weeks ago", "1 month ago", "5 hours ago"]
        return [
            result(f"https://news.example.org/{i}", "Debunked", "RECENT-PAGE", w) for i, w in enumerate(when)
        ]

    with FakeLLMServer(Agents()) as llm, SearchServer(recent) as search:
        evaluate(
            [make_sample(0, Label.FALSE)],
            agentfact_spec(llm, search, tmp_path, secret=KEY),
            tmp_path / "r",
            encode=None,
        )
        assert not any("RECENT-PAGE" in json.dumps(b["messages"]) for b in llm.requests)
        queries = len(search.queries)
    leakage = json.loads((tmp_path / "r" / "manifest.json").read_text())["leakage"]
    assert leakage["by_reason"] == {"after-claim-time": 4 * queries}


# --- blinding -------------------------------------------------------------------------------------------

MARKS = (
    "RATIONALE-MARK",
    "KEYPOINT-MARK",
    "RATING-MARK",
    "EXTRA-MARK",
    "WATERMARK-MARK",
    "EVDESC-MARK",
    "EVSRC-MARK",
)


def marked_sample():
    """A sample whose gold verdict, rationale, rating, article and fact-check URLs carry markers."""
    return make_sample(
        0,
        Label.FALSE,
        reasoning_logic="RATIONALE-MARK the photo is older",
        key_points=["KEYPOINT-MARK 1"],
        label_original="RATING-MARK",
        extra={"rating": "EXTRA-MARK"},
        watermark_keywords=["WATERMARK-MARK"],
        post_url="https://www.snopes.com/uploads/post",
        ocr="words in the photo",
        image=Image(bytes=image_bytes(), link="https://www.snopes.com/uploads/photo.jpg"),
        evidence=[
            Evidence(
                id=i,
                type="Text",
                content=f"evidence {i}",
                url=f"https://www.politifact.com/e{i}",
                description="EVDESC-MARK",
                source="EVSRC-MARK",
            )
            for i in (1, 2, 3)
        ],
    )


@pytest.mark.parametrize(
    ("detector", "cell"),
    [("agentfact", c) for c in ("T", "T+I", "T+E", "T+I+E", "open-web")]
    + [("vlm", c) for c in ("T", "T+I", "T+E", "T+I+E")],
)
def test_no_gold_verdict_rationale_article_or_fact_check_url_reaches_any_prompt(tmp_path, detector, cell):
    sample = marked_sample()
    answers = Agents() if detector == "agentfact" else (lambda body: Reply.answer(VERDICT))
    photos = [page("https://photos.example.com/p", "A photo"), page("https://www.snopes.com/fact-check/p")]
    with FakeLLMServer(answers) as llm, SearchServer(news, pages=photos) as search:
        extra = {"image_search": "loopback-image", "image_search_options": {"base_url": search.base_url}}
        spec = agentfact_spec(llm, search, tmp_path, cell, secret=KEY, **extra)
        if detector == "vlm":
            config = {"model": "test-model", "base_url": llm.base_url}
            spec = RunSpec("vlm", config=config, secrets={"api_key": KEY}, setting=cell, n_resamples=10)
        metrics = evaluate([sample], spec, tmp_path / "run", encode=None).dump()
    assert metrics["coverage"]["answered"] == 1
    sent = json.dumps([b["messages"] for b in llm.requests]).lower()
    assert llm.requests and not [m for m in MARKS if m.lower() in sent]
    for leak in ("snopes", "politifact", sample.news_url.lower()):
        assert leak not in sent, leak
    if "E" in cell.split("+"):
        assert "evidence 1" in sent  # gold evidence content does reach the model
    assert ("data:image/" in sent) == (detector == "vlm" and "I" in cell.split("+") or cell == "open-web")


# --- local-vlm ------------------------------------------------------------------------------------------


def test_local_vlm_unsupported_architecture_is_one_short_line(tmp_path, capsys):
    """Before: transformers' message listed every supported configuration class (about 9,000 characters)."""
    data, _ = released_head(tmp_path, 1)
    folder = tmp_path / "bert"
    folder.mkdir()
    config = {"model_type": "bert", "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 1}
    (folder / "config.json").write_text(json.dumps(config))
    capsys.readouterr()
    code = main(["evaluate", "--data", str(data), "--detector", "local-vlm", "--model", str(folder),
                 "--setting", "T", "--out", str(tmp_path / "run"), "--no-progress"])  # fmt: skip
    assert code == 2
    [line] = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert (
        line
        == f"error: local-vlm: cannot load {folder} (model type 'bert' is not an image-text-to-text model)"
    )


def test_local_vlm_an_image_bomb_fails_its_sample_only(tmp_path):
    """Before: Pillow's DecompressionBombError escaped and ended the run as an internal error."""
    from PIL import Image as PILImage

    bomb = io.BytesIO()
    PILImage.new("1", (14000, 14000)).save(bomb, "PNG")  # 196 megapixels, a few kilobytes
    model = tmp_path / "tiny-vlm"
    build_tiny_vlm(model, scripted=True)
    samples = [
        make_sample(0, Label.FALSE, image=Image(bytes=bomb.getvalue())),
        make_sample(1, Label.FALSE, image=Image(bytes=b"\xff\xd8\xff not a jpeg")),
        make_sample(2, Label.FALSE, image=Image(bytes=image_bytes())),
    ]
    spec = RunSpec(
        "local-vlm", config={"model": str(model), "max_new_tokens": 12}, setting="T+I", n_resamples=10
    )
    evaluate(samples, spec, tmp_path / "run", encode=None)
    rows = [json.loads(x) for x in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    errors = [r["error"] or "" for r in rows]
    assert errors[0].startswith("image unreadable: decompression bomb")
    assert errors[1].startswith("image unreadable: not an image")
    assert rows[2]["label"] == "False" and not rows[2]["error"]


# --- option bounds (issue 39, hostile L1 and L2) --------------------------------------------------------

NO_MODEL = "no-model-folder"
"""Stands for a folder that exists but holds no model (``forgery_model=/tmp`` in the review)."""


@pytest.mark.parametrize(
    ("detector", "option", "value"),
    [
        ("t2agent", "temperature", "-5"),
        ("factguard", "temperature", "-1"),
        ("agentm3d", "temperature", "-0.5"),
        ("vlm", "temperature", "3"),
        ("t2agent", "simulations", "100000"),
        ("t2agent", "children", "1000"),
        ("t2agent", "depth", "1000"),
        ("t2agent", "results_per_query", "99999999999999999999"),
        ("factguard", "results_per_query", "1000"),
        ("agentm3d", "results_per_query", "1000"),
        ("t2agent", "tools", "[]"),
        ("t2agent", "forgery_model", NO_MODEL),
        ("agentm3d", "forgery_model", NO_MODEL),
    ],
)
def test_an_out_of_bounds_option_is_refused_in_one_line_naming_it_and_nothing_is_written(
    tmp_path, monkeypatch, capsys, detector, option, value
):
    """Before: each was accepted (t2agent's ``forgery_model=/tmp`` failed every sample at run time with
    exit 0; ``simulations=100000`` is unbounded cost per sample on a real model)."""
    data, _ = released_head(tmp_path, 1)
    if value == NO_MODEL:
        value = str(tmp_path / "empty")
        (tmp_path / "empty").mkdir()
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # never reached
    out = tmp_path / "run"
    out.mkdir()
    capsys.readouterr()
    code = main(["evaluate", "--data", str(data), "--detector", detector, "--model", "test-model",
                 "--setting", "T", "--set", f"{option}={value}", "--out", str(out),
                 "--no-progress"])  # fmt: skip
    assert code == 2
    [line] = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert line.startswith(f"error: detector {detector!r}: bad configuration ({option}: "), line
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("detector", ["t2agent", "agentm3d"])
def test_a_forgery_model_that_is_no_image_classifier_is_refused_before_anything_is_written(
    tmp_path, monkeypatch, capsys, detector
):
    """Before: a model folder of another kind was accepted and every image sample failed at run time
    (``tool Detect (...) failed: Unrecognized model``, or a concurrent lazy import of ``pipeline``)."""
    data, _ = released_head(tmp_path, 1)
    folder = tmp_path / "bert"
    folder.mkdir()
    config = {"model_type": "bert", "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 1}
    (folder / "config.json").write_text(json.dumps(config))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # never reached
    out = tmp_path / "run"
    out.mkdir()
    capsys.readouterr()
    code = main(["evaluate", "--data", str(data), "--detector", detector, "--model", "test-model",
                 "--setting", "T+I", "--allow-missing-images", "--set", f"forgery_model={folder}",
                 "--out", str(out), "--no-progress"])  # fmt: skip
    assert code == 2
    [line] = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert line.startswith(f"error: forgery_model: {folder} is no image-classification model ("), line
    assert list(out.iterdir()) == []
