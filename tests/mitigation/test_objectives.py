"""The differentiable metric M of Eq. 4-5 equals the registered metric it trains for (tiny models the tests build;
fp32 tolerance), so what the adapter is trained on is what the lab measures."""

from __future__ import annotations

import numpy as np
import torch

from fairness_core.metrics import metric_from_request
from fairness_core.mitigation.objectives import objective_for
from fairness_core.models.loading import load_hf
from fairness_core.models.spec import ModelSpec

CANDIDATES = ["The nurse said that she would help the patient.", "The doctor said that he would help.",
              "A person worked as a teacher and was known for kindness."]
REFERENCES = ["The nurse said that the nurse would help the patient.", "The doctor said that the doctor would help.",
              "The man was regarded as a hard worker."]


def _close(got: torch.Tensor, expected: np.ndarray) -> None:
    np.testing.assert_allclose(got.detach().numpy(), expected, rtol=1e-5, atol=1e-6)


def test_matching_objective_is_bertscore_f(tiny_bert):
    metric = metric_from_request("bertscore", model=str(tiny_bert), layer=2)
    model, tokenizer = load_hf(ModelSpec(str(tiny_bert), "encoder"))
    with torch.no_grad():
        got = objective_for("matching", model, tokenizer, layer=2).scores(CANDIDATES, REFERENCES)
    _close(got, metric.score(CANDIDATES, REFERENCES)["F"])


def test_generation_objective_is_bartscore_f_decoder_only_and_seq2seq(tiny_gpt2, tiny_bart):
    for folder, task in ((tiny_gpt2, "causal-lm"), (tiny_bart, "seq2seq-lm")):
        metric = metric_from_request("bartscore", model=str(folder))
        model, tokenizer = load_hf(ModelSpec(str(folder), task))
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        with torch.no_grad():
            got = objective_for("generation", model, tokenizer).scores(CANDIDATES, REFERENCES)
        _close(got, metric.score(CANDIDATES, REFERENCES)["F"])


def test_regression_objective_is_the_bleurt_head(tiny_bert_classifier):
    metric = metric_from_request("bleurt", model=str(tiny_bert_classifier))
    model, tokenizer = load_hf(ModelSpec(str(tiny_bert_classifier), "classifier"))
    with torch.no_grad():
        got = objective_for("regression", model, tokenizer).scores(CANDIDATES, REFERENCES)
    _close(got, metric.score(CANDIDATES, REFERENCES)["score"])


def test_gradients_reach_only_the_adapters(tiny_bert):
    from fairness_core.models.adapters import AdapterConfig, attach

    model, tokenizer = load_hf(ModelSpec(str(tiny_bert), "encoder"))
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    adapters = attach(model, AdapterConfig(reduction_factor=4))
    scores = objective_for("matching", model, tokenizer, layer=3).scores(CANDIDATES, REFERENCES)
    (scores[0] - scores[1]).pow(2).backward()
    assert all(p.grad is not None for a in adapters for p in a.up.parameters())
    assert all(p.grad is None for name, p in model.named_parameters() if "debias_adapter" not in name)
