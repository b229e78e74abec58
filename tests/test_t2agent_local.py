"""T2Agent with a local backbone (``backend=local``): its answers go to the one answer cache the API path
uses, so a resumed run generates nothing again. The backbone is a tiny Idefics3 model built here
(:func:`tests.evaluate_helpers.build_tiny_vlm`) that writes one JSON answer satisfying every T2Agent schema;
the real processor, chat template, generation and parsing run."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

pytest.importorskip("transformers")
pytest.importorskip("torch")

from rwpost.evaluate import RunSpec, evaluate  # noqa: E402
from rwpost.evaluate.detectors.t2agent import T2AgentDetector  # noqa: E402
from rwpost.evaluate.runner import read_predictions  # noqa: E402
from rwpost.labels import Label  # noqa: E402
from rwpost.llm.cache import LLMCache  # noqa: E402
from rwpost.llm.local import LocalChatModel  # noqa: E402
from rwpost.llm.types import LLMRequest  # noqa: E402
from tests.evaluate_helpers import build_tiny_vlm  # noqa: E402
from tests.t2agent_helpers import with_image  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")

ANSWER = {
    "probabilities": [0.2, 0.1, 0.7],
    "candidates": [{"thought": "the caption fits", "tool": "Finish", "input": "MATCH"}],
    "analysis": "consistent",
    "score": 9,
    "observation": "a street",
}
"""One answer for every prompt: init, expansion, both scores and the model tools all read their keys."""


@pytest.fixture(scope="module")
def backbone(tmp_path_factory):
    folder = tmp_path_factory.mktemp("t2agent") / "tiny"
    build_tiny_vlm(folder, scripted=True, answer=ANSWER)
    return folder


@pytest.fixture
def generations(backbone, monkeypatch):
    """Counts the calls of the loaded model's ``generate`` (the model stays loaded between runs)."""
    model = LocalChatModel(backbone, device="cpu", vision=True).model
    calls = []
    original = model.generate

    def counted(*args, **kwargs):
        calls.append(kwargs["input_ids"].shape[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(model, "generate", counted)
    return calls


class InterruptedT2Agent(T2AgentDetector):
    """T2Agent interrupted (Ctrl-C) once it has answered batch 2, before the runner writes that answer,
    while ``arm_file`` exists (removed first)."""

    class Config(T2AgentDetector.Config):
        arm_file: str

    def predict(self, samples, task, ctx):
        out = super().predict(samples, task, ctx)
        if len(samples) and samples[0].id == FIRST_OF_BATCH_2 and os.path.exists(self.options.arm_file):
            os.remove(self.options.arm_file)
            raise KeyboardInterrupt
        return out


SAMPLES = [with_image(1, Label.TRUE), with_image(2, Label.TRUE)]
FIRST_OF_BATCH_2 = SAMPLES[1].id


def spec(backbone, tmp_path, detector="t2agent", **extra) -> RunSpec:
    return RunSpec(
        detector,
        config={
            "backend": "local",
            "model": str(backbone),
            "device": "cpu",
            "cache_path": str(tmp_path / "llm.sqlite"),
            "simulations": 2,
            **extra,
        },
        setting="T+I",
        batch_size=1,
        n_resamples=10,
    )


def test_a_resumed_local_run_generates_nothing_again(backbone, generations, tmp_path):
    arm = tmp_path / "arm"
    arm.write_text("interrupt")
    run_spec = spec(backbone, tmp_path, "tests.test_t2agent_local:InterruptedT2Agent", arm_file=str(arm))
    with pytest.raises(KeyboardInterrupt):
        evaluate(SAMPLES, run_spec, tmp_path / "run")
    assert len(read_predictions(tmp_path / "run" / "predictions.jsonl")) == 1
    generated = len(generations)
    assert generated > 0 and len(LLMCache(tmp_path / "llm.sqlite")) > 0

    metrics = evaluate(SAMPLES, run_spec, tmp_path / "run").dump()
    assert len(generations) == generated  # batch 2 again: every answer from the cache
    assert metrics["n_samples"] == 2
    rows = read_predictions(tmp_path / "run" / "predictions.jsonl")
    resumed = rows[(0, SAMPLES[1].id)]
    assert resumed["label"] == "True" and resumed["calls"]
    assert all(c["cached"] and c["name"] == "tiny" for c in resumed["calls"])
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["detector_config"]["backend"] == "local" and manifest["device"] == "cpu"


def test_the_local_cache_answers_every_sample_of_a_second_run(backbone, generations, tmp_path):
    first = evaluate(SAMPLES[:1], spec(backbone, tmp_path), tmp_path / "first").dump()
    generated = len(generations)
    second = evaluate(SAMPLES[:1], spec(backbone, tmp_path), tmp_path / "second").dump()
    assert generated > 0 and len(generations) == generated
    assert first["accuracy"] == second["accuracy"] == 1.0
    # without a cache path every answer is generated again
    evaluate(SAMPLES[:1], spec(backbone, tmp_path, cache_path=None), tmp_path / "uncached")
    assert len(generations) == 2 * generated


def test_local_model_answers_cached_by_content(backbone, generations, tmp_path):
    request = LLMRequest(
        key="k",
        task="t",
        system="answer",
        user="the claim",
        schema={"type": "object", "required": ["score"]},
        schema_name="s",
        prompt_version="v1",
        temperature=0.0,
        max_tokens=40,
    )
    model = LocalChatModel(backbone, device="cpu", vision=True, cache_path=tmp_path / "c.sqlite")
    [fresh] = model.run([request])
    [again] = LocalChatModel(backbone, device="cpu", vision=True, cache_path=tmp_path / "c.sqlite").run(
        [request]
    )
    assert fresh.ok and not fresh.cached and again.cached and again.data == fresh.data == ANSWER
    assert (again.prompt_tokens, again.completion_tokens) == (fresh.prompt_tokens, fresh.completion_tokens)
    assert len(generations) == 1
    [other] = model.run([dataclasses.replace(request, user="the post")])
    assert not other.cached and len(generations) == 2
