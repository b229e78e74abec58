"""The local vision-language detector end to end on CPU, with tiny models built here (no download).

The models are tiny Idefics3 models (:func:`tests.evaluate_helpers.build_tiny_vlm`). The "scripted" one
writes a fenced JSON verdict and stops: the real processor, chat template, batched generation, decoding
and parsing all run, and the answer is known. The "random" one is left as initialised: its answers are
not JSON and every sample must come back as a counted failure.
"""

from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("transformers")
pytest.importorskip("torch")

from rwpost.evaluate import RunSpec, evaluate  # noqa: E402
from rwpost.evaluate.contract import RunContext  # noqa: E402
from rwpost.evaluate.task import EvalTask  # noqa: E402
from rwpost.labels import Label  # noqa: E402
from rwpost.llm.local import pick_device  # noqa: E402
from rwpost.records import Image  # noqa: E402
from tests.evaluate_helpers import (  # noqa: E402
    VERDICT,
    build_tiny_vlm,
    evidence,
    image_bytes,
    make_sample,
    on_cpu_and_cuda,
)

os.environ.setdefault("HF_HUB_OFFLINE", "1")

GOLD = [Label.TRUE, Label.FALSE, Label.FALSE, Label.UNPROVEN, Label.TRUE, Label.FALSE, Label.FALSE]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("vlm")
    build_tiny_vlm(root / "scripted", scripted=True)
    build_tiny_vlm(root / "random", scripted=False)
    return root


@pytest.fixture
def samples():
    out = [make_sample(i, g, evidence=evidence(2), ocr=f"ocr {i}") for i, g in enumerate(GOLD)]
    out[1] = out[1].model_copy(update={"image": Image(bytes=image_bytes())})
    out[2] = out[2].model_copy(
        update={"image": Image(bytes=image_bytes()), "post_text": "a much longer post " * 20}
    )
    out[6] = out[6].model_copy(update={"image": Image(bytes=b"not an image")})
    return out


def _spec(folder, setting="gold-evidence", **config):
    return RunSpec(
        "local-vlm",
        config={"model": str(folder), "batch_size": 2, "max_new_tokens": 12, **config},
        setting=setting,
        batch_size=4,
        n_resamples=20,
    )


def test_parse_verdict_is_lenient_about_fences_and_surrounding_text():
    from rwpost.llm import load_llm_schema
    from rwpost.llm.local import generated_length, parse_generated

    schema = load_llm_schema("verdict")
    body = json.dumps(VERDICT)
    for text in (body, f"```json\n{body}\n```", f"```\n{body}```", f"Here is my answer:\n{body}\nThanks."):
        assert parse_generated(text, schema) == (VERDICT, ""), text
    for text in ("", "not JSON", '{"label": "Maybe"}', f"```json\n{body[:-3]}\n```"):
        data, problem = parse_generated(text, schema)
        assert data is None and problem, text
    assert generated_length([5, 6, 3, 0, 0], eos=3, pad=0) == 3
    assert generated_length([5, 6, 7], eos=[3, 4], pad=0) == 3
    assert generated_length([3, 3, 3], eos=3, pad=3) == 1


def test_local_vlm_end_to_end_with_images_ledger_manifest_and_resume(tmp_path, models, samples):
    out = tmp_path / "scripted"
    metrics = evaluate(samples, _spec(models / "scripted"), out, encode=None).dump()

    # every sample answered False, but #6's image does not decode: a counted failure, not a drop
    predictions = [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(predictions) == len(samples)
    by_id = {p["id"]: p for p in predictions}
    assert by_id[samples[6].id]["error"].startswith("image unreadable")
    answered = [by_id[s.id] for s in samples[:6]]
    assert all(p["label"] == "False" and p["error"] is None for p in answered)
    assert answered[0]["probabilities"]["False"] == pytest.approx(0.8)
    assert answered[0]["evidence_urls"] == ["https://example.org/e1"]
    assert metrics["n_samples"] == 7
    assert metrics["accuracy"] == pytest.approx(3 / 7)  # gold False at 1, 2 and 5 (6 has no label)
    assert metrics["coverage"]["no_label"] == 1
    assert metrics["coverage"]["no_label_reasons"] == {"image unreadable": 1}

    # the ledger: prompt tokens (more with an image, more for the long post), 4 generated tokens each
    calls = {p["id"]: p["calls"][0] for p in answered}
    assert all(c["tokens_out"] == 4 and c["latency_s"] > 0 and c["cost_usd"] == 0 for c in calls.values())
    assert calls[samples[2].id]["tokens_in"] > calls[samples[1].id]["tokens_in"] > 0
    assert calls[samples[1].id]["tokens_in"] > calls[samples[0].id]["tokens_in"]
    ledger = metrics["ledger"]
    assert ledger["model_calls"] == 6 and ledger["tokens_out"] == 24 and ledger["tokens_in"] > 0

    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["device"] == pick_device()  # cuda where the tests run on a GPU
    assert manifest["detector_config"]["model_type"] == "idefics3"
    assert manifest["detector_config"]["dtype"] == (
        "bfloat16" if pick_device().startswith("cuda") else "float32"
    )
    assert list(manifest["prompt_hashes"]) == ["detect_zero_shot.v2"]
    assert (out / "report.md").is_file() and (out / "metrics.json").is_file()

    # a rerun into the same folder answers from disk: the same predictions file, nothing generated
    before = (out / "predictions.jsonl").read_text()
    evaluate(samples, _spec(models / "scripted"), out, encode=None)
    assert (out / "predictions.jsonl").read_text() == before


def test_random_model_answers_are_counted_failures_never_dropped(tmp_path, models, samples):
    metrics = evaluate(
        samples, _spec(models / "random", "closed-book"), tmp_path / "random", encode=None
    ).dump()
    lines = (tmp_path / "random" / "predictions.jsonl").read_text().splitlines()
    assert len(lines) == len(samples)
    assert metrics["n_samples"] == 7 and metrics["coverage"]["no_label"] == 7
    assert metrics["coverage"]["no_label_reasons"] == {"model answer rejected": 6, "image unreadable": 1}
    assert metrics["ledger"]["model_calls"] == 6
    assert metrics["ledger"]["tokens_out"] == 6 * 12  # random text runs to max_new_tokens


def test_static_cache_gives_the_same_answers(models, samples):
    from rwpost.evaluate.detectors.vlm import LocalVLMDetector

    dynamic = LocalVLMDetector.build({"model": str(models / "random"), "batch_size": 3, "max_new_tokens": 6})
    static = LocalVLMDetector.build(
        {"model": str(models / "random"), "batch_size": 3, "max_new_tokens": 6, "static_cache": True}
    )
    assert static.config()["static_cache"] is True
    a = dynamic.predict(samples[:6], EvalTask.of("T+I", samples), RunContext())
    b = static.predict(samples[:6], EvalTask.of("T+I", samples), RunContext())
    assert [p.error for p in a] == [p.error for p in b]
    assert [p.calls[0].tokens_out for p in a] == [p.calls[0].tokens_out for p in b]


def test_open_web_and_bad_folders_are_refused(tmp_path, models):
    from rwpost.errors import ConfigError
    from rwpost.evaluate.detectors.vlm import LocalVLMDetector

    with pytest.raises(ConfigError, match="no config.json"):
        LocalVLMDetector.build({"model": str(tmp_path)})
    with pytest.raises(ConfigError, match="does not search the web"):
        LocalVLMDetector.build({"model": str(models / "scripted")}).predict(
            [make_sample(0, None)], EvalTask.of("open-web", []), RunContext()
        )


@on_cpu_and_cuda("bfloat16")  # CUDA default: bfloat16
def test_bfloat16_on_the_device_gives_the_scripted_answers(models, samples, device, precision):
    from rwpost.evaluate.detectors.vlm import LocalVLMDetector

    detector = LocalVLMDetector.build(
        {"model": str(models / "scripted"), "device": device, "dtype": precision, "batch_size": 2}
    )
    assert detector.config()["dtype"] == "bfloat16" and detector.device.startswith(device)
    answers = detector.predict(samples[:6], EvalTask.of("gold-evidence", samples), RunContext())
    assert [p.label for p in answers] == [Label.FALSE] * 6 and all(p.error is None for p in answers)
    assert all(p.calls[0].tokens_out == 4 for p in answers)


def test_vlm_with_backend_local_is_local_vlm_and_options_of_the_other_backend_are_refused(models, samples):
    from rwpost.errors import ConfigError
    from rwpost.evaluate.detectors.vlm import LocalVLMDetector, VLMDetector

    folder = str(models / "scripted")
    local = LocalVLMDetector.build({"model": folder, "batch_size": 3})
    vlm = VLMDetector.build({"model": folder, "backend": "local", "batch_size": 3})
    assert vlm.config() == local.config() and vlm.device == local.device == pick_device()
    task = EvalTask.of("T+I", samples)
    a, b = vlm.predict(samples, task, RunContext()), local.predict(samples, task, RunContext())
    assert [(p.label, p.error, [c.tokens_in for c in p.calls]) for p in a] == [
        (p.label, p.error, [c.tokens_in for c in p.calls]) for p in b
    ]  # the same answers, the same prompts (latencies differ)
    assert [p.label for p in a[:6]] == [Label.FALSE] * 6 and a[6].error.startswith("image unreadable")
    with pytest.raises(ConfigError, match=r"backend=api reads no device, dtype"):
        VLMDetector.build({"model": "gpt-4o-mini", "device": "cuda", "dtype": "float16"})
    with pytest.raises(ConfigError, match="backend=local reads no temperature"):
        LocalVLMDetector.build({"model": folder, "temperature": 0.7})
    with pytest.raises(ConfigError, match="backend"):
        LocalVLMDetector.build({"model": folder, "backend": "api"})
