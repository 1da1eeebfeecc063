"""The one cache class of functrans: bounded, least recently used first out, locked.

Every cache in the package (jit's per-function programs, the programs derived from a program by
grad, vmap and the other rules, the torch shim's backward programs, memoised shape rules) is an
`LRUCache`: it holds at most `maxsize` entries, and each method takes the cache's lock, so
threads may share one. A value is built outside the lock (building may trace, which may use
other caches); when two threads build the same key at once, the first value stored wins and
both get it.

`clear_caches()` empties every cache created with `register=True` (the default), as
`jax.clear_caches()` does.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Any, Callable, NamedTuple

_MISSING = object()


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    maxsize: int
    currsize: int


_registry: weakref.WeakSet = weakref.WeakSet()
_registry_lock = threading.Lock()


class LRUCache:
    """At most `maxsize` entries; the least recently used one goes first. Thread-safe.

    `on_evict(value)` runs (outside the lock) for each value dropped by the bound or by
    `clear()`, so a value holding memory can give it back at once.

    >>> c = LRUCache(2)
    >>> c.put("a", 1), c.put("b", 2), c.get("a"), c.put("c", 3)
    (1, 2, 1, 3)
    >>> c.keys()
    ['a', 'c']
    """

    __slots__ = ("maxsize", "name", "hits", "misses", "_data", "_lock", "_on_evict",
                 "__weakref__")

    def __init__(self, maxsize: int, *, name: str = "cache",
                 on_evict: Callable[[Any], None] | None = None, register: bool = True):
        if maxsize < 1:
            raise ValueError(f"{name}: cache_size must be at least 1, got {maxsize}.")
        self.maxsize = maxsize
        self.name = name
        self.hits = 0
        self.misses = 0
        self._data: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        self._on_evict = on_evict
        if register:
            with _registry_lock:
                _registry.add(self)

    def get(self, key, default=None):
        """The value of `key` (now the most recently used), or `default`."""
        with self._lock:
            value = self._data.get(key, _MISSING)
            if value is _MISSING:
                self.misses += 1
                return default
            self.hits += 1
            self._data.move_to_end(key)
            return value

    def peek(self, key, default=None):
        """The value of `key`, or `default`, without marking it used or counting: one dict
        read, atomic without the lock, for memo tables on the eager hot path."""
        return self._data.get(key, default)

    def put(self, key, value):
        """Store `value` under `key` unless a value is already there; return the stored one."""
        with self._lock:
            old = self._data.get(key, _MISSING)
            if old is not _MISSING:
                self._data.move_to_end(key)
                return old
            self._data[key] = value
            evicted = [self._data.popitem(last=False)[1]
                       for _ in range(len(self._data) - self.maxsize)]
        self._evicted(evicted)
        return value

    def get_or_build(self, key, build: Callable[[], Any]):
        """The value of `key`, built by `build()` (outside the lock) and stored on a miss."""
        value = self.get(key, _MISSING)
        if value is _MISSING:
            value = self.put(key, build())
        return value

    def clear(self) -> None:
        with self._lock:
            evicted = list(self._data.values())
            self._data.clear()
        self._evicted(evicted)

    def _evicted(self, values) -> None:
        if self._on_evict is not None:
            for v in values:
                self._on_evict(v)

    def keys(self) -> list:
        """The keys, least recently used first (a snapshot)."""
        with self._lock:
            return list(self._data)

    def values(self) -> list:
        """The values, least recently used first (a snapshot)."""
        with self._lock:
            return list(self._data.values())

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)

    def __contains__(self, key) -> bool:
        with self._lock:
            return key in self._data

    def info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(self.hits, self.misses, self.maxsize, len(self._data))

    def __repr__(self):
        return f"LRUCache({self.name}, {len(self._data)}/{self.maxsize})"


def clear_caches() -> None:
    """Empty every registered cache: each jitted function's programs (and the workspace
    buffers they hold), the torch shim's backward programs, memoised rules.

    >>> import functrans as ft
    >>> ft.clear_caches()
    """
    with _registry_lock:
        caches = list(_registry)
    for cache in caches:
        cache.clear()
