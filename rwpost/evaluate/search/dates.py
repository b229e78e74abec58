"""The day a search result was published, from the date text a search engine gives (for the leakage guard)."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

_DATE_FORMATS = ("%b %d, %Y", "%d %b %Y", "%B %d, %Y", "%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%d/%m/%Y")


_RELATIVE = re.compile(r"^(\d+|an?|one) (second|minute|hour|day|week|month|year)s? ago$")
_UNIT_DAYS = {"second": 0, "minute": 0, "hour": 0, "day": 1, "week": 7, "month": 30, "year": 365}


def parse_result_date(text: str | None, today: date | None = None) -> date | None:
    """The day of a result's date text (``Mar 3, 2020``, ``2020-03-03``...); None when undated.

    Google dates recent pages relatively (``3 days ago``, ``yesterday``): with ``today`` (the day the
    search ran) those are placed back from it, so the leakage guard sees that they are recent (hence
    after any older claim) instead of keeping them as undated; without ``today`` they stay undated."""
    if not text:
        return None
    value = re.sub(r"\s+", " ", str(text).strip())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(value, fmt).date()
        except ValueError:
            continue
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).date()
    except ValueError:
        pass
    if today is None:
        return None
    lowered = value.lower()
    if lowered in ("today", "just now"):
        return today
    if lowered == "yesterday":
        return today - timedelta(days=1)
    relative = _RELATIVE.match(lowered)
    if relative is None:
        return None
    count = int(relative.group(1)) if relative.group(1).isdigit() else 1
    return today - timedelta(days=count * _UNIT_DAYS[relative.group(2)])


__all__ = ["parse_result_date"]
