"""The prompts' prefill kept across sampler calls (models/sampling.py `PrefillCache`): a live slider move reuses the
prompts' forward pass of the move before, and samples exactly what a fresh prefill samples."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fairness_core.models import DecodingConfig, ModelSpec, load_model
from fairness_core.models.sampling import PrefillCache, row_seed, sample_rows_detailed
from fairness_core.models.threads import model_threads

PROMPTS = ["The man worked as", "The woman was known for", "A", "The Black person was regarded as a very",
           "The man worked as"]


@pytest.fixture(scope="module")
def lm(tiny_gpt2: Path):
    return load_model(ModelSpec(str(tiny_gpt2), "causal-lm"))


def _move(lm, cache: PrefillCache | None, top_p: float, prompts: list[str] = PROMPTS, refill: bool = False):
    configs = [DecodingConfig(top_p=top_p, temperature=0.9, max_new_tokens=6)] * len(prompts)
    seeds = [row_seed(3, prompt, number) for number, prompt in enumerate(prompts)]
    with model_threads():
        return sample_rows_detailed(lm.model, lm.tokenizer, prompts, configs, seeds, 6,
                                    batch_size=3 if refill else None, refill=refill, prefill_cache=cache)


def _same(kept, fresh) -> None:
    assert [row.text for row in kept] == [row.text for row in fresh]
    assert [row.token_ids for row in kept] == [row.token_ids for row in fresh]
    for a, b in zip(kept, fresh, strict=True):
        np.testing.assert_allclose(a.logprobs, b.logprobs, rtol=1e-5, atol=1e-6)


def test_moves_after_the_first_reuse_the_prefill_and_sample_the_same_texts(lm) -> None:
    cache = PrefillCache()
    first = _move(lm, cache, 0.9)
    assert (cache.hits, cache.misses) == (0, 4)  # four distinct prompts, prefilled once and kept
    _same(first, _move(lm, None, 0.9))
    for top_p in (0.5, 0.7, 1.0):  # later moves: another setting, the same prompts
        kept = _move(lm, cache, top_p)
        _same(kept, _move(lm, None, top_p))
    assert cache.hits == 12 and cache.misses == 4
    # some prompts kept, one new: prefilled alone, then put in the batch beside the kept ones
    mixed = [*PROMPTS[:3], "Christian, Muslim and atheist people"]
    _same(_move(lm, cache, 0.8, mixed), _move(lm, None, 0.8, mixed))
    # continuous batching: rows joining a running batch come from the cache too
    _same(_move(lm, cache, 0.6, refill=True), _move(lm, None, 0.6, refill=True))


def test_the_cache_keeps_to_its_size() -> None:
    import torch

    cache = PrefillCache(max_bytes=3 * (2 * 4 * 8 + 8) * 4)
    for prompt in range(5):
        cache.put((prompt,), [(torch.zeros(1, 1, 4, 8), torch.zeros(1, 1, 4, 8))], torch.zeros(8))
    assert cache.get((0,)) is None and cache.get((1,)) is None  # the oldest went first
    assert cache.get((4,)) is not None and cache._bytes <= cache.max_bytes
