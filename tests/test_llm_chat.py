"""The ChatModel interface: the API model against a real loopback OpenAI-compatible server, the local
model on CPU with tiny Idefics3 models built in the test (:func:`tests.evaluate_helpers.build_tiny_vlm`:
the "scripted" one writes a fenced JSON verdict and stops, the "random" one writes no JSON)."""

from __future__ import annotations

import asyncio
import itertools
import json

import pytest

pytest.importorskip("transformers")
pytest.importorskip("torch")

from rwpost.errors import ConfigError  # noqa: E402
from rwpost.llm import (  # noqa: E402
    ApiChatModel,
    ChatModel,
    ChatResult,
    ImageInput,
    LLMCache,
    LLMClient,
    LLMRequest,
    cache_key,
    load_llm_schema,
)
from rwpost.llm.local import (  # noqa: E402
    LocalChatModel,
    generated_length,
    parse_generated,
    pick_device,
    pick_dtype,
)
from rwpost.testing.llm import FakeLLMServer, Reply  # noqa: E402
from tests.evaluate_helpers import VERDICT, build_tiny_vlm, image_bytes, on_cpu_and_cuda  # noqa: E402

RATIONALE = {"reasoning_logic": "The photo predates the event.", "key_points": ["1. a", "2. b"]}


def rationale_request(key: str = "rw-1", **kw) -> LLMRequest:
    return LLMRequest(
        key=key,
        task="rationale",
        system="Extract the rationale.",
        user=f"article {key}",
        schema=load_llm_schema("rationale"),
        schema_name="rationale",
        prompt_version="rationale-test",
        **kw,
    )


def api_model(server: FakeLLMServer, cache: LLMCache | None = None) -> ApiChatModel:
    client = LLMClient(
        model="test-model", base_url=server.base_url, api_key="k", cache=cache, invalid_retries=1
    )
    return ApiChatModel(client)


# --- the API model ---------------------------------------------------------------------------------


def test_api_model_answers_with_validated_json_token_usage_and_latency():
    def answer(body):
        if "bad" in body["messages"][1]["content"][0]["text"]:
            return Reply.text("no JSON here")
        return Reply.answer(RATIONALE)

    image = ImageInput(b"png bytes", "image/png")
    with FakeLLMServer(answer) as server:
        model = api_model(server)
        good, bad = model.run([rationale_request(images=(image,)), rationale_request("bad", images=(image,))])
        sent = server.requests[0]
    assert isinstance(model, ChatModel) and isinstance(good, ChatResult)
    assert good.ok and good.data == RATIONALE and good.task == "rationale"
    assert good.prompt_tokens > 0 and good.completion_tokens > 0 and good.latency_s > 0
    assert good.cache_key == cache_key("test-model", rationale_request(images=(image,)))
    assert not bad.ok and bad.data is None and bad.raw_responses == ["no JSON here"] * 2
    assert bad.error.startswith("invalid answer after 2 attempts: not valid JSON")
    # the schema travels as response_format, the image as a data URL
    assert sent["response_format"]["json_schema"]["schema"]["required"] == ["reasoning_logic", "key_points"]
    assert sent["messages"][1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    report = model.report()
    assert report["tasks"]["rationale"]["requests"] == 2 and report["tasks"]["rationale"]["failures"] == 1
    assert model.config() == {"backend": "api", "model": "test-model", "base_url": server.base_url}


def test_api_samples_are_n_calls_at_the_temperature_each_cached_under_its_own_key(tmp_path):
    counter = itertools.count()

    def answer(body):
        return Reply.answer({**RATIONALE, "reasoning_logic": f"answer {next(counter)}"})

    request = rationale_request(temperature=0.7)
    with FakeLLMServer(answer) as server:
        answers = asyncio.run(api_model(server, LLMCache(tmp_path / "c.sqlite")).sample(request, 3))
        assert server.chat_requests == 3
        assert {body["temperature"] for body in server.requests} == {0.7}
        again_model = api_model(server, LLMCache(tmp_path / "c.sqlite"))
        again = asyncio.run(again_model.sample(request, 3))
        assert server.chat_requests == 3, "a rerun of the same samples must come from the cache"
    logic = sorted(a.data["reasoning_logic"] for a in answers)
    assert logic == ["answer 0", "answer 1", "answer 2"]
    assert [a.data for a in again] == [a.data for a in answers] and all(a.cached for a in again)
    assert len({a.cache_key for a in answers}) == 3
    assert answers[0].cache_key == cache_key("test-model", request), "one sample is one ordinary call"
    assert again_model.report()["total"]["cache_hits"] == 3


# --- the local model -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("vlm")
    build_tiny_vlm(root / "scripted", scripted=True)
    build_tiny_vlm(root / "random", scripted=False)
    return root


def verdict_request(i: int, image: bytes | None = None, words: int = 1, **kw) -> LLMRequest:
    return LLMRequest(
        key=f"rw-{i}",
        task="verdict",
        system="the claim label json answer",
        user=" ".join(["the post text"] * words),
        schema=load_llm_schema("verdict"),
        schema_name="verdict",
        prompt_version="verdict-test",
        images=(ImageInput(image, "image/png"),) if image is not None else (),
        **kw,
    )


def test_pick_dtype_is_bfloat16_on_cuda_and_float32_elsewhere():
    import torch

    assert pick_dtype("cuda") is torch.bfloat16 and pick_dtype("cuda:1") is torch.bfloat16
    assert pick_dtype("cpu") is torch.float32 and pick_dtype("mps") is torch.float32
    assert pick_dtype("cuda", "float16") is torch.float16 and pick_dtype("cpu", "bfloat16") is torch.bfloat16
    for bad in ("float99", "Tensor"):
        with pytest.raises(ConfigError, match="unknown dtype"):
            pick_dtype("cpu", bad)
    assert pick_device("cpu") == "cpu"
    assert pick_device() == ("cuda" if torch.cuda.is_available() else "cpu")


def test_parse_generated_is_lenient_about_fences_and_surrounding_text():
    schema = load_llm_schema("verdict")
    body = json.dumps(VERDICT)
    for text in (body, f"```json\n{body}\n```", f"Here is my answer:\n{body}\nThanks."):
        assert parse_generated(text, schema) == (VERDICT, ""), text
    for text in ("", "not JSON", '{"label": "Maybe"}'):
        data, problem = parse_generated(text, schema)
        assert data is None and problem, text
    assert generated_length([5, 6, 3, 0, 0], eos=3, pad=0) == 3


def test_local_model_batches_requests_with_and_without_images(models):
    model = LocalChatModel(models / "scripted", batch_size=2)
    assert isinstance(model, ChatModel) and model.reads_images
    # the defaults: bfloat16 on a GPU, float32 on CPU (tests run on both)
    dtype = "bfloat16" if pick_device().startswith("cuda") else "float32"
    assert model.config()["dtype"] == dtype and model.config()["model_type"] == "idefics3"
    picture = image_bytes()
    requests = [
        verdict_request(0, words=30),
        verdict_request(1, picture),
        verdict_request(2),
        verdict_request(3, b"not an image"),
        verdict_request(4, picture, words=10),
        verdict_request(5, words=5),
    ]
    seen: list[str] = []
    results = model.run(requests, on_result=lambda r: seen.append(r.key))

    assert [r.key for r in results] == [r.key for r in requests]
    assert sorted(seen) == sorted(r.key for r in requests), "on_result once per request"
    broken = results[3]
    assert not broken.ok and broken.error.startswith("image unreadable") and broken.completion_tokens == 0
    answered = [r for i, r in enumerate(results) if i != 3]
    assert all(r.ok and r.data == VERDICT and r.completion_tokens == 4 and r.latency_s > 0 for r in answered)
    tokens = [r.prompt_tokens for r in results]
    assert tokens[0] > tokens[5] > tokens[2] and tokens[4] > tokens[1] > tokens[2]  # images add tokens
    assert model.batches == 3  # three text requests in two batches of at most two, two image ones in one
    report = model.report()
    assert report["tasks"]["verdict"]["requests"] == 6 and report["tasks"]["verdict"]["failures"] == 1
    assert report["total"]["cost_usd"] == 0 and report["batches"] == 3


def test_local_model_gives_the_same_answers_batched_and_one_by_one(models):
    requests = [verdict_request(i, words=w) for i, w in enumerate((1, 9, 4, 20))]
    batched = LocalChatModel(models / "random", batch_size=4, max_new_tokens=6).run(requests)
    single = LocalChatModel(models / "random", batch_size=1, max_new_tokens=6).run(requests)
    assert [r.raw for r in batched] == [r.raw for r in single]
    assert all(not r.ok and r.error.startswith("invalid answer: ") for r in batched)
    assert all(r.raw_responses == [r.raw] for r in batched)
    assert [r.completion_tokens for r in batched] == [6] * 4, "random text runs to max_new_tokens"
    shorter = LocalChatModel(models / "random", max_new_tokens=6).run([verdict_request(0, max_tokens=2)])
    assert shorter[0].completion_tokens == 2, "a request's smaller max_tokens wins"


def test_concurrent_callers_are_generated_in_one_batch(models):
    model = LocalChatModel(models / "scripted", batch_size=8)

    async def ask():
        return await asyncio.gather(*(model.complete(verdict_request(i, words=i + 1)) for i in range(5)))

    results = asyncio.run(ask())
    assert [r.key for r in results] == [f"rw-{i}" for i in range(5)]
    assert all(r.ok and r.data == VERDICT for r in results)
    assert model.batches == 1


def test_samples_are_seeded_and_greedy_samples_agree(models):
    model = LocalChatModel(models / "random", max_new_tokens=8, seed=3)
    request = verdict_request(0, temperature=1.0)
    first = asyncio.run(model.sample(request, 3))
    again = asyncio.run(model.sample(request, 3))
    assert [r.raw for r in first] == [r.raw for r in again], "the same request and seed sample the same"
    assert len({r.raw for r in first}) > 1, "sampled answers differ"
    assert len({r.cache_key for r in first}) == 3
    assert first[0].cache_key == cache_key(model.model_path, request)
    greedy = asyncio.run(model.sample(verdict_request(0), 3))
    assert len({r.raw for r in greedy}) == 1 and len(greedy) == 3


def test_a_folder_without_a_model_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="no config.json"):
        LocalChatModel(tmp_path)


@on_cpu_and_cuda("bfloat16")  # CUDA default: bfloat16
def test_bfloat16_on_the_device_gives_the_scripted_answers(models, device, precision):
    model = LocalChatModel(models / "scripted", device=device, dtype=precision, batch_size=2)
    assert model.config()["dtype"] == "bfloat16" and model.device.startswith(device)
    results = model.run([verdict_request(0), verdict_request(1, image_bytes()), verdict_request(2, words=8)])
    assert all(r.ok and r.data == VERDICT and r.completion_tokens == 4 for r in results)
