"""Causal LMs' linear layers on oneDNN: same logits, the ordinary path where it must be, never a failed load."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from fairness_core.models import ModelSpec, cpu_linear, load_model

pytestmark = pytest.mark.skipif(not cpu_linear.available(), reason="this torch build has no oneDNN linear kernels")


def fresh_gpt2(tiny_gpt2: Path):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(tiny_gpt2).eval()


def switched(model) -> int:
    return sum(isinstance(m.__dict__.get("forward"), cpu_linear._OneDNNForward) for m in model.modules())


def test_the_switch_keeps_the_logits_and_the_loaded_model_uses_it(tiny_gpt2: Path) -> None:
    model = fresh_gpt2(tiny_gpt2)
    ids = torch.tensor([[5, 9, 13, 2, 7]])
    with torch.inference_mode():
        before = model(input_ids=ids).logits
    assert cpu_linear.use_onednn_linears(model, probe_ids=[5, 9, 13]) == switched(model) >= 1  # GPT-2's head
    with torch.inference_mode():
        torch.testing.assert_close(model(input_ids=ids).logits, before, atol=1e-5, rtol=1e-5)
    assert switched(load_model(ModelSpec(str(tiny_gpt2), "causal-lm")).model) >= 1


def test_with_gradients_the_ordinary_forward_runs_and_trains_weight_and_bias() -> None:
    layer = torch.nn.Sequential(torch.nn.Linear(8, 4))
    assert cpu_linear.use_onednn_linears(layer) == 1
    x = torch.randn(3, 8)
    layer(x).sum().backward()
    assert layer[0].weight.grad is not None and layer[0].bias.grad is not None
    with torch.inference_mode():
        torch.testing.assert_close(layer(x), torch.nn.functional.linear(x, layer[0].weight, layer[0].bias))
    assert layer(x.double().float()).requires_grad  # grad mode: the module's own forward, differentiable


def test_a_kernel_that_fails_or_disagrees_restores_the_ordinary_forward(tiny_gpt2: Path, monkeypatch) -> None:
    model = fresh_gpt2(tiny_gpt2)

    def refuse(*args, **kwargs):
        raise RuntimeError("oneDNN does not take this layer")

    with monkeypatch.context() as patch:
        patch.setattr(torch.ops.mkldnn, "_reorder_linear_weight", refuse)
        assert cpu_linear.use_onednn_linears(model, probe_ids=[5, 9]) == 0 and switched(model) == 0
    original = cpu_linear._OneDNNForward.__call__
    monkeypatch.setattr(cpu_linear._OneDNNForward, "__call__", lambda self, x: original(self, x) + 1.0)
    assert cpu_linear.use_onednn_linears(model, probe_ids=[5, 9]) == 0 and switched(model) == 0
    with torch.inference_mode():
        assert torch.isfinite(model(input_ids=torch.tensor([[5, 9]])).logits).all()  # still loads and runs
