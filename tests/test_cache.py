"""The one sqlite key-value store (cache.py); its typed layers are tested in test_llm_cache.py and
test_filters_cache.py."""

from __future__ import annotations

from rwpost.cache import SqliteStore


def test_store_keeps_json_values_per_namespace_and_survives_reopening(tmp_path):
    with SqliteStore(tmp_path / "s.sqlite") as store:
        store.put("a", "k", {"x": [1, 2], "y": "é"})
        store.put("b", "k", 3)
        store.put("a", "first", 1, replace=False)
        store.put("a", "first", 2, replace=False)
        store.put("a", "replaced", 1)
        store.put("a", "replaced", 2)
    with SqliteStore(tmp_path / "s.sqlite") as store:
        assert store.get("a", "k") == {"x": [1, 2], "y": "é"}
        assert store.get("b", "k") == 3 and store.get("c", "k") is None
        assert store.get("a", "first") == 1, "replace=False: the first writer wins"
        assert store.get("a", "replaced") == 2
        assert store.contains("a", "k") and not store.contains("a", "missing")
        assert (store.count(), store.count("a"), store.count("b")) == (4, 3, 1)
