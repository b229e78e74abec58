"""A published dataset version: Parquet splits, the dataset card, checksums, verification and diffs.

Layout of ``data/rwpost/<version>/``::

    README.md                 dataset card (YAML ``configs`` so ``datasets.load_dataset(<folder>)`` works)
    main/dev.parquet  main/test.parquet  challenging/dev.parquet  challenging/test.parquet
    SHA256SUMS                checksums of every Parquet file (``sha256sum -c`` format)
    manifest.json             counts, checksums, build metadata (what the card is rendered from)
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rwpost.dataset import SUMS_LINE, features, read_parquet, write_parquet
from rwpost.errors import RwpostError
from rwpost.io import sha256_file, sha256_hex, write_json, write_text
from rwpost.labels import ALIASES, CHALLENGING_LABELS, MAIN_LABELS
from rwpost.markdown import markdown_table
from rwpost.records import SCHEMA_VERSION, Sample

if TYPE_CHECKING:  # huggingface_hub is imported where a card is made: reading a version (the stats stage,
    # `rwpost verify`) needs none of it, and its import (its HTTP client's httpx2, httpcore2, trio) is 0.2 s
    from huggingface_hub import DatasetCardData

SUBSETS: dict[str, tuple[str, ...]] = {
    "main": tuple(str(label) for label in MAIN_LABELS),
    "challenging": tuple(str(label) for label in CHALLENGING_LABELS),
}
SPLITS = ("dev", "test")


@dataclass
class BuildInfo:
    """What the card says about how a version was built (all from params and stage reports)."""

    version: str
    source: str
    extractor_backend: str
    extractor_model: str | None = None
    prompt_version: str | None = None
    prompt_changes: str | None = None
    """What the extractor's prompt (or rule) version changed, when its backend says (the card names it)."""
    date_window: tuple[str | None, str | None] = (None, None)
    seed: int = 0
    ratio: float = 4.29
    funnel: list[dict[str, Any]] = field(default_factory=list)
    generated_notes: list[str] = field(default_factory=list)
    license_note: str = ""


def write_version(samples: list[Sample], out_dir: Path, info: BuildInfo) -> dict[str, Any]:
    """Write the four split files, SHA256SUMS, manifest.json and the card; returns the manifest."""
    counts: dict[str, dict[str, dict[str, int]]] = {}
    checksums: dict[str, str] = {}
    for subset in SUBSETS:
        counts[subset] = {}
        for split in SPLITS:
            rows = sorted((s for s in samples if s.subset == subset and s.split == split), key=lambda s: s.id)
            rel = f"{subset}/{split}.parquet"
            write_parquet(out_dir / rel, rows)
            checksums[rel] = sha256_file(out_dir / rel)
            counts[subset][split] = dict(sorted(Counter(str(s.label) for s in rows).items()))
    manifest = {
        "name": "RW-Post",
        "version": info.version,
        "schema_version": SCHEMA_VERSION,
        "source": info.source,
        "extractor": {
            "backend": info.extractor_backend,
            "model": info.extractor_model,
            "prompt_version": info.prompt_version,
        },
        "date_window": list(info.date_window),
        "split": {"seed": info.seed, "dev_test_ratio": f"1:{info.ratio}"},
        "counts": counts,
        "funnel": info.funnel,
        "checksums": checksums,
        "categories": dict(sorted(Counter(s.category or "unknown" for s in samples).items())),
    }
    write_text(
        out_dir / "SHA256SUMS", "".join(f"{digest}  {rel}\n" for rel, digest in sorted(checksums.items()))
    )
    write_json(out_dir / "manifest.json", manifest)
    write_text(out_dir / "README.md", render_card(manifest, info))
    return manifest


def card_data(manifest: dict[str, Any]) -> DatasetCardData:
    """The card's metadata block: licence, tags and one ``configs`` entry per subset for ``load_dataset``."""
    from huggingface_hub import DatasetCardData

    configs = [
        {
            "config_name": subset,
            "data_files": [{"split": split, "path": f"{subset}/{split}.parquet"} for split in SPLITS],
            **({"default": True} if subset == "main" else {}),
        }
        for subset in SUBSETS
    ]
    return DatasetCardData(
        pretty_name="RW-Post",
        license="other",
        license_name="rw-post-research-noncommercial",
        language=["en"],
        task_categories=["image-text-to-text", "text-classification"],
        tags=["fact-checking", "misinformation", "multimodal", "snopes"],
        configs=configs,
    )


OFFLINE_EXTRACTION_NOTE = "Extraction used the offline rule backend, not an LLM."
"""The card's note on a version whose post, rationale and evidence came from the offline rules."""

_CARD_ORDER = ["pretty_name", "license", "license_name", "language", "task_categories", "tags", "configs"]


def _main_reasons(reasons: dict[str, int], shown: int = 3) -> str:
    """The ``shown`` largest reasons of a funnel step (ties by name), in the step's order."""
    largest = set(sorted(reasons, key=lambda k: (-reasons[k], k))[:shown])
    return ", ".join(f"{k} ({v})" for k, v in reasons.items() if k in largest)


def render_card(manifest: dict[str, Any], info: BuildInfo) -> str:
    """The dataset card (README.md) of a version, rendered from its manifest."""
    lines = ["", f"# RW-Post {manifest['version']}", ""]
    lines += [
        "A real-world multimodal fact-checking dataset built from Snopes fact-check articles "
        "(Xu et al., *Multimodal Fact-Checking: An Agent-based Approach*, 2025), rebuilt with the "
        "rwpost toolkit. Each sample links a claim to its original post (text, image, "
        "video, link), the fact-checker's reasoning and key points, and evidence with source URLs.",
        "",
        "## Load",
        "",
        "```python",
        "import datasets, rwpost",
        f'ds = datasets.load_dataset("data/rwpost/{manifest["version"]}", "main", split="test")',
        f'ds = rwpost.load("{manifest["version"]}", subset="main", split="test")',
        "```",
        "",
        "Published versions are immutable: rebuild under a new version name. If you rebuild one in place, "
        "`rwpost.load` notices (its cache is keyed by file checksum); plain `datasets.load_dataset` needs "
        '`download_mode="force_redownload"`.',
        "",
        "## How this version was built",
        "",
        f"- Source: {manifest['source']}",
        f"- Extractor backend: **{info.extractor_backend}**"
        + (f", model `{info.extractor_model}`" if info.extractor_model else "")
        + (f", prompt version `{info.prompt_version}`" if info.prompt_version else "")
        + (f" ({info.prompt_changes})" if info.prompt_changes else ""),
        f"- Source date window: {info.date_window[0] or 'any'} to {info.date_window[1] or 'today'}",
        f"- Splits: dev : test = 1 : {info.ratio} per label (paper section III), stratified by label and "
        f"category, near-duplicate clusters kept on one side, seed {info.seed}",
        f"- Record schema version: {manifest['schema_version']}",
        "- Labels: Snopes ratings mapped by paper Table II; "
        + "; ".join(f'"{alias}" is read as "{target}" ({why})' for alias, (target, why) in ALIASES.items())
        + '; "No Rating" and pages without a rating are set aside as `unrated`.',
        "",
    ]
    notes = list(info.generated_notes)
    if info.extractor_backend == "offline" and OFFLINE_EXTRACTION_NOTE not in notes:
        notes.append(
            OFFLINE_EXTRACTION_NOTE
        )  # from the build itself: a params note cannot follow the backend
    if notes:
        lines += ["### What is generated, not real", ""] + [f"- {note}" for note in notes] + [""]
    labels = _all_labels()
    counts = [
        [subset, split, *(labels_of.get(lab, 0) for lab in labels), sum(labels_of.values())]
        for subset, splits in manifest["counts"].items()
        for split, labels_of in splits.items()
    ]
    lines += [
        "## Counts",
        "",
        *markdown_table(["set", "split", *labels, "total"], counts, "ll" + "r" * (len(labels) + 1)),
        "",
    ]
    if info.funnel:
        funnel = [
            [
                step["step"],
                step["in"],
                step["removed"],
                step["out"],
                _main_reasons(step.get("reasons") or {}),
            ]
            for step in info.funnel
        ]
        lines += [
            "## Funnel",
            "",
            *markdown_table(["step", "in", "removed", "out", "main reasons"], funnel, "lrrrl"),
        ]
        lines.append("")
    columns = [[f"`{name}`", _feature_type(feature)] for name, feature in features().items()]
    lines += ["## Features", "", *markdown_table(["column", "type"], columns)]
    lines += [
        "",
        "## Categories",
        "",
        *markdown_table(["category", "samples"], manifest["categories"].items(), "lr"),
    ]
    files = [[f"`{rel}`", f"`{digest}`"] for rel, digest in sorted(manifest["checksums"].items())]
    lines += ["", "## Checksums (SHA-256)", "", *markdown_table(["file", "sha256"], files)]
    lines += [
        "",
        "Verify with `rwpost verify <this folder>` or `sha256sum -c SHA256SUMS`.",
        "",
        "## Licence and usage",
        "",
        info.license_note or _DEFAULT_LICENSE,
        "",
    ]
    from huggingface_hub import DatasetCard

    meta = card_data(manifest).to_yaml(original_order=_CARD_ORDER)
    return str(DatasetCard(f"---\n{meta}\n---\n" + "\n".join(lines)))


_DEFAULT_LICENSE = (
    "Research and non-commercial use only; cite the RW-Post paper (Xu et al., 2025, arXiv:2512.22933). "
    "Claims, ratings and texts derive from Snopes articles, which remain the property of their copyright "
    "holders; images belong to their owners. Do not use for harassment, surveillance, automated "
    "misinformation generation or resale. In open-web evaluation, block fact-checking domains and "
    "evidence dated after `claim_time` to avoid label leakage."
)


def _all_labels() -> list[str]:
    return [lab for labels in SUBSETS.values() for lab in labels]


def _feature_type(feature: Any) -> str:
    name = type(feature).__name__
    if name == "Value":
        return feature.dtype
    if isinstance(feature, dict):
        return "struct{" + ", ".join(feature) + "}"
    return name


def verify_version(version_dir: Path) -> list[str]:
    """Problems found checking every file against SHA256SUMS and the card (empty list: all good).

    Every line of SHA256SUMS must be ``<sha256>  <file>`` (``sha256sum`` format) naming a file that exists,
    with that checksum, which the card also carries; and every split file of the folder must be listed:
    an emptied SHA256SUMS or an added Parquet file is a problem, never a pass."""
    sums = version_dir / "SHA256SUMS"
    if not sums.exists():
        return [f"{sums}: missing"]
    try:
        lines = sums.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        return [f"{sums}: unreadable ({exc})"]
    problems = []
    card_path = version_dir / "README.md"
    try:
        card = card_path.read_text(encoding="utf-8") if card_path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        return [f"{card_path}: unreadable ({exc})"]
    listed: set[str] = set()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        match = SUMS_LINE.fullmatch(line.rstrip())
        if match is None:
            problems.append(f"SHA256SUMS line {number}: not '<sha256>  <file>'")
            continue
        digest, rel = match.group(1).lower(), match.group(2)
        if Path(rel).is_absolute() or ".." in Path(rel).parts:  # checksums vouch for this folder only
            problems.append(f"SHA256SUMS line {number}: {rel} is outside the version folder")
            continue
        listed.add(rel)
        path = version_dir / rel
        if not path.is_file():
            problems.append(f"{rel}: missing")
        elif sha256_file(path) != digest:
            problems.append(f"{rel}: checksum mismatch")
        if digest not in card:
            problems.append(f"{rel}: checksum not in README.md card")
    if not listed:
        problems.append("SHA256SUMS lists no files")
    for path in sorted(version_dir.glob("*/*.parquet")):
        rel = path.relative_to(version_dir).as_posix()
        if rel not in listed:
            problems.append(f"{rel}: not in SHA256SUMS")
    return problems


def _row_digest(sample: Sample) -> str:
    payload = sample.model_dump(mode="json", exclude={"image"})
    payload["image_sha"] = sha256_hex(sample.image.bytes) if sample.image and sample.image.bytes else None
    return sha256_hex(json.dumps(payload, sort_keys=True))


def load_version_samples(version_dir: Path) -> dict[str, Sample]:
    """Every sample of a version folder by id."""
    files = sorted(version_dir.glob("*/*.parquet"))
    if not files:
        raise RwpostError(f"{version_dir}: no <subset>/<split>.parquet files")
    return {s.id: s for f in files for s in read_parquet(f)}


def diff_versions(old_dir: Path, new_dir: Path) -> dict[str, Any]:
    """Sample ids added, removed and changed (with the changed fields) between two versions."""
    old, new = load_version_samples(old_dir), load_version_samples(new_dir)
    changed = {}
    for sid in sorted(old.keys() & new.keys()):
        if _row_digest(old[sid]) != _row_digest(new[sid]):
            a, b = old[sid].model_dump(), new[sid].model_dump()
            changed[sid] = sorted(k for k in a if a[k] != b[k])
    return {
        "old": str(old_dir),
        "new": str(new_dir),
        "added": sorted(new.keys() - old.keys()),
        "removed": sorted(old.keys() - new.keys()),
        "changed": changed,
    }


# --- the multi-site config -------------------------------------------------------------------------

MULTISITE_CONFIG = "multisite"
"""The dataset config of the multi-site build (``datasets.load_dataset(folder, "multisite")``); the Snopes
build's ``main`` / ``challenging`` configs and card are another version folder, untouched by it."""

MULTISITE_OFFLINE_NOTE = (
    "Extraction used the offline rules: the post is the ClaimReview's appearance URL (itemReviewed."
    "appearance / firstAppearance), evidence candidates are the article body's links; no rationale or key "
    "points without an LLM."
)


@dataclass
class SiteBuildInfo:
    """What the multi-site card says about how its version was built (all from the stage's counts)."""

    version: str
    source: str
    seed: int = 0
    ratio: float = 4.29
    label_tables_version: str = ""
    funnel: list[dict[str, Any]] = field(default_factory=list)
    exclusions: dict[str, int] = field(default_factory=dict)
    coverage: list[dict[str, Any]] = field(default_factory=list)
    """Per site: pages, how many carried ClaimReview in JSON-LD / microdata / RDFa / only the feed / none,
    and how many gave appearances (the post)."""
    generated_notes: list[str] = field(default_factory=list)


def write_multisite_version(samples: list[Any], out_dir: Path, info: SiteBuildInfo) -> dict[str, Any]:
    """Write ``multisite/{dev,test}.parquet`` (:class:`~rwpost.records.SiteSample`), SHA256SUMS,
    manifest.json and the card of a multi-site version; returns the manifest."""
    from rwpost.records import SiteSample

    checksums: dict[str, str] = {}
    counts: dict[str, dict[str, int]] = {}
    for split in SPLITS:
        rows = sorted((s for s in samples if s.split == split), key=lambda s: s.id)
        rel = f"{MULTISITE_CONFIG}/{split}.parquet"
        write_parquet(out_dir / rel, rows, SiteSample)
        checksums[rel] = sha256_file(out_dir / rel)
        counts[split] = dict(sorted(Counter(str(s.label) for s in rows).items()))
    by_publisher: dict[str, dict[str, dict[str, int]]] = {}
    for sample in sorted(samples, key=lambda s: (s.publisher, s.language or "", s.id)):
        cell = by_publisher.setdefault(sample.publisher, {}).setdefault(sample.language or "und", {})
        cell[str(sample.label)] = cell.get(str(sample.label), 0) + 1
    manifest = {
        "name": "RW-Post multisite",
        "version": info.version,
        "config": MULTISITE_CONFIG,
        "schema_version": SCHEMA_VERSION,
        "source": info.source,
        "label_tables_version": info.label_tables_version,
        "split": {"seed": info.seed, "dev_test_ratio": f"1:{info.ratio}"},
        "counts": counts,
        "by_publisher": by_publisher,
        "coverage": info.coverage,
        "exclusions": dict(sorted(info.exclusions.items())),
        "funnel": info.funnel,
        "redistributable": sum(1 for s in samples if s.redistributable),
        "checksums": checksums,
    }
    write_text(
        out_dir / "SHA256SUMS", "".join(f"{digest}  {rel}\n" for rel, digest in sorted(checksums.items()))
    )
    write_json(out_dir / "manifest.json", manifest)
    write_text(out_dir / "README.md", render_multisite_card(manifest, info))
    return manifest


def render_multisite_card(manifest: dict[str, Any], info: SiteBuildInfo) -> str:
    """The multi-site version's card: load, how it was built, the per-publisher x language x label table,
    ClaimReview coverage per site, every exclusion reason, features, checksums, licence."""
    from rwpost.records import SiteSample

    labels = _all_labels()
    lines = ["", f"# RW-Post multisite {manifest['version']}", ""]
    lines += [
        "RW-Post samples from fact-checkers other than Snopes, in any language: each links a claim to its "
        "post, the publisher's verdict (as written and as an RW-Post label) and evidence candidates, read "
        "from the pages' schema.org ClaimReview markup (or a ClaimReview feed) by the rwpost toolkit. "
        "No article body is published.",
        "",
        "## Load",
        "",
        "```python",
        "import datasets",
        f'ds = datasets.load_dataset("<this folder>", "{MULTISITE_CONFIG}", split="test")',
        "```",
        "",
        "## How this version was built",
        "",
        f"- Source: {manifest['source']}",
        f"- Labels: per-publisher tables (sites.yaml) then per-language tables (rwpost.labels, version "
        f"{info.label_tables_version}), then `ratingValue` at the ends of its scale; anything else is set "
        "aside as `unmapped-rating` (see Exclusions; `rwpost labels --unknown` lists them).",
        "- Language: detected from the article body (py3langid), never from `<html lang>`.",
        f"- Splits: dev : test = 1 : {info.ratio} per label, seed {info.seed}",
        "",
        "### What is generated, not real",
        "",
        *[f"- {note}" for note in [*info.generated_notes, MULTISITE_OFFLINE_NOTE]],
        "",
        "## Counts",
        "",
        *markdown_table(
            ["split", *labels, "total"],
            [
                [split, *(c.get(lab, 0) for lab in labels), sum(c.values())]
                for split, c in manifest["counts"].items()
            ],
            "l" + "r" * (len(labels) + 1),
        ),
        "",
        "## Publisher x language x label",
        "",
        *markdown_table(
            ["publisher", "language", *labels, "total"],
            [
                [publisher, language, *(c.get(lab, 0) for lab in labels), sum(c.values())]
                for publisher, by_language in manifest["by_publisher"].items()
                for language, c in by_language.items()
            ],
            "ll" + "r" * (len(labels) + 1),
        ),
        "",
        "## ClaimReview coverage per site",
        "",
        *markdown_table(
            ["site", "pages", "JSON-LD", "microdata", "RDFa", "feed only", "none", "appearances"],
            [
                [
                    c["site"],
                    c["pages"],
                    c["json-ld"],
                    c["microdata"],
                    c["rdfa"],
                    c["feed"],
                    c["none"],
                    c["appearances"],
                ]
                for c in manifest["coverage"]
            ],
            "lrrrrrrr",
        ),
        "",
        "## Exclusions",
        "",
        *markdown_table(["reason", "pages"], list(manifest["exclusions"].items()) or [["(none)", 0]], "lr"),
        "",
    ]
    if info.funnel:
        funnel = [
            [
                s["step"],
                s["in"],
                s["removed"],
                s["out"],
                ", ".join(f"{k} ({v})" for k, v in (s.get("reasons") or {}).items()),
            ]
            for s in info.funnel
        ]
        lines += [
            "## Funnel",
            "",
            *markdown_table(["step", "in", "removed", "out", "reasons"], funnel, "lrrrl"),
            "",
        ]
    columns = [[f"`{name}`", _feature_type(feature)] for name, feature in features(SiteSample).items()]
    lines += ["## Features", "", *markdown_table(["column", "type"], columns), ""]
    files = [[f"`{rel}`", f"`{digest}`"] for rel, digest in sorted(manifest["checksums"].items())]
    lines += ["## Checksums (SHA-256)", "", *markdown_table(["file", "sha256"], files), ""]
    lines += [
        "## Licence and usage",
        "",
        f"Each record carries its own `licence` (the markup's `sdLicense` where given, else the site's terms "
        f"in sites.yaml) and `redistributable` ({manifest['redistributable']} of them are). The articles "
        "remain their publishers' property: only facts and links are published, never the article body. "
        "Research and non-commercial use only.",
        "",
    ]
    from huggingface_hub import DatasetCard, DatasetCardData

    meta = DatasetCardData(
        pretty_name="RW-Post multisite",
        license="other",
        license_name="rw-post-research-noncommercial",
        language=sorted({lang for by in manifest["by_publisher"].values() for lang in by if lang != "und"}),
        task_categories=["text-classification"],
        tags=["fact-checking", "misinformation", "claimreview", "multilingual"],
        configs=[
            {
                "config_name": MULTISITE_CONFIG,
                "data_files": [{"split": s, "path": f"{MULTISITE_CONFIG}/{s}.parquet"} for s in SPLITS],
                "default": True,
            }
        ],
    ).to_yaml(original_order=_CARD_ORDER)
    return str(DatasetCard(f"---\n{meta}\n---\n" + "\n".join(lines)))
