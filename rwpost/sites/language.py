"""The language of an article, detected from its body text (py3langid), never taken from ``<html lang>``.

``<html lang>`` is wrong on several fact-checkers (Reuters' Spanish and Portuguese pages say ``en``,
Tempo's Indonesian ones ``en``, VERA Files' Filipino ones ``en-US``; ../shared/multisite/SOURCES.md),
so it is kept as ``language_declared`` only. Chinese is told apart by script: ``zh-Hant`` when the text
has more characters only Big5 can write than characters only GB2312 can, else ``zh-Hans``.
"""

from __future__ import annotations

import re
from functools import cache

MAX_CHARS = 6000
"""How much of the body is read: enough for a stable answer, bounded on a long page."""

_WORD = re.compile(r"\w", re.UNICODE)


@cache
def _identifier():  # noqa: ANN202 (py3langid has no type hints)
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def _encodable(char: str, codec: str) -> bool:
    try:
        char.encode(codec)
    except UnicodeEncodeError:
        return False
    return True


def chinese_script(text: str) -> str:
    """``zh-Hant`` or ``zh-Hans`` by which script's own characters the text uses more."""
    traditional = simplified = 0
    for char in set(text):
        if "\u4e00" <= char <= "\u9fff":
            big5, gb = _encodable(char, "big5"), _encodable(char, "gb2312")
            traditional += big5 and not gb
            simplified += gb and not big5
    return "zh-Hant" if traditional > simplified else "zh-Hans"


def detect_language(text: str) -> tuple[str | None, float]:
    """The ISO 639-1 code of ``text`` (``zh-Hant`` / ``zh-Hans`` for Chinese) and the detector's
    probability; ``(None, 0.0)`` for a text with no letters."""
    sample = text[:MAX_CHARS]
    if len(_WORD.findall(sample)) < 3:
        return None, 0.0
    code, probability = _identifier().classify(sample)
    if code == "zh":
        code = chinese_script(sample)
    return code, float(probability)
