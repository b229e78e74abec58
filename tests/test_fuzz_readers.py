"""Fuzzing every reader through the real command line (Hypothesis, derandomized: the same inputs each run).

Inputs start from a valid file and are truncated, bit-flipped, given bytes that are not UTF-8, byte-order
marks, wrong types, missing and extra fields, duplicate ids, a huge line, or emptied. The property, for every
input: the command exits 0, 1 or 2 (never 70); a failure is one line on stderr naming the file (never a
traceback); and every input file is byte-identical afterwards.

Counts per reader are ``EXAMPLES`` (``pytest --hypothesis-show-statistics`` prints what ran).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rwpost.cli import main
from rwpost.errors import RwpostError

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
def mutated(draw: st.DrawFn, seed: bytes) -> bytes:
    """``seed`` (a valid file) damaged in one of the ways a hostile or unlucky user produces."""
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
    # "field": one line's field deleted, retyped or joined by an unknown one
    lines = seed.splitlines(keepends=True)
    at = draw(st.integers(0, len(lines) - 1))
    row = json.loads(lines[at])
    key = draw(st.sampled_from(sorted(row)))
    action = draw(st.sampled_from(["delete", "retype", "extra"]))
    if action == "delete":
        del row[key]
    elif action == "retype":
        row[key] = draw(ODD_VALUES)
    else:
        row[draw(st.text(min_size=1, max_size=8))] = draw(ODD_VALUES)
    lines[at] = json.dumps(row).encode() + b"\n"
    return b"".join(lines)


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


def fuzz_file(name: str, data: bytes, body: Callable[[Path, Path], None]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        body(path, Path(tmp))


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
        check(capsys, ["reformat", "--in", tmp, "--out", tmp / "tagged"], [path])

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
        check(capsys, ["extract", "--in", path, "--out", tmp / "x", "--backend", "offline"], [path])

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
