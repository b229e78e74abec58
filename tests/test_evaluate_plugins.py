"""Plug-in detectors are first-class (issue 35): a plug-in's own code is part of the run identity (a
changed ``predict`` refuses the resume, naming the detector's code), and a plug-in whose options are typed
model settings gets its connection from the environment as a built-in does, never by its name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rwpost.cli import main
from rwpost.evaluate.identity import detector_code
from rwpost.evaluate.plan import wants_connection
from rwpost.evaluate.registry import resolve_detector
from rwpost.io import write_jsonl
from rwpost.labels import Label
from rwpost.testing.llm import FakeLLMServer, Reply
from tests.evaluate_helpers import make_sample

ROOT = Path(__file__).resolve().parents[1]
COMMON = ["--setting", "T", "--bootstrap", "0", "--no-progress", "--no-key-points"]

KEYWORD = '''
import re

from pydantic import BaseModel, ConfigDict, Field

from rwpost.evaluate.contract import Detector, Prediction

WORD = re.compile(r"[a-z]+")


class KeywordDetector(Detector):
    """False when the claim contains a listed word, True otherwise."""

    name = "keyword"

    class Config(BaseModel):
        model_config = ConfigDict(extra="forbid")
        words: list[str] = Field(default=["generated"], min_length=1)

    def predict(self, samples, task, ctx):
        words = set(self.options.words)
        out = []
        for s in samples:
            hit = bool(words & set(WORD.findall(s.claim.lower())))
            out.append(Prediction(id=s.id, label=ANSWERS[hit]))
        return out


ANSWERS = {True: "False", False: "True"}
'''


@pytest.fixture
def data(tmp_path) -> Path:
    labels = [Label.FALSE, Label.TRUE, Label.FALSE, Label.FALSE, Label.UNPROVEN, Label.FALSE]
    path = tmp_path / "samples.jsonl"
    write_jsonl(path, [make_sample(i, g) for i, g in enumerate(labels)])
    return path


def _install(site: Path, source: str, version: str = "0.1") -> None:
    """The plug-in as an installed distribution: its module and a real .dist-info (entry point, files)."""
    site.mkdir(parents=True, exist_ok=True)
    (site / "rwpost_keyword.py").write_text(textwrap.dedent(source))
    dist = site / f"rwpost_keyword-{version}.dist-info"
    for old in site.glob("rwpost_keyword-*.dist-info"):
        for f in old.iterdir():
            f.unlink()
        old.rmdir()
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: rwpost-keyword\nVersion: {version}\n")
    (dist / "entry_points.txt").write_text("[rwpost.detectors]\nkeyword = rwpost_keyword:KeywordDetector\n")
    (dist / "top_level.txt").write_text("rwpost_keyword\n")
    (dist / "RECORD").write_text("rwpost_keyword.py,,\n")


def _evaluate(site: Path, data: Path, out: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    args = ["evaluate", "--data", str(data), "--detector", "keyword", "--out", str(out), *COMMON]
    return subprocess.run(
        [sys.executable, "-m", "rwpost", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )


def _accuracy(out: Path) -> float:
    return json.loads((out / "metrics.json").read_text())["accuracy"]


def test_a_changed_plugin_refuses_the_resume_naming_the_detectors_code(tmp_path, data):
    site, out = tmp_path / "site", tmp_path / "run"
    _install(site, KEYWORD)
    assert _evaluate(site, data, out).returncode == 0, _evaluate(site, data, out).stderr
    first = _accuracy(out)
    assert first == pytest.approx(4 / 6)  # every claim says "generated": all False
    identity = json.loads((out / "run.json").read_text())["identity"]
    assert identity["detector_code"]["dist:rwpost-keyword"] == "0.1"
    assert set(identity["detector_code"]) == {"rwpost_keyword", "dist:rwpost-keyword"}
    assert "config" not in identity  # the options are recorded once, as resolved

    again = _evaluate(site, data, out)  # nothing changed: resumed
    assert again.returncode == 0 and _accuracy(out) == first

    _install(site, KEYWORD.replace('{True: "False", False: "True"}', '{True: "True", False: "True"}'))
    refused = _evaluate(site, data, out)
    assert refused.returncode == 2
    [line] = [x for x in refused.stderr.splitlines() if x.strip()]
    assert "changed since it started: the detector's code (rwpost_keyword " in line, line
    assert "the detector options" not in line and "dist:" not in line  # only what changed is named
    assert _accuracy(out) == first  # the finished run is left as it was

    fresh = tmp_path / "fresh"
    assert _evaluate(site, data, fresh).returncode == 0
    assert _accuracy(fresh) == pytest.approx(1 / 6)  # the new code's answers: all True

    _install(site, KEYWORD.replace('{True: "False", False: "True"}', '{True: "True", False: "True"}'), "0.2")
    bumped = _evaluate(site, data, fresh)
    assert bumped.returncode == 2 and "dist:rwpost-keyword 0.1 -> 0.2" in bumped.stderr


def test_the_code_of_an_in_memory_module_is_hashed_from_its_compiled_functions():
    namespace: dict = {"__name__": "in_memory_detector"}
    source = KEYWORD.replace("class KeywordDetector", "class InMemory")
    exec(compile(source, "in_memory_detector.py", "exec"), namespace)
    changed: dict = {"__name__": "in_memory_detector"}
    exec(compile(source.replace("hit = bool", "hit = not bool"), "in_memory_detector.py", "exec"), changed)
    assert detector_code(namespace["InMemory"]) != detector_code(changed["InMemory"])
    assert detector_code(namespace["InMemory"]) == detector_code(namespace["InMemory"])


def test_a_builtin_detectors_code_is_its_modules_and_no_distribution():
    code = detector_code(resolve_detector("local-vlm"))
    assert list(code) == ["rwpost.evaluate.detectors.vlm"]  # LocalVLMDetector extends VLMDetector there


def test_credentials_go_by_the_type_of_the_options_never_by_the_detectors_name(example_llm_module):
    assert wants_connection("example_llm_detector:AskModel")
    assert wants_connection("vlm") and wants_connection("t2agent")
    assert not wants_connection("majority") and not wants_connection("nope")


@pytest.fixture
def example_llm_module(monkeypatch):
    """The contract's documented LLM plug-in as an importable module (``example_llm_detector:AskModel``)."""
    from tests.test_evaluate_contract import documented_example

    module = type(sys)("example_llm_detector")
    exec(compile(documented_example("against the loopback LLM server::\n"), "x.py", "exec"), module.__dict__)
    monkeypatch.setitem(sys.modules, "example_llm_detector", module)
    return module


def test_an_llm_plugin_gets_the_environments_connection_like_a_builtin(
    tmp_path, data, monkeypatch, example_llm_module, capsys
):
    def answer(body):
        claim = body["messages"][-1]["content"]
        return Reply.answer({"label": "False" if claim.endswith("0.") else "True"})

    detector = "example_llm_detector:AskModel"
    args = ["evaluate", "--data", str(data), "--detector", detector, "--model", "test-model", *COMMON]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert main([*args, "--out", str(tmp_path / "refused")]) == 2  # no key and no server: refused
    assert "no LLM endpoint" in capsys.readouterr().err
    assert not (tmp_path / "refused").exists()  # a refused run writes nothing
    with FakeLLMServer(answer) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-plugin-secret")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        out = tmp_path / "run"
        assert main([*args, "--out", str(out)]) == 0
        assert server.chat_requests == 6
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["accuracy"] == pytest.approx(2 / 6)  # claim 0 False (right), the rest True (one right)
    assert metrics["ledger"]["calls"] == 6
    written = "".join(p.read_text() for p in out.rglob("*") if p.is_file())
    assert "sk-plugin-secret" not in written
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["detector_config"]["llm"]["base_url"] == server.base_url


def test_the_documented_plugins_stay_short():
    from tests.test_evaluate_contract import documented_example

    assert len(documented_example("against the loopback LLM server::\n").splitlines()) < 40
    assert len(KEYWORD.strip().splitlines()) < 35


def test_a_run_refused_for_want_of_training_data_writes_nothing_so_the_corrected_command_runs(
    tmp_path, data, capsys
):
    out = tmp_path / "r"
    args = ["evaluate", "--data", str(data), "--detector", "majority", "--out", str(out), *COMMON]
    assert main(args) == 2
    assert "give --train or --train-fraction" in capsys.readouterr().err
    assert not out.exists() or not any(out.iterdir())  # no run.json to block the corrected command
    assert main([*args, "--train-fraction", "0.5"]) == 0


def test_a_benchmark_training_split_is_recorded_in_the_manifest(tmp_path):
    from tests.benchmark_folders import MOCHEG, mocheg_folder

    test_root = mocheg_folder(tmp_path / "test", MOCHEG)
    rows = [[r[0], r[1].replace("/fact-check/", "/fact-check/t"), *r[2:]] for r in MOCHEG]
    train_root = mocheg_folder(tmp_path / "train", rows, split="train")
    out = tmp_path / "run"
    args = ["evaluate", "--data", f"mocheg:{test_root}", "--train", f"mocheg/train:{train_root}"]
    assert main([*args, "--detector", "majority", "--out", str(out), *COMMON]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["data"]["train"]["benchmark"], manifest["data"]["train"]["split"]) == ("mocheg", "train")
    assert json.loads((out / "metrics.json").read_text())["n_samples"] == 3


def test_the_identity_diff_names_only_what_changed():
    from rwpost.evaluate.identity import identity_changes
    from rwpost.evaluate.log import RunIdentity

    def identity(**config):
        return RunIdentity(detector="agentfact", detector_config=config, setting="T", seed=0, repeats=1,
                           samples_sha256="a" * 64, code_version="1")  # fmt: skip

    old = json.loads(json.dumps(identity(ablate=(), search="serper").dump()))  # as run.json holds it
    changes = identity_changes(old, identity(ablate=(), search="loopback").dump())
    assert changes == ["the detector options (search serper -> loopback)"]
    legacy = {**old, "config": {"search": "serper"}}  # an older run.json: the options as given too
    assert identity_changes(legacy, identity(ablate=(), search="loopback").dump()) == changes


def test_importing_the_contract_imports_nothing_of_the_harness():
    code = "import json, sys, rwpost.evaluate.contract; print(json.dumps(sorted(sys.modules)))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    loaded = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    harness = ("runner", "plan", "run", "registry", "identity", "select", "shards", "detectors", "toolkit")
    assert not {f"rwpost.evaluate.{h}" for h in harness} & set(json.loads(loaded.stdout))


def test_an_open_web_run_without_its_search_key_writes_nothing_so_the_corrected_run_goes_on(
    tmp_path, monkeypatch
):
    from dataclasses import replace

    from rwpost.errors import ConfigError
    from rwpost.evaluate import evaluate
    from rwpost.testing.search import SearchServer
    from tests.evaluate_helpers import Agents, agentfact_spec, news

    monkeypatch.delenv("SERPER_API_KEY", raising=False)
    samples, out = [make_sample(0, Label.FALSE)], tmp_path / "run"
    with FakeLLMServer(Agents()) as llm, SearchServer(news) as search:
        spec = agentfact_spec(llm, search, tmp_path)
        serper = replace(spec, config={**spec.config, "search": "serper", "search_options": {}})
        with pytest.raises(ConfigError, match="SERPER_API_KEY"):
            evaluate(samples, serper, out, encode=None)
        assert not (out / "run.json").exists() and llm.chat_requests == 0
        # the corrected command: not "a different run"
        metrics = evaluate(samples, spec, out, encode=None).dump()
    assert metrics["accuracy"] == 1.0


TOOLED = '''
from pydantic import BaseModel, ConfigDict

from rwpost.evaluate.contract import Detector, Prediction


class Tooled(Detector):
    """A plug-in with a tool set: which tools it is given decides its answer."""

    name = "tooled"

    class Config(BaseModel):
        model_config = ConfigDict(extra="forbid")
        tools: list[str] = []

    def toolset(self):
        return ["Wikipedia", "Search", "Noise"]

    def usable_tools(self, cell):
        return self.toolset()

    def predict(self, samples, task, ctx):
        tools = set(self.options.tools)
        label = "True" if "Noise" in tools else "False" if "Search" in tools else "Unproven"
        return [Prediction(id=s.id, label=label) for s in samples]
'''


def test_select_tools_chooses_the_toolset_of_any_detector_with_a_tool_set(
    tmp_path, data, monkeypatch, capsys
):
    """Algorithm 2 is the harness's: a plug-in that says which tools a cell can run (``usable_tools``) and
    takes the choice as ``tools`` gets ``--select-tools`` as T2Agent does."""
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "rwpost_tooled.py").write_text(textwrap.dedent(TOOLED))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    out = tmp_path / "select"
    args = ["evaluate", "--data", str(data), "--detector", "rwpost_tooled:Tooled", "--select-tools"]
    assert main([*args, "--out", str(out), *COMMON]) == 0
    chosen = json.loads((out / "toolset.json").read_text())
    # base Wikipedia (the paper's default among its tools): Unproven, 1 of 6 right; + Search: False, 4 of 6
    # (kept); + Noise: True, 1 of 6 (dropped)
    assert chosen["tools"] == ["Wikipedia", "Search"]
    assert [(s["tools"], round(s["accuracy"], 3), s["kept"]) for s in chosen["steps"]] == [
        (["Wikipedia"], 0.167, True),
        (["Wikipedia", "Search"], 0.667, True),
        (["Wikipedia", "Search", "Noise"], 0.167, False),
    ]
    assert "toolset Wikipedia, Search in" in capsys.readouterr().err
