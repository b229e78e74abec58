"""The compiled answer check (rwpost.llm.schemas.answer_check) accepts and refuses exactly what jsonschema
does, on every answer schema the project ships, for thousands of answers built near and far from valid."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import jsonschema
import pytest

from rwpost.llm import load_llm_schema, parse_answer
from rwpost.llm.schemas import LLM_SCHEMA_DIR, answer_check

NAMES = sorted(path.name.removesuffix(".schema.json") for path in LLM_SCHEMA_DIR.glob("*.schema.json"))
ODD = [
    None,
    True,
    False,
    0,
    1,
    -1,
    1.0,
    2.5,
    -0.5,
    0.0,
    1e9,
    math.nan,
    math.inf,
    "",
    "x",
    "1",
    [],
    {},
    [1],
    {"a": 1},
]


def _near(schema: Any, rng: random.Random, depth: int = 0) -> Any:
    """A value built from the schema (often valid), with random wrong types, values, keys and lengths."""
    if rng.random() < 0.12 or depth > 6 or not isinstance(schema, dict):
        return rng.choice(ODD)
    if "enum" in schema:
        return rng.choice([*schema["enum"], "not-in-enum", 3])
    if "anyOf" in schema:
        return _near(rng.choice(schema["anyOf"]), rng, depth + 1)
    kinds = schema.get("type", "string")
    kind = rng.choice(kinds) if isinstance(kinds, list) else kinds
    if kind == "object":
        out = {
            name: _near(sub, rng, depth + 1)
            for name, sub in schema.get("properties", {}).items()
            if rng.random() < 0.93
        }
        if rng.random() < 0.15:
            out["unexpected"] = rng.choice(ODD)
        return out
    if kind == "array":
        size = rng.choice([0, 1, 2, 3, 5, 8])
        return [_near(schema.get("items", {}), rng, depth + 1) for _ in range(size)]
    if kind in ("integer", "number"):
        low, high = schema.get("minimum", -5), schema.get("maximum", 5)
        return rng.choice([low, high, low - 1, high + 1, (low + high) / 2, float(low), math.nan, True])
    if kind == "string":
        if "pattern" in schema:
            return rng.choice(["", "a", "1", "Yes", "no", "IMAGE 1", "https://x.org", "1. a", "[1]", "0.5"])
        return rng.choice(["", "text", "a longer sentence."])
    if kind == "boolean":
        return rng.choice([True, False, 0, "true"])
    return rng.choice(ODD)


@pytest.mark.parametrize("name", NAMES)
def test_the_check_agrees_with_jsonschema_on_every_answer_schema(name):
    schema = load_llm_schema(name)
    check = answer_check(schema)
    assert check is not None, f"{name} uses a keyword the compiled check lacks: add it (and to this test)"
    validator = jsonschema.Draft202012Validator(schema)
    rng = random.Random(name)
    verdicts = {True: 0, False: 0}
    for _ in range(1500):
        value = _near(schema, rng)
        assert check(value) == validator.is_valid(value), json.dumps(value)
        verdicts[validator.is_valid(value)] += 1
    assert verdicts[True] > 0 and verdicts[False] > 0  # both sides exercised


def test_the_closures_keep_their_own_bounds():
    """minItems/maxItems and minimum/maximum in one schema: each check keeps its own numbers."""
    schema = {"type": ["array", "number"], "minItems": 2, "maxItems": 3, "minimum": 10, "maximum": 20}
    check = answer_check(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for value in [[1], [1, 2], [1, 2, 3, 4], 5, 15, 25, 10.0, math.nan]:
        assert check(value) == validator.is_valid(value), value


def test_a_schema_the_fast_check_cannot_compile_is_left_to_jsonschema_and_nothing_is_fetched():
    remote = {"type": "object", "properties": {"a": {"$ref": "http://127.0.0.1:9/a.json"}}}
    assert answer_check(remote) is None  # the handlers refuse the URL: no request leaves the process
    assert answer_check({"type": "string", "pattern": "("}) is None


def test_other_keywords_are_checked_as_jsonschema_checks_them():
    schema = {"type": "object", "properties": {"a": {"type": "string", "minLength": 3}}, "required": ["a"]}
    check = answer_check(schema)
    assert check is not None and check({"a": "abcd"}) and not check({"a": "ab"}) and not check({})
    assert parse_answer('{"a": "abcd"}', schema) == ({"a": "abcd"}, "")
    data, problem = parse_answer('{"a": "ab"}', schema)
    assert data is None and problem == "does not match the schema at a: 'ab' is too short"


def test_a_refused_answer_gives_jsonschemas_reason():
    schema = load_llm_schema("rationale")
    data, problem = parse_answer('{"reasoning_logic": 3, "key_points": []}', schema)
    assert data is None
    assert problem.startswith("does not match the schema at ")
