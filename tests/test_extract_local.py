"""Extraction with a local model (``extract.backend: local``) end to end on CPU, with tiny models built here.

The models are tiny Llama causal LMs (:func:`build_tiny_chat_lm`) with a word-level tokenizer. The "scripted"
one answers each extraction task with a known valid JSON answer: its attention averages the prompt, so it
sees which task's schema field names (``post_text``, ``reasoning_logic``, ``key_point_ids``) the prompt
mentions, and its output head writes that task's answer (one added token) and stops. The real tokenizer,
chat template, batched generation, decoding, parsing, grounding and the stage's files all run. The "random"
one is left as initialised: its answers are not JSON, so every article is set aside with the reason.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("torch")

from rwpost.errors import ConfigError  # noqa: E402
from rwpost.extract import LLMExtractor  # noqa: E402
from rwpost.extract.run import extract_tagged, make_extractor  # noqa: E402
from rwpost.io import iter_jsonl, write_jsonl  # noqa: E402
from rwpost.llm import LLMSettings, LocalChatModel  # noqa: E402
from rwpost.llm.local import pick_device  # noqa: E402
from rwpost.records import Extraction  # noqa: E402
from rwpost.stages.extract import Params, run  # noqa: E402
from rwpost.tagged import tag_article  # noqa: E402
from tests.conftest import real_page  # noqa: E402

PAGES = {
    "robert-de-niro-trump-oscars": "https://www.snopes.com/fact-check/robert-de-niro-trump-oscars/",
    "house-resolution-piker-antisemitism": "https://www.snopes.com/fact-check/house-resolution-piker-antisemitism/",
}

ANSWERS = {
    "post_text": {
        "post_text": "a quoted post",
        "image_link_ids": [1],
        "video_link_id": None,
        "post_link_id": 99,
    },
    "reasoning_logic": {
        "reasoning_logic": "The video was edited.",
        "key_points": ["The clip was cut.", "The words came from another event."],
    },
    "key_point_ids": {
        "evidence": [
            {
                "type": "Web Link",
                "description": "The full speech.",
                "content": None,
                "source": "a news site",
                "link_id": 2,
                "key_point_ids": [2, 7],
            }
        ]
    },
}
"""The scripted model's answer to the prompt that mentions each key (a schema field only that task's prompt
names): link 99 is no tag of the article and key point 7 does not exist."""

_SPECIAL = ["<pad>", "<unk>", "<|im_start|>", "<|im_end|>"]
_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }} : {{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant :{% endif %}"
)


def build_tiny_chat_lm(folder: Path, scripted: bool) -> None:
    """Save a tiny Llama causal LM (one layer, hidden size 64) and its word-level tokenizer to ``folder``.

    ``scripted``: queries are zero, so attention averages the values of the whole prompt; the values carry
    only the three task words, which the output projection writes into three spare dimensions. The output
    head then writes the answer of the task whose word the prompt holds, never writes an answer after an
    answer, and ends after one. Otherwise the weights are left as initialised."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import AddedToken, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    markers = list(ANSWERS)
    words = ["the", "claim", "post", "article", "rating", "key", "points", "system", "user", "assistant", ":"]
    core = Tokenizer(models.WordLevel(unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    core.train_from_iterator([" ".join(words + markers)], trainers.WordLevelTrainer(special_tokens=_SPECIAL))
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        pad_token="<pad>",
        unk_token="<unk>",
        eos_token="<|im_end|>",
        chat_template=_TEMPLATE,
    )
    answers = [json.dumps(ANSWERS[m]) for m in markers]
    tokenizer.add_tokens([AddedToken(a, normalized=False, single_word=False) for a in answers])
    hidden, size = 64, len(tokenizer)
    assert size + len(markers) <= hidden
    config = LlamaConfig(
        vocab_size=size,
        hidden_size=hidden,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=16384,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.convert_tokens_to_ids("<|im_start|>"),
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    if scripted:
        ids = [tokenizer.convert_tokens_to_ids(m) for m in markers]
        answer_ids = [tokenizer.convert_tokens_to_ids(a) for a in answers]
        with torch.no_grad():
            layer = model.model.layers[0]
            model.model.embed_tokens.weight.copy_(torch.eye(size, hidden))
            layer.self_attn.q_proj.weight.zero_()  # equal scores: the mean over the prompt
            layer.self_attn.k_proj.weight.zero_()
            layer.self_attn.v_proj.weight.zero_()
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
            for t, token in enumerate(ids):
                layer.self_attn.v_proj.weight[t, token] = 1.0
                layer.self_attn.o_proj.weight[size + t, t] = 1e4  # one task word among thousands
            head = torch.zeros(size, hidden)
            for t, answer in enumerate(answer_ids):
                head[answer, size + t] = 1.0
                head[answer, answer_ids] = -1e9
                head[tokenizer.eos_token_id, answer] = 1.0
            model.lm_head.weight.copy_(head)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("lm")
    build_tiny_chat_lm(root / "scripted", scripted=True)
    build_tiny_chat_lm(root / "random", scripted=False)
    return root


@pytest.fixture(scope="module")
def articles():
    return [tag_article(real_page(name), url) for name, url in PAGES.items()]


@pytest.fixture
def tagged(tmp_path, articles):
    path = tmp_path / "tagged.jsonl"
    write_jsonl(path, articles)
    return path


def test_a_local_model_extracts_real_articles_end_to_end(tmp_path, models, tagged, articles):
    model = LocalChatModel(models / "scripted", batch_size=4)
    cost = extract_tagged(tagged, tmp_path / "out", LLMExtractor(model, backend="local"))

    rows = [Extraction.model_validate(row) for _, row in iter_jsonl(tmp_path / "out" / "extractions.jsonl")]
    assert [r.id for r in rows] == sorted(a.id for a in articles)
    for row in rows:
        article = next(a for a in articles if a.id == row.id)
        links = {link.id: link.url for link in article.links}
        assert row.post.text == "a quoted post"
        assert row.post.image_links == [links[1]] and row.post.post_link is None
        assert row.hallucinated_urls == ["tag:99"], "a tag id the article lacks is dropped and listed"
        assert row.key_points == ["The clip was cut.", "The words came from another event."]
        assert row.reasoning_logic == "The video was edited."
        [evidence] = row.evidence
        assert evidence.url == links[2] and evidence.key_point_ids == [2]
        assert row.provenance.backend == "local" and row.provenance.model == "scripted"
    assert not (tmp_path / "out" / "rejects.jsonl").exists()

    assert (
        cost["backend"] == "local"
        and cost["model"] == "scripted"
        and cost["dtype"] == ("bfloat16" if pick_device().startswith("cuda") else "float32")
    )
    assert cost["counts"]["extracted"] == 2
    for task in ("post", "rationale", "evidence"):
        usage = cost["tasks"][task]
        assert usage["requests"] == 2 and usage["failures"] == 0 and usage["cost_usd"] == 0
        assert usage["completion_tokens"] == 4  # one answer token and the end, per article
        assert usage["prompt_tokens"] > 1000  # the whole article, word by word
    # post and rationale of both articles were generated together, then both evidence requests
    assert cost["batches"] == 2


def test_a_random_model_sets_every_article_aside_with_the_reason(tmp_path, models, tagged, articles):
    model = LocalChatModel(models / "random", max_new_tokens=8)
    cost = extract_tagged(tagged, tmp_path / "out", LLMExtractor(model, backend="local"))

    assert not (tmp_path / "out" / "extractions.jsonl").exists()
    rejects = [row for _, row in iter_jsonl(tmp_path / "out" / "rejects.jsonl")]
    assert sorted(r["id"] for r in rejects) == sorted(a.id for a in articles)
    for reject in rejects:
        assert reject["stage"] == "extract"
        assert reject["reason"].startswith(f"{reject['data']['task']}: invalid answer: ")
        assert reject["data"]["task"] in ("post", "rationale")
        [raw] = reject["data"]["raw_responses"]
        assert raw.strip(), "the model's own words are kept for the rejects file"
    assert cost["counts"] == {"skipped": 0, "input_rejects": 0, "set_aside": 2}
    assert cost["summary"]["set_aside"] == 2
    assert cost["tasks"]["post"]["failures"] == 2 and "evidence" not in cost["tasks"]
    assert all(0 < cost["tasks"][t]["completion_tokens"] <= 2 * 8 for t in ("post", "rationale"))


def test_the_stage_builds_the_local_backend_from_params(tmp_path, models, tagged):
    params = Params(input=tagged, out=tmp_path / "out", backend="local", local_model=models / "scripted")
    report = run(params)
    assert report.counts["summary"]["extracted"] == 2 and report.counts["summary"]["backend"] == "local"
    funnel = json.loads((tmp_path / "out" / "funnel.json").read_text())
    assert funnel[-1]["out"] == 2

    with pytest.raises(ConfigError, match="needs a model folder"):
        make_extractor(
            "local", LLMSettings(model="m"), cache_path=tmp_path / "c.sqlite", max_article_chars=60_000
        )
    with pytest.raises(ConfigError, match="no config.json"):
        make_extractor(
            "local",
            LLMSettings(model="m"),
            cache_path=tmp_path / "c.sqlite",
            max_article_chars=60_000,
            local_model=tmp_path,
        )


def test_a_text_model_refuses_images_per_request(models):
    from rwpost.llm import ImageInput, LLMRequest, load_llm_schema

    model = LocalChatModel(models / "scripted")
    assert not model.reads_images and model.config()["model_type"] == "llama"
    request = LLMRequest(
        key="rw-1",
        task="post",
        system="answer with post_text",
        user="the claim",
        schema=load_llm_schema("post"),
        schema_name="post",
        prompt_version="v",
    )
    with_image = LLMRequest(**{**request.__dict__, "key": "rw-2", "images": (ImageInput(b"x"),)})
    plain, refused = model.run([request, with_image])
    assert plain.ok and plain.data == ANSWERS["post_text"]
    assert not refused.ok and refused.error == "the local model scripted reads no images"
