"""Benchmarks other than RW-Post, read from folders the user has (never downloaded), as runner samples.

A benchmark is named on the command line as ``--data NAME:FOLDER`` (its default split) or
``--data NAME/SPLIT:FOLDER``, for example ``--data mmfakebench:~/MMFakeBench_test`` or
``--data mmfakebench/val:~/MMFakeBench_val``. Each adapter registers one :class:`DatasetAdapter`
in :data:`ADAPTERS`: how to find the split's annotation file, read it into samples (one-line errors naming
file and line), where the samples' relative image (or video) paths are found, and its own label space
(:mod:`.spaces`: the run's primary view, RW-Post's Table II views beside it).

- :mod:`.mmfakebench`: MMFakeBench (Liu et al., ICLR 2025), the benchmark T2Agent reports on.
- :mod:`.newsclippings`: NewsCLIPpings (Luo et al., EMNLP 2021), out-of-context pairs (paper Table III).
- :mod:`.mocheg`: Mocheg (Yao et al., SIGIR 2023), Snopes claims, text only as the paper ran it (Table III).
- :mod:`.claimreview`: ClaimReview2024+ (Braun et al., DEFAME, ICML 2025), image-text claims (Table III).
- :mod:`.remmdbench`: ReMMDBench (``DDAI-D/ReMMDBench``), and ``t2agent-port:RUN``: the gold a T2-Agent port
  run recorded (the default of a port run scored without ``--data``).
- :mod:`.veritas`: VeriTaS (a quarter, as DEFAME reads it); :mod:`.averitec`: AVeriTeC and AVerImaTeC.
- :mod:`.labels`: ``labels:FILE``, any JSON lines or CSV file of id and label.
- :mod:`.fakesv`: FakeSV (Qi et al., AAAI 2023) and FakeTT (Bu et al., ACM MM 2024), and :mod:`.fakevv`:
  FakeVV (Zhang et al., 2025), the short-video benchmarks FactGuard reports on (their video folders are the
  media root: ``--detector factguard`` finds each sample's video there).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError, RecordError
from rwpost.evaluate.datasets.spaces import LabelSpace
from rwpost.io import decode_json, read_text, sha256_file
from rwpost.records import Sample


@dataclass(frozen=True)
class DatasetAdapter:
    """One benchmark's released layout, read from a folder the user has."""

    name: str
    about: str
    """One line for ``--help`` and errors: the benchmark and its paper."""
    splits: tuple[str, ...]
    """The split names the layout has; the first is the default."""
    source: Callable[[Path, str], Path]
    """``(folder, split)`` -> the annotation file (hashed into the run's identity); ConfigError if absent."""
    read: Callable[[Path, str], list[Sample]]
    """``(folder, split)`` -> the split's samples."""
    media_root: Callable[[Path, str], Path] = lambda folder, split: folder
    """``(folder, split)`` -> the folder relative image and video paths are under."""
    own_scores: (
        Callable[[Sequence[Sample], Sequence[Any], dict[str, Any]], dict[str, dict[str, float]]] | None
    ) = None
    """``(samples, predictions, metrics.json)`` -> the benchmark's own metrics, as its evaluation script
    computes them (one table of metric -> value per name); ``metrics.json`` and ``report.md`` show them."""
    space: LabelSpace | None = None
    """The benchmark's own label space: the run's primary view (RW-Post's views are then extra views,
    titled as paper Table II's mapping); None: RW-Post's views only."""
    fingerprint: Callable[[Path, str], str] | None = None
    """``(folder, split)`` -> the data's checksum when ``source`` is a folder (one file per sample)."""
    takes_file: bool = False
    """``NAME:PATH`` names a file (``labels:FILE``), not a folder."""


@dataclass(frozen=True)
class DataSpec:
    """A parsed ``NAME[/SPLIT]:FOLDER``."""

    adapter: DatasetAdapter
    folder: Path
    split: str

    @property
    def label(self) -> str:
        return f"{self.adapter.name}/{self.split}:{self.folder}"

    def samples(self) -> list[Sample]:
        return self.adapter.read(self.folder, self.split)

    def source(self) -> Path:
        return self.adapter.source(self.folder, self.split)

    def media_root(self) -> Path:
        return self.adapter.media_root(self.folder, self.split)

    def sha256(self) -> str:
        """The checksum of the data read: the annotation file's, or the adapter's :attr:`fingerprint`."""
        if self.adapter.fingerprint is not None:
            return self.adapter.fingerprint(self.folder, self.split)
        return sha256_file(self.source())


def _mmfakebench() -> DatasetAdapter:
    from rwpost.evaluate.datasets import mmfakebench

    return DatasetAdapter(
        name="mmfakebench",
        about="MMFakeBench (Liu et al., ICLR 2025): a split folder holding source/ and the images",
        splits=("test", "val"),
        source=mmfakebench.split_file,
        read=mmfakebench.read_mmfakebench,
        own_scores=mmfakebench.own_scores,
        space=mmfakebench.SPACE,
    )


def _newsclippings() -> DatasetAdapter:
    from rwpost.evaluate.datasets import newsclippings

    return DatasetAdapter(
        name="newsclippings",
        about="NewsCLIPpings (Luo et al., EMNLP 2021): a folder holding news_clippings/data/ and "
        "visual_news/origin/",
        splits=("test", "val", "train"),
        source=newsclippings.split_file,
        read=newsclippings.read_newsclippings,
        media_root=newsclippings.media_root,
        space=newsclippings.SPACE,
    )


def _mocheg() -> DatasetAdapter:
    from rwpost.evaluate.datasets import mocheg

    return DatasetAdapter(
        name="mocheg",
        about="Mocheg (Yao et al., SIGIR 2023): a folder holding train/, val/ and test/ with Corpus2.csv",
        splits=("test", "val", "train"),
        source=mocheg.split_file,
        read=mocheg.read_mocheg,
        media_root=mocheg.media_root,
        space=mocheg.SPACE,
    )


def _claimreview() -> DatasetAdapter:
    from rwpost.evaluate.datasets import claimreview

    return DatasetAdapter(
        name="claimreview",
        about="ClaimReview2024+ (Braun et al., ICML 2025): the ClaimReview2024plus folder holding test.json",
        splits=("test",),
        source=claimreview.split_file,
        read=claimreview.read_claimreview,
        space=claimreview.SPACE,
    )


def _fakesv() -> DatasetAdapter:
    from rwpost.evaluate.datasets import fakesv

    return DatasetAdapter(
        name="fakesv",
        about="FakeSV (Qi et al., AAAI 2023): the release folder holding data_complete.json and videos/",
        splits=fakesv.SPLITS,
        **fakesv.adapter_parts(fakesv.FAKESV),
        own_scores=fakesv.own_scores,
        space=fakesv.space(fakesv.FAKESV),
    )


def _fakett() -> DatasetAdapter:
    from rwpost.evaluate.datasets import fakesv

    return DatasetAdapter(
        name="fakett",
        about="FakeTT (Bu et al., ACM MM 2024): the release folder holding data.json and video/",
        splits=fakesv.SPLITS,
        **fakesv.adapter_parts(fakesv.FAKETT),
        own_scores=fakesv.own_scores,
        space=fakesv.space(fakesv.FAKETT),
    )


def _fakevv() -> DatasetAdapter:
    from rwpost.evaluate.datasets import fakesv, fakevv

    return DatasetAdapter(
        name="fakevv",
        about="FakeVV (Zhang et al., 2025): a folder holding the test set's JSON and videos/",
        splits=fakevv.SPLITS,
        **fakevv.adapter_parts(),
        own_scores=fakesv.own_scores,
        space=fakevv.SPACE,
    )


def _remmdbench() -> DatasetAdapter:
    from rwpost.evaluate.datasets import remmdbench

    return DatasetAdapter(
        name="remmdbench",
        about="ReMMDBench (DDAI-D/ReMMDBench): the folder holding one <id>/ folder per sample "
        "(annotation.json, sample.json, images/)",
        splits=("all",),
        source=remmdbench.source,
        read=remmdbench.read_remmdbench,
        own_scores=remmdbench.own_scores,
        space=remmdbench.SPACE,
        fingerprint=remmdbench.fingerprint,
    )


def _t2agent_port_gold() -> DatasetAdapter:
    from rwpost.evaluate.datasets import remmdbench

    return DatasetAdapter(
        name="t2agent-port",
        about="a T2-Agent port run's folder (details/<index>_<id>.json): ReMMDBench's gold as the run "
        "recorded it (ground_truth_verdict, ground_truth_taxonomy)",
        splits=("all",),
        source=remmdbench.port_details,
        read=remmdbench.read_port_gold,
        own_scores=remmdbench.own_scores,
        space=remmdbench.PORT_GOLD_SPACE,
        fingerprint=remmdbench.port_fingerprint,
    )


def _veritas() -> DatasetAdapter:
    from rwpost.evaluate.datasets import veritas

    return DatasetAdapter(
        name="veritas",
        about="VeriTaS (as DEFAME reads it): the unpacked folder of a quarter (claims.json, media/), or "
        "the folder holding the quarters",
        splits=veritas.QUARTERS,
        source=veritas.split_file,
        read=veritas.read_veritas,
        media_root=veritas.quarter_folder,
        space=veritas.SPACE,
    )


def _averitec(name: str, about: str) -> DatasetAdapter:
    from rwpost.evaluate.datasets import averitec

    return DatasetAdapter(
        name=name,
        about=about,
        splits=averitec.SPLITS[name],
        source=lambda folder, split: averitec.split_file(name, folder, split),
        read=lambda folder, split: averitec.read_split(name, folder, split),
        space=averitec.SPACE,
    )


def _labels() -> DatasetAdapter:
    from rwpost.evaluate.datasets import labels

    return DatasetAdapter(
        name="labels",
        about="any labelled file: JSON lines or CSV of id, label and optional fields (claim, image, ...)",
        splits=("all",),
        source=labels.source,
        read=labels.read_labels,
        media_root=lambda path, split: Path(path).parent,
        space=labels.SPACE,
        takes_file=True,
    )


ADAPTERS: dict[str, Callable[[], DatasetAdapter]] = {
    "mmfakebench": _mmfakebench,
    "newsclippings": _newsclippings,
    "mocheg": _mocheg,
    "claimreview": _claimreview,
    "fakesv": _fakesv,
    "fakett": _fakett,
    "fakevv": _fakevv,
    "remmdbench": _remmdbench,
    "t2agent-port": _t2agent_port_gold,
    "labels": _labels,
    "veritas": _veritas,
    "averitec": lambda: _averitec(
        "averitec", "AVeriTeC (Schlichtkrull et al., NeurIPS 2023): the folder holding train/dev/test.json"
    ),
    "averimatec": lambda: _averitec(
        "averimatec", "AVerImaTeC: the folder holding train.json, val.json and images/"
    ),
}
"""Benchmark name -> its adapter (built on first use, so naming one imports only its module)."""

_SPEC = re.compile(r"^(?P<name>[a-z][a-z0-9_-]*)(?:/(?P<split>[A-Za-z0-9_-]+))?:(?P<folder>.+)$")


def parse_data_spec(text: str | Path) -> DataSpec | None:
    """``NAME[/SPLIT]:FOLDER`` as a :class:`DataSpec`; None when ``text`` is a plain path (no known name).

    A name that looks like a benchmark but is not registered, an unknown split or a missing folder is a
    one-line :class:`~rwpost.errors.ConfigError`.
    """
    match = _SPEC.match(str(text))
    if match is None or (len(match["name"]) == 1 and not match["split"]):  # C:\... is a path
        return None
    name, folder = match["name"], Path(match["folder"]).expanduser()
    if name not in ADAPTERS:
        if Path(str(text)).exists():
            return None
        known = ", ".join(sorted(ADAPTERS))
        raise ConfigError(f"--data {text}: no benchmark named {name!r} (known: {known})")
    adapter = ADAPTERS[name]()
    split = match["split"] or adapter.splits[0]
    if split not in adapter.splits:
        raise ConfigError(f"--data {text}: {name} has no split {split!r} (have: {', '.join(adapter.splits)})")
    if not (folder.is_file() if adapter.takes_file else folder.is_dir()):
        kind = "file" if adapter.takes_file else "folder"
        raise ConfigError(f"--data {text}: {folder} is not a {kind} ({adapter.about})")
    return DataSpec(adapter, folder, split)


def record_object(row: Any, path: Path, line: int) -> tuple[dict[str, Any], Callable[..., RecordError]]:
    """A JSON record of ``path`` (starting on ``line``) as an object, with ``bad(problem, field=None)``: the
    :class:`~rwpost.errors.RecordError` naming the file, line and field of a problem in it. A record that is
    no object is refused with that error."""

    def bad(problem: str, field: str | None = None) -> RecordError:
        return RecordError(problem, source=str(path), line=line, field=field)

    if not isinstance(row, dict):
        raise bad(f"expected an object, found {type(row).__name__}")
    return row, bad


def json_records(path: Path, key: str | None = None) -> list[tuple[int, object]]:
    """The elements of the JSON array in ``path`` (or of its top-level object's ``key``), each with the line
    it starts on; a file that is not such an array is one :class:`~rwpost.errors.RecordError`."""
    text = read_text(path)  # bytes that are not UTF-8: one error naming the file and line
    start = len(text) - len(text.lstrip())
    if key is not None:
        found = re.compile(r'"' + re.escape(key) + r'"\s*:\s*\[').search(text, start)
        if not text[start:].startswith("{") or found is None:
            raise RecordError(f"expected a JSON object with a {key!r} array", source=str(path), line=1)
        start = found.end() - 1
    elif not text[start:].startswith("["):
        raise RecordError("expected a JSON array of records", source=str(path), line=1)
    pos, out = start + 1, []
    line, counted = 1, 0  # lines counted up to ``counted`` (incrementally: VisualNews has a million records)
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text):
            raise RecordError("the array is not closed", source=str(path), line=text.count("\n") + 1)
        if text[pos] == "]":
            return out
        line, counted = line + text.count("\n", counted, pos), pos
        value, pos = decode_json(text, str(path), at=pos)  # not JSON, nested too deeply: names the line
        out.append((line, value))


__all__ = [
    "ADAPTERS",
    "DataSpec",
    "DatasetAdapter",
    "LabelSpace",
    "json_records",
    "parse_data_spec",
    "record_object",
]
