"""Shared pieces of the evaluation tests: generated samples (made up here, not real data: claims are
placeholders), scripted AgentFact agents and search results for the loopback servers, and a tiny
randomly initialised vision-language model built on the spot (no download)."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import numpy as np
import pytest
from pydantic import BaseModel
from sklearn.metrics import accuracy_score, f1_score, precision_recall_fscore_support

from rwpost.cli import main
from rwpost.evaluate.contract import Detector, Prediction
from rwpost.evaluate.metrics import NO_ANSWER
from rwpost.ids import record_id
from rwpost.io import write_jsonl
from rwpost.labels import Label
from rwpost.llm import Price
from rwpost.records import Evidence, Provenance, Sample
from rwpost.testing.llm import Reply, message_text
from rwpost.testing.models import VERDICT, build_tiny_vlm  # noqa: F401 (the tests' import of them)
from rwpost.testing.search import result


def make_sample(n: int, label: Label | str | None, **fields) -> Sample:
    """A generated sample with a stable id; ``fields`` override anything."""
    url = f"https://www.snopes.com/fact-check/generated-{n}/"
    base = {
        "id": record_id(url),
        "claim": f"Generated claim number {n}.",
        "post_text": f"Generated post {n}",
        "label": Label(label) if label else None,
        "news_url": url,
        "category": "Generated",
        "claim_time": date(2020, 1, 1),
        "provenance": Provenance(backend="offline", source="generated in tests"),
    }
    base.update(fields)
    return Sample(**base)


def evidence(n: int, url: str = "https://example.org/e") -> list[Evidence]:
    """``n`` generated text evidence items with distinct URLs."""
    return [Evidence(id=i, type="Text", content=f"evidence {i}", url=f"{url}{i}") for i in range(1, n + 1)]


class CountingDetector(Detector):
    """A test detector that logs every sample it is asked about to ``calls_log`` (one id per line) and,
    while ``arm_file`` exists, kills its own process with SIGKILL when asked for batch ``kill_at_batch``
    (removing ``arm_file`` first, so the rerun goes through). Answers False; refuses unblinded samples."""

    name = "counting"

    class Config(BaseModel):
        calls_log: str
        arm_file: str | None = None
        kill_at_batch: int = 3

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        self.calls_log, self.arm_file = config.calls_log, config.arm_file
        self.kill_at_batch, self.batches = config.kill_at_batch, 0

    def config(self) -> dict:
        return {"calls_log": self.calls_log, "kill_at_batch": self.kill_at_batch}

    def predict(self, samples, task, ctx):
        import os
        import signal
        from pathlib import Path

        from rwpost.evaluate.contract import Prediction

        self.batches += 1
        if self.arm_file and Path(self.arm_file).exists() and self.batches == self.kill_at_batch:
            Path(self.arm_file).unlink()
            os.kill(os.getpid(), signal.SIGKILL)
        out = []
        for s in samples:
            if s.label is not None or s.reasoning_logic is not None or s.key_points is not None:
                raise AssertionError(f"{s.id}: the detector was shown gold fields")
            with open(self.calls_log, "a", encoding="utf-8") as handle:
                handle.write(s.id + "\n")
            out.append(Prediction(id=s.id, label=Label.FALSE, explanation=f"evidence {len(s.evidence)}"))
        return out


class ScriptedDetector(Detector):
    """Answers from a JSON script ``{"<seed>": {"<id>": label or null}}`` (null: no answer): lets a test
    give every repeat (seed 0, 1, 2...) its own answers."""

    name = "scripted"

    class Config(BaseModel):
        script: str
        note: str = ""
        """Changes nothing but the options (a test of the run identity)."""

    def predict(self, samples, task, ctx):
        answers = json.loads(Path(self.options.script).read_text())[str(ctx.seed)]
        return [
            Prediction(id=s.id, label=answers.get(s.id), error=None if answers.get(s.id) else "no answer")
            for s in samples
        ]


SCRIPTED = "tests.evaluate_helpers:ScriptedDetector"
"""The scripted detector as ``--detector`` names it."""


CLASSES = ["True", "False", "Unproven"]


def _indicator(labels):
    return np.eye(3, dtype=int)[[CLASSES.index(str(x)) for x in labels]]


def sklearn_scores(gold, pred, failures):
    """The headline scores of a direct scikit-learn computation under a failure policy (pred None:
    a failure)."""
    if failures == "exclude":
        kept = [i for i, p in enumerate(pred) if p is not None]
        y_true, y_pred = [str(gold[i]) for i in kept], [str(pred[i]) for i in kept]
        labels = CLASSES
    elif failures == "class":
        y_true = [str(g) for g in gold]
        y_pred = [NO_ANSWER if p is None else str(p) for p in pred]
        labels = CLASSES + ([NO_ANSWER] if None in pred else [])
    else:  # wrong: a failure is a multilabel row flagging every class but the gold one
        y_true = _indicator(gold)
        y_pred = np.array(
            [1 - t if p is None else _indicator([p])[0] for p, t in zip(pred, y_true, strict=True)]
        )
        labels = None
    kw = {"labels": labels} if labels is not None else {}
    p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, average="weighted", zero_division=0, **kw)
    return {
        "accuracy": accuracy_score(y_true, y_pred),
        "macro_f1": f1_score(y_true, y_pred, average="macro", zero_division=0, **kw),
        "weighted_f1": f,
        "weighted_precision": p,
        "weighted_recall": r,
    }


def schema_of(body) -> str:
    """The answer schema an LLM request asks for (which AgentFact agent is calling)."""
    return body["response_format"]["json_schema"]["name"]


class Agents:
    """Scripted AgentFact agents for the loopback LLM server: plans, queries, summaries keep every
    result, sources are reliable, temporary reasoning cites every id it is shown; accumulated reasoning
    is ``confident`` (False, 5) unless ``unsure_until`` (a word) is absent from its evidence, then
    Unproven 2. Agent-IR finds the same photo, miscaptioned; the explanation cites the first two text
    or gold ids and every image match id (``I1``...)."""

    def __init__(self, plans=None, unsure_until: str | None = None) -> None:
        self.plans = plans or [
            {
                "validation_list": [{"sentence": "V1"}, {"sentence": "V2"}],
                "search_list": [{"information_needed": "N1"}],
            }
        ]
        self.unsure_until = unsure_until
        self.plan_calls = 0

    def __call__(self, body) -> Reply:
        schema, user = schema_of(body), message_text(body, "user")
        if schema == "agentfact_plan":
            plan = self.plans[min(self.plan_calls, len(self.plans) - 1)]
            self.plan_calls += 1
            return Reply.answer({"reasoning_steps": [{"step": "check the origin"}], **plan})
        if schema == "agentfact_query":
            need = re.search(r"Information needed: (.*)", user).group(1)
            return Reply.answer({"queries": [f"query {need}"]})
        if schema == "agentfact_summary":
            n = len(re.findall(r"^\[\d+\]", user, re.MULTILINE))
            return Reply.answer(
                {"items": [{"result": i, "summary": f"summary {i}"} for i in range(1, n + 1)]}
            )
        if schema == "agentfact_source":
            return Reply.answer({"type": "reliable", "reasoning": "newsroom"})
        if schema == "agentfact_image_match":
            return Reply.answer(
                {"relationship": "the same photo", "tampering_probability": 10, "tampering_reasoning": "none"}
            )
        if schema == "agentfact_miscaption":
            return Reply.answer({"Miscaption Rate": "95", "Reasoning": "the photo shows another event"})
        if schema == "agentfact_reasoning":
            ids = sorted(set(re.findall(r"^\[([TG]\d+)\]", user, re.MULTILINE)))
            step = {"step_name": "origin", "relevant_text_evidence_list": ids}
            unsure = "Stage: accumulated" in user and (
                not ids or (self.unsure_until is not None and self.unsure_until not in user)
            )
            label, confidence = ("Unproven", 2) if unsure else ("False", 5)
            return Reply.answer(
                {
                    "validation_result": {"reasoning_steps": [step]},
                    "label": label,
                    "final_sufficiency_confidence": confidence,
                }
            )
        if schema == "agentfact_explanation":
            ids = sorted(set(re.findall(r"^\[([TG]\d+)\]", user, re.MULTILINE)))
            ids = ids[:2] + sorted(set(re.findall(r'"id":"(I\d+)"', user)))  # + Agent-IR's matches
            label = "FALSE" if ids else "UNPROVEN"
            return Reply.answer(
                {
                    "validation_result": {
                        "3-class_authenticity_label": label,
                        "reasoning_logic": "The photo predates the event.",
                        "key_points": [{"point": "1. The image is older.", "evidence_ids": ids}],
                    },
                    "confidence_level": "5" if ids else "2",
                }
            )
        return Reply(status=500, error=f"unscripted schema {schema}")


def news(query: str, n: int = 3, site: str = "https://example.org", date: str = "Dec 1, 2019") -> list[dict]:
    """``n`` Serper results for ``query`` on ``site``, dated ``date`` (default: before the generated
    samples' claims)."""
    slug = re.sub(r"\W+", "-", query).strip("-")
    return [result(f"{site}/{slug}/{i}", f"{query} {i}", f"text {i} about {query}", date) for i in range(n)]


def image_bytes(color: tuple[int, int, int] = (200, 10, 10), size=(20, 12), fmt: str = "PNG") -> bytes:
    """A small one-colour image file's bytes (PNG or JPEG)."""
    import io

    from PIL import Image as PILImage

    buf = io.BytesIO()
    PILImage.new("RGB", size, color).save(buf, fmt)
    return buf.getvalue()


def on_cpu_and_cuda(precision: str):
    """Parametrize ``(device, precision)``: the CPU in half ``precision`` (the half-precision path, runnable
    in CI) and CUDA in the detector's default precision, skipped (not failed) where no GPU is present."""
    import torch

    cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine")
    return pytest.mark.parametrize(
        ("device", "precision"), [("cpu", precision), pytest.param("cuda", None, marks=cuda)]
    )


RELEASED_HEAD = (
    Path(__file__).resolve().parents[1] / "data" / "sample" / "released" / "rwpost_dev_main.head.jsonl"
)


def released_head(tmp_path: Path, n: int = 3) -> tuple[Path, Path]:
    """The first ``n`` records of the bundled released file and an image root with their post images."""
    from rwpost.dataset import read_samples

    data = tmp_path / "sample.jsonl"
    data.write_text("".join(RELEASED_HEAD.read_text(encoding="utf-8").splitlines(keepends=True)[:n]))
    root = tmp_path / "images"
    for i, s in enumerate(read_samples(data)):
        path = root / s.image.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(image_bytes((40 * i, 80, 120), fmt="JPEG"))
    return data, root


def agentfact_spec(
    llm, search, tmp_path: Path, setting=None, detector: str = "agentfact", secret: str = "sk-test", **extra
):
    """A RunSpec of AgentFact against the loopback LLM and search servers (cache under ``tmp_path``)."""
    from rwpost.evaluate.runner import RunSpec

    config = {
        "model": "test-model",
        "base_url": llm.base_url,
        "cache_path": str(tmp_path / "llm.sqlite"),
        "search": "loopback",
        "search_options": {"base_url": search.base_url},
        "concurrency": 2,
        "timeout_s": 10.0,
        **extra,
    }
    return RunSpec(
        detector,
        config=config,
        secrets={"api_key": secret},
        setting="open-web" if setting is None else setting,
        n_resamples=10,
        batch_size=1,
        prices={"test-model": Price(input_per_mtok=1.0, output_per_mtok=2.0)},
    )


T, F, U = Label.TRUE, Label.FALSE, Label.UNPROVEN


TRUST_GOLD = [T, F, U, F, F, T, U, F, T, F]
"""The gold labels of the trust tests' ten samples."""


TRUST_OPTIONS = ["--bootstrap", "50", "--no-progress", "--no-key-points"]
"""The options of every ``rwpost evaluate`` run of :func:`run_evaluate`."""


def write_predictions(path: Path, samples, labels) -> Path:
    """A flat predictions file at ``path``: each sample's id with the label given for it."""
    write_jsonl(path, [{"id": s.id, "label": str(lab)} for s, lab in zip(samples, labels, strict=True)])
    return path


def run_evaluate(data: Path, out: Path, *extra: str) -> int:
    """The exit code of ``rwpost evaluate`` on ``data`` into ``out`` (50 bootstrap resamples)."""
    return main(["evaluate", "--data", str(data), "--out", str(out), *TRUST_OPTIONS, *extra])


def read_metrics(out: Path) -> dict:
    """The metrics.json of the run folder ``out``."""
    return json.loads((out / "metrics.json").read_text())


HOSTILE_GOLD = [Label.TRUE, Label.FALSE, Label.FALSE, Label.UNPROVEN, Label.TRUE, Label.FALSE]
"""The gold labels of the hostile-input tests' six samples."""


QUIET_OPTIONS = ["--no-progress", "--no-key-points", "--bootstrap", "20"]
"""The options of every ``rwpost evaluate`` run of :func:`evaluate_quietly`."""


def evaluate_quietly(data, out, *args: str) -> int:
    """The exit code of ``rwpost evaluate`` on ``data`` into ``out`` (20 bootstrap resamples)."""
    return main(["evaluate", "--data", str(data), "--out", str(out), *QUIET_OPTIONS, *args])


MMFAKEBENCH = [
    {"image_path": "/real/bbc_test_50/BBC_0001.jpg", "text": "A real caption.", "fake_cls": "original",
     "gt_answers": ["True"]},
    {"image_path": "/fake/Newsclipings_person_test_50/n_0.jpeg", "text": "A mismatched caption.",
     "fake_cls": "mismatch", "gt_answers": ["Fake"]},
]  # fmt: skip
"""Two MMFakeBench records in its released spelling, one real and one cross-modal distortion."""


def mmfakebench_folder(tmp_path: Path, records: list, raw: str | None = None, split: str = "test") -> Path:
    """A split folder in MMFakeBench's released layout: source/MMFakeBench_<split>.json and the images."""
    root = tmp_path / f"MMFakeBench_{split}"
    (root / "source").mkdir(parents=True)
    for i, row in enumerate(r for r in records if isinstance(r, dict) and "image_path" in r):
        path = root / str(row["image_path"]).lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(image_bytes((30 * i, 60, 90)))
    text = raw if raw is not None else json.dumps(records, indent=4)
    (root / "source" / f"MMFakeBench_{split}.json").write_text(text, encoding="utf-8")
    return root


def killing(base: type[Detector]) -> type[Detector]:
    """``base`` that kills its own process (SIGKILL) once it has answered batch 2, before the runner can
    write that answer, while the file its ``arm_file`` option names exists (removed first, so the resumed
    run goes through). Bind it to a module name (``KillingX = killing(X)``) for ``--detector``."""

    class Config(base.Config):
        arm_file: str

    def __init__(self, config) -> None:
        base.__init__(self, config)
        self.arm_file, self.batches = config.arm_file, 0

    def predict(self, samples, task, ctx):
        import os
        import signal

        out = base.predict(self, samples, task, ctx)
        self.batches += 1
        if self.batches == 2 and Path(self.arm_file).exists():
            Path(self.arm_file).unlink()
            os.kill(os.getpid(), signal.SIGKILL)
        return out

    name = f"Killing{base.__name__}"
    return type(name, (base,), {"Config": Config, "__init__": __init__, "predict": predict})


def run_until_killed(run_spec, samples, out: Path) -> None:
    """Run ``run_spec`` (a :func:`killing` detector, named ``module:Class``) on ``samples`` into ``out`` in
    a child process, which must die by SIGKILL; the spec and samples travel pickled beside ``out``."""
    import os
    import pickle
    import signal
    import subprocess
    import sys

    pickled = out.parent / f"{out.name}.child.pickle"
    pickled.write_bytes(pickle.dumps((run_spec, list(samples))))
    script = (
        "import pickle, sys\nfrom rwpost.evaluate import evaluate\n"
        "spec, samples = pickle.load(open(sys.argv[1], 'rb'))\nevaluate(samples, spec, sys.argv[2])\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", script, str(pickled), str(out)], env=env, timeout=120)
    assert done.returncode == -signal.SIGKILL, f"the child exited with {done.returncode}, not by SIGKILL"


def evaluate_vlm_scripted(monkeypatch, data: str, out: Path, answer: dict, *cells: str) -> list[dict]:
    """``rwpost evaluate --data DATA --detector vlm`` in ``cells`` against the loopback LLM server, which
    gives every request ``answer``; it must exit 0. Returns the requests the server received."""
    from rwpost.testing.llm import FakeLLMServer

    with FakeLLMServer(lambda body: Reply.answer(answer)) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-scripted-vlm")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        args = ["evaluate", "--data", data, "--detector", "vlm", "--model", "test-model", "--out", str(out)]
        args += [x for cell in cells for x in ("--setting", cell)]
        assert main([*args, "--bootstrap", "0", "--no-progress", "--no-key-points"]) == 0
        return list(server.requests)
