"""An open-web run whose every search failed is not an open-web result (issue 27): the manifest and the
report count the failed searches, the run is refused in one line after its reports are written (marked),
and the same command, once search works, asks those samples again."""

from __future__ import annotations

import json

from rwpost.cli import main
from rwpost.testing.llm import FakeLLMServer
from rwpost.testing.search import SearchServer
from tests.evaluate_helpers import Agents, news, released_head


def test_an_open_web_run_without_one_working_search_is_refused_then_resumed(tmp_path, monkeypatch, capsys):
    data, root = released_head(tmp_path, 3)
    out = tmp_path / "run"
    with FakeLLMServer(Agents()) as llm, SearchServer(news) as search:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-search-outage")
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        args = [
            "evaluate", "--data", str(data), "--detector", "agentfact", "--model", "test-model",
            "--setting", "T+W", "--set", "search=loopback",
            "--set", "search_options=" + json.dumps({"base_url": search.base_url, "max_retries": 0}),
            "--set", f"cache_path={tmp_path / 'llm.sqlite'}", "--image-root", str(root),
            "--out", str(out), "--bootstrap", "5", "--no-progress", "--no-key-points",
        ]  # fmt: skip
        search.failures = 10**6  # serper unreachable
        assert main(args) == 1
        err = " ".join(capsys.readouterr().err.split())
        manifest = json.loads((out / "manifest.json").read_text())
        retrieval = manifest["retrieval"]
        assert retrieval["never_worked"] and retrieval["failed"] == retrieval["tool_calls"] > 0
        assert retrieval["predictions_without_retrieval"] == 3
        assert f"every one of its {retrieval['failed']} searches failed" in err and err.count("error:") == 1
        report = (out / "report.md").read_text()
        assert "Retrieval never worked" in report and f"{retrieval['failed']} of " in report

        search.failures = 0  # back up: the same command asks the three samples again
        assert main(args) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["retried_transport_failures"] == 3
    assert manifest["retrieval"]["failed"] == 0 and not manifest["retrieval"]["never_worked"]
    assert "Retrieval never worked" not in (out / "report.md").read_text()
