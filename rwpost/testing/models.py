"""Tiny random models built from a config (no download): a local VLM for ``local-vlm`` and AgentM3D's
backbone, and a reward model for AgentM3D's local path, for offline tries and the tests.

``rwpost testing tiny-models --out DIR`` writes ``DIR/vlm`` (scripted: it answers :data:`VERDICT`),
``DIR/vlm-random`` (as initialised: its answers are not JSON) and ``DIR/reward`` (GRM-Gemma2's class,
one layer). They run the real processor, chat template, generation and parsing on a CPU in seconds; their
answers are not predictions. Needs ``transformers`` and ``torch`` (``pip install 'rwpost[local]'``).
"""

from __future__ import annotations

import json
from pathlib import Path

VERDICT = {
    "label": "False",
    "confidence": 0.8,
    "explanation": "The image is miscaptioned.",
    "evidence_urls": ["https://example.org/e1"],
}
"""What the scripted tiny VLM answers for every sample."""
_SPECIAL = ["<pad>", "<unk>", "<|im_start|>", "<end_of_utterance>", "<fake_token_around_image>", "<image>"]
_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}:{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<image>{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}"
    "{% endfor %}<end_of_utterance>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant:{% endif %}"
)


def build_tiny_vlm(folder: str | Path, scripted: bool, answer: dict | None = None) -> None:
    """Save a tiny Idefics3 model (SmolVLM's architecture, one layer per tower) and its processor, with a
    word-level tokenizer trained on a few words, to ``folder``.

    ``scripted``: the layers' output projections are zeroed, so each next token depends on the current
    token only, and the output head makes it write the fenced JSON :data:`VERDICT` after the chat's last
    prompt token and stop: the real processor, chat template, generation and parsing run, and the answer
    is known (``answer`` instead of :data:`VERDICT` when given). Otherwise it is left as initialised (its
    answers are not JSON)."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import (
        AddedToken,
        Idefics3Config,
        Idefics3ForConditionalGeneration,
        Idefics3Processor,
        PreTrainedTokenizerFast,
    )
    from transformers.models.idefics3.image_processing_pil_idefics3 import Idefics3ImageProcessorPil

    words = "the claim post text image evidence label true false json answer system user assistant : , ."
    core = Tokenizer(models.WordLevel(unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    core.train_from_iterator([words], trainers.WordLevelTrainer(special_tokens=_SPECIAL))
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        pad_token="<pad>",
        unk_token="<unk>",
        eos_token="<end_of_utterance>",
        chat_template=_TEMPLATE,
    )
    answer = ["```json", json.dumps(VERDICT if answer is None else answer), "```"]
    tokenizer.add_tokens([AddedToken(t, normalized=False, single_word=False) for t in answer])
    images = Idefics3ImageProcessorPil(
        do_image_splitting=False, size={"longest_edge": 32}, max_image_size={"longest_edge": 32}
    )
    processor = Idefics3Processor(image_processor=images, tokenizer=tokenizer, image_seq_len=4)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in [*_SPECIAL, *answer, ":"]}
    hidden = 64
    assert len(tokenizer) <= hidden
    config = Idefics3Config(
        text_config={
            "model_type": "llama",
            "vocab_size": len(tokenizer),
            "hidden_size": hidden,
            "intermediate_size": 64,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "num_key_value_heads": 1,
            "max_position_embeddings": 4096,
            "pad_token_id": ids["<pad>"],
            "eos_token_id": ids["<end_of_utterance>"],
            "tie_word_embeddings": False,
        },
        vision_config={
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "image_size": 32,
            "patch_size": 8,
        },
        scale_factor=2,
        image_token_id=ids["<image>"],
        pad_token_id=ids["<pad>"],
        tie_word_embeddings=False,
    )
    torch.manual_seed(0)
    model = Idefics3ForConditionalGeneration(config)
    if scripted:  # a bigram model: ':' -> ```json -> {verdict} -> ``` -> end
        with torch.no_grad():
            text = model.model.text_model
            for layer in text.layers:
                layer.self_attn.o_proj.weight.zero_()
                layer.mlp.down_proj.weight.zero_()
            text.embed_tokens.weight.copy_(torch.eye(len(tokenizer), hidden))
            head = torch.zeros(len(tokenizer), hidden)
            head[ids["<end_of_utterance>"], :] = 0.5
            chain = [":", *answer, "<end_of_utterance>"]
            for current, following in zip(chain, chain[1:], strict=False):
                head[ids[following], ids[current]] = 1.0
            model.lm_head.weight.copy_(head)
    model.generation_config.pad_token_id = ids["<pad>"]
    model.generation_config.eos_token_id = ids["<end_of_utterance>"]
    model.save_pretrained(folder)
    processor.save_pretrained(folder)


def build_tiny_reward_model(folder: Path) -> None:
    """A tiny randomly initialised Gemma2 sequence-classification model (GRM-Gemma2's class, one layer)
    with a word-level tokenizer and no chat template, saved to ``folder``."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import Gemma2Config, Gemma2ForSequenceClassification, PreTrainedTokenizerFast

    core = Tokenizer(models.WordLevel(unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    words = "label reasoning original consistent distortion user assistant the news image text : ."
    core.train_from_iterator([words], trainers.WordLevelTrainer(special_tokens=["<pad>", "<unk>", "<eos>"]))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", unk_token="<unk>")
    tokenizer.eos_token = "<eos>"
    config = Gemma2Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        num_labels=1,
        pad_token_id=0,
        max_position_embeddings=4096,
    )
    torch.manual_seed(0)
    Gemma2ForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def build_tiny_models(out: str | Path) -> dict[str, Path]:
    """The tiny models of ``rwpost testing tiny-models`` under ``out``: ``vlm`` (scripted), ``vlm-random``
    and ``reward``; returns their folders by name."""
    root = Path(out)
    folders = {"vlm": root / "vlm", "vlm-random": root / "vlm-random", "reward": root / "reward"}
    build_tiny_vlm(folders["vlm"], scripted=True)
    build_tiny_vlm(folders["vlm-random"], scripted=False)
    build_tiny_reward_model(folders["reward"])
    return folders
