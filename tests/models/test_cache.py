"""The process-wide model cache: one load per key however many threads ask, and a bounded number of models."""

from __future__ import annotations

import threading
import time

import pytest

from fairness_core.models import cache


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


def test_a_model_is_loaded_once_however_many_sessions_ask_at_once() -> None:
    loads: list[int] = []

    def slow_load() -> object:
        loads.append(1)
        time.sleep(0.2)  # thirty sessions arrive while the first load is under way
        return object()

    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(cache.cached(("causal-lm", "smol"), slow_load)))
               for _ in range(30)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert loads == [1] and len(results) == 30 and len({id(r) for r in results}) == 1


def test_the_cache_keeps_at_most_the_configured_number_of_models(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAIRNESS_LAB_MAX_MODELS", "2")
    built: list[str] = []

    def load(name: str):
        return lambda: built.append(name) or name

    cache.cached(("a",), load("a"))
    cache.cached(("b",), load("b"))
    cache.cached(("a",), load("a"))  # a used again: b is now the least recently used
    cache.cached(("c",), load("c"))
    assert cache.loaded_keys() == [("a",), ("c",)]
    cache.cached(("b",), load("b"))  # let go earlier: loaded again
    assert built == ["a", "b", "c", "b"] and len(cache.loaded_keys()) == 2


@pytest.mark.parametrize("value", ["0", "-3", "many", ""])
def test_a_bad_limit_falls_back_to_the_default(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    from fairness_core import config

    monkeypatch.setenv("FAIRNESS_LAB_MAX_MODELS", value)
    assert config.max_models() == config.DEFAULT_MAX_MODELS
