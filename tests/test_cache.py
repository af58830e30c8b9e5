"""The one cache helper (reclass_ng.cache.BoundedCache): bounded, least recently used first."""

from __future__ import annotations

import pytest

from reclass_ng.cache import BoundedCache


def test_a_value_is_made_once_while_it_is_kept() -> None:
    made: list[str] = []
    cache: BoundedCache[str, str] = BoundedCache(2)

    def make(key: str) -> str:
        made.append(key)
        return key.upper()

    assert cache.get("a", make) == "A"
    assert cache.get("a", make) == "A"
    assert made == ["a"]


def test_the_least_recently_used_entry_goes_first() -> None:
    cache: BoundedCache[str, str] = BoundedCache(2)
    for key in ("a", "b"):
        cache.get(key, str.upper)
    cache.get("a", str.upper)  # `a` is now the most recently used
    cache.get("c", str.upper)  # over the size: `b` goes
    assert len(cache) == 2
    made: list[str] = []
    cache.get("a", lambda key: made.append(key) or key)
    cache.get("b", lambda key: made.append(key) or key)
    assert made == ["b"]


def test_a_failed_make_keeps_nothing_and_a_cache_keeps_at_least_one() -> None:
    cache: BoundedCache[str, str] = BoundedCache(1)
    with pytest.raises(ValueError):
        cache.get("a", lambda key: (_ for _ in ()).throw(ValueError(key)))
    assert len(cache) == 0
    with pytest.raises(ValueError):
        BoundedCache(0)


def test_put_keeps_a_value_and_peek_reads_it_without_using_it() -> None:
    # The YAML loader's memo tables: `put` on a miss, `peek` (no lock, no recency) per scalar.
    cache: BoundedCache[str, object] = BoundedCache(2)
    missing = object()
    assert cache.peek("a", missing) is missing
    cache.put("a", None)  # a kept None is told apart from a missing key by the default
    cache.put("b", 2)
    assert cache.peek("a", missing) is None
    cache.put("c", 3)  # peeking did not make `a` recently used: it goes first
    assert cache.peek("a", missing) is missing
    assert (cache.peek("b"), cache.peek("c"), len(cache)) == (2, 3, 2)


def test_over_the_size_the_oldest_eighth_goes_at_once() -> None:
    # A dict finds its oldest key by walking past the keys deleted before it: dropping one
    # entry per new key would walk further at every put of a full cache.
    cache: BoundedCache[int, int] = BoundedCache(16)
    for key in range(16):
        cache.put(key, key)
    cache.get(0, str)  # used again: no longer the oldest
    cache.put(16, 16)
    assert len(cache) == 14
    assert [key for key in range(17) if cache.peek(key) is None] == [1, 2, 3]
    for key in range(17, 1000):  # a long run of new keys stays within the size
        cache.put(key, key)
        assert len(cache) <= 16
    assert cache.peek(999) == 999
