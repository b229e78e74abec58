"""The ledger of a run: model and tool calls, tokens, latency, cost and cache hits, per sample and in total.

Costs come from the call itself when the detector knows them, else from a price table keyed by model or
tool name (``{"gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.6, "per_call": 0.0}}``, kept in
params.yaml and passed in). A cached call costs nothing; a call with no price is counted as unpriced.
``cost_usd`` is what the calls behind these predictions cost (a cache hit is free), so it depends on what
the cache held: a run killed after paying for answers it had not yet written gets them back from the cache
on resume. ``list_cost_usd`` prices every call as if none were cached: it follows from the predictions
alone, the same for a resumed run as for an uninterrupted one, and is the figure to compare systems by.
Totals are split by call name (the model or tool) and, for calls a multi-agent detector tags with its
agent (:attr:`~rwpost.evaluate.contract.Call.agent`), by agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from rwpost.errors import ConfigError, RecordError
from rwpost.evaluate.contract import Call, Prediction
from rwpost.llm.types import PriceTable

_PRICE_TABLE = TypeAdapter(PriceTable)


def read_price_table(data: object, source: str) -> PriceTable:
    """A price table checked before a run spends anything: a mapping of name -> :class:`Price`.
    :class:`~rwpost.errors.ConfigError` names ``source``, the entry and the problem (never a value)."""
    try:
        return _PRICE_TABLE.validate_python(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        where = f" at {where}" if where else ""
        raise ConfigError(
            f"{source}: not a price table{where}: {error['msg']} "
            "(expected name: {input_per_mtok, output_per_mtok, per_call: non-negative numbers})"
        ) from None


def read_price_file(path: Path) -> PriceTable:
    """The price table of a YAML or JSON file (``prices:`` at the top, or the table itself), checked by
    :func:`read_price_table`; one-line :class:`~rwpost.errors.ConfigError` for a missing or unreadable
    file."""
    import yaml

    from rwpost.io import decode_json, read_text

    if not path.exists():
        raise ConfigError(f"price table not found: {path}")
    text = read_text(path)
    try:  # JSON first: YAML refuses valid JSON indented with tabs
        data = decode_json(text, str(path))
    except RecordError as exc:  # not JSON, or nested too deeply
        problem = f"{exc.problem} at line {exc.line}"
        if not text.lstrip().startswith(("{", "[")):
            try:
                data = yaml.safe_load(text)
                problem = ""
            except yaml.YAMLError as yaml_exc:
                mark = getattr(yaml_exc, "problem_mark", None)
                problem = (str(yaml_exc).splitlines() or [type(yaml_exc).__name__])[0]
                problem += f" at line {mark.line + 1}" if mark is not None else ""
        if problem:
            raise ConfigError(f"{path}: not a readable YAML or JSON price table ({problem})") from None
    if isinstance(data, dict) and "prices" in data:
        data = data["prices"]
    return read_price_table(data, str(path))


def call_cost(call: Call, prices: PriceTable | None, *, list_price: bool = False) -> float | None:
    """The cost of one call in USD (``list_price``: as if it were not served from a cache), or None when
    neither the call nor the price table gives it."""
    if call.cached and not list_price:
        return 0.0 if call.cost_usd is None else call.cost_usd
    if call.cost_usd is not None and not call.cached:
        return call.cost_usd
    price = (prices or {}).get(call.name)
    if price is None:  # unpriced, or a cached call's own figure (0 for a local model)
        return call.cost_usd
    return price.cost(call.tokens_in, call.tokens_out)


def _empty() -> dict[str, Any]:
    return {
        "calls": 0,
        "model_calls": 0,
        "tool_calls": 0,
        "tokens_in": 0,
        "tokens_out": 0,
        "latency_s": 0.0,
        "cost_usd": 0.0,
        "list_cost_usd": 0.0,
        "unpriced_calls": 0,
        "cache_hits": 0,
    }


def _costs(call: Call, prices: PriceTable | None) -> tuple[float | None, float | None]:
    """The call's cost paid and at list price."""
    return call_cost(call, prices), call_cost(call, prices, list_price=True)


def _add(total: dict[str, Any], call: Call, costs: tuple[float | None, float | None]) -> None:
    cost, listed = costs
    total["calls"] += 1
    total["model_calls" if call.kind == "model" else "tool_calls"] += 1
    total["tokens_in"] += call.tokens_in
    total["tokens_out"] += call.tokens_out
    total["latency_s"] += call.latency_s
    total["cache_hits"] += int(call.cached)
    if cost is None:
        total["unpriced_calls"] += 1
    else:
        total["cost_usd"] += cost
    if listed is not None:
        total["list_cost_usd"] += listed


def sample_ledger(prediction: Prediction, prices: PriceTable | None) -> dict[str, Any]:
    """Totals of one sample's calls."""
    total = _empty()
    for call in prediction.calls:
        _add(total, call, _costs(call, prices))
    return total


def run_ledger(predictions: Sequence[Prediction], prices: PriceTable | None) -> dict[str, Any]:
    """Totals over a run, per call name, per agent (calls that name one), and means per sample."""
    total = _empty()
    by_name: dict[str, dict[str, Any]] = {}
    by_agent: dict[str, dict[str, Any]] = {}
    for prediction in predictions:
        for call in prediction.calls:
            costs = _costs(call, prices)  # priced once for the total, its name and its agent
            _add(total, call, costs)
            _add(by_name.setdefault(call.name, _empty()), call, costs)
            if call.agent is not None:
                _add(by_agent.setdefault(call.agent, _empty()), call, costs)
    n = max(len(predictions), 1)
    total["samples"] = len(predictions)
    total["by_name"] = by_name
    total["by_agent"] = dict(sorted(by_agent.items()))
    keys = ("calls", "tokens_in", "tokens_out", "latency_s", "cost_usd", "list_cost_usd")
    total["per_sample"] = {k: total[k] / n for k in keys}
    return total
