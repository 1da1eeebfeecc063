"""A bounded least-recently-used cache of traced programs, one per jitted function."""

from __future__ import annotations

from collections import OrderedDict
from typing import NamedTuple


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    maxsize: int
    currsize: int


class LRUCache:
    """At most `maxsize` entries; the least recently used one goes first."""

    __slots__ = ("maxsize", "_data", "hits", "misses")

    def __init__(self, maxsize: int):
        if maxsize < 1:
            raise ValueError(f"jit: cache_size must be at least 1, got {maxsize}.")
        self.maxsize = maxsize
        self._data: OrderedDict = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key):
        entry = self._data.get(key)
        if entry is None:
            self.misses += 1
            return None
        self.hits += 1
        if len(self._data) > 1:
            self._data.move_to_end(key)
        return entry

    def put(self, key, entry) -> None:
        self._data[key] = entry
        self._data.move_to_end(key)
        while len(self._data) > self.maxsize:
            self._data.popitem(last=False)

    def clear(self) -> None:
        self._data.clear()

    def info(self) -> CacheInfo:
        return CacheInfo(self.hits, self.misses, self.maxsize, len(self._data))
