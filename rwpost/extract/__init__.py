"""Post, rationale and evidence extraction from tagged articles (paper III-B.3).

Two backends produce the same :class:`rwpost.records.Extraction`:

- :class:`~rwpost.extract.llm.LLMExtractor`: three structured LLM calls per article (prompts in
  ``rwpost/prompts/``, answer schemas in ``schemas/llm/``), links referred to by tag id and mapped
  back to exact URLs; unknown links are dropped and listed in ``hallucinated_urls``;
- :class:`~rwpost.extract.offline.OfflineExtractor`: deterministic rules, no API (the default when
  no API key is set).

``Extraction.provenance`` names the backend, model and prompt version that built each record.
"""

from rwpost.extract.llm import ExtractionFailure, LLMExtractor, assemble
from rwpost.extract.offline import OfflineExtractor

__all__ = ["ExtractionFailure", "LLMExtractor", "OfflineExtractor", "assemble"]
