"""Filter measurements in the one sqlite store, per filter and version (filters/cache.py)."""

from __future__ import annotations

from rwpost.filters.cache import MeasurementCache


def test_measurements_are_kept_per_filter_and_version(tmp_path):
    path = tmp_path / "m.sqlite"
    with MeasurementCache(path) as cache:
        cache.put("size", "1", "abc", {"width": 3})
    with MeasurementCache(path) as cache:
        assert cache.get("size", "1", "abc") == {"width": 3}
        assert cache.get("size", "2", "abc") is None, "a new filter version measures afresh"
        cache.put("size", "2", "abc", {"width": 4})
        cache.put("ocr", "1", "abc", {"text": "x"})
        assert (cache.count(), cache.count("size"), cache.count("ocr")) == (3, 2, 1)
