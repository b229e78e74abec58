"""The runner: measurements cached by content, thresholds re-decided for free, every decision kept."""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw
from skimage import data as skdata

from rwpost.filters.base import FilterDecision
from rwpost.filters.cache import MeasurementCache
from rwpost.filters.neardup import NearDuplicateFilter
from rwpost.filters.necessity import NecessityFilter
from rwpost.filters.runner import run_filters
from rwpost.filters.size import SizeFilter
from rwpost.filters.watermark import WatermarkFilter
from rwpost.records import Candidate


def _candidates(tmp_path: Path) -> list[Candidate]:
    photo = tmp_path / "astronaut.jpg"
    Image.fromarray(skdata.astronaut()).save(photo)
    small = tmp_path / "small.png"
    Image.fromarray(skdata.coffee()).resize((120, 80)).save(small)
    common = {"image_path": str(photo), "claim": "A photograph shows an astronaut."}
    return [
        Candidate(id="rw-a", word_count=500, ocr_text="Look at this", **common),
        Candidate(id="rw-b", word_count=40, ocr_text="", **common),  # too short
        Candidate(id="rw-c", word_count=500, ocr_text="SATIRE", **common),  # watermarked
        Candidate(
            id="rw-d", word_count=500, ocr_text="", image_path=str(small), claim="A photo shows coffee."
        ),  # small
        Candidate(
            id="rw-e", word_count=500, ocr_text="", image_path=str(photo), claim="He said so."
        ),  # not visual
        Candidate(id="rw-f", word_count=3000, ocr_text="FAKE", **common),  # too long (and watermarked)
    ]


def _filters():
    return [SizeFilter(), NecessityFilter(), WatermarkFilter(), NearDuplicateFilter()]


def test_funnel_counts_each_drop_once_in_order(tmp_path: Path) -> None:
    result = run_filters(_candidates(tmp_path), _filters(), {}, progress=False)
    funnel, totals = [step.row() for step in result.steps], result.totals()
    assert (totals["input"], totals["kept"]) == (6, 1)
    steps = {s["filter"]: s for s in funnel}
    assert [s["step"] for s in funnel] == [
        "filter: size",
        "filter: necessity",
        "filter: watermark",
        "filter: neardup",
    ]
    assert steps["size"]["reasons"] == {"too_short": 1, "too_long": 1, "image_too_small": 1}
    assert steps["necessity"]["reasons"] == {"image_required_no": 1}
    assert steps["watermark"]["reasons"] == {"watermark": 1}
    assert steps["neardup"] == {**steps["neardup"], "in": 1, "out": 1, "removed": 0}
    assert all(a["out"] == b["in"] for a, b in zip(funnel, funnel[1:], strict=False))
    assert sum(s["removed"] for s in funnel) == totals["input"] - totals["kept"]
    verdicts = {v.id: v for v in result.verdicts}
    assert verdicts["rw-c"].dropped_by == "watermark" and verdicts["rw-c"].watermark_keywords == ["satire"]
    assert verdicts["rw-a"].keep and verdicts["rw-a"].cluster_id == "cl-rw-a"
    # a dropped record keeps its decisions: rw-f has its size decision with the data that decided it
    (size_f,) = [d for d in result.decisions if d.id == "rw-f"]
    assert size_f.reason == "too_long" and size_f.details["word_count"] == 3000


def test_measure_all_decides_every_record_with_every_filter(tmp_path: Path) -> None:
    result = run_filters(_candidates(tmp_path), _filters(), {}, measure_all=True, progress=False)
    assert len(result.decisions) == 6 * 4
    later = [d for d in result.decisions if d.id == "rw-f" and d.filter == "watermark"][0]
    assert later.details["after_drop_by"] == "size" and later.details["matched_keywords"] == ["fake"]
    # the funnel is the same as without measure_all: later filters count only what reached them
    assert result.totals()["kept"] == 1


def test_threshold_change_recomputes_nothing_expensive(tmp_path: Path) -> None:
    candidates = _candidates(tmp_path)
    with MeasurementCache(tmp_path / "cache.sqlite") as cache:
        first = run_filters(candidates, _filters(), {}, cache=cache, measure_all=True, progress=False)
        # each distinct input measured once (four records share one claim: necessity measures 3)
        assert sum(s["measured"] + s["repeats"] for s in first.cache_use) == 6 * 4
        distinct = [len({f.input_key(c) for c in candidates}) for f in _filters()]
        assert [s["measured"] for s in first.cache_use] == distinct and distinct[1] == 3
    params = {
        "size": {"max_words": 5000, "min_width": 100, "min_height": 50},
        "watermark": {"max_distance": 0},
    }
    with MeasurementCache(tmp_path / "cache.sqlite") as cache:  # a new process would reopen it like this
        second = run_filters(
            list(reversed(candidates)), _filters(), params, cache=cache, measure_all=True, progress=False
        )
    assert [s["measured"] for s in second.cache_use] == [0, 0, 0, 0]
    assert [s["from_cache"] for s in second.cache_use] == [6, 6, 6, 6]
    assert [s["repeats"] for s in second.cache_use] == [0, 0, 0, 0]
    size = {d.id: d for d in second.decisions if d.filter == "size"}
    assert size["rw-f"].keep and size["rw-d"].keep  # the new thresholds did decide


def test_the_same_image_in_one_cold_run_is_measured_once(tmp_path: Path) -> None:
    """Reposted image bytes (one content hash under several records) are OCR'd and hashed once per run,
    and every record gets the same decision as when measured alone."""
    photo, copy = tmp_path / "p.png", tmp_path / "copy.png"
    card = Image.new("RGB", (360, 120), "white")
    ImageDraw.Draw(card).text((20, 40), "FAKE NEWS", fill="black")
    card.save(photo)
    copy.write_bytes(photo.read_bytes())
    records = [
        Candidate(id=f"rw-{i}", word_count=500, image_path=str(path), image_sha256="c" * 64, claim=f"c{i}")
        for i, path in enumerate([photo, copy, photo])
    ]
    filters = [WatermarkFilter(use_given_ocr=False), NearDuplicateFilter()]
    with MeasurementCache(tmp_path / "cache.sqlite") as cache:
        cold = run_filters(records, filters, {}, cache=cache, measure_all=True, progress=False)
    assert [(s["measured"], s["from_cache"], s["repeats"]) for s in cold.cache_use] == [(1, 0, 2), (3, 0, 0)]
    alone = run_filters(records[2:], [WatermarkFilter(use_given_ocr=False)], {}, progress=False)
    (mark,) = [d for d in cold.decisions if d.id == "rw-2" and d.filter == "watermark"]
    assert mark.model_dump() == alone.decisions[0].model_dump()
    assert len({d.model_dump_json(exclude={"id"}) for d in cold.decisions if d.filter == "watermark"}) == 1


def test_changed_image_content_is_measured_again(tmp_path: Path) -> None:
    photo = tmp_path / "p.jpg"
    Image.fromarray(skdata.astronaut()).save(photo)
    one = Candidate(id="rw-a", word_count=500, image_path=str(photo), image_sha256="a" * 64)
    with MeasurementCache(tmp_path / "cache.sqlite") as cache:
        run_filters([one], [SizeFilter()], {}, cache=cache, progress=False)
        again = run_filters([one], [SizeFilter()], {}, cache=cache, progress=False)
        changed = run_filters(
            [one.model_copy(update={"image_sha256": "b" * 64})],
            [SizeFilter()],
            {},
            cache=cache,
            progress=False,
        )
    assert (again.cache_use[0]["measured"], changed.cache_use[0]["measured"]) == (0, 1)


def test_necessity_keeps_only_yes_and_reads_yaml_booleans() -> None:
    import yaml

    flt = NecessityFilter()
    yes = flt.measure(Candidate(id="a", claim="A photograph shows a dog."))
    unsure = flt.measure(Candidate(id="b", claim="Thirty Marines were killed in a crash."))
    said = flt.measure(Candidate(id="c", claim="The senator said taxes rose 40 percent."))
    assert [m["image_required"] for m in (yes, unsure, said)] == ["yes", "uncertain", "no"]
    params = yaml.safe_load("keep_answers: [yes]")  # unquoted: YAML 1.1 gives [True]
    assert params == {"keep_answers": [True]}
    keep = flt.Params(**params)
    assert flt.decide(yes, keep).keep and not flt.decide(unsure, keep).keep
    assert flt.decide(unsure, flt.Params(keep_answers=["yes", "uncertain"])).keep
    assert flt.decide(said, flt.Params()).reason == "image_required_no"


class _Batched:
    """A filter that measures many records per call (as the watermark filter's OCR does)."""

    name = "batched"
    Params = NecessityFilter.Params
    version = "1"

    def __init__(self) -> None:
        self.calls: list[int] = []

    def input_key(self, candidate: Candidate) -> str:
        return candidate.claim or ""

    def measure(self, candidate: Candidate) -> dict:
        return self.measure_many([candidate])[0]

    def measure_many(self, candidates: list[Candidate]) -> list[dict]:
        self.calls.append(len(candidates))
        return [{"claim": c.claim} for c in candidates]

    def decide(self, measurement: dict, params: object) -> FilterDecision:
        return FilterDecision(keep=True, reason="ok", details=measurement)


def test_a_filter_that_measures_many_gets_batches_each_cached(tmp_path: Path) -> None:
    from rwpost.filters.runner import MEASURE_BATCH

    records = [Candidate(id=f"rw-{i}", claim=f"c{i % 20}") for i in range(25)]  # 20 keys, 5 repeats
    flt = _Batched()
    with MeasurementCache(tmp_path / "cache.sqlite") as cache:
        result = run_filters(records, [flt], {}, cache=cache, progress=False)
        assert flt.calls == [MEASURE_BATCH, 20 - MEASURE_BATCH] and cache.count("batched") == 20
    assert [d.details["claim"] for d in result.decisions] == [r.claim for r in records]
    threaded = _Batched()  # worker threads measure a record each
    run_filters(records, [threaded], {}, workers=2, progress=False)
    assert threaded.calls == [1] * 20
