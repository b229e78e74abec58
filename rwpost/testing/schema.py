"""Answers that follow each request's JSON schema: the offline stand-in for a model that obeys structured
output (``response_format.json_schema``), so every detector of the papers runs end to end without a model.

:func:`instance` builds a valid instance of a JSON schema (objects with their required and listed
properties, arrays of their ``minItems`` or one item, enums and consts, number bounds, ``anyOf``/``oneOf``,
``$ref`` into ``$defs``); choices (an enum's value, an ``anyOf`` branch) are picked by a seed, so one
request always gets the same answer. :class:`SchemaResponder` is a
:class:`~rwpost.testing.llm.FakeLLMServer` responder answering every request so, seeded by the request's
hash; a request without a schema gets :data:`FREE_ANSWER`. The answers are valid, not sensible: runs
against them are smoke tests of the plumbing, not scores.
"""

from __future__ import annotations

import random
from typing import Any

from rwpost.testing.llm import Reply, request_hash

FREE_ANSWER = {
    "label": "Unproven",
    "confidence": 0.5,
    "explanation": "An offline stand-in answer (rwpost testing serve).",
    "evidence_urls": [],
}
"""The answer to a request that sends no JSON schema."""

_MAX_DEPTH = 12


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    seen = 0
    while isinstance(ref, str) and ref.startswith("#/") and seen < 20:
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        schema = {**node, **{k: v for k, v in schema.items() if k != "$ref"}}
        ref, seen = node.get("$ref") if isinstance(node, dict) else None, seen + 1
    return schema


def instance(
    schema: Any, seed: int | str | random.Random = 0, *, root: dict[str, Any] | None = None, depth: int = 0
) -> Any:
    """A value valid under the JSON schema ``schema``; ``seed`` picks among the choices it allows."""
    rng = seed if isinstance(seed, random.Random) else random.Random(str(seed))
    if not isinstance(schema, dict):
        return None
    root = schema if root is None else root
    schema = _resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        choices = [v for v in schema["enum"] if v is not None] or schema["enum"]
        return rng.choice(choices)
    for key in ("anyOf", "oneOf"):
        branches = [b for b in schema.get(key) or [] if isinstance(b, dict)]
        if branches:
            # a null or a patterned string is a last resort: the patterns are not generated
            concrete = [b for b in branches if _resolve(b, root).get("type") != "null"] or branches
            concrete = [b for b in concrete if "pattern" not in _resolve(b, root)] or concrete
            return instance(rng.choice(concrete), rng, root=root, depth=depth + 1)
    if isinstance(schema.get("allOf"), list):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            merged.update(_resolve(part, root) if isinstance(part, dict) else {})
        return instance({**merged, **{k: v for k, v in schema.items() if k != "allOf"}}, rng, root=root)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), kind[0] if kind else None)
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    if kind == "object":
        if depth >= _MAX_DEPTH:
            return {}
        properties = schema.get("properties") or {}
        return {
            name: instance(sub, rng, root=root, depth=depth + 1)
            for name, sub in properties.items()
            if isinstance(sub, dict)
        }
    if kind == "array":
        least = int(schema.get("minItems") or 0)
        most = schema.get("maxItems")
        count = max(least, 1) if most is None else min(max(least, 1), int(most))
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        return [instance(items, rng, root=root, depth=depth + 1) for _ in range(count)]
    if kind in ("number", "integer"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        high = schema.get("maximum", schema.get("exclusiveMaximum", max(low, 1)))
        value = low + (high - low) * rng.random() if high >= low else low
        if kind == "integer":
            return int(max(low, min(high, round(value))))
        return round(value, 3)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    text = f"offline text {rng.randrange(1000)}"
    least = int(schema.get("minLength") or 0)
    return text.ljust(least, "x")


class SchemaResponder:
    """A :class:`~rwpost.testing.llm.FakeLLMServer` responder: each request's JSON schema filled with a
    valid instance chosen by the request's hash (the same request, the same answer)."""

    def __call__(self, body: dict[str, Any]) -> Reply:
        response_format = body.get("response_format") or {}
        spec = response_format.get("json_schema") or {}
        schema = spec.get("schema") if isinstance(spec, dict) else None
        if not isinstance(schema, dict):
            return Reply.answer(FREE_ANSWER)
        return Reply.answer(instance(schema, request_hash(body)))
