"""A benchmark's own label space: its classes, where a sample's gold comes from, and a prediction's answer.

Each dataset adapter declares one :class:`LabelSpace`; the scorer (:func:`rwpost.evaluate.scoring.score_run`)
scores the run in it over all rows as the primary view, and RW-Post's views (paper Table II's mapping of
the benchmark's labels) are extra views, named as such. An RW-Post run has no space: its views are the
paper's.

A prediction's answer in the space is, in order: the class its explanation's first line names
(``T2Agent answer: mismatch``, ``AgentM3D answer: textual_veracity_distortion``, ``T2Agent port verdict:
Mostly False; ...``, ``Answer: Supported``: the convention every detector and reader of a system with
finer classes follows), else its RW-Post label's class in the space (:attr:`LabelSpace.from_label`), else
the label itself (a class outside the space: always a wrong answer). A prediction with neither a label nor
a named class is a failure, scored by the run's failure policy.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rwpost.labels import Label
from rwpost.records import Sample

_HEAD = re.compile(r"(?:^|\s)(?:answer|verdict)\s*:\s*(?P<value>[^;(\n]+)", re.IGNORECASE)


def spelling(text: Any) -> str:
    """A label's matching key: lower case, words split by one space (``Mostly-True``: ``mostly true``)."""
    return re.sub(r"[\s_\-]+", " ", str(text).strip().lower()).strip()


def head_answer(explanation: str | None) -> str | None:
    """The class an explanation's first line names (``... answer: X`` or ``... verdict: X``), if any."""
    first = (explanation or "").split("\n", 1)[0]
    found = _HEAD.search(first)
    return found["value"].strip() if found else None


@dataclass(frozen=True)
class LabelSpace:
    """One benchmark's label space and how its gold and a prediction's answer are read."""

    name: str
    """The view's name in ``metrics.json`` (``remmdbench_verdict``)."""
    description: str
    """One line: the classes and where they come from (the benchmark and its scorer)."""
    classes: tuple[str, ...] | None
    """The classes in the benchmark's order; None: the gold labels found in the data (a labels file)."""
    gold: Callable[[Sample], str | None] = lambda s: s.label_original
    """A sample's gold class (its spelling is matched to :attr:`classes` ignoring case and spacing)."""
    from_label: Mapping[Label, str] = field(default_factory=dict)
    """The class an RW-Post answer stands for, when the prediction names no class of its own."""
    aliases: Mapping[str, str] = field(default_factory=dict)
    """Other spellings of a class (``half true`` -> ``Mixture``), keyed by :func:`spelling`."""

    def classes_of(self, samples: Sequence[Sample]) -> tuple[str, ...]:
        """The space's classes, or (no fixed classes) the distinct gold labels of ``samples``, sorted."""
        if self.classes is not None:
            return self.classes
        return tuple(sorted({g for s in samples if (g := self.gold(s)) is not None}))

    def canonical(self, value: Any, classes: Sequence[str]) -> str | None:
        """``value`` as one of ``classes`` (ignoring case and spacing, through :attr:`aliases`); None when
        it is none of them."""
        if value is None:
            return None
        key = spelling(value)
        key = spelling(self.aliases.get(key, key))
        return next((c for c in classes if spelling(c) == key), None)

    def gold_class(self, sample: Sample, classes: Sequence[str]) -> str | None:
        """A sample's gold class; None when it has none in the space (it is not scored)."""
        return self.canonical(self.gold(sample), classes)

    def answer(self, prediction: Any, classes: Sequence[str]) -> str | None:
        """A prediction's answer in the space (see the module's docstring); None: a failure."""
        named = head_answer(prediction.explanation)
        if named is not None and (found := self.canonical(named, classes)) is not None:
            return found
        if prediction.label is None:
            return None
        label = Label(prediction.label)
        if label in self.from_label:
            return self.from_label[label]
        return self.canonical(label.value, classes) or f"{label.value} (RW-Post)"


def space_of_labels(
    name: str,
    description: str,
    labels: Mapping[str, Label],
    *,
    gold: Callable[[Sample], str | None] | None = None,
) -> LabelSpace:
    """The space of an adapter whose ``LABELS`` maps each of its spellings to an RW-Post label: the classes
    are the spellings (in order), the gold is ``label_original``, and an RW-Post answer is the class of the
    one spelling that maps to it (a label two spellings share names no class)."""
    back: dict[Label, list[str]] = {}
    for spelled, label in labels.items():
        back.setdefault(label, []).append(spelled)
    return LabelSpace(
        name=name,
        description=description,
        classes=tuple(labels),
        **({"gold": gold} if gold is not None else {}),
        from_label={label: spelled[0] for label, spelled in back.items() if len(spelled) == 1},
    )


__all__ = ["LabelSpace", "head_answer", "space_of_labels", "spelling"]
