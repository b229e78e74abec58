"""The JSON Schemas in schemas/ are exactly what the record models generate."""

from pathlib import Path

import jsonschema

from rwpost.schemas import record_schemas, stale_schema_files

ROOT = Path(__file__).resolve().parents[1]


def test_schema_files_match_the_models():
    assert stale_schema_files(ROOT / "schemas") == [], "run: rwpost schemas --overwrite"


def test_every_schema_is_a_valid_draft_2020_12_schema():
    for schema in record_schemas().values():
        jsonschema.Draft202012Validator.check_schema(schema)
