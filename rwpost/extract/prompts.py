"""Versioned prompt files (``rwpost/prompts/<name>.md``): front matter, a system and a user part.

The ``version`` in the front matter enters the LLM cache key: edit a prompt, bump its version, and
only calls made with the new text are re-bought.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from rwpost.errors import ConfigError

PROMPT_DIR = Path(__file__).resolve().parents[1] / "prompts"
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


@dataclass(frozen=True)
class Prompt:
    """One extraction prompt: its name, version, answer schema name and the two message templates."""

    name: str
    version: str
    schema_name: str
    system: str
    user_template: str

    def render_user(self, **values: str) -> str:
        """The user message with every ``{{name}}`` replaced (all must be given)."""
        missing = sorted(set(_PLACEHOLDER.findall(self.user_template)) - set(values))
        if missing:
            raise ConfigError(f"prompt {self.name} ({self.version}): no value for {', '.join(missing)}")
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], self.user_template)


def parse_prompt(text: str, source: str) -> Prompt:
    """Parse a prompt file's text (front matter, ``## system``, ``## user``)."""
    match = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.DOTALL)
    if not match:
        raise ConfigError(f"{source}: a prompt file starts with --- front matter ---")
    meta = dict(
        (key.strip(), value.strip())
        for key, _, value in (line.partition(":") for line in match.group(1).splitlines())
        if key.strip()
    )
    body = re.sub(r"<!--.*?-->", "", match.group(2), flags=re.DOTALL)
    parts = re.split(r"^## (system|user)\s*$", body, flags=re.MULTILINE)
    sections = {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    for field in ("name", "version", "schema"):
        if not meta.get(field):
            raise ConfigError(f"{source}: front matter lacks {field!r}")
    if "system" not in sections or "user" not in sections:
        raise ConfigError(f"{source}: a prompt file needs '## system' and '## user' sections")
    return Prompt(meta["name"], meta["version"], meta["schema"], sections["system"], sections["user"])


@lru_cache(maxsize=16)
def load_prompt(name: str, directory: Path | None = None) -> Prompt:
    """The prompt ``<directory>/<name>.md`` (default: the package's ``rwpost/prompts/``)."""
    path = (directory or PROMPT_DIR) / f"{name}.md"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(f"prompt file not found: {path}") from exc
    return parse_prompt(text, str(path))
