"""AgentFact's two profiles, gold evidence as the authors' open_book and Table V's ablations (issue 24,
sections 1-2), end to end through the runner against the loopback LLM, search and page servers, counting
calls per agent."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from rwpost.errors import ConfigError
from rwpost.evaluate import evaluate
from rwpost.evaluate.detectors.agentfact import AgentFactDetector
from rwpost.labels import Label
from rwpost.testing.llm import FakeLLMServer, Reply, message_text
from rwpost.testing.search import SearchServer, result
from rwpost.testing.server import LoopbackHandler, LoopbackServer
from tests.evaluate_helpers import Agents, agentfact_spec, evidence, make_sample, news, schema_of


def by_agent(run) -> dict[str, int]:
    """Calls per agent of the run's one prediction (model and tool calls)."""
    row = json.loads((run / "predictions.jsonl").read_text())
    return dict(Counter(c["agent"] for c in row["calls"] if c["agent"]))


def manifest(run) -> dict:
    return json.loads((run / "manifest.json").read_text())


# --- profile paper -------------------------------------------------------------------------------------


def test_gold_evidence_is_plan_one_reasoning_and_an_explainer_that_sees_every_gold_item(tmp_path):
    samples = [make_sample(10, Label.FALSE, evidence=evidence(7))]
    with FakeLLMServer(Agents()) as llm, SearchServer({}) as search:
        metrics = evaluate(
            samples, agentfact_spec(llm, search, tmp_path, "T+E"), tmp_path / "run", encode=None
        ).dump()
        [explain] = [b for b in llm.requests if schema_of(b) == "agentfact_explanation"]
        assert search.queries == []
    assert metrics["accuracy"] == 1.0
    assert by_agent(tmp_path / "run") == {"agent-sp": 1, "agent-r-a": 1, "agent-eg": 1}
    shown = re.findall(r"^\[(G\d+)\]", message_text(explain, "user"), re.MULTILINE)
    assert shown == [f"G{i}" for i in range(1, 8)]  # all 7, where subsets of 5 and an early stop hid some


@pytest.mark.parametrize(
    ("ablate", "agents", "queries", "row"),
    [
        ("sp", {"agent-sp": 0, "agent-r-t": 1}, ["Generated claim number 11."], "w/o Agent-SP"),
        ("tr", {"agent-sp": 1, "agent-r-t": 0, "agent-tr-summarise": 0}, [], "w/o Agent-TR"),
        ("rt", {"agent-sp": 1, "agent-r-t": 0, "agent-r-a": 1}, ["V1"], "w/o Agent-R-T"),
        ("sp,rt", {"agent-sp": 0, "agent-r-t": 0, "agent-r-a": 1}, ["Generated claim number 11."], None),
    ],
)
def test_table_v_ablations_switch_their_agents_off_and_say_so(tmp_path, ablate, agents, queries, row):
    def anything(query):
        return news(query, 3)

    with FakeLLMServer(Agents()) as llm, SearchServer(anything) as search:
        spec = agentfact_spec(llm, search, tmp_path, ablate=ablate)
        evaluate([make_sample(11, Label.FALSE)], spec, tmp_path / "run", encode=None)
        assert search.queries == queries
    counts = by_agent(tmp_path / "run")
    assert {a: counts.get(a, 0) for a in agents} == agents and counts["agent-eg"] == 1
    notes = manifest(tmp_path / "run")["notes"]
    names = {"sp": "w/o Agent-SP", "rt": "w/o Agent-R-T", "tr": "w/o Agent-TR"}
    assert f"Table V ablation: {', '.join(names[x] for x in ablate.split(','))}" in notes
    assert row is None or row in (tmp_path / "run" / "report.md").read_text()


def test_an_open_web_run_without_a_reverse_image_backend_says_agent_ir_is_off(tmp_path):
    with FakeLLMServer(Agents()) as llm, SearchServer({"V1": news("V1", 3)}) as search:
        evaluate(
            [make_sample(12, Label.FALSE)], agentfact_spec(llm, search, tmp_path), tmp_path / "a", encode=None
        )
        spec = agentfact_spec(llm, search, tmp_path, ablate="ir")
        evaluate([make_sample(12, Label.FALSE)], spec, tmp_path / "b", encode=None)
    report = (tmp_path / "a" / "report.md").read_text()
    assert "**Agent-IR off: Table V's w/o Agent-IR" in report.split("## Scores")[0]  # above the scores
    assert manifest(tmp_path / "b")["notes"] == ["Table V ablation: w/o Agent-IR"]
    assert manifest(tmp_path / "a")["detector_config"]["profile"] == "paper"


def test_every_threshold_is_an_option_and_the_profile_sets_the_rest():
    paper = AgentFactDetector.build({"model": "m"}).config()
    code = AgentFactDetector.build({"model": "m", "profile": "authors-code", "max_steps": 7}).config()
    assert (paper["max_steps"], paper["temperature"], paper["max_tokens"], paper["date_cut_days"]) == (
        12,
        0.0,
        1200,
        0,
    )
    assert code["max_steps"] == 7  # given explicitly: wins over the profile
    assert (code["temperature"], code["max_tokens"], code["min_pool"], code["subset_size"]) == (
        None,
        2000,
        2,
        10,
    )
    assert (code["first_stop_confidence"], code["stop_confidence"], code["results_per_query"]) == (5, 4, 10)
    assert (code["date_cut_days"], code["max_summaries_per_query"], code["summarise_temperature"]) == (
        1,
        3,
        0.1,
    )
    assert code["exclude_unsupported"] and code["exclude_scrape_failures"] and code["scrape_pages"]
    assert not code["claim_date_input"] and not code["ocr_input"]
    serper = AgentFactDetector.build({"model": "m", "profile": "authors-code", "search": "serper"}).config()
    assert serper["search_options"] == {"gl": "us", "hl": "en"}
    assert AgentFactDetector.build({"model": "m", "ablate": "rt,sp"}).config()["ablate"] == ("sp", "rt")
    with pytest.raises(ConfigError, match="unknown ablation xx"):
        AgentFactDetector.build({"model": "m", "ablate": "sp,xx"})


# --- profile authors-code ------------------------------------------------------------------------------


class _Pages(LoopbackHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        name = self.path.strip("/")
        body = (
            f"<html><head><title>Page {name}</title></head><body><article><p>"
            + f"The full article {name} says the photo was taken in 2015 at another event. " * 4
            + "</p></article></body></html>"
        )
        self.reply(200, {"Content-Type": "text/html"}, body.encode())


class PageServer(LoopbackServer):
    handler = _Pages


class CodeAgents:
    """Scripted answers to the authors' own prompts (profile authors-code), by answer schema."""

    def __call__(self, body) -> Reply:
        schema, user = schema_of(body), message_text(body, "user")
        if schema == "agentfact_code_plan":
            return Reply.answer(
                {
                    "reasoning_steps": [{"step": "origin"}],
                    "validation_list": [{"sentence": "V1"}],
                    "search_list": [{"information_needed": "N1"}],
                }
            )
        if schema == "agentfact_code_query":
            return Reply.answer({"answer": [{"queries": ["query N1"]}]})
        if schema == "agentfact_code_extract":
            ids = json.loads(user.split("**Documents**\n", 1)[1].split("\n\n**Output")[0])
            return Reply.answer({k: f"- summary of document {k}" for k in ids})
        if schema == "agentfact_code_source":
            return Reply.answer({"type": "reliable", "reasoning": "newsroom"})
        if schema in ("agentfact_code_reason", "agentfact_code_final_reason"):
            ids = [int(x) for x in re.findall(r"'id': (\d+)", user)]
            used = [{"id": i, "is_used": "true"} for i in ids]
            step = {"step_name": "origin", "relevant_text_evidence_list": used}
            return Reply.answer(
                {"validation_result": {"reasoning_steps": [step], "final_sufficiency_confidence": "4"}}
            )
        if schema == "agentfact_code_explain":
            return Reply.answer(
                {
                    "validation_result": {
                        "3-class_authenticity_label": "FALSE",
                        "reasoning_logic": "The photo is older.",
                        "key_points": ["1. The photo predates the event ('0', '1')."],
                    },
                    "confidence_level": "5",
                }
            )
        return Reply(status=500, error=f"unscripted schema {schema}")


def test_authors_code_runs_the_released_loop_with_their_decoding_retrieval_and_filters(tmp_path):
    sample = make_sample(13, Label.FALSE, ocr="TEXT IN THE IMAGE")
    with PageServer() as pages:
        site = pages.base_url
        text = {
            "V1": [
                result(f"{site}/a", "A", "short", "Dec 1, 2019"),
                result(f"{site}/b", "A", "same title: dropped as theirs"),
                result(f"{site}/c", "C", "snippet c"),
                result("https://www.facebook.com/post/1", "FB", "social"),
                result("https://www.nasa.gov/news", "NASA", ".gov"),
                result("https://www.reuters.com/world/x", "Reuters", "their scrape failures"),
                result("https://www.snopes.com/fact-check/x/", "Snopes", "a verdict"),
                result(f"{site}/d", "D", "dated on the claim day", "Jan 1, 2020"),
            ]
        }
        with FakeLLMServer(CodeAgents()) as llm, SearchServer(text) as search:
            spec = agentfact_spec(llm, search, tmp_path, "T+I+W", profile="authors-code")
            metrics = evaluate([sample], spec, tmp_path / "run", encode=None).dump()
            # the first batch (2 items) is confident above 3: the search list's query is never searched
            assert search.queries == ["V1"]
            assert search.requests[0]["body"]["num"] == 10 and search.requests[0]["body"]["tbs"].endswith(
                "12/31/2019"
            )  # the claim date minus one day
            requests = {schema_of(b): b for b in llm.requests}
            for name, body in requests.items():
                assert [m["role"] for m in body["messages"]] == ["user"]  # one user message, as theirs
                assert body["max_tokens"] == 2000
                assert ("temperature" in body) == (name == "agentfact_code_extract")
            assert requests["agentfact_code_extract"]["temperature"] == 0.1
            extract = message_text(requests["agentfact_code_extract"], "user")
            assert "publish date:" in extract and "The full article a says" in extract  # pages read
            for body in llm.requests:
                assert "2020-01-01" not in message_text(body, "user")  # no claim date, no OCR
                assert "TEXT IN THE IMAGE" not in message_text(body, "user")
            plan = message_text(requests["agentfact_code_plan"], "user")
            assert plan.startswith("You are an fact-checking plan designer for a fact-checking framework.")
    assert metrics["accuracy"] == 1.0
    assert by_agent(tmp_path / "run") == {
        "agent-sp": 1, "agent-tr-query": 1, "agent-tr-search": 1, "agent-tr-fetch": 2,
        "agent-tr-summarise": 1, "agent-r-t": 1, "agent-tr-source": 2, "agent-r-f": 1, "agent-eg": 1,
    }  # fmt: skip
    run = manifest(tmp_path / "run")
    assert run["leakage"]["by_reason"] == {"after-claim-time": 1, "blocked:snopes.com": 1}
    assert (
        "source filters of the authors' code (not leakage): 3 results excluded "
        "(gov 1, scrape-failure 1, unsupported 1)" in run["notes"]
    )
    assert run["detector_config"]["profile"] == "authors-code"
    assert (
        "agentfact_code_plan.v1" in run["prompt_hashes"] and "agentfact_plan.v1" not in run["prompt_hashes"]
    )
    assert metrics["audit"]["flagged"] == 0
    row = json.loads((tmp_path / "run" / "predictions.jsonl").read_text())
    assert row["evidence_urls"] == [f"{site}/a", f"{site}/c"]


def test_authors_code_gold_evidence_is_plan_final_reasoning_and_explanation_over_every_item(tmp_path):
    samples = [make_sample(14, Label.FALSE, evidence=evidence(7))]
    with FakeLLMServer(CodeAgents()) as llm, SearchServer({}) as search:
        spec = agentfact_spec(llm, search, tmp_path, "T+E", profile="authors-code")
        evaluate(samples, spec, tmp_path / "run", encode=None)
        [explain] = [b for b in llm.requests if schema_of(b) == "agentfact_code_explain"]
    assert by_agent(tmp_path / "run") == {"agent-sp": 1, "agent-r-f": 1, "agent-eg": 1}
    assert re.findall(r"'content': 'evidence (\d)'", message_text(explain, "user")) == list("1234567")


# --- the authors' baseline prompts (vlm --set prompt=authors-baseline) -------------------------------------


def test_the_vlm_detector_asks_the_authors_baseline_prompts_of_each_cell(tmp_path):
    from rwpost.evaluate import RunSpec

    def baseline(body):
        user = message_text(body, "user")
        label = "UNPROVEN" if "EVIDENCE SNIPPETS" not in user else "FALSE"
        return Reply.answer(
            {"label_3class": label, "reasoning_logic": "only the inputs", "confidence_level": 4}
        )

    samples = [make_sample(15, Label.FALSE, evidence=evidence(2), ocr="OCR TEXT")]
    with FakeLLMServer(baseline) as llm:
        for setting in ("T", "T+E"):
            spec = RunSpec(
                "vlm",
                config={"model": "test-model", "base_url": llm.base_url, "prompt": "authors-baseline"},
                secrets={"api_key": "sk-test"},
                setting=setting,
                n_resamples=0,
            )
            metrics = evaluate(samples, spec, tmp_path / setting, encode=None).dump()
            assert metrics["accuracy"] == (1.0 if setting == "T+E" else 0.0)
        no_evi, evi = (message_text(b, "user") for b in llm.requests)
        assert [m["role"] for m in llm.requests[0]["messages"]] == ["user"]
    assert "Do NOT use external knowledge" in no_evi and "IMAGE: (no image provided)" in no_evi
    assert "EVIDENCE SNIPPETS: [1] evidence 1\n[2] evidence 2" in evi
    assert "OCR TEXT" not in no_evi + evi and "2020-01-01" not in no_evi + evi
    hashes = manifest(tmp_path / "T+E")["prompt_hashes"]
    assert sorted(hashes) == ["agentfact_baseline_evi.v1", "agentfact_baseline_no_evi.v1"]
    row = json.loads((tmp_path / "T+E" / "predictions.jsonl").read_text())
    assert row["label"] == "False" and row["probabilities"]["False"] == 0.8
