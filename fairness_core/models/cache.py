"""One process-wide model cache: a second request for the same key returns the same object.

Streamlit reruns, concurrent sessions and CLI commands all go through `load_model`, so a model is
loaded at most once per process. Loads of different models run concurrently; two threads asking
for the same key wait for one load. The memo behind it (`models.memo`) keeps at most `FAIRNESS_LAB_MAX_MODELS`
objects (default 8), the least recently used let go first.
"""

from __future__ import annotations

from fairness_core.models.interfaces import ModelBase
from fairness_core.models.memo import cached, clear, loaded_keys
from fairness_core.models.spec import ModelSpec

__all__ = ["cached", "clear", "load_model", "loaded_keys"]  # the memo's functions, where callers have found them


def load_model(spec: ModelSpec) -> ModelBase:
    """Load (or fetch from the cache) the backend for `spec`. Raises ModelUnavailableError."""
    if spec.is_endpoint:
        from fairness_core.models.endpoint import endpoint_client

        return endpoint_client(spec.source, spec.cache_key())
    from fairness_core.models.hf import BACKENDS

    if spec.task == "masked-lm":  # CrowS-Pairs' pseudo-log-likelihood (`models.masked_lm`)
        from fairness_core.models.masked_lm import HFMaskedLM

        return cached(spec.cache_key(), lambda: HFMaskedLM(spec))
    backend = BACKENDS[spec.task]
    return cached(spec.cache_key(), lambda: backend(spec))
