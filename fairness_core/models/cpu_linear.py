"""fp32 linear layers of a CPU model through oneDNN instead of MKL (a decoding step's main cost).

Why: a decoding step multiplies a few rows (one per sequence in flight) by every weight matrix, and
torch's default CPU path for `nn.Linear` (MKL) is slow at that shape on this machine: SmolLM2's
output layer (576 x 49,152) for 11 rows took 32 ms with MKL, 7.9 ms with oneDNN on the same weights
and 4.5 ms with oneDNN on weights reordered once for the CPU (96 rows: 47.7 / 28.9 / 26.3 ms).
`use_onednn_linears` routes a loaded model's `nn.Linear` layers through
`torch.ops.mkldnn._linear_pointwise` (the kernel `torch.compile` uses on CPU): same fp32
arithmetic in another summation order, so logits agree to float rounding (a probe checks it and
restores MKL otherwise, as it does when oneDNN refuses a layer). The modules stay `nn.Linear` with
their weights (tied embeddings, state_dict and hooks are untouched); each gets an instance-level
forward that reads a reordered copy of its weight when all copies together fit `PACK_BUDGET_BYTES`,
the original weight otherwise (no extra memory).

Only for inference on the CPU in fp32: with gradients enabled, an input elsewhere or of another
dtype, the layer takes `nn.Linear`'s own forward. Reordered copies do not follow later edits of the
weights (models here are loaded once and never trained).
"""

from __future__ import annotations

from typing import Any

#: Extra memory allowed for reordered weight copies per model (SmolLM2-135M needs 0.54 GB).
PACK_BUDGET_BYTES = 1 << 30
#: Largest |logit difference| from the MKL forward on the probe that still counts as the same model.
PROBE_TOLERANCE = 1e-3


class _OneDNNForward:
    """The forward of one `nn.Linear` on oneDNN (reordered or plain weight), else the module's own forward."""

    __slots__ = ("bias", "module", "weight")

    def __init__(self, module: Any, weight: Any, bias: Any) -> None:
        self.module, self.weight, self.bias = module, weight, bias

    def __call__(self, x: Any) -> Any:
        import torch

        if (x.device.type != "cpu" or x.dtype != torch.float32 or x.requires_grad
                or (torch.is_grad_enabled() and self.module.weight.requires_grad)):
            return torch.nn.Linear.forward(self.module, x)
        return torch.ops.mkldnn._linear_pointwise(x, self.weight, self.bias, "none", [], "")


def available() -> bool:
    """Whether this torch build has the oneDNN linear kernels (and oneDNN is on)."""
    import torch

    ops = getattr(torch.ops, "mkldnn", None)
    return bool(torch.backends.mkldnn.is_available()) and all(
        hasattr(ops, name) for name in ("_linear_pointwise", "_reorder_linear_weight"))


def _eligible(model: Any) -> list[Any]:
    import torch

    return [module for module in model.modules()
            if type(module) is torch.nn.Linear and "forward" not in module.__dict__
            and module.weight.device.type == "cpu" and module.weight.dtype == torch.float32
            and (module.bias is None or module.bias.dtype == torch.float32)]


def use_onednn_linears(model: Any, probe_ids: list[int] | None = None, rows_hint: int = 64) -> int:
    """Route `model`'s fp32 CPU `nn.Linear` layers through oneDNN; returns how many (0 = left as it was).

    With `probe_ids`, the model's logits on them are compared before and after; a difference above
    `PROBE_TOLERANCE`, or any error while switching or probing, restores the ordinary forward everywhere.
    """
    if not available():
        return 0
    import torch

    linears = _eligible(model)
    if not linears:
        return 0
    try:
        expected = _logits(model, probe_ids)
        pack = sum(m.weight.numel() * 4 for m in linears) <= PACK_BUDGET_BYTES
        with torch.no_grad():
            for module in linears:
                plain = module.weight.detach().contiguous()
                weight = torch.ops.mkldnn._reorder_linear_weight(plain, rows_hint) if pack else plain
                bias = None if module.bias is None else module.bias.detach()
                module.forward = _OneDNNForward(module, weight, bias)
        if expected is not None:
            got = _logits(model, probe_ids)
            if float((got - expected).abs().max()) > PROBE_TOLERANCE:
                restore(model)
                return 0
    except Exception:  # a layer or kernel oneDNN does not take: keep the ordinary forward, never fail the load
        restore(model)
        return 0
    return len(linears)


def restore(model: Any) -> None:
    """Back to torch's ordinary forward for every layer `use_onednn_linears` switched."""
    for module in model.modules():
        if isinstance(module.__dict__.get("forward"), _OneDNNForward):
            del module.forward


def _logits(model: Any, probe_ids: list[int] | None) -> Any:
    if not probe_ids:
        return None
    import torch

    with torch.inference_mode():
        return model(input_ids=torch.tensor([probe_ids])).logits.float()
