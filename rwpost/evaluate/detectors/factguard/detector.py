"""``--detector factguard``: FactGuard's two-turn agentic inference with FactProbe and ClipScout."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import PositiveInt

from rwpost.errors import ConfigError
from rwpost.evaluate.contract import (
    Capabilities,
    Detector,
    DetectorInputs,
    Prediction,
    ResultsPerQuery,
    RunContext,
)
from rwpost.evaluate.detectors.chat import ChatOptions
from rwpost.evaluate.detectors.factguard.tags import read_tagged
from rwpost.evaluate.detectors.factguard.tools import CLIPSCOUT, FACTPROBE, FactProbe, clip_scout
from rwpost.evaluate.task import EvalTask, EvidenceSource
from rwpost.evaluate.toolkit.ask import Asker, ModelFailed
from rwpost.evaluate.toolkit.cases import news_text
from rwpost.evaluate.toolkit.tools import Case, Toolbox, ToolFailed, Trace
from rwpost.evaluate.video import Video, VideoRefused, find_video, frames, probe, tile
from rwpost.labels import MAIN_LABELS, Label
from rwpost.llm.types import ImageInput
from rwpost.prompts import load_prompt
from rwpost.records import Sample

PROMPTS = ("factguard_turn1.v1", "factguard_turn2.v2")

VIEWS = {
    "rw-post": "RW-Post 3-class (adapted: real -> True, fake -> False, unverifiable -> Unproven)",
    "native": "FactGuard binary (real -> True, fake -> False)",
}
LABELS = {"real": Label.TRUE, "fake": Label.FALSE, "unverifiable": Label.UNPROVEN}


def verdicts(view: str) -> list[str]:
    return ["real", "fake"] + (["unverifiable"] if view == "rw-post" else [])


def narrowed(schema_name: str, labels: list[str], nullable: bool) -> dict[str, Any]:
    from rwpost.llm import load_llm_schema

    schema = load_llm_schema(schema_name)
    properties = dict(schema["properties"])
    properties["label"] = {"enum": [*labels, None]} if nullable else {"type": "string", "enum": labels}
    return {**schema, "properties": properties}


@dataclass
class Turns:
    """One sample on its way through the two turns; ``answer`` is set once it is answered or failed."""

    sample: Sample
    case: Case
    trace: Trace = field(default_factory=Trace)
    """The sample's transcript of the run (:meth:`RunContext.transcript`), which counts the images sent."""
    video: Video | None = None
    overview: ImageInput | None = None
    first: dict[str, Any] = field(default_factory=dict)
    query: str = ""
    clip: dict[str, Any] | None = None
    evidence: list[str] = field(default_factory=list)
    images: list[ImageInput] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    answer: Prediction | None = None

    @property
    def live(self) -> bool:
        return self.answer is None


class FactGuardDetector(Detector):
    """FactGuard (Li et al., 2026) at inference: a first turn that answers or asks for evidence (a FactProbe
    query and/or a ClipScout interval), the tools, and a second turn that answers with the evidence. Any
    model of the model layer: the paper's RL-trained checkpoint as a local folder (``backend=local``), or a
    base model with tools (the paper's "Base (Qwen2.5-VL-7B+tool)" row). Every sample needs a video file in
    ``video_dir`` or the run's media folder (samples without one are refused up front); FactProbe searches
    in the open-web cells only.
    """

    name = "factguard"
    capabilities = Capabilities(retrieves=True)
    labels = MAIN_LABELS

    class Config(ChatOptions):
        video_dir: str | None = None
        """The folder of the samples' video files (``<sample id>.<ext>`` or the ``video_link`` file name);
        unset, the run's media folder (a benchmark folder's videos, or ``--image-root``)."""
        tool_cache_path: str | None = None
        """The sqlite cache of tool results; None: ``cache_path`` (when given)."""
        temperature: float = 0.0
        max_tokens: PositiveInt | None = 768
        """The paper's maximum response length."""
        view: Literal["rw-post", "native"] = "rw-post"
        search: str = "serper"
        search_options: dict[str, Any] = {}
        results_per_query: ResultsPerQuery = 5

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        o = self.options
        self.chat: Any = None
        self.ctx: RunContext | None = None
        self.device = o.remote_device()
        if o.local:
            self.chat = o.chat_model({}, vision=True)
            self.device = self.chat.device
            self.capabilities = Capabilities(retrieves=True, uses_gpu=True)

    def config(self) -> dict[str, Any]:
        o = self.options
        return {
            "backend": o.backend,
            "model": self.chat.config().get("model_path") if self.chat is not None else o.llm.model,
            "base_url": o.llm.base_url if not o.local else None,
            "video_dir": o.video_dir,
            "temperature": o.temperature,
            "max_tokens": o.max_tokens,
            "view": o.view,
            "labels": VIEWS[o.view],
            "search": o.search,
            "search_options": o.search_options,
            "results_per_query": o.results_per_query,
            "clipscout": "4 frames, 2 x 2, at most one call per sample",
        }

    def inputs(self) -> DetectorInputs:
        from rwpost.io import sha256_hex
        from rwpost.llm.schemas import LLM_SCHEMA_DIR

        schemas = sorted({load_prompt(p).schema_name for p in PROMPTS})
        return DetectorInputs(
            prompts={p: load_prompt(p).sha256 for p in PROMPTS},
            schemas={n: sha256_hex((LLM_SCHEMA_DIR / f"{n}.schema.json").read_bytes()) for n in schemas},
        )

    def video_folder(self, ctx: RunContext | None) -> str | Path | None:
        """``video_dir``, else the run's media folder (a benchmark's video folder, or ``--image-root``)."""
        return self.options.video_dir or (ctx.image_root if ctx is not None else None)

    def check(self, samples: Sequence[Sample]) -> dict[str, Any] | None:
        """Refuse samples without a video file (FactGuard reads videos only); the runner asks before it
        writes anything, so a refused run leaves its folder as it was."""
        folder = self.video_folder(self.ctx)
        missing = [s.id for s in samples if find_video(s.id, s.video_link, folder) is None]
        if missing:
            where = f"in {folder}" if folder else "(no video folder given)"
            raise ConfigError(
                f"factguard reads videos: {len(missing)} of {len(samples)} samples have no video file "
                f"{where} (e.g. {missing[0]}); give --set video_dir=FOLDER holding <sample id>.mp4 "
                "or the video_link's file name per sample, or evaluate video posts only"
            )
        return {"videos": len(samples), "video_dir": str(folder) if folder else None}

    def prepare(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.chat_model(ctx)
        if ctx.cell is not None and ctx.cell.evidence is EvidenceSource.WEB:
            # a search backend without its key is refused before anything is written
            asyncio.run(ctx.tools.backend("search").aclose())

    def chat_model(self, ctx: RunContext) -> Any:
        """The model the run builds from the typed settings (:meth:`RunContext.model`; it reads images)."""
        self.chat = ctx.model(self.options, vision=True)
        return self.chat

    def predict(self, samples: Sequence[Sample], task: EvalTask, ctx: RunContext) -> list[Prediction]:
        return asyncio.run(self._predict(self.chat_model(ctx), samples, task, ctx))

    async def _predict(
        self, model: Any, samples: Sequence[Sample], task: EvalTask, ctx: RunContext
    ) -> list[Prediction]:
        from rwpost.cache import SqliteStore

        o = self.options
        # greedy unless a request samples; the task name keeps the answer cache's keys
        asker = Asker(model, task="agentm3d", temperature=0.0, max_tokens=o.answer_limit(o.max_tokens))
        tools: dict[str, Any] = {}
        if task.cell.evidence is EvidenceSource.WEB:
            tools["FactProbe"] = ctx.tools.search(FACTPROBE, FactProbe)
        path = o.tool_cache_path or o.cache_path
        toolbox = Toolbox(tools, SqliteStore(path) if path else None)
        folder, labels = self.video_folder(ctx), verdicts(o.view)
        states = [
            Turns(s, Case(s.id, news_text(s, task.cell), None, s.claim_time), ctx.transcript(s.id))
            for s in samples
        ]
        try:  # phase by phase, so each turn of every sample meets the others in one local batch
            await asyncio.gather(*(self._open(st, folder) for st in states))
            await asyncio.gather(*(self._first(asker, toolbox, st, labels) for st in states if st.live))
            await asyncio.gather(*(self._tools(toolbox, st) for st in states if st.live))
            await asyncio.gather(*(self._second(asker, st, labels) for st in states if st.live))
        finally:
            await model.aclose()
            await toolbox.aclose()
        return [st.answer for st in states]

    @staticmethod
    async def _guarded(st: Turns, step: Any) -> None:
        """Run one phase of a sample; a refused video, a failed tool or an unusable answer fails it."""
        try:
            await step
        except (ToolFailed, ModelFailed, VideoRefused) as exc:
            st.answer = Prediction(id=st.sample.id, calls=st.trace.calls, error=str(exc))

    async def _open(self, st: Turns, folder: str | Path | None) -> None:
        async def step() -> None:
            st.video = await asyncio.to_thread(probe, find_video(st.sample.id, st.sample.video_link, folder))
            video = st.video
            st.overview = ImageInput(
                await asyncio.to_thread(lambda: tile(frames(video, 0.0, video.duration_s, 4)))
            )

        await self._guarded(st, step())

    def _values(self, st: Turns, labels: list[str]) -> dict[str, str]:
        return {"news": st.case.news, "duration": f"{st.video.duration_s:.1f}", "labels": ", ".join(labels)}

    async def _first(self, asker: Asker, toolbox: Toolbox, st: Turns, labels: list[str]) -> None:
        """Turn 1: a verdict, or the tools to call (a FactProbe query, a ClipScout interval)."""

        async def step() -> None:
            offered = [FACTPROBE.line()] if "FactProbe" in toolbox.tools else []
            first = asker.request(
                "factguard_turn1.v1",
                st.case.key,
                agent="turn1",
                images=(st.overview,),
                schema=narrowed("factguard_turn1", labels, nullable=True),
                tools="\n".join([*offered, CLIPSCOUT]),
                **self._values(st, labels),
            )
            st.first = await self._answer(asker, first, "turn1", st, labels)
            st.query = str(st.first.get("search_query") or "").strip() if offered else ""
            st.clip = st.first.get("clip")
            if not st.query and not st.clip:
                if st.first.get("label") not in labels:
                    raise ModelFailed("model answer rejected (turn1): neither a label nor a tool call")
                st.answer = self.prediction(st.case.key, st.first, "answered in the first turn", [], st.trace)

        await self._guarded(st, step())

    @staticmethod
    async def _answer(asker: Asker, request: Any, agent: str, st: Turns, labels: list[str]) -> dict[str, Any]:
        """The answer to one turn's request: the JSON object asked for, else a trained checkpoint's
        ``<think>`` / ``<answer>`` reply read into the same fields (:func:`read_tagged`)."""
        [result] = await asker.sample(request, 1, agent, st.trace)
        if result.ok and result.data is not None:
            return dict(result.data)
        tagged = read_tagged(result.raw, labels)
        if tagged is None:
            raise ModelFailed(f"model answer rejected ({agent}): {result.error}")
        return tagged

    async def _tools(self, toolbox: Toolbox, st: Turns) -> None:
        async def step() -> None:
            if st.query:
                observed = await toolbox.call("FactProbe", st.query, st.case, st.trace)
                st.evidence.append(observed.text)
                st.urls += observed.urls
            if st.clip:  # ClipScout: at most once per sample
                clip = st.clip
                grid, line = await asyncio.to_thread(
                    clip_scout, st.video, float(clip["start_s"]), float(clip["end_s"]), st.trace
                )
                st.images.append(grid)
                st.evidence.append(line)

        await self._guarded(st, step())

    async def _second(self, asker: Asker, st: Turns, labels: list[str]) -> None:
        """Turn 2: the verdict from the input again (the text and the overview) with the tools' evidence."""

        async def step() -> None:
            second = asker.request(
                "factguard_turn2.v2",
                st.case.key,
                agent="turn2",
                images=(st.overview, *st.images),  # eq. 2: the original input again, then the evidence
                schema=narrowed("factguard_answer", labels, nullable=False),
                reasoning=str(st.first.get("reasoning", "")),
                evidence="\n\n".join(st.evidence),
                **self._values(st, labels),
            )
            answer = await self._answer(asker, second, "turn2", st, labels)
            if answer.get("label") not in labels:
                raise ModelFailed(
                    f"model answer rejected (turn2): label {answer.get('label')!r} not in {labels}"
                )
            used = (("FactProbe", st.query), ("ClipScout", st.clip))
            how = "second turn after " + ", ".join(n for n, called in used if called)
            st.answer = self.prediction(st.case.key, answer, how, st.urls, st.trace)

        await self._guarded(st, step())

    def prediction(
        self, sample_id: str, data: dict[str, Any], how: str, urls: list[str], trace: Trace
    ) -> Prediction:
        verdict = str(data["label"])
        head = f"FactGuard answer: {verdict}" + (
            f" (RW-Post view, adapted: {LABELS[verdict]})" if self.options.view == "rw-post" else ""
        )
        return Prediction(
            id=sample_id,
            label=LABELS[verdict],
            explanation=f"{head}\n{how}: {str(data.get('reasoning', ''))[:1000]}",
            evidence_urls=list(dict.fromkeys(urls)),
            calls=trace.calls,
        )


__all__ = ["FactGuardDetector"]
