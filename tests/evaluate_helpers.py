"""Generated samples for evaluation tests (made up here, not real data: claims are placeholders)."""

from __future__ import annotations

from datetime import date

from rwpost.ids import record_id
from rwpost.labels import Label
from rwpost.records import Evidence, Provenance, Sample


def make_sample(n: int, label: Label | str | None, **fields) -> Sample:
    """A generated sample with a stable id; ``fields`` override anything."""
    url = f"https://www.snopes.com/fact-check/generated-{n}/"
    base = {
        "id": record_id(url),
        "claim": f"Generated claim number {n}.",
        "post_text": f"Generated post {n}",
        "label": Label(label) if label else None,
        "news_url": url,
        "category": "Generated",
        "claim_time": date(2020, 1, 1),
        "provenance": Provenance(backend="offline", source="generated in tests"),
    }
    base.update(fields)
    return Sample(**base)


def evidence(n: int, url: str = "https://example.org/e") -> list[Evidence]:
    """``n`` generated text evidence items with distinct URLs."""
    return [Evidence(id=i, type="Text", content=f"evidence {i}", url=f"{url}{i}") for i in range(1, n + 1)]
