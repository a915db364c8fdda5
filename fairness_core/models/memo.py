"""The process-wide memo behind the model cache: a second request for the same key returns the same object.

On its own (it imports nothing of the project) so that every module that holds a process-wide object (the
backends in `models.cache`, an endpoint's client in `models.endpoint`, the lexicon models in `models.presets`)
uses one dictionary without importing the others.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

_models: dict[tuple[str, ...], Any] = {}  # models, clients, lexicons: anything built once per process
_key_locks: dict[tuple[str, ...], threading.Lock] = {}
_registry_lock = threading.Lock()


def cached(key: tuple[str, ...], factory: Callable[[], Any]) -> Any:
    """The object stored under `key`, built by `factory` the first time only."""
    with _registry_lock:
        if key in _models:
            return _models[key]
        lock = _key_locks.setdefault(key, threading.Lock())
    with lock:
        if key not in _models:
            _models[key] = factory()
        return _models[key]


def loaded_keys() -> list[tuple[str, ...]]:
    with _registry_lock:
        return list(_models)


def clear() -> None:
    """Drop every cached model (tests; freeing memory after switching models)."""
    with _registry_lock:
        _models.clear()
        _key_locks.clear()
