"""Publishing a version (rwpost.publish): the card, checksums, verify and diff."""

from __future__ import annotations

import pytest

from rwpost.publish import OFFLINE_EXTRACTION_NOTE, BuildInfo, write_version
from rwpost.rwpost_format import read_released
from rwpost.splits import assign_splits
from tests.conftest import DEV


@pytest.mark.hostile
class TestHostile:
    """A hostile user on the data commands (stats, import-released, export-released, verify, diff, labels):
    odd inputs are one line naming the file, line or record, never exit 70; no input is overwritten.

    Every input is built from the authors' released records in data/sample/released/ and real Parquet
    files written by rwpost's own publish step."""

    def test_the_card_says_extraction_was_offline_only_when_it_was(self, tmp_path):
        samples = assign_splits(read_released(DEV), seed=1)
        notes = ["Every image is a generated stand-in drawn with Pillow."]
        offline = write_version(
            samples, tmp_path / "a", BuildInfo("a", "test", "offline", generated_notes=notes)
        )
        card = (tmp_path / "a" / "README.md").read_text(encoding="utf-8")
        assert card.count(OFFLINE_EXTRACTION_NOTE) == 1 and offline["extractor"]["backend"] == "offline"
        write_version(samples, tmp_path / "b", BuildInfo("b", "test", "llm", generated_notes=notes))
        card = (tmp_path / "b" / "README.md").read_text(encoding="utf-8")
        assert "Extractor backend: **llm**" in card and OFFLINE_EXTRACTION_NOTE not in card
        notes_twice = [*notes, OFFLINE_EXTRACTION_NOTE]  # params.yaml still carrying the note: said once
        write_version(samples, tmp_path / "c", BuildInfo("c", "test", "offline", generated_notes=notes_twice))
        assert (tmp_path / "c" / "README.md").read_text(encoding="utf-8").count(OFFLINE_EXTRACTION_NOTE) == 1


def test_the_cards_main_reasons_are_the_three_largest(tmp_path):
    # issue 39 §2 (new-user D6): the card showed the first three alphabetically and left out too_short (18)
    samples = assign_splits(read_released(DEV), seed=1)
    reasons = {"image_missing": 2, "image_too_small": 31, "image_unavailable": 1, "too_short": 18}
    step = {"step": "filter: size", "in": 105, "removed": 52, "out": 53, "reasons": reasons}
    write_version(samples, tmp_path / "v", BuildInfo("v", "test", "offline", funnel=[step]))
    card = (tmp_path / "v" / "README.md").read_text(encoding="utf-8")
    assert (
        "| filter: size | 105 | 52 | 53 | image_missing (2), image_too_small (31), too_short (18) |" in card
    )


def test_the_card_says_what_the_offline_rules_version_changed(tmp_path):
    """Issue 39: the offline rules' v4 changed the published evidence (the cover is no longer every such
    article's first item); the split stage's card names the version and what it changed, from the rules'
    own RULE_CHANGES (an LLM build's card does not)."""
    from rwpost.extract.offline import PROMPT_VERSION, RULE_CHANGES
    from rwpost.io import write_jsonl
    from rwpost.records import Provenance
    from rwpost.stages import split
    from tests.conftest import PARAMS

    cards = {}
    for backend, version in (("offline", PROMPT_VERSION), ("llm", "extract-v2")):
        provenance = Provenance(backend=backend, prompt_version=version)
        samples = [s.model_copy(update={"provenance": provenance}) for s in read_released(DEV)]
        path = tmp_path / f"{backend}.jsonl"
        write_jsonl(path, samples)
        dataset = {**PARAMS["dataset"], "root": str(tmp_path / backend)}
        params = split.Params.from_params({**PARAMS, "dataset": dataset, "split": {"input": str(path)}})
        split.run(params)
        cards[backend] = (tmp_path / backend / PARAMS["dataset"]["version"] / "README.md").read_text()
    said = f"prompt version `{PROMPT_VERSION}` ({RULE_CHANGES[PROMPT_VERSION]})"
    assert said in cards["offline"] and "is evidence only where the body cites it" in said
    assert "prompt version `extract-v2`\n" in cards["llm"]
