"""One process-wide model cache: a second request for the same key returns the same object.

Streamlit reruns, concurrent sessions and CLI commands all go through `load_model`, so a model is
loaded at most once per process. Loads of different models run concurrently; two threads asking
for the same key wait for one load.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from fairness_core.models.interfaces import ModelBase
from fairness_core.models.spec import ModelSpec

_models: dict[tuple[str, ...], ModelBase] = {}
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


def load_model(spec: ModelSpec) -> ModelBase:
    """Load (or fetch from the cache) the backend for `spec`. Raises ModelUnavailableError."""
    if spec.is_endpoint:
        from fairness_core.models.endpoint import Endpoint, EndpointLM

        return cached(spec.cache_key(), lambda: EndpointLM(Endpoint.parse(spec.source)))
    from fairness_core.models.hf import BACKENDS

    backend = BACKENDS[spec.task]
    return cached(spec.cache_key(), lambda: backend(spec))


def loaded_keys() -> list[tuple[str, ...]]:
    with _registry_lock:
        return list(_models)


def clear() -> None:
    """Drop every cached model (tests; freeing memory after switching models)."""
    with _registry_lock:
        _models.clear()
        _key_locks.clear()
