"""The prompt files (``rwpost/prompts/<name>.md``) and their one loader, for every LLM call.

A prompt file is markdown: YAML front matter (``name``, the file's stem; ``version``, which enters the
LLM cache key and the records' provenance; ``schema``, the answer schema in ``schemas/llm/``), then a
``# system`` and a ``# user`` section. The user section is a template whose ``{slot}`` placeholders
are filled by :meth:`Prompt.render_user`; HTML comments are notes for maintainers and never sent::

    ---
    name: post
    version: post-v1
    schema: post
    ---
    <!-- where the wording comes from; bump version when the text changes -->

    # system

    **Role:** You are ...

    # user

    Claim: {claim}
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from rwpost.errors import ConfigError
from rwpost.io import sha256_hex

PROMPT_DIR = Path(__file__).resolve().parent
"""The packaged prompt files (this package's folder)."""

_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n(.*)\Z", re.DOTALL)
_SECTION = re.compile(r"^# (system|user)[ \t]*$", re.MULTILINE)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_SLOT = re.compile(r"\{([A-Za-z_]\w*)\}")


@dataclass(frozen=True)
class Prompt:
    """One prompt file: its name, version, answer schema, system message and user template.

    ``sha256`` is the hash of the whole file, recorded where a run's identity must change with any
    edit (evaluation manifests).
    """

    name: str
    version: str
    schema_name: str
    system: str
    user_template: str
    sha256: str

    @property
    def slots(self) -> frozenset[str]:
        """The ``{slot}`` names of the user template."""
        return frozenset(_SLOT.findall(self.user_template))

    def render_user(self, **values: str) -> str:
        """The user message with each ``{slot}`` replaced; every slot needs a value and vice versa."""
        missing, unknown = sorted(self.slots - set(values)), sorted(set(values) - self.slots)
        if missing or unknown:
            problem = f"no value for {', '.join(missing)}" if missing else f"no slot {', '.join(unknown)}"
            raise ConfigError(f"prompt {self.name} ({self.version}): {problem}")
        return _SLOT.sub(lambda m: values[m.group(1)], self.user_template)


def parse_prompt(text: str, source: str) -> Prompt:
    """Parse the text of a prompt file; ``source`` (its path) names it in errors."""
    match = _FRONT_MATTER.match(text)
    if not match:
        raise ConfigError(f"{source}: a prompt file starts with --- front matter ---")
    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: front matter is not YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise ConfigError(f"{source}: front matter must be 'key: value' lines")
    for key in ("name", "version", "schema"):
        if not isinstance(meta.get(key), str) or not meta[key].strip():
            raise ConfigError(f"{source}: front matter needs a text {key!r}, found {meta.get(key)!r}")
    parts = _SECTION.split(_COMMENT.sub("", match.group(2)))
    names = parts[1::2]
    if parts[0].strip() or sorted(names) != ["system", "user"]:
        raise ConfigError(f"{source}: the body is one '# system' and one '# user' section, found {names}")
    sections = dict(zip(names, (body.strip() for body in parts[2::2]), strict=True))
    return Prompt(
        name=meta["name"],
        version=meta["version"],
        schema_name=meta["schema"],
        system=sections["system"],
        user_template=sections["user"],
        sha256=sha256_hex(text),
    )


@lru_cache(maxsize=32)
def load_prompt(name: str, directory: Path | None = None) -> Prompt:
    """The prompt ``<directory>/<name>.md`` (default: the package's ``rwpost/prompts/``)."""
    path = (directory or PROMPT_DIR) / f"{name}.md"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(f"prompt file not found: {path}") from exc
    prompt = parse_prompt(text, str(path))
    if prompt.name != name:
        raise ConfigError(f"{path}: front matter name {prompt.name!r} differs from the file name {name!r}")
    return prompt
