"""The papers' detectors through ``rwpost evaluate`` on the bundled sample (issue 15's "done when").

AgentFact runs open-web against the loopback LLM server (scripted agents) and the loopback search server
(text search and reverse image search), with a custom ``--blocked-domains`` file; the local VLM runs with
a tiny model built here (``--model DIR``). Both write into one folder, then ``rwpost leaderboard`` ranks
them. The data is the first samples of the bundled released file, their post images written as files
under an image root (the released sample ships image paths, not images).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rwpost.cli import main
from rwpost.testing.llm import FakeLLMServer
from rwpost.testing.search import SearchServer, page, result
from tests.evaluate_helpers import Agents, build_tiny_vlm, image_bytes, news, released_head, schema_of

N = 5
"""Samples taken from the bundled file: the first five hold all three labels."""
SECRET = "sk-cli-detectors-secret-never-written"
BLOCKED = "rumours.example.net"
"""A domain only the custom block list names: without --blocked-domains its pages would reach the agents."""
OPTIONS = ["--bootstrap", "20", "--no-progress", "--no-key-points"]


@pytest.fixture
def sample(tmp_path) -> tuple[Path, Path]:
    """The first N records of the bundled file, and an image root holding each one's post image."""
    return released_head(tmp_path, N)


def search_script(query: str) -> list[dict]:
    """Two pages of a news site dated before every claim, one page of the custom-blocked domain, one
    fact-check page."""
    return [
        *news(query, 2, date="Jan 2, 2015"),
        result(f"https://{BLOCKED}/{query}", "Rumour", "what the rumour mill says", "Jan 2, 2015"),
        result("https://www.snopes.com/fact-check/anything/", "Fact check", "Rating: False"),
    ]


def run_rwpost(*args: str) -> None:
    assert main(list(args)) == 0


def test_agentfact_and_local_vlm_from_the_command_line_then_a_leaderboard(tmp_path, sample, monkeypatch):
    data, root = sample
    out = tmp_path / "runs"
    blocked = tmp_path / "blocked.txt"
    blocked.write_text(f"# domains of this test\n{BLOCKED}\n")
    prices = tmp_path / "prices.yaml"
    prices.write_text("prices:\n  test-model: {input_per_mtok: 1.0, output_per_mtok: 2.0}\n")
    original = image_bytes((1, 2, 3), fmt="JPEG")

    with SearchServer(search_script, images={"original": original}) as search:
        pages = [
            page("https://photos.example.com/original", "The original photo", search.image_url("original")),
            page("https://www.snopes.com/fact-check/photo/", "Fact check of the photo"),
        ]
        search.pages = pages
        with FakeLLMServer(Agents()) as llm:
            # the key and the server come from the environment, as with a real provider
            monkeypatch.setenv("OPENAI_API_KEY", SECRET)
            monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
            run_rwpost(
                "evaluate", "--data", str(data), "--detector", "agentfact", "--setting", "open-web",
                "--model", "test-model",
                "--set", "search=loopback",
                "--set", "search_options=" + json.dumps({"base_url": search.base_url}),
                "--set", "image_search=loopback-image",
                "--set", "image_search_options=" + json.dumps({"base_url": search.base_url}),
                "--image-root", str(root), "--set", f"cache_path={tmp_path / 'llm.sqlite'}",
                "--blocked-domains", str(blocked), "--prices", str(prices),
                "--out", str(out / "agentfact"), *OPTIONS,
            )  # fmt: skip
            bodies = list(llm.requests)
        assert search.image_queries == N
    model = tmp_path / "tiny-vlm"
    build_tiny_vlm(model, scripted=True)
    run_rwpost(
        "evaluate", "--data", str(data), "--detector", "local-vlm", "--model", str(model),
        "--setting", "gold-evidence", "--image-root", str(root), "--set", "max_new_tokens=12",
        "--out", str(out / "local-vlm"), *OPTIONS,
    )  # fmt: skip
    run_rwpost("leaderboard", str(out), "--out", str(out / "leaderboard"))

    # every run folder holds the full set of reports
    for name in ("agentfact", "local-vlm"):
        run = out / name
        for f in ("metrics.json", "report.md", "predictions.jsonl", "manifest.json", "scored.jsonl"):
            assert (run / f).is_file(), (name, f)
        metrics = json.loads((run / "metrics.json").read_text())
        assert metrics["n_samples"] == N and metrics["coverage"]["answered"] == N
        view = metrics["views"][metrics["primary_view"]]
        low, high = view["ci95"]["macro_f1"]
        assert low <= view["macro_f1"] <= high
        assert len((run / "predictions.jsonl").read_text().splitlines()) == N
    for path in out.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl", ".md"):
            assert SECRET not in path.read_text(), path

    # AgentFact: device, prompts, every agent in the ledger, the custom block list really applied
    run = out / "agentfact"
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["device"] == f"remote ({llm.base_url})"
    assert len(manifest["prompt_hashes"]) == 8 and manifest["detector_config"]["model"] == "test-model"
    assert str(blocked) in manifest["blocked_domain_list"]["source"]
    leakage = manifest["leakage"]
    assert leakage["block_list"] == manifest["blocked_domain_list"]  # the detector used the run's list
    # per sample: searches V1 and V2 each drop the custom-blocked and the fact-check page; the reverse
    # image search drops the fact-check page
    assert leakage["by_reason"] == {f"blocked:{BLOCKED}": 2 * N, "blocked:snopes.com": 3 * N}
    assert (leakage["dropped"], leakage["predictions_with_drops"]) == (5 * N, N)
    assert not any(
        BLOCKED in json.dumps(b["messages"]) or "snopes" in json.dumps(b["messages"]) for b in bodies
    )
    report = (run / "report.md").read_text()
    assert f"leakage guard: {5 * N} retrieved results dropped" in report and str(blocked) in report
    # issue 39: Agent-IR sends each post image to the reverse image search and to its matching agent;
    # the report said "Images: not sent (the detector does not read images ...)"
    assert manifest["images"]["sent"] == N and f"Images: {N} sent of {N} expected" in report
    assert "## Ledger per agent" in report and "| agent-ir-match | 5 |" in report

    ledger = json.loads((run / "metrics.json").read_text())["ledger"]
    calls = {agent: t["calls"] for agent, t in ledger["by_agent"].items()}
    assert calls == {
        "agent-sp": N, "agent-tr-search": 2 * N, "agent-tr-summarise": 2 * N, "agent-tr-source": N,
        "agent-r-t": N, "agent-r-a": N, "agent-eg": N,
        "agent-ir-search": N, "agent-ir-match": N, "agent-ir-miscaption": N,
    }  # fmt: skip
    assert ledger["model_calls"] == 9 * N and ledger["tokens_in"] > 0 and ledger["tokens_out"] > 0
    # model calls priced by --prices by their model name; the searches have no price there
    assert ledger["unpriced_calls"] == calls["agent-tr-search"] + calls["agent-ir-search"]
    # list price: every model call at tokens x price; paid: the same over the calls the cache did not
    # answer (identical requests of two samples hit the cache or not depending on their timing)
    assert ledger["list_cost_usd"] == pytest.approx((ledger["tokens_in"] + 2 * ledger["tokens_out"]) / 1e6)
    model_calls = [
        c for line in (run / "predictions.jsonl").read_text().splitlines()
        for c in json.loads(line)["calls"] if c["kind"] == "model"
    ]  # fmt: skip
    paid = sum(c["tokens_in"] + 2 * c["tokens_out"] for c in model_calls if not c["cached"]) / 1e6
    assert ledger["cost_usd"] == pytest.approx(paid)
    assert ledger["cache_hits"] == sum(c["cached"] for c in model_calls)

    # Agent-IR end to end: the post image and the matched image reached the model, the match is cited
    matching = [b for b in bodies if schema_of(b) == "agentfact_image_match"]
    assert len(matching) == N
    assert all(json.dumps(b["messages"]).count("data:image/") == 2 for b in matching)
    for row in map(json.loads, (run / "predictions.jsonl").read_text().splitlines()):
        assert row["label"] == "False" and "[T1, T2, I1]" in row["explanation"]
        assert row["evidence_urls"][-1] == "https://photos.example.com/original"

    # the local VLM: CPU, its prompt, one model call per sample with its tokens
    manifest = json.loads((out / "local-vlm" / "manifest.json").read_text())
    assert manifest["device"] == "cpu" and list(manifest["prompt_hashes"]) == ["detect_zero_shot.v2"]
    assert manifest["detector_config"]["model_path"] == str(model.resolve())
    assert manifest["images"]["sent"] == N and manifest["leakage"] is None
    ledger = json.loads((out / "local-vlm" / "metrics.json").read_text())["ledger"]
    assert ledger["model_calls"] == N and ledger["tokens_out"] == 4 * N and ledger["by_agent"] == {}

    # one leaderboard row per run
    rows = json.loads((out / "leaderboard" / "leaderboard.json").read_text())
    rows = rows["rows"] if isinstance(rows, dict) else rows
    assert sorted(r["detector"] for r in rows) == ["agentfact", "local-vlm"]
    assert all(r["n"] == N for r in rows)


def test_model_and_set_model_must_agree(tmp_path, sample, capsys):
    data, _ = sample
    args = ["evaluate", "--data", str(data), "--detector", "vlm", "--out", str(tmp_path / "o")]
    capsys.readouterr()
    assert main([*args, "--model", "a", "--set", "model=b"]) == 2
    [line] = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert line == "error: --model 'a' and --set model='b' differ: give one"
    assert not (tmp_path / "o").exists()
