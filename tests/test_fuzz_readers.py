"""Fuzzing every reader through the real command line (Hypothesis, derandomized: the same inputs each run).

Inputs start from a valid file and are truncated, bit-flipped, given bytes that are not UTF-8, byte-order
marks, wrong types, missing and extra fields, duplicate ids, a huge line, or emptied. The property, for every
input: the command exits 0, 1 or 2 (never 70); a failure is one line on stderr naming the file (never a
traceback); and every input file is byte-identical afterwards.

Counts per reader are ``EXAMPLES`` (``pytest --hypothesis-show-statistics`` prints what ran).
"""

from __future__ import annotations

import csv
import io
import json
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rwpost.cli import main
from rwpost.errors import RwpostError
from rwpost.ids import record_id
from rwpost.io import MAX_TEXT_BYTES

pytestmark = pytest.mark.fuzz

DEV = Path("data/sample/released/rwpost_dev_main.head.jsonl")
EXAMPLES = 60
"""Inputs fuzzed per reader (the whole module stays well under a minute)."""

FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    st.text(max_size=20),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


@st.composite
def mutated(draw: st.DrawFn, seed: bytes, layout: str = "jsonl") -> bytes:
    """``seed`` (a valid file) damaged in one of the ways a hostile or unlucky user produces.

    ``layout`` says where a field lives for the "field" damage: ``jsonl`` (an object per line, a trailing
    comma allowed, so a JSON list written one object per line too), ``csv`` (a cell of a row) or ``json``
    (one document: a key at any depth)."""
    kind = draw(
        st.sampled_from(
            [
                "truncate",
                "bitflip",
                "bytes",
                "bom",
                "empty",
                "huge",
                "duplicate",
                "field",
                "not-json",
                "blank",
                "crlf",
            ]
        )
    )
    if kind == "truncate":
        return seed[: draw(st.integers(0, max(0, len(seed) - 1)))]
    if kind == "bitflip":
        data = bytearray(seed)
        for _ in range(draw(st.integers(1, 4))):
            at = draw(st.integers(0, len(data) - 1))
            data[at] ^= 1 << draw(st.integers(0, 7))
        return bytes(data)
    if kind == "bytes":
        at = draw(st.integers(0, len(seed)))
        return seed[:at] + draw(st.binary(min_size=1, max_size=8)) + seed[at:]
    if kind == "bom":
        return draw(st.sampled_from([b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"])) + seed
    if kind == "empty":
        return draw(st.sampled_from([b"", b"\n", b"\n\n \n"]))
    if kind == "huge":
        return seed + b'{"claim": "' + b"x" * 2_000_000 + b'"}\n'
    if kind == "duplicate":
        return seed + seed
    if kind == "crlf":
        return b"\r\n".join(seed.splitlines()) + b"\r\n"
    if kind == "not-json":
        return (
            draw(st.sampled_from([b"[1, 2]\n", b"null\n", b'"text"\n', b"[" * 5000 + b"\n", b"{}\n"])) + seed
        )
    # "field": one record's field deleted, retyped or joined by an unknown one
    if layout == "csv":
        table = list(csv.reader(io.StringIO(seed.decode())))
        at = draw(st.integers(0, len(table) - 1))
        row = table[at]
        cell = draw(st.integers(0, len(row) - 1))
        action = draw(st.sampled_from(["delete", "retype", "extra"]))
        if action == "delete":
            del row[cell]
        elif action == "retype":
            row[cell] = json.dumps(draw(ODD_VALUES))
        else:
            row.append(draw(st.text(max_size=8)))
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(table)
        return out.getvalue().encode()
    if layout == "json":
        document = json.loads(seed)
        _damage(draw, document, nested=True)
        return json.dumps(document, indent=2).encode()
    lines = seed.splitlines(keepends=True)
    records = [n for n, line in enumerate(lines) if line.strip().startswith(b"{")]
    at = records[draw(st.integers(0, len(records) - 1))]
    body = lines[at].rstrip()
    comma = body.endswith(b",")
    row = json.loads(body.rstrip(b","))
    _damage(draw, row)
    lines[at] = json.dumps(row).encode() + (b"," if comma else b"") + b"\n"
    return b"".join(lines)


def _damage(draw: st.DrawFn, record: dict[str, Any], nested: bool = False) -> None:
    """One field of ``record`` deleted, retyped or joined by an unknown one (``nested``: at any depth)."""
    while nested and draw(st.booleans()):
        inner = [k for k, v in record.items() if isinstance(v, dict) and v]
        if not inner:
            break
        record = record[draw(st.sampled_from(sorted(inner)))]
    key = draw(st.sampled_from(sorted(record)))
    action = draw(st.sampled_from(["delete", "retype", "extra"]))
    if action == "delete":
        del record[key]
    elif action == "retype":
        record[key] = draw(ODD_VALUES)
    else:
        record[draw(st.text(min_size=1, max_size=8))] = draw(ODD_VALUES)


def check(capsys: pytest.CaptureFixture[str], args: list[Any], inputs: list[Path]) -> int:
    """Run the command; assert the property; return the exit code."""
    before = {path: path.read_bytes() for path in inputs}
    capsys.readouterr()
    code = main([str(a) for a in args])
    err = capsys.readouterr().err
    assert code in (0, 1, 2), err
    if code:
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1, err
        assert "Traceback" not in err and "internal error" not in err, err
        assert any(str(path) in lines[0] for path in inputs) or "option" in lines[0], err
    for path, data in before.items():
        assert path.read_bytes() == data, f"{path} changed"
    return code


def assert_all_accounted_for(path: Path, out: Path, output: str) -> None:
    """Nothing silently dropped: every non-blank input line is in ``output`` or set aside in rejects."""
    lines = [x for x in path.read_bytes().split(b"\n") if x.strip()]  # JSON lines end at \n only
    written = [out / name for name in (output, "rejects.jsonl")]
    kept = sum(len(f.read_bytes().split(b"\n")) - 1 for f in written if f.exists())
    assert kept == len(lines), f"{len(lines)} input lines, {kept} kept or set aside"


def fuzz_file(
    name: str, data: bytes, body: Callable[[Path, Path], None], beside: Mapping[str, bytes] | None = None
) -> None:
    """Write ``data`` to ``name`` (a path relative to a fresh folder) and the valid files ``beside`` it
    (relative paths to contents), then run ``body(path, folder)``."""
    with tempfile.TemporaryDirectory() as tmp:
        for rel, content in {**(beside or {}), name: data}.items():
            (Path(tmp) / rel).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / rel).write_bytes(content)
        body(Path(tmp) / name, Path(tmp))


SEED_RELEASED = b"".join(DEV.read_bytes().splitlines(keepends=True)[:3])


@FUZZ
@given(data=mutated(SEED_RELEASED), skip_bad=st.booleans())
def test_fuzz_released_jsonl(capsys, data, skip_bad):
    def body(path: Path, tmp: Path) -> None:
        args = ["import-released", path, "--out", tmp / "out.parquet"] + (["--skip-bad"] if skip_bad else [])
        check(capsys, args, [path])

    fuzz_file("released.jsonl", data, body)


@pytest.fixture(scope="module")
def seed_parquet(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    out = tmp_path_factory.mktemp("seed") / "dev.parquet"
    assert main(["import-released", str(DEV), "--out", str(out)]) == 0
    return out.read_bytes()


@FUZZ
@given(data=st.data())
def test_fuzz_parquet_bytes(capsys, seed_parquet, data):
    damaged = data.draw(mutated_binary(seed_parquet))
    fuzz_file("split.parquet", damaged, lambda path, _tmp: check(capsys, ["stats", path], [path]))


@st.composite
def mutated_binary(draw: st.DrawFn, seed: bytes) -> bytes:
    """A binary file truncated, bit-flipped, with bytes spliced in, or emptied."""
    kind = draw(st.sampled_from(["truncate", "bitflip", "bytes", "empty"]))
    if kind == "truncate":
        return seed[: draw(st.integers(0, len(seed) - 1))]
    if kind == "bitflip":
        data = bytearray(seed)
        for _ in range(draw(st.integers(1, 8))):
            at = draw(st.integers(0, len(data) - 1))
            data[at] ^= 1 << draw(st.integers(0, 7))
        return bytes(data)
    if kind == "bytes":
        at = draw(st.integers(0, len(seed)))
        return seed[:at] + draw(st.binary(min_size=1, max_size=16)) + seed[at:]
    return b""


COLUMN_VALUES = st.one_of(
    st.lists(st.none(), min_size=2, max_size=2),
    st.lists(st.integers(-5, 5), min_size=2, max_size=2),
    st.lists(st.text(max_size=8), min_size=2, max_size=2),
    st.lists(st.sampled_from(["False", "True", "Mixture", "bogus"]), min_size=2, max_size=2),
    st.lists(st.lists(st.integers(-5, 5), max_size=2), min_size=2, max_size=2),
)
COLUMNS = [
    "id",
    "claim",
    "news_url",
    "label",
    "provenance",
    "evidence",
    "extra",
    "image",
    "claim_time",
    "junk",
]


@FUZZ
@given(columns=st.dictionaries(st.sampled_from(COLUMNS), COLUMN_VALUES, max_size=8))
def test_fuzz_parquet_columns_and_types(capsys, columns):
    """Parquet files of the wrong shape: missing columns, wrong types, duplicate ids, extra columns."""

    def body(path: Path, _tmp: Path) -> None:
        pq.write_table(pa.table(columns) if columns else pa.table({"x": []}), path)
        check(capsys, ["stats", path], [path])

    fuzz_file("shaped.parquet", b"", body)


SEED_STORE = (
    json.dumps(
        {
            "schema_version": "1.0",
            "id": "rw-0000000000000001",
            "url": "https://www.snopes.com/fact-check/a/",
            "http_status": 200,
            "fetched_at": "2026-05-03T00:00:00Z",
            "rating": "False",
            "claim": "A claim.",
            "html_sha256": "00",
            "html_path": "html/missing.html.gz",
        }
    ).encode()
    + b"\n"
    + json.dumps(
        {
            "schema_version": "1.0",
            "id": "rw-0000000000000002",
            "url": "https://www.snopes.com/fact-check/b/",
            "http_status": 404,
            "fetched_at": "2026-05-03T00:00:00Z",
        }
    ).encode()
    + b"\n"
)


@FUZZ
@given(data=mutated(SEED_STORE))
def test_fuzz_crawl_store(capsys, data):
    def body(path: Path, tmp: Path) -> None:
        if check(capsys, ["reformat", "--in", tmp, "--out", tmp / "tagged"], [path]) == 0:
            assert_all_accounted_for(path, tmp / "tagged", "articles.jsonl")

    fuzz_file("articles.jsonl", data, body)


SEED_TAGGED = b"".join(
    json.dumps(
        {
            "schema_version": "1.0",
            "id": f"rw-000000000000000{n}",
            "news_url": f"https://www.snopes.com/fact-check/{n}/",
            "claim": "A photo shows a thing.",
            "rating": "False",
            "label": "False",
            "text": "Claim: a photo shows a thing. [IMAGE 1: https://example.org/a.jpg] It does not.",
            "links": [{"id": 1, "kind": "IMAGE", "url": "https://example.org/a.jpg"}],
            "word_count": 12,
        }
    ).encode()
    + b"\n"
    for n in (1, 2)
)


@FUZZ
@given(data=mutated(SEED_TAGGED))
def test_fuzz_tagged_store(capsys, monkeypatch, data):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)

    def body(path: Path, tmp: Path) -> None:
        if check(capsys, ["extract", "--in", path, "--out", tmp / "x", "--backend", "offline"], [path]) == 0:
            assert_all_accounted_for(path, tmp / "x", "extractions.jsonl")

    fuzz_file("tagged.jsonl", data, body)


SEED_VERDICTS = b"".join(
    json.dumps(
        {
            "id": f"rw-{n}",
            "annotator": f"{who}@example.org",
            "post_extraction": "correct",
            "image_role": "claim",
            "project": "validation",
            "task_id": n,
            "annotation_id": 10 * n + i,
        }
    ).encode()
    + b"\n"
    for n in (1, 2, 3)
    for i, who in enumerate(("a", "b"))
)


@FUZZ
@given(data=mutated(SEED_VERDICTS))
def test_fuzz_annotation_verdicts(capsys, data):
    def body(path: Path, tmp: Path) -> None:
        (tmp / "none.jsonl").write_text("", encoding="utf-8")  # no explanation scores: verdicts only
        args = ["annotate", "agreement", "--verdicts", path, "--scores", tmp / "none.jsonl"]
        check(capsys, [*args, "--out", tmp / "r", "--resamples", 20], [path])

    fuzz_file("validation_verdicts.jsonl", data, body)


LS_TASK = st.fixed_dictionaries(
    {},
    optional={
        "id": ODD_VALUES,
        "data": st.one_of(ODD_VALUES, st.fixed_dictionaries({"record_id": ODD_VALUES})),
        "annotations": st.one_of(
            ODD_VALUES,
            st.lists(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "id": ODD_VALUES,
                        "completed_by": ODD_VALUES,
                        "was_cancelled": st.booleans(),
                        "result": st.lists(
                            st.fixed_dictionaries(
                                {
                                    "from_name": st.sampled_from(
                                        ["post_extraction", "image_role", "note", "reasoning_1", "label_2"]
                                    ),
                                    "value": st.fixed_dictionaries(
                                        {},
                                        optional={
                                            "choices": st.lists(
                                                st.sampled_from(["correct", "claim", "0", "2", "9", "x"]),
                                                max_size=2,
                                            ),
                                            "text": ODD_VALUES,
                                        },
                                    ),
                                }
                            ),
                            max_size=4,
                        ),
                    },
                ),
                max_size=2,
            ),
        ),
    },
)


@FUZZ
@given(export=st.lists(LS_TASK, max_size=3))
def test_fuzz_label_studio_export(export):
    """Label Studio's JSON export (from its API): every bad annotation is set aside with a reason, and
    without a rejects list the first one is a RecordError (one line), never another exception."""
    from rwpost.annotate.verdicts import explanation_scores, validation_verdicts

    for read in (
        lambda rejects: validation_verdicts(export, {1: "a@x.org"}, project="validation", rejects=rejects),
        lambda rejects: explanation_scores(export, {1: "a@x.org"}, {"rw-1": {1: "gold"}}, rejects=rejects),
    ):
        rejects: list = []
        read(rejects)
        for reject in rejects:
            assert "\n" not in reject.reason
        try:
            read(None)
        except RwpostError as exc:
            assert "\n" not in str(exc)


SEED_PARAMS = Path("params.yaml").read_bytes()


@FUZZ
@given(data=st.data())
def test_fuzz_params_yaml(capsys, data):
    kind = data.draw(st.sampled_from(["bytes", "section"]))
    if kind == "bytes":
        damaged = data.draw(mutated_binary(SEED_PARAMS))
    else:
        import yaml

        params = yaml.safe_load(SEED_PARAMS)
        section = data.draw(st.sampled_from(["reformat", "filter"]))
        key = data.draw(st.sampled_from(sorted(params[section]) + ["unknown_key"]))
        params[section][key] = data.draw(ODD_VALUES)
        damaged = yaml.safe_dump(params).encode()

    fuzz_file("params.yaml", damaged, lambda path, tmp: _params_check(capsys, path, tmp))


def _params_check(capsys: pytest.CaptureFixture[str], path: Path, tmp: Path) -> None:
    """``filter run --params``: valid params get as far as the (missing) tagged input, named instead."""
    missing = tmp / "missing.jsonl"
    before = path.read_bytes()
    capsys.readouterr()
    code = main(
        [str(a) for a in ["filter", "run", "--params", path, "--tagged", missing, "--out", tmp / "f"]]
    )
    err = capsys.readouterr().err
    assert code in (1, 2), err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err and "internal error" not in err, err
    assert str(path) in lines[0] or str(missing) in lines[0], err
    assert path.read_bytes() == before


# Other systems' predictions, scored by `rwpost evaluate --predictions` against a small valid released file.
SEED_DATA = b"".join(DEV.read_bytes().splitlines(keepends=True)[:4])
SAMPLES = [json.loads(line)["news_url"] for line in SEED_DATA.splitlines()]
IDS = [record_id(url) for url in SAMPLES]


def records(path: Path) -> int:
    """How many records a predictions file holds by its own layout (CSV rows, list items, JSONL lines)."""
    if path.suffix == ".csv":  # a field over the csv module's limit is a row too (the reader sets it aside)
        limit = csv.field_size_limit(MAX_TEXT_BYTES)
        try:
            with open(path, encoding="utf-8-sig", newline="") as handle:
                return sum(1 for row in list(csv.reader(handle))[1:] if row)
        finally:
            csv.field_size_limit(limit)
    text = path.read_bytes().decode("utf-8", errors="replace").removeprefix("\ufeff")
    if path.suffix == ".json" and text.lstrip().startswith("["):
        return len(json.loads(text))
    return sum(1 for line in text.split("\n") if line.strip())  # a line that is not UTF-8 counts too


def evaluate_check(
    capsys: pytest.CaptureFixture[str], predictions: Path, tmp: Path, files: list[Path], *options: Any
) -> int:
    """``rwpost evaluate --predictions`` (fast: few resamples, no key points); :func:`check`'s property
    over ``files`` (the predictions files) and the data, and on success every record of ``files`` is in the
    run's input report: scored, set aside as a bad row, or a failure the system recorded."""
    data, out = tmp / "data.jsonl", tmp / "run"
    args = ["evaluate", "--data", data, "--predictions", predictions, *options, "--out", out]
    code = check(capsys, [*args, "--no-progress", "--bootstrap", 20, "--no-key-points"], [data, *files])
    if code == 0:
        report = json.loads((out / "input_report.json").read_text())
        counted = [f for f in files if "id_map" not in f.name and "label_map" not in f.name]
        assert report["rows"] == sum(records(f) for f in counted), report
    return code


def jsonl(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(row).encode() + b"\n" for row in rows)


def csv_bytes(rows: list[list[Any]]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


SEED_FLAT = jsonl(
    [
        {"id": IDS[0], "label": "False", "probabilities": {"False": 0.7, "True": 0.3}, "explanation": "x"},
        {"news_url": SAMPLES[1], "label": "FALSE", "evidence_urls": ["https://example.org/a"]},
        {"id": IDS[2], "label": "true"},
        {"id": IDS[3], "label": "Unproven", "probabilities": {"Unproven": 1.0}},
    ]
)
SEED_FLAT_CSV = csv_bytes(
    [
        ["id", "news_url", "label", "prob_True", "prob_False", "explanation", "evidence_urls"],
        [IDS[0], "", "False", "0.2", "0.8", "because", "https://example.org/a;https://example.org/b"],
        ["", SAMPLES[1], "FALSE", "", "", "", ""],
        [IDS[2], "", "True", "0.9", "0.1", "", '["https://example.org/c"]'],
        [IDS[3], "", "Unproven", "", "", "", ""],
    ]
)


def fuzz_flat(capsys: pytest.CaptureFixture[str], name: str, damaged: bytes, strict: bool = False) -> None:
    def body(path: Path, tmp: Path) -> None:
        evaluate_check(capsys, path, tmp, [path], *(["--strict"] if strict else []))

    fuzz_file(name, damaged, body, {"data.jsonl": SEED_DATA})


@FUZZ
@given(data=st.data(), strict=st.booleans())
def test_fuzz_flat_predictions(capsys, data, strict):
    """rwpost's own JSONL / CSV predictions; without --strict a bad row is scored as a failure, counted."""
    name, seed, layout = data.draw(
        st.sampled_from([("p.jsonl", SEED_FLAT, "jsonl"), ("p.csv", SEED_FLAT_CSV, "csv")])
    )
    fuzz_flat(capsys, name, data.draw(mutated(seed, layout)), strict)


def agentfact_record(url: str, label: Any) -> dict[str, Any]:
    """One record of AgentFact's output.jsonl (as tests/test_evaluate_formats.py builds them)."""
    answer = {"3-class_authenticity_label": label, "reasoning_logic": "because"}
    return {
        "claim_id": record_id(url),
        "post_info": {"claim": "A claim.", "news_url": url},
        "final_answer": {"updated_answer": {"validation_result": answer}},
    }


AGENTFACT_BATCH = "output/rwpost/test/full/0/gpt-4o"
AGENTFACT_BASELINE = "baseline_lvlms/results/qwen2-vl/TE_k3"
SEED_AGENTFACT = {
    "output.jsonl": jsonl(
        [
            agentfact_record(url, label)
            for url, label in zip(SAMPLES[:3], ["false", "FALSE", "true"], strict=True)
        ]
    ),
    "output_failed.jsonl": jsonl(
        [{"claim_id": IDS[3], "news_url": SAMPLES[3], "raw_output": "{", "error": "timeout"}]
        + [{"post_info": {"news_url": SAMPLES[2]}, "claim": "failed first, then succeeded"}]
    ),
}


def fuzz_agentfact(
    capsys: pytest.CaptureFixture[str], folder: str, name: str, damaged: bytes, strict: bool = False
) -> None:
    """An AgentFact batch ``folder`` with ``name`` (output.jsonl or output_failed.jsonl) damaged."""
    files = {f"{folder}/{n}": seed for n, seed in SEED_AGENTFACT.items()}

    def body(path: Path, tmp: Path) -> None:
        options = ["--strict"] if strict else []
        evaluate_check(capsys, tmp / folder.split("/")[0], tmp, [tmp / rel for rel in files], *options)

    fuzz_file(f"{folder}/{name}", damaged, body, {**files, "data.jsonl": SEED_DATA})


@FUZZ
@given(data=st.data(), strict=st.booleans())
def test_fuzz_agentfact_outputs(capsys, data, strict):
    """AgentFact's main workflow folder or a baselines folder: output.jsonl or the failures beside it."""
    folder = data.draw(st.sampled_from([AGENTFACT_BATCH, AGENTFACT_BASELINE]))
    name = data.draw(st.sampled_from(sorted(SEED_AGENTFACT)))
    fuzz_agentfact(capsys, folder, name, data.draw(mutated(SEED_AGENTFACT[name])), strict)


SEED_DEFAME = csv_bytes(
    [["sample_index", "claim", "target", "predicted", "justification", "correct"]]
    + [
        [n, "A claim.", "REFUTED", verdict, f"because {n}", ""]
        for n, verdict in enumerate(["REFUTED", "refuted", "REFUSED_TO_ANSWER", "NEI"])
    ]
)
SEED_ID_MAPS = {
    "id_map.json": json.dumps({str(n): url for n, url in enumerate(SAMPLES)}, indent=2).encode(),
    "id_map.csv": csv_bytes([["sample_index", "id", "news_url"]] + [[0, IDS[0], ""]]
                            + [[n, "", url] for n, url in enumerate(SAMPLES) if n]),
    "id_map.jsonl": jsonl([{"sample_index": n, "news_url": url} for n, url in enumerate(SAMPLES)]),
}  # fmt: skip


def fuzz_defame(
    capsys: pytest.CaptureFixture[str],
    id_map: str | None,
    name: str,
    damaged: bytes,
    predictions: str,
    strict: bool = False,
) -> None:
    """DEFAME's predictions.csv (``predictions``: the file or its folder) and an optional ``id_map`` file,
    ``name`` (one of them) damaged."""
    beside = {"data.jsonl": SEED_DATA, "defame/predictions.csv": SEED_DEFAME}
    if id_map:
        beside[id_map] = SEED_ID_MAPS[id_map]

    def body(path: Path, tmp: Path) -> None:
        options = (["--id-map", tmp / id_map] if id_map else []) + (["--strict"] if strict else [])
        files = [tmp / "defame/predictions.csv"] + ([tmp / id_map] if id_map else [])
        evaluate_check(capsys, tmp / predictions, tmp, files, "--format", "defame", *options)

    fuzz_file(name, damaged, body, beside)


@FUZZ
@given(data=st.data(), strict=st.booleans())
def test_fuzz_defame_predictions_and_id_map(capsys, data, strict):
    """DEFAME's predictions.csv (joined by position, or through an id map) or its --id-map file."""
    id_map = data.draw(st.sampled_from([None, *sorted(SEED_ID_MAPS)]))
    seeds = {"defame/predictions.csv": SEED_DEFAME, **({id_map: SEED_ID_MAPS[id_map]} if id_map else {})}
    name = data.draw(st.sampled_from(sorted(seeds)))
    layout = {".csv": "csv", ".json": "json"}.get(Path(name).suffix, "jsonl")
    damaged = data.draw(mutated(seeds[name], layout))
    predictions = data.draw(st.sampled_from(["defame", "defame/predictions.csv"]))
    fuzz_defame(capsys, id_map, name, damaged, predictions, strict)


GENERIC_ROWS = [
    {"meta": {"url": url}, "out": {"verdict": verdict}}
    for url, verdict in zip(SAMPLES, ["Fake", "FAKE", "real", "unclear"], strict=True)
]
SEED_GENERIC = {
    "system.jsonl": jsonl(GENERIC_ROWS),
    "system.json": b"[\n" + b",\n".join(json.dumps(row).encode() for row in GENERIC_ROWS) + b"\n]\n",
    "system.csv": csv_bytes(
        [["url", "verdict"]] + [[row["meta"]["url"], row["out"]["verdict"]] for row in GENERIC_ROWS]
    ),
}
SEED_LABEL_MAP = b"# spelling=Label\nfake=False\nreal=True\nunclear=Unproven\n"


def fuzz_generic(
    capsys: pytest.CaptureFixture[str], system: str, name: str, damaged: bytes, strict: bool = False
) -> None:
    """A generic predictions file ``system`` read with a --label-map file; ``name`` (one of them) damaged."""
    beside = {"data.jsonl": SEED_DATA, system: SEED_GENERIC[system], "label_map.txt": SEED_LABEL_MAP}
    fields = ["url", "verdict"] if system.endswith(".csv") else ["meta.url", "out.verdict"]

    def body(path: Path, tmp: Path) -> None:
        options = ["--id-field", fields[0], "--label-field", fields[1], "--label-map", tmp / "label_map.txt"]
        options += ["--strict"] if strict else []
        evaluate_check(capsys, tmp / system, tmp, [tmp / system, tmp / "label_map.txt"], *options)

    fuzz_file(name, damaged, body, beside)


@FUZZ
@given(data=st.data(), strict=st.booleans())
def test_fuzz_generic_predictions_and_label_map(capsys, data, strict):
    """Any JSONL / JSON list / CSV read with --id-field, --label-field and --label-map (a file here)."""
    system = data.draw(st.sampled_from(sorted(SEED_GENERIC)))
    name = data.draw(st.sampled_from([system, "label_map.txt"]))
    if name == "label_map.txt":
        damaged = data.draw(mutated_binary(SEED_LABEL_MAP))
    else:
        damaged = data.draw(mutated(SEED_GENERIC[system], "csv" if system.endswith(".csv") else "jsonl"))
    fuzz_generic(capsys, system, name, damaged, strict)


@pytest.fixture(scope="module")
def seed_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """Two finished evaluation runs (``a/``, ``b/``) of two predictions files: every file by relative path."""
    tmp = tmp_path_factory.mktemp("runs")
    (tmp / "data.jsonl").write_bytes(SEED_DATA)
    for run, labels in (("a", ["False", "False", "True", "Unproven"]), ("b", ["True"] * 4)):
        predictions = tmp / f"{run}.jsonl"
        predictions.write_bytes(jsonl([{"id": i, "label": x} for i, x in zip(IDS, labels, strict=True)]))
        args = ["evaluate", "--data", tmp / "data.jsonl", "--predictions", predictions, "--out", tmp / run]
        assert main([str(a) for a in [*args, "--no-progress", "--bootstrap", 20, "--no-key-points"]]) == 0
    files = sorted(p for run in ("a", "b") for p in (tmp / run).rglob("*") if p.is_file())
    return {str(p.relative_to(tmp)): p.read_bytes() for p in files}


def fuzz_runs(
    capsys: pytest.CaptureFixture[str],
    seed_runs: dict[str, bytes],
    name: str,
    damaged: bytes,
    command: list[str],
) -> None:
    """``rwpost COMMAND a b ...`` over the two runs, run ``a``'s file ``name`` damaged; every file of both
    runs checked unchanged."""

    def body(path: Path, tmp: Path) -> None:
        args = [tmp / a if a in ("a", "b", "out") else a for a in command]
        check(capsys, args, [tmp / rel for rel in seed_runs])

    fuzz_file(name, damaged, body, seed_runs)


def run_file(data: st.DataObject, seed_runs: dict[str, bytes], names: list[str]) -> tuple[str, bytes]:
    """One of run ``a``'s files (``names``) and its damaged bytes (JSON documents and JSONL alike)."""
    name = data.draw(st.sampled_from(names))
    return name, data.draw(mutated(seed_runs[name], "json" if name.endswith(".json") else "jsonl"))


@FUZZ
@given(data=st.data(), write=st.booleans())
def test_fuzz_leaderboard_run_folder(capsys, seed_runs, data, write):
    """``rwpost leaderboard`` over run folders, one with a damaged metrics.json or manifest.json."""
    name, damaged = run_file(data, seed_runs, ["a/metrics.json", "a/manifest.json"])
    fuzz_runs(
        capsys, seed_runs, name, damaged, ["leaderboard", "a", "b", *(["--out", "out"] if write else [])]
    )


@FUZZ
@given(data=st.data())
def test_fuzz_compare_run_folders(capsys, seed_runs, data):
    """``rwpost compare A B`` with run A's scored.jsonl or metrics.json damaged."""
    name, damaged = run_file(data, seed_runs, ["a/scored.jsonl", "a/metrics.json"])
    fuzz_runs(capsys, seed_runs, name, damaged, ["compare", "a", "b", "--bootstrap", 20, "--out", "out"])


def _json_edit(seed: bytes, edit: Callable[[dict[str, Any]], object]) -> bytes:
    document = json.loads(seed)
    edit(document)
    return json.dumps(document).encode()


REGRESSIONS: dict[str, Callable[[pytest.CaptureFixture[str], dict[str, bytes]], None]] = {
    # a CSV row with more cells than the header: AttributeError (exit 70)
    "flat csv row longer than its header": lambda capsys, runs: fuzz_flat(
        capsys, "p.csv", SEED_FLAT_CSV.replace(b"id,news_url,", b"id,", 1)
    ),
    # a field over the csv module's size limit: _csv.Error (exit 70)
    "flat csv huge field": lambda capsys, runs: fuzz_flat(
        capsys, "p.csv", SEED_FLAT_CSV + b"x" * 200_000 + b"\n"
    ),
    # a line of 5000 brackets: RecursionError (exit 70)
    "agentfact deeply nested line": lambda capsys, runs: fuzz_agentfact(
        capsys, AGENTFACT_BATCH, "output.jsonl", b"[" * 5000 + b"\n" + SEED_AGENTFACT["output.jsonl"]
    ),
    # a byte that is not UTF-8: UnicodeDecodeError (exit 70)
    "agentfact failures not utf-8": lambda capsys, runs: fuzz_agentfact(
        capsys, AGENTFACT_BASELINE, "output_failed.jsonl", b"\xad" + SEED_AGENTFACT["output_failed.jsonl"]
    ),
    # failure records were not counted in the input report's rows
    "agentfact empty output beside failures": lambda capsys, runs: fuzz_agentfact(
        capsys, AGENTFACT_BATCH, "output.jsonl", b""
    ),
    # --strict on a folder: the error named the folder given, not the files read
    "agentfact strict with missing ids": lambda capsys, runs: fuzz_agentfact(
        capsys, AGENTFACT_BATCH, "output.jsonl", b"", strict=True
    ),
    # the error named the folder given, not the file read
    "defame empty predictions.csv in a folder": lambda capsys, runs: fuzz_defame(
        capsys, None, "defame/predictions.csv", b"", "defame"
    ),
    # the id map: bad JSON (JSONDecodeError) and a line that is not an object (AttributeError)
    "defame id map not json": lambda capsys, runs: fuzz_defame(
        capsys, "id_map.json", "id_map.json", b"{" + SEED_ID_MAPS["id_map.json"], "defame"
    ),
    "defame id map line not an object": lambda capsys, runs: fuzz_defame(
        capsys, "id_map.jsonl", "id_map.jsonl", b"[1, 2]\n" + SEED_ID_MAPS["id_map.jsonl"], "defame"
    ),
    # duplicate rows of other systems' formats were dropped from the input report
    "generic csv duplicated": lambda capsys, runs: fuzz_generic(
        capsys, "system.csv", "system.csv", SEED_GENERIC["system.csv"] * 2
    ),
    # a label map line without '=' did not name the file; a JSON map cut short: JSONDecodeError (exit 70)
    "generic label map line without =": lambda capsys, runs: fuzz_generic(
        capsys, "system.jsonl", "label_map.txt", SEED_LABEL_MAP + b"fake\n"
    ),
    "generic label map json cut short": lambda capsys, runs: fuzz_generic(
        capsys, "system.jsonl", "label_map.txt", b'{"fake": "False",'
    ),
    # metrics.json empty (JSONDecodeError), a metric retyped (TypeError), coverage gone (TypeError)
    "leaderboard metrics empty": lambda capsys, runs: fuzz_runs(
        capsys, runs, "a/metrics.json", b"", ["leaderboard", "a", "b"]
    ),
    "leaderboard metric retyped": lambda capsys, runs: fuzz_runs(
        capsys, runs, "a/metrics.json", _json_edit(runs["a/metrics.json"], lambda m: m.update(macro_f1="x")),
        ["leaderboard", "a", "b", "--out", "out"],
    ),
    "leaderboard coverage missing": lambda capsys, runs: fuzz_runs(
        capsys, runs, "a/metrics.json", _json_edit(runs["a/metrics.json"], lambda m: m.pop("coverage")),
        ["leaderboard", "a", "b"],
    ),
    # scored.jsonl: empty (message named no file), a gold label retyped (ValueError), uneven repeats
    # (IndexError)
    "compare scored empty": lambda capsys, runs: fuzz_runs(
        capsys, runs, "a/scored.jsonl", b"", ["compare", "a", "b", "--bootstrap", 20]
    ),
    "compare gold retyped": lambda capsys, runs: fuzz_runs(
        capsys, runs, "a/scored.jsonl", runs["a/scored.jsonl"].replace(b'"gold": "False"', b'"gold": "x"', 1),
        ["compare", "a", "b", "--bootstrap", 20],
    ),
    "compare uneven repeats": lambda capsys, runs: fuzz_runs(
        capsys, runs, "a/scored.jsonl",
        runs["a/scored.jsonl"].replace(  # the id first in order: its repeat count was taken as the run's
            f'"{min(IDS)}", "gold": "False", "predicted": "False"'.encode(),
            f'"{min(IDS)}", "gold": "False", "predicted_repeats": ["False", null]'.encode(),
        ),
        ["compare", "a", "b", "--bootstrap", 20],
    ),
    # metrics.json not JSON: JSONDecodeError (exit 70); an unknown failure policy named no file
    "compare metrics not json": lambda capsys, runs: fuzz_runs(
        capsys, runs, "a/metrics.json", b"[" * 5000, ["compare", "a", "b", "--bootstrap", 20]
    ),
    "compare metrics unknown policy": lambda capsys, runs: fuzz_runs(
        capsys, runs, "a/metrics.json", _json_edit(runs["a/metrics.json"], lambda m: m.update(failures="x")),
        ["compare", "a", "b", "--bootstrap", 20],
    ),
}  # fmt: skip
"""Inputs the fuzz tests above found to break a reader (each failed before its fix), kept as examples."""


@pytest.mark.parametrize("case", sorted(REGRESSIONS))
def test_fuzz_regressions(capsys, seed_runs, case):
    REGRESSIONS[case](capsys, seed_runs)


DEEP = b"[" * 100_000
"""The hostile review's L3 input: a hundred thousand open brackets (exit 70, RecursionError, before)."""


def _deep_inputs(tmp: Path) -> dict[str, tuple[list[Any], Path, int | str, bool]]:
    """Per reader: the command, the file holding :data:`DEEP` (on its line 3), the problem after
    ``FILE:`` (a line number alone: ``3: JSON nested too deeply``), and whether the reader sets the record
    aside (the run goes on) rather than refusing the file."""
    from rwpost.io import write_jsonl
    from tests.evaluate_helpers import MMFAKEBENCH, make_sample, mmfakebench_folder
    from tests.test_t2agent_formats import detail, mmd_record, write_details

    scoring = ["--no-progress", "--bootstrap", 0, "--no-key-points"]
    samples = [make_sample(i, "False") for i in range(2)]
    data = tmp / "samples.jsonl"
    write_jsonl(data, samples)
    record = json.dumps(MMFAKEBENCH[0]).encode()
    mmfb = mmfakebench_folder(tmp, MMFAKEBENCH, raw=(b"[\n" + record + b",\n" + DEEP + b"\n]\n").decode())
    (tmp / "ok").mkdir()
    mmfb_ok = mmfakebench_folder(tmp / "ok", MMFAKEBENCH[:1])
    mmd = tmp / "mmd" / "MMFakeBench_test.json"
    mmd.parent.mkdir()
    mmd.write_bytes(
        b"[\n" + json.dumps(mmd_record(MMFAKEBENCH[0], ["Finish[MATCH]"])).encode() + b",\n" + DEEP
    )
    port = tmp / "port"
    good = json.dumps(detail(0, samples[0], "False"), indent=2).encode()
    deep = b'{\n  "index": 1,\n  "sample_id": ' + DEEP
    folder = write_details(port, {"000_a.json": good, "001_b.json": deep})
    flat = tmp / "flat.csv"
    flat.write_bytes(csv_bytes([["id", "label", "evidence_urls"], [samples[0].id, "False", ""]]))
    flat.write_bytes(flat.read_bytes() + f"{samples[1].id},False,".encode() + DEEP + b"\n")
    generic = tmp / "system.json"
    generic.write_bytes(
        b"[\n" + json.dumps({"url": samples[0].id, "verdict": "False"}).encode() + b",\n" + DEEP
    )
    return {
        "mmfakebench source": (
            ["evaluate", "--data", f"mmfakebench:{mmfb}", "--detector", "majority", *scoring],
            mmfb / "source" / "MMFakeBench_test.json", 3, False,
        ),
        "mmdagent predictions": (
            ["evaluate", "--data", f"mmfakebench:{mmfb_ok}", "--predictions", mmd,
             "--format", "mmdagent", *scoring],
            mmd, 3, False,
        ),
        "t2agent-port detail": (
            ["evaluate", "--data", data, "--predictions", port, *scoring], folder / "001_b.json", 3, True,
        ),
        "t2agent-port gold": (
            ["evaluate", "--data", f"t2agent-port:{port}", "--predictions", port, *scoring],
            folder / "001_b.json", 3, True,
        ),
        "flat csv evidence_urls cell": (
            ["evaluate", "--data", data, "--predictions", flat, *scoring], flat,
            "3: evidence_urls: JSON nested too deeply", True,
        ),
        "generic json predictions": (
            ["evaluate", "--data", data, "--predictions", generic, "--format", "generic", "--id-field", "url",
             "--label-field", "verdict", *scoring],
            generic, 3, False,
        ),
    }  # fmt: skip


@pytest.mark.parametrize(
    "reader",
    ["mmfakebench source", "mmdagent predictions", "t2agent-port detail", "t2agent-port gold",
     "flat csv evidence_urls cell", "generic json predictions"],
)  # fmt: skip
def test_json_nested_too_deeply_names_file_and_line(capsys, tmp_path, reader):
    """Issue 39 / hostile L3: ``[``x100000 in a record is one line naming its file and line (the record set
    aside where the reader sets records aside), never exit 70; one parser (rwpost.io) says it."""
    args, path, line, set_aside = _deep_inputs(tmp_path)[reader]
    before = path.read_bytes()
    out = tmp_path / "run"
    capsys.readouterr()
    code = main([str(a) for a in [*args, "--out", out]])
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    assert path.read_bytes() == before
    expected = f"{path}:{line}" + (": JSON nested too deeply" if isinstance(line, int) else "")
    if set_aside:
        assert code == 0, err
        report = json.loads((out / "input_report.json").read_text())
        assert [row["reason"] for row in report["bad_rows"]] == [expected], report["bad_rows"]
    else:
        assert code == 1, err
        lines = [x for x in err.splitlines() if x.strip()]
        assert len(lines) == 1 and expected in lines[0], err


@pytest.mark.parametrize("option", ["--prices", "--set toolset", "--set value"])
def test_json_nested_too_deeply_in_an_option_is_one_line_naming_it(capsys, tmp_path, option):
    """The other JSON a run reads (a price table, a t2agent toolset file, a ``--set`` value): ``[``x100000
    is a one-line usage error (exit 2) naming the file and line or the option, and nothing is written."""
    deep = tmp_path / "deep.json"
    deep.write_bytes(b'{\n"tools": ' + DEEP)
    data, out = tmp_path / "data.jsonl", tmp_path / "run"
    data.write_bytes(SEED_DATA)
    args, said = {
        "--prices": (["--detector", "majority", "--prices", deep],
                     f"{deep}: not a readable YAML or JSON price table (JSON nested too deeply at line 2)"),
        "--set toolset": (["--detector", "t2agent", "--model", "m", "--setting", "T+I+W", "--set",
                           f"toolset={deep}", "--set", "search=loopback"],
                          f"{deep}: not a toolset file written by --select-tools (JSON nested too deeply at "
                          "line 2)"),
        "--set value": (["--detector", "majority", "--set", "x=" + "[" * 100_000],
                        "--set x: JSON nested too deeply"),
    }[option]  # fmt: skip
    capsys.readouterr()
    code = main([str(a) for a in ["evaluate", "--data", data, *args, "--out", out, "--no-progress"]])
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.strip()]
    assert code == 2 and len(lines) == 1 and said in lines[0], err
    assert not out.exists()
