"""The JSON Schemas in schemas/ are exactly what the record and run-log models generate, and a real
run's files fit the run log's schemas."""

import json
from pathlib import Path

import jsonschema

from rwpost.schemas import log_schemas, record_schemas, stale_schema_files

ROOT = Path(__file__).resolve().parents[1]


def test_schema_files_match_the_models():
    assert stale_schema_files(ROOT / "schemas") == [], "run: rwpost schemas --overwrite"


def test_every_schema_is_a_valid_draft_2020_12_schema():
    for schema in [*record_schemas().values(), *log_schemas().values()]:
        jsonschema.Draft202012Validator.check_schema(schema)


def test_a_run_folder_fits_the_run_log_schemas(tmp_path):
    from rwpost.evaluate import RunSpec, evaluate
    from rwpost.labels import Label
    from tests.evaluate_helpers import make_sample

    labels = [Label.TRUE, Label.FALSE, Label.UNPROVEN, Label.FALSE, Label.MIXTURE, Label.OUTDATED]
    samples = [make_sample(i, label) for i, label in enumerate(labels)]
    out = tmp_path / "run"
    evaluate(samples, RunSpec("stratified", repeats=2, n_resamples=20), out, train=samples)
    schemas = {name: jsonschema.Draft202012Validator(s) for name, s in log_schemas().items()}
    for name, file in (
        ("run_record", "run.json"),
        ("run_manifest", "manifest.json"),
        ("run_metrics", "metrics.json"),
    ):
        data = json.loads((out / file).read_text())
        assert data["log_version"] == "1"
        schemas[name].validate(data)
    for line in (out / "scored.jsonl").read_text().splitlines():
        schemas["scored_sample"].validate(json.loads(line))
