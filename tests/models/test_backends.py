"""The model layer on tiny random checkpoints built by the tests: fp32, 8-bit and 4-bit on CPU."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fairness_core.models import DecodingConfig, ModelSpec, ModelUnavailableError, load_model
from fairness_core.models.cache import clear, loaded_keys

QUANTIZATIONS = ["none", "8bit", "4bit"]


@pytest.mark.parametrize("quantization", QUANTIZATIONS)
def test_causal_lm_generates_and_scores(tiny_gpt2: Path, quantization: str) -> None:
    model = load_model(ModelSpec(str(tiny_gpt2), "causal-lm", quantization=quantization))
    outputs = model.generate(["The nurse said", "The doctor"], DecodingConfig(top_k=20, max_new_tokens=6), n=3,
                             seed=11)
    assert [len(per_prompt) for per_prompt in outputs] == [3, 3]
    assert all(isinstance(text, str) for per_prompt in outputs for text in per_prompt)
    again = model.generate(["The nurse said", "The doctor"], DecodingConfig(top_k=20, max_new_tokens=6), n=3,
                           seed=11)
    assert again == outputs  # a seed makes sampling reproducible

    scores = model.loglikelihood(["The nurse", ""], [" said that", "The doctor"])
    assert len(scores[0].logprobs) == len(scores[0].tokens) > 0
    assert np.all(scores[0].logprobs < 0) and np.isfinite(scores[1].mean)


def test_loglikelihood_is_independent_of_batch_composition(tiny_gpt2: Path) -> None:
    model = load_model(ModelSpec(str(tiny_gpt2), "causal-lm"))
    alone = model.loglikelihood(["The nurse"], [" said that she would"])[0]
    batched = model.loglikelihood(["A", "The nurse", "The carpenter made a desk for"],
                                  [" person", " said that she would", " the clerk"])[1]
    np.testing.assert_allclose(alone.logprobs, batched.logprobs, atol=1e-5)


@pytest.mark.parametrize("quantization", QUANTIZATIONS)
def test_seq2seq_token_logprobs_and_entropies(tiny_bart: Path, quantization: str) -> None:
    model = load_model(ModelSpec(str(tiny_bart), "seq2seq-lm", quantization=quantization))
    scores = model.token_logprobs(["The nurse said", "A person"], ["The doctor said", "worked"], with_entropy=True)
    first = scores[0]
    assert first.tokens[0] == "<s>" and first.tokens[-1] == "</s>"
    assert first.entropies is not None and first.entropies.shape == first.logprobs.shape
    vocab = model.model.config.vocab_size
    assert np.all(first.entropies <= np.log(vocab) + 1e-4) and np.all(first.entropies >= 0)
    distributions = model.step_distributions("The nurse said", "The doctor said")
    assert distributions.shape == (len(first.tokens), vocab)
    np.testing.assert_allclose(np.exp(distributions).sum(axis=1), 1.0, atol=1e-4)


@pytest.mark.parametrize("quantization", QUANTIZATIONS)
def test_encoder_token_embeddings_at_a_layer(tiny_bert: Path, quantization: str) -> None:
    model = load_model(ModelSpec(str(tiny_bert), "encoder", quantization=quantization))
    assert model.num_layers == 3
    short, longer = model.token_embeddings(["the nurse", "the nurse said that she would help"], layer=2)
    assert short.tokens == ["[CLS]", "the", "nurse", "[SEP]"]
    assert short.special.tolist() == [True, False, False, True]
    assert short.vectors.shape == (4, 64) and longer.vectors.shape[0] == len(longer.tokens)
    with pytest.raises(ValueError, match=r"layers 0\.\.3"):
        model.token_embeddings(["x"], layer=9)


@pytest.mark.parametrize("quantization", QUANTIZATIONS)
def test_classifier_probabilities(tiny_bert_classifier: Path, quantization: str) -> None:
    model = load_model(ModelSpec(str(tiny_bert_classifier), "classifier", quantization=quantization))
    assert model.labels == ["label_0", "label_1", "label_2"]
    probs = model.predict_proba(["the nurse", "the doctor said that", "a"])
    assert probs.shape == (3, 3)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)


def test_the_cache_returns_the_same_object_for_the_same_key(tiny_gpt2: Path) -> None:
    clear()
    first = load_model(ModelSpec(str(tiny_gpt2), "causal-lm"))
    second = load_model(ModelSpec(str(tiny_gpt2), "causal-lm", dtype="fp32", device="cpu"))
    assert first is second and len(loaded_keys()) == 1
    quantized = load_model(ModelSpec(str(tiny_gpt2), "causal-lm", quantization="8bit"))
    assert quantized is not first and len(loaded_keys()) == 2
    assert first.cache_key[-3:] == ("fp32", "none", "cpu")


def test_the_manifest_identifies_local_weights_by_content_not_path(tiny_gpt2: Path) -> None:
    record = ModelSpec(str(tiny_gpt2), "causal-lm").to_manifest()
    assert record["identity"].startswith("dir:") and record["dtype"] == "fp32" and record["device"] == "cpu"
    assert "/" not in str(record["source"])


def test_a_model_of_the_wrong_kind_gives_one_clear_sentence(tiny_bert: Path) -> None:
    with pytest.raises(ModelUnavailableError) as raised:
        load_model(ModelSpec(str(tiny_bert), "causal-lm"))
    message = str(raised.value)
    assert "cannot be loaded as a causal (decoder-only) language model" in message
    assert "\n" not in message


def test_a_hub_model_that_is_not_cached_offline_says_so() -> None:
    with pytest.raises(ModelUnavailableError, match="not in the local Hugging Face cache"):
        load_model(ModelSpec("gpt2", "causal-lm"))


def test_cuda_requested_without_a_gpu_is_refused_clearly(tiny_gpt2: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(ModelUnavailableError, match="no GPU"):
        load_model(ModelSpec(str(tiny_gpt2), "causal-lm", device="cuda"))


def test_bad_spec_values_are_rejected() -> None:
    with pytest.raises(ValueError, match="quantization must be one of"):
        ModelSpec("gpt2", "causal-lm", quantization="3bit")
    with pytest.raises(ValueError, match="top_p must be in"):
        DecodingConfig(top_p=1.5)
