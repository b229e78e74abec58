"""The zero-shot VLM detector end to end against the loopback OpenAI-compatible test server."""

from __future__ import annotations

import io
import json

import pytest
from PIL import Image as PILImage

from rwpost.evaluate import RunSpec, evaluate
from rwpost.labels import Label
from rwpost.llm import Price
from rwpost.records import Image
from rwpost.testing.llm import FakeLLMServer, message_text
from tests.evaluate_helpers import evidence, make_sample
from tests.vlm_helpers import SECRET, responder

GOLD = [Label.TRUE, Label.FALSE, Label.FALSE, Label.UNPROVEN, Label.TRUE, Label.FALSE]


def _png() -> bytes:
    buf = io.BytesIO()
    PILImage.new("RGB", (8, 8), (200, 10, 10)).save(buf, "PNG")
    return buf.getvalue()


@pytest.fixture
def samples():
    out = [make_sample(i, g, evidence=evidence(2), ocr=f"ocr {i}") for i, g in enumerate(GOLD)]
    out[0] = out[0].model_copy(update={"image": Image(bytes=_png())})
    return out


def _spec(server, tmp_path, setting):
    return RunSpec(
        "vlm",
        config={
            "model": "test-model",
            "base_url": server.base_url,
            "cache_path": str(tmp_path / "llm.sqlite"),
            "concurrency": 2,
            "timeout_s": 10.0,
        },
        secrets={"api_key": SECRET},
        setting=setting,
        n_resamples=20,
        prices={"test-model": Price(input_per_mtok=1.0, output_per_mtok=2.0)},
    )


def test_vlm_detector_end_to_end_with_image_evidence_ledger_and_resume(tmp_path, samples):
    with FakeLLMServer(responder) as server:
        out = tmp_path / "gold"
        metrics = evaluate(samples, _spec(server, tmp_path, "gold-evidence"), out, encode=None).dump()
        assert server.chat_requests == 5 + 3  # five answers, and three tries at the invalid one
        first_user = server.requests[0]["messages"][1]["content"]
        parts = [
            p
            for body in server.requests
            for p in (
                body["messages"][1]["content"] if isinstance(body["messages"][1]["content"], list) else []
            )
        ]
        assert any(
            p.get("type") == "image_url" and p["image_url"]["url"].startswith("data:image/") for p in parts
        )
        assert first_user and all("Evidence items" in message_text(b, "user") for b in server.requests)

        # even -> True, odd -> False, #5 rejected: gold T F F U T F -> right on 0, 1, 4; no label for 5
        assert metrics["n_samples"] == 6
        assert metrics["accuracy"] == pytest.approx(3 / 6)
        assert metrics["coverage"]["no_label"] == 1
        assert metrics["coverage"]["no_label_reasons"] == {"model answer rejected": 1}
        ledger = metrics["ledger"]
        assert ledger["model_calls"] == 6 and ledger["tokens_in"] > 0 and ledger["tokens_out"] > 0
        expected = (ledger["tokens_in"] * 1.0 + ledger["tokens_out"] * 2.0) / 1e6
        assert ledger["cost_usd"] == pytest.approx(expected)
        assert metrics["explanations"]["evidence_urls"]["macro_precision"] == pytest.approx(1.0)
        assert metrics["views"]["main"]["ece"] is not None
        manifest = json.loads((out / "manifest.json").read_text())
        assert list(manifest["prompt_hashes"]) == ["detect_zero_shot.v2"]
        for path in out.rglob("*"):
            if path.is_file() and path.suffix in (".json", ".jsonl", ".md"):
                assert SECRET not in path.read_text(), f"{path} contains the API key"

        # the same run again: every answer is on disk, no request is made
        before = server.chat_requests
        evaluate(samples, _spec(server, tmp_path, "gold-evidence"), out, encode=None)
        assert server.chat_requests == before

        # closed-book: no evidence in the prompt; a new run folder, new prompts, new requests
        closed = evaluate(
            samples, _spec(server, tmp_path, "closed-book"), tmp_path / "closed", encode=None
        ).dump()
        new = server.requests[before:]
        assert new and not any("Evidence items" in message_text(b, "user") for b in new)
        assert closed["setting"] == "T+I"  # the canonical name; the alias only in the manifest

        # a fresh folder with the same cache: the valid answers come from the cache, no HTTP call for them
        before = server.chat_requests
        again = evaluate(
            samples, _spec(server, tmp_path, "gold-evidence"), tmp_path / "again", encode=None
        ).dump()
        assert server.chat_requests - before == 3  # only the invalid one is asked again
        assert again["ledger"]["cache_hits"] == 5
        # the cache made the answers free, but their list price is the first run's: it follows from the
        # predictions, not from what the cache held
        assert again["ledger"]["cost_usd"] < ledger["cost_usd"]
        assert again["ledger"]["list_cost_usd"] == pytest.approx(ledger["list_cost_usd"])
        assert ledger["list_cost_usd"] == pytest.approx(ledger["cost_usd"])  # the first run had no hits


def test_a_rerun_after_a_kill_asks_only_for_the_answers_it_had_not_got(tmp_path, monkeypatch, evaluate_cli):
    """Issue 39 (hostile L13): vlm had no answer cache unless ``cache_path`` was set, so the answers a
    killed worker had been paid for but not yet written were bought again (188 requests for 184 samples).
    An API detector's run now caches in the project's answer cache (``data/cache/llm.sqlite``) by default.
    The kill is the state it leaves: the second batch answered and paid for, its lines never written."""
    from rwpost.io import write_jsonl

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RWPOST_LLM_CACHE")  # the default, as a user gets it
    data = tmp_path / "samples.jsonl"
    write_jsonl(data, [make_sample(i, g) for i, g in enumerate(GOLD[:4])])
    out = tmp_path / "run"
    with FakeLLMServer(responder) as server:
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        args = ("--data", str(data), "--detector", "vlm", "--model", "test-model", "--setting", "T",
                "--batch-size", "2", "--out", str(out))  # fmt: skip
        evaluate_cli(*args)
        assert server.chat_requests == 4
        lines = (out / "predictions.jsonl").read_text().splitlines()
        (out / "predictions.jsonl").write_text("\n".join(lines[:2]) + "\n")  # batch 2 lost with the worker
        evaluate_cli(*args)
        assert server.chat_requests == 4  # the two lost answers came from the cache: none paid twice
    assert (tmp_path / "data" / "cache" / "llm.sqlite").is_file()
    rows = [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]
    assert [r["label"] for r in rows] == ["True", "False", "True", "False"]
    assert [c["cached"] for r in rows[2:] for c in r["calls"]] == [True, True]
    manifest = json.loads((out / "manifest.json").read_text())
    assert "answer_cache" not in json.dumps(manifest) and SECRET not in json.dumps(manifest)
