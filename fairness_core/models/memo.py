"""The process-wide memo behind the model cache: a second request for the same key returns the same object.

On its own (it imports only `fairness_core.config`, which imports nothing of the project) so that every module
that holds a process-wide object (the backends in `models.cache`, an endpoint's client in `models.endpoint`, the
lexicon models in `models.presets`) uses one dictionary without importing the others.

The memo holds at most `config.max_models()` objects (`FAIRNESS_LAB_MAX_MODELS`, default 8): past that the
least recently used one is let go (a caller still holding it keeps using it; the next request builds it
again), so a server whose visitors try many models does not grow without bound.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from fairness_core.config import max_models

# models, clients, lexicons: anything built once per process; the order is least recently used first
_models: OrderedDict[tuple[str, ...], Any] = OrderedDict()
_key_locks: dict[tuple[str, ...], threading.Lock] = {}
_registry_lock = threading.Lock()


def cached(key: tuple[str, ...], factory: Callable[[], Any]) -> Any:
    """The object stored under `key`, built by `factory` the first time only (until the memo lets it go)."""
    with _registry_lock:
        if key in _models:
            _models.move_to_end(key)
            return _models[key]
        lock = _key_locks.setdefault(key, threading.Lock())
    with lock:
        with _registry_lock:
            if key in _models:
                return _models[key]
        built = factory()
        with _registry_lock:
            _models[key] = built
            limit = max_models()
            while len(_models) > limit:
                evicted, _ = _models.popitem(last=False)
                if evicted != key:
                    _key_locks.pop(evicted, None)
        return built


def loaded_keys() -> list[tuple[str, ...]]:
    with _registry_lock:
        return list(_models)


def clear() -> None:
    """Drop every cached model (tests; freeing memory after switching models)."""
    with _registry_lock:
        _models.clear()
        _key_locks.clear()
