"""The one cache helper: a bounded, least-recently-used mapping owned by the object using it.

Process-global caches grow for as long as the process lives (the classifier service runs for
months); every cache of reclass-ng is an instance of this class held by an object, with a size
that says how much it may keep.
"""

from __future__ import annotations

from _thread import allocate_lock  # threading.Lock, without importing threading

TYPE_CHECKING = False  # typing costs every start ~2 ms: type checkers only
if TYPE_CHECKING:
    from collections.abc import Callable, Hashable
    from typing import Generic, TypeVar

    K = TypeVar("K", bound=Hashable)
    V = TypeVar("V")
else:  # at run time BoundedCache[...] appears in (unevaluated) annotations only
    K = V = None

    class Generic:
        def __class_getitem__(cls, parameters: object) -> type:
            return object


class BoundedCache(Generic[K, V]):
    """At most `size` entries; the least recently used ones go first. Thread-safe.

    `get(key, make)` is the cache of things made on demand. A memo table read for every scalar
    of a file (the YAML loader's) reads with `peek`, which is the kept mapping's own C `get`:
    no lock and no Python call, and a hit does not count as a use (the table is then bounded
    first in, first out).

    The entries are a plain dict, which keeps its keys in the order they were put (`get`
    moves a key it finds to the end): an OrderedDict's own bookkeeping on every new key cost
    the YAML loader's memo tables 0.45% of a 100-node render. A dict finds its oldest key by
    walking past the slots of the keys deleted before it, so going over the size drops the
    oldest eighth of the entries at once (at least one), not one per new key."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("a BoundedCache keeps at least one entry")
        self.size = size
        self._entries: dict[K, V] = {}
        self._lock = allocate_lock()
        # The kept value of a key or `default` (None), leaving the order alone. One C call
        # under the GIL, so safe against a concurrent `put` or `get`.
        self.peek: Callable[..., V | None] = self._entries.get

    def put(self, key: K, value: V) -> None:
        """Keep `value` for `key`, dropping the least recently used entries beyond the size.

        Without the lock: the memo tables call this for every new spelling, and storing is
        one C call under the GIL. A racing `get` then finds the key gone and makes it again;
        racing puts may drop a few entries too many, or keep some over the size for a
        moment."""
        entries = self._entries
        entries[key] = value
        if len(entries) > self.size:
            self._drop_oldest()

    def _drop_oldest(self) -> None:
        entries = self._entries
        # list() copies the keys in one C call, which no other thread can interleave with.
        for key in list(entries)[:len(entries) - self.size + self.size // 8]:
            entries.pop(key, None)  # None: dropped by a racing put already

    def get(self, key: K, make: Callable[[K], V]) -> V:
        """The value of `key`, made with `make(key)` (outside the lock) when not kept."""
        entries = self._entries
        with self._lock:
            try:
                value = entries.pop(key)
            except KeyError:
                pass
            else:
                entries[key] = value  # now the most recently used
                return value
        value = make(key)
        self.put(key, value)
        return value

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
