"""A trained FactGuard checkpoint's own output format (paper section 3.5, ``R_format``): the reasoning in
``<think>...</think>`` and the decision in ``<answer>...</answer>``.

The paper does not print its tool-call protocol; a tool call is read in Qwen2.5's tool-call form (the
FactGuard backbone's chat template): ``<tool_call>{"name": "FactProbe", "arguments": {"query": "..."}}
</tool_call>`` and ``<tool_call>{"name": "ClipScout", "arguments": {"start_s": 1, "end_s": 3}}</tool_call>``,
or as rwpost's JSON fields inside ``<answer>``. :func:`read_tagged` turns such a reply into the fields of
rwpost's JSON answer (``reasoning``, ``label``, ``search_query``, ``clip``), so a checkpoint's answer is read
where a JSON answer was asked for and the model wrote tags instead.
"""

from __future__ import annotations

import json
import re
from typing import Any

_THINK = re.compile(r"<think>(.*?)(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL | re.IGNORECASE)


def _verdict(text: str, labels: list[str]) -> str | None:
    """The label ``text`` names: the whole text (case, spaces and end punctuation aside), else the one
    label it contains as a word."""
    bare = text.strip().strip(".!\"'").strip().lower()
    if bare in labels:
        return bare
    found = [label for label in labels if re.search(rf"\b{re.escape(label)}\b", bare)]
    return found[0] if len(found) == 1 else None


def _tool(call: Any, fields: dict[str, Any]) -> None:
    """One Qwen-style tool call into rwpost's fields (unknown tools are ignored)."""
    if not isinstance(call, dict):
        return
    name, arguments = str(call.get("name", "")).lower(), call.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return
    if not isinstance(arguments, dict):
        return
    if name == "factprobe" and isinstance(arguments.get("query"), str):
        fields["search_query"] = arguments["query"]
    elif name == "clipscout":
        try:
            fields["clip"] = {"start_s": float(arguments["start_s"]), "end_s": float(arguments["end_s"])}
        except (KeyError, TypeError, ValueError):
            return


def read_tagged(text: str | None, labels: list[str]) -> dict[str, Any] | None:
    """The fields of a ``<think>`` / ``<answer>`` (and ``<tool_call>``) reply, or None when ``text`` has no
    answer or tool call to read (a label outside ``labels`` reads as no label)."""
    if not text:
        return None
    think = _THINK.search(text)
    fields: dict[str, Any] = {"reasoning": think.group(1).strip() if think else "", "label": None}
    fields |= {"search_query": None, "clip": None}
    for raw in _TOOL_CALL.findall(text):
        try:
            _tool(json.loads(raw), fields)
        except json.JSONDecodeError:
            continue
    answer = _ANSWER.search(text)
    if answer is not None:
        inner = answer.group(1).strip()
        try:
            data = json.loads(inner)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict):  # rwpost's JSON fields inside the tags
            label = data.get("label")
            fields["label"] = _verdict(label, labels) if isinstance(label, str) else None
            if isinstance(data.get("search_query"), str):
                fields["search_query"] = data["search_query"]
            _tool({"name": "ClipScout", "arguments": data.get("clip")}, fields)
            fields["reasoning"] = fields["reasoning"] or str(data.get("reasoning") or "")
        else:
            fields["label"] = _verdict(inner, labels)
    if fields["label"] is None and not fields["search_query"] and not fields["clip"]:
        return None
    return fields


__all__ = ["read_tagged"]
