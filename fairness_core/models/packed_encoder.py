"""A padding-free fp32 forward pass for BERT-family encoders on the CPU (BERTScore's encoder step).

Why: BERTScore's cost is the encoder's linear layers (82% of the time in a profile of
all-MiniLM-L6-v2 over WinoBias), and transformers' forward runs them through MKL at about 180
GFLOP/s on this 2-core machine, on padded batches, with the pooler computed and thrown away. This
forward computes the same hidden states with less work at a higher rate:

- no padding at all: the sentences of a batch are packed into one (tokens, hidden) matrix for every
  linear layer, and attention runs on groups of equal-length sentences (no mask needed);
- the query, key and value projections are one matrix product (a wider product runs faster);
- oneDNN products with weights reordered once for the CPU, with the GELU and the residual additions
  fused into them (`torch.ops.mkldnn._linear_pointwise`, the kernels `torch.compile` uses on CPU);
  where this torch build lacks them, plain `torch.nn.functional` calls give the same numbers;
- only the layers up to the one asked for, and never the pooler;
- the first layer's query/key/value rows depend only on (token, position), so each distinct pair of the
  call is computed once (bias templates repeat: 4,612 distinct of WinoBias's 41,459 tokens, 4% of all
  products saved).

Everything stays fp32: hidden states equal transformers' within float rounding (about 1e-5; a
check at build time compares both on a probe sentence and falls back to transformers when they
differ by more than `PROBE_TOLERANCE`). Supported: BERT-layout encoders with absolute positions and
GELU (BERT, MiniLM, RoBERTa, XLM-R, CamemBERT); anything else keeps transformers' forward.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any

#: Tokens per packed batch: big enough for fast matrix products, small enough to stay in cache
#: (2,048 beat 4,096 and 8,192 on 2 cores; all give the same numbers).
TOKENS_PER_BATCH = 2048
#: The first layer's query/key/value rows depend only on (token, position), so they are computed once per distinct
#: pair of the whole call when that saves at least this fraction of the rows (WinoBias: 4,612 of 41,459 tokens)...
FIRST_LAYER_SHARING_MIN_SAVING = 0.25
#: ...and the table of shared rows stays within this many bytes.
FIRST_LAYER_TABLE_BYTES = 256 * 2**20
#: Largest |difference| between this forward and transformers' on the probe that still counts as equal.
PROBE_TOLERANCE = 1e-4
_SUPPORTED_TYPES = {"bert": 0, "roberta": 1, "xlm-roberta": 1, "camembert": 1}  # value: positions offset by pad+1


@dataclass(frozen=True)
class _Layer:
    qkv: tuple[Any, Any]  # (weight, bias) of the fused query/key/value projection
    attention_out: tuple[Any, Any]
    attention_norm: tuple[Any, Any, float]
    up: tuple[Any, Any]
    down: tuple[Any, Any]
    output_norm: tuple[Any, Any, float]
    #: a debiasing adapter after the feed-forward sub-layer (models/adapters.py): down and up (weight, bias) and g
    adapter: tuple[tuple[Any, Any], tuple[Any, Any], str] | None = None


@dataclass(frozen=True)
class _SharedFirstLayer:
    states: Any  # (distinct (token, position) pairs, hidden): embeddings after their layer norm
    qkv: Any  # (distinct pairs, 3 x hidden): the first layer's query/key/value rows
    rows: list[Any]  # per sentence, the table row of each of its tokens


class PackedEncoder:
    """`hidden_states(token_ids, layer)`: per sentence, its (tokens, hidden) fp32 states at `layer`."""

    def __init__(self, model: Any, onednn: bool) -> None:
        import torch

        config = model.config
        self.hidden = int(config.hidden_size)
        self.heads = int(config.num_attention_heads)
        self.head_dim = self.hidden // self.heads
        self.num_layers = int(config.num_hidden_layers)
        embeddings = model.embeddings
        self.word = embeddings.word_embeddings.weight.detach()
        self.position = embeddings.position_embeddings.weight.detach()
        self.token_type = embeddings.token_type_embeddings.weight.detach()[0]
        self.position_offset = (int(config.pad_token_id) + 1) if _SUPPORTED_TYPES[config.model_type] else 0
        self.embedding_norm = _norm(embeddings.LayerNorm)
        self._linear, self._linear_gelu, self._linear_add, prepare = _linear_ops(onednn)
        self.onednn = onednn
        self.layers = []
        for block in model.encoder.layer:
            attention = block.attention.self
            qkv_weight = torch.cat([attention.query.weight, attention.key.weight, attention.value.weight]).detach()
            qkv_bias = torch.cat([attention.query.bias, attention.key.bias, attention.value.bias]).detach()
            self.layers.append(_Layer(
                qkv=(prepare(qkv_weight), qkv_bias),
                attention_out=(prepare(block.attention.output.dense.weight.detach()),
                               block.attention.output.dense.bias.detach()),
                attention_norm=_norm(block.attention.output.LayerNorm),
                up=(prepare(block.intermediate.dense.weight.detach()), block.intermediate.dense.bias.detach()),
                down=(prepare(block.output.dense.weight.detach()), block.output.dense.bias.detach()),
                output_norm=_norm(block.output.LayerNorm),
                adapter=_adapter(block.output.LayerNorm),
            ))

    def hidden_states(self, token_ids: Sequence[Sequence[int]], layer: int,
                      on_batch: Callable[[int, int], None] | None = None) -> list[Any]:
        """(tokens, hidden) float32 tensors, one per sentence, in the order given; `on_batch(done, total)`
        is called before each packed batch (sentences done so far), e.g. for progress and cancellation."""
        import torch

        if not 0 <= layer <= self.num_layers:
            raise ValueError(f"the encoder has layers 0..{self.num_layers} (0 = embeddings); got {layer}")
        order = sorted(range(len(token_ids)), key=lambda i: len(token_ids[i]))
        out: list[Any] = [None] * len(token_ids)
        with torch.inference_mode():
            shared = self._shared_first_layer(token_ids) if layer >= 1 else None
            for batch in _token_batches(order, [len(ids) for ids in token_ids], TOKENS_PER_BATCH):
                if on_batch is not None:
                    on_batch(sum(1 for x in out if x is not None), len(token_ids))
                flat = rows = None  # tokens enter as rows of the shared table when there is one, else as ids
                if shared is None:
                    flat = torch.tensor([t for i in batch for t in token_ids[i]], dtype=torch.long)
                else:
                    rows = torch.cat([shared.rows[i] for i in batch])
                states = self._forward(flat, [len(token_ids[i]) for i in batch], layer, shared, rows)
                for i, part in zip(batch, torch.split(states, [len(token_ids[i]) for i in batch]), strict=True):
                    out[i] = part
        return out

    def _embed(self, flat_ids: Any, positions: Any) -> Any:
        from torch.nn.functional import layer_norm

        states = self.word[flat_ids] + self.token_type + self.position[positions + self.position_offset]
        return layer_norm(states, (self.hidden,), *self.embedding_norm[:2], eps=self.embedding_norm[2])

    def _shared_first_layer(self, token_ids: Sequence[Sequence[int]]) -> _SharedFirstLayer | None:
        """The embeddings and first query/key/value rows of each distinct (token, position) of the call, or None
        when sharing them saves too little or the table would be too big. Exact: each row is the same product."""
        import torch

        total = sum(len(ids) for ids in token_ids)
        if total == 0:
            return None
        flat = torch.tensor([t for ids in token_ids for t in ids], dtype=torch.long)
        positions = torch.cat([torch.arange(len(ids)) for ids in token_ids])
        width = int(positions.max()) + 1
        distinct, inverse = torch.unique(flat * width + positions, return_inverse=True)
        if len(distinct) > (1 - FIRST_LAYER_SHARING_MIN_SAVING) * total or \
                len(distinct) * 4 * self.hidden * 4 > FIRST_LAYER_TABLE_BYTES:
            return None
        states = self._embed(distinct // width, distinct % width)
        rows = list(torch.split(inverse, [len(ids) for ids in token_ids]))
        return _SharedFirstLayer(states, self._linear(states, *self.layers[0].qkv), rows)

    def _forward(self, flat_ids: Any, lengths: list[int], layer: int, shared: _SharedFirstLayer | None = None,
                 rows: Any = None) -> Any:
        """Hidden states at `layer` of the packed sentences (lengths ascending), shape (sum(lengths), hidden);
        `shared`/`rows`: the first layer's embeddings and query/key/value rows, and which row each token takes."""
        import torch
        from torch.nn.functional import layer_norm

        if shared is None:
            states = self._embed(flat_ids, torch.cat([torch.arange(n) for n in lengths]))
        else:
            states = shared.states[rows]
        # Runs of equal length, as (first token, sentences, length): each is one unmasked attention call.
        groups, start = [], 0
        for length, run in groupby(lengths):
            count = len(list(run))
            groups.append((start, count, length))
            start += count * length
        for number, block in enumerate(self.layers[:layer]):
            qkv = shared.qkv[rows] if shared is not None and number == 0 else self._linear(states, *block.qkv)
            attended = torch.empty_like(states)
            for first, count, length in groups:
                span = slice(first, first + count * length)
                q, k, v = qkv[span].view(count, length, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
                # one copy, from (sentences, heads, length, head_dim) straight into the packed rows
                attended[span].view(count, length, self.heads, self.head_dim).copy_(_attention(q, k, v).transpose(1, 2))
            states = self._linear_add(attended, states, *block.attention_out)
            states = layer_norm(states, (self.hidden,), *block.attention_norm[:2], eps=block.attention_norm[2])
            inner = self._linear_gelu(states, *block.up)
            summed = self._linear_add(inner, states, *block.down)
            states = layer_norm(summed, (self.hidden,), *block.output_norm[:2], eps=block.output_norm[2])
            if block.adapter is not None:  # Pfeiffer output adapter: LN(z + W_u g(W_d LN(z))), models/adapters.py
                states = layer_norm(summed + _adapter_delta(states, block.adapter), (self.hidden,),
                                    *block.output_norm[:2], eps=block.output_norm[2])
        return states


def _attention(q: Any, k: Any, v: Any) -> Any:
    """softmax(q kᵀ / √d) v for (sentences, heads, length, head_dim) blocks of equal length (no mask: no
    padding). torch's fused kernel: 3x faster here than two batched products and a softmax."""
    from torch.nn.functional import scaled_dot_product_attention

    return scaled_dot_product_attention(q, k, v)


def _adapter(norm: Any) -> tuple[tuple[Any, Any], tuple[Any, Any], str] | None:
    adapter = getattr(norm, "debias_adapter", None)
    if adapter is None or not adapter.enabled:
        return None
    return ((adapter.down.weight.detach(), adapter.down.bias.detach()),
            (adapter.up.weight.detach(), adapter.up.bias.detach()), adapter.activation)


def _adapter_delta(states: Any, adapter: tuple[tuple[Any, Any], tuple[Any, Any], str]) -> Any:
    import torch
    import torch.nn.functional as F

    (down_w, down_b), (up_w, up_b), activation = adapter
    inner = F.linear(states, down_w, down_b)
    inner = {"relu": F.relu, "gelu": F.gelu, "tanh": torch.tanh, "swish": F.silu}[activation](inner)
    return F.linear(inner, up_w, up_b)


def _norm(module: Any) -> tuple[Any, Any, float]:
    return module.weight.detach(), module.bias.detach(), float(module.eps)


def _token_batches(order: list[int], lengths: list[int], budget: int) -> list[list[int]]:
    """Consecutive runs of `order` holding at most `budget` tokens each (a longer sentence alone)."""
    batches: list[list[int]] = []
    current: list[int] = []
    tokens = 0
    for index in order:
        if current and tokens + lengths[index] > budget:
            batches.append(current)
            current, tokens = [], 0
        current.append(index)
        tokens += lengths[index]
    if current:
        batches.append(current)
    return batches


def _linear_ops(onednn: bool) -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any],
                                       Callable[[Any], Any]]:
    """(linear, linear + exact GELU, linear + residual add, weight preparation) on oneDNN or plain torch."""
    import torch
    from torch.nn.functional import gelu, linear

    if not onednn:
        return (linear, lambda x, w, b: gelu(linear(x, w, b)), lambda x, residual, w, b: linear(x, w, b) + residual,
                lambda w: w.contiguous())
    ops = torch.ops.mkldnn
    return (lambda x, w, b: ops._linear_pointwise(x, w, b, "none", [], ""),
            lambda x, w, b: ops._linear_pointwise(x, w, b, "gelu", [], "none"),
            lambda x, residual, w, b: ops._linear_pointwise.binary(x, residual, w, b, "add"),
            lambda w: ops._reorder_linear_weight(w.contiguous(), TOKENS_PER_BATCH))


def unsupported_reason(model: Any) -> str | None:
    """Why `model` cannot take the packed forward (None: it can)."""
    import torch

    config = getattr(model, "config", None)
    if config is None or getattr(config, "model_type", None) not in _SUPPORTED_TYPES:
        return f"not a BERT-layout encoder ({getattr(config, 'model_type', type(model).__name__)})"
    if getattr(config, "hidden_act", None) != "gelu":
        return f"activation {getattr(config, 'hidden_act', None)!r} (only exact GELU is fused)"
    if _SUPPORTED_TYPES[config.model_type] and not isinstance(getattr(config, "pad_token_id", None), int):
        return "RoBERTa-style positions without a padding id"
    if getattr(config, "position_embedding_type", "absolute") not in (None, "absolute"):
        return f"{config.position_embedding_type} position embeddings"
    if getattr(config, "is_decoder", False) or getattr(config, "add_cross_attention", False):
        return "a decoder or cross-attention configuration"
    if getattr(config, "quantization_config", None) is not None:
        return "quantized weights (the packed forward is for fp32)"
    for parameter in model.parameters():
        if parameter.device.type != "cpu" or parameter.dtype != torch.float32:
            return f"weights on {parameter.device.type} in {parameter.dtype} (the packed forward is for fp32 on CPU)"
    if not all(hasattr(model, name) for name in ("embeddings", "encoder")):
        return "no embeddings/encoder modules"
    if getattr(model.embeddings, "token_type_embeddings", None) is None:
        return "no token type embeddings"
    linears = [module for module in model.encoder.modules() if isinstance(module, torch.nn.Linear)]
    if any(type(module) is not torch.nn.Linear for module in linears):
        return "replaced linear layers (quantized or adapted)"
    return None


def build(model: Any, tokenizer: Any = None) -> PackedEncoder | None:
    """The packed forward for `model`, or None when it is unsupported or does not reproduce transformers'
    hidden states on a probe sentence (then the caller keeps transformers' own forward)."""
    if unsupported_reason(model) is not None:
        return None
    import torch

    from fairness_core.models.cpu_linear import available

    try:
        probe = _probe_ids(model, tokenizer)
        with torch.inference_mode():
            expected = model(input_ids=torch.tensor([probe]), output_hidden_states=True).hidden_states[-1][0]
    except Exception:  # the model's own forward fails on the probe: nothing to compare with
        return None
    for onednn in ((True, False) if available() else (False,)):
        try:
            packed = PackedEncoder(model, onednn)
            got = packed.hidden_states([probe, probe[:3]], packed.num_layers)[0]
        except Exception:  # a layout or kernel this code does not know: the caller keeps transformers' forward
            continue
        if float((got - expected).abs().max()) <= PROBE_TOLERANCE:
            return packed
    return None


def _probe_ids(model: Any, tokenizer: Any) -> list[int]:
    """A short real sentence (or, without a tokenizer, fixed ids below the vocabulary size)."""
    if tokenizer is not None and callable(tokenizer):
        ids = tokenizer("The nurse said that she would help the patient.")["input_ids"]
        if len(ids) >= 4:
            return list(ids)
    vocab = int(model.config.vocab_size)
    return [(7 * i + 3) % vocab for i in range(12)]
