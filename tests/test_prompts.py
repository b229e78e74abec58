"""The one prompt file format: every packaged prompt loads, renders its slots, and bad files are named."""

from __future__ import annotations

from pathlib import Path

import pytest

from rwpost.errors import ConfigError
from rwpost.filters.llm import necessity_prompt, watermark_prompt
from rwpost.llm import load_llm_schema
from rwpost.prompts import PROMPT_DIR, load_prompt, parse_prompt

GOOD = """---
name: demo
version: demo-v1
schema: rationale
---
<!-- a note for maintainers, never sent -->

# system

You check {facts}.

# user

Claim: {claim}
Rating: {rating}
"""


def test_every_packaged_prompt_loads_with_its_version_schema_and_hash():
    names = sorted(path.stem for path in PROMPT_DIR.glob("*.md"))
    agentfact = [f"{n}.v1" for n in ("plan", "query", "reason", "source", "summarise")]
    agentfact += [
        f"{n}.v2" for n in ("explain", "image_match", "miscaption")
    ]  # the appendix's dropped rules back
    agentfact += ["baseline_evi.v1", "baseline_no_evi.v1"]  # the authors' baseline LVLM prompts
    code = (
        "explain",
        "extract",
        "final_reason",
        "image_match",
        "miscaption",
        "plan",
        "query",
        "reason",
        "source",
    )
    m3d = ("cross", "entities", "image", "image_analysis", "image_critic", "judge", "logic", "plan", "text")
    assert names == sorted(
        [f"agentfact_{n}" for n in agentfact]
        + [f"agentfact_code_{n}.v1" for n in code]  # profile=authors-code, transcribed from their code
        + [f"agentm3d_{n}.v1" for n in (*m3d, "text_critic")]
        + ["factguard_turn1.v1", "factguard_turn2.v2"]
        + ["detect_zero_shot.v1", "detect_zero_shot.v2", "evidence", "necessity_s2", "post", "rationale"]
        + ["watermark_s1"]
        + [f"{n}_multisite" for n in ("post", "rationale", "evidence")]  # any language (the multisite stage)
        + [f"t2agent_{n}.v1" for n in ("init", "text", "image", "match", "trajectory", "confidence")]
        + [f"t2agent_{n}.v1" for n in ("vqa", "entity", "counterfactual")]
        + ["t2agent_subtask.v1", "t2agent_init_sources.v1"]  # a user-defined sub-task set
    )
    for name in names:
        prompt = load_prompt(name)
        # the authors' own prompts (baseline LVLMs, authors-code profile) send no system message, as theirs
        authors = name.startswith(("agentfact_baseline_", "agentfact_code_"))
        assert prompt.name == name and prompt.version and prompt.user_template
        assert bool(prompt.system) != authors, name
        assert load_llm_schema(prompt.schema_name)
        assert len(prompt.sha256) == 64
        assert "<!--" not in prompt.system + prompt.user_template


def test_sections_slots_and_comments():
    prompt = parse_prompt(GOOD, "demo.md")
    assert (prompt.name, prompt.version, prompt.schema_name) == ("demo", "demo-v1", "rationale")
    assert prompt.system == "You check {facts}."  # the system message is sent as written
    assert prompt.slots == {"claim", "rating"}
    assert prompt.render_user(claim="a {rating} b", rating="False") == "Claim: a {rating} b\nRating: False"


def test_render_needs_every_slot_and_no_other():
    prompt = parse_prompt(GOOD, "demo.md")
    with pytest.raises(ConfigError, match=r"demo \(demo-v1\): no value for rating"):
        prompt.render_user(claim="x")
    with pytest.raises(ConfigError, match="no slot colour"):
        prompt.render_user(claim="x", rating="y", colour="z")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("# system\nx\n# user\ny\n", "starts with --- front matter"),
        ("---\nname: demo\nschema: s\n---\n# system\nx\n# user\ny\n", "needs a text 'version'"),
        ("---\nname: demo\nversion: 1\nschema: s\n---\n# system\nx\n# user\ny\n", "needs a text 'version'"),
        ("---\nname: demo\nversion: v\nschema: s\n---\n# system\nx\n", "one '# system' and one '# user'"),
        ("---\nname: demo\nversion: v\nschema: s\n---\nstray\n# system\nx\n# user\ny\n", "one '# system'"),
    ],
)
def test_a_malformed_prompt_file_is_named_in_the_error(text, problem):
    with pytest.raises(ConfigError, match="demo.md: .*" + problem.replace("(", r"\(")):
        parse_prompt(text, "demo.md")


def test_the_file_name_must_match_the_front_matter_name(tmp_path: Path):
    (tmp_path / "other.md").write_text(GOOD, encoding="utf-8")
    with pytest.raises(ConfigError, match="front matter name 'demo' differs from the file name 'other'"):
        load_prompt("other", tmp_path)
    with pytest.raises(ConfigError, match="prompt file not found"):
        load_prompt("missing", tmp_path)


def test_filter_prompts_are_the_papers_tables():
    assert watermark_prompt().startswith("Role: You are an expert in image verification")
    table_s1_format = '{ "watermarked": true/false, "matched_keywords": ["..."], "reason": "" }'
    assert watermark_prompt().endswith(table_s1_format)
    assert necessity_prompt("The Pope wore a puffer jacket.").endswith(
        '{ "image_required": "yes | no | unsure", "reason": "" }\n\nClaim: The Pope wore a puffer jacket.'
    )


def test_prompts_are_versioned_files_with_both_parts():
    for name in ("post", "rationale", "evidence"):
        prompt = load_prompt(name)
        assert prompt.version == f"{name}-v1" and prompt.schema_name == name
        assert "{article}" in prompt.user_template and prompt.system
