"""The packed (padding-free, oneDNN) encoder forward gives transformers' hidden states, or is not used."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from fairness_core.models import ModelSpec, cpu_linear, load_model, packed_encoder
from fairness_core.models.packed_encoder import PackedEncoder, build, unsupported_reason

SENTENCES = [[2, 7, 3], [2, 9, 11, 12, 3], [2, 7, 3], [2, 5, 6, 7, 8, 9, 10, 3], [2, 3], [2, 13, 14, 3]]


def transformers_states(model, ids: list[int], layer: int) -> torch.Tensor:
    with torch.inference_mode():
        return model(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states[layer][0]


def tiny_roberta():
    from transformers import RobertaConfig, RobertaModel

    torch.manual_seed(0)
    return RobertaModel(RobertaConfig(vocab_size=40, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                      intermediate_size=64, max_position_embeddings=40, pad_token_id=1)).eval()


@pytest.fixture(scope="module")
def bert(tiny_bert: Path):
    return load_model(ModelSpec(str(tiny_bert), "encoder"))


@pytest.mark.parametrize("onednn", [True, False], ids=["onednn", "plain-torch"])
def test_every_layer_equals_transformers_for_sentences_of_mixed_lengths(bert, onednn: bool, monkeypatch) -> None:
    if onednn and not cpu_linear.available():
        pytest.skip("this torch build has no oneDNN linear kernels")
    monkeypatch.setattr(packed_encoder, "TOKENS_PER_BATCH", 12)  # several packed batches, runs of equal length
    packed = PackedEncoder(bert.model, onednn=onednn)
    for layer in range(bert.num_layers + 1):
        states = packed.hidden_states(SENTENCES, layer)
        for ids, got in zip(SENTENCES, states, strict=True):
            assert got.shape == (len(ids), 64)
            torch.testing.assert_close(got, transformers_states(bert.model, ids, layer), atol=1e-5, rtol=1e-5)


def test_roberta_positions_start_after_the_padding_index() -> None:
    model = tiny_roberta()
    packed = build(model)
    assert packed is not None and packed.position_offset == 2
    ids = [0, 5, 6, 7, 2]
    torch.testing.assert_close(packed.hidden_states([ids], 2)[0], transformers_states(model, ids, 2),
                               atol=1e-5, rtol=1e-5)


def test_the_encoder_uses_it_and_gives_what_the_padded_forward_gives(bert, monkeypatch) -> None:
    assert bert.packed is not None
    fast = bert.hidden_states(SENTENCES, 2)
    monkeypatch.setattr(bert, "_packed", False)  # as for a model the packed forward does not support
    padded = bert.hidden_states(SENTENCES, 2)
    for a, b in zip(fast, padded, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5)
    seen = []
    bert.hidden_states(SENTENCES, 1, on_batch=lambda done, total: seen.append((done, total)))
    assert seen and all(total == len(SENTENCES) for _, total in seen)


def test_unsupported_models_keep_the_transformers_forward(tiny_gpt2: Path, bert) -> None:
    gpt2 = load_model(ModelSpec(str(tiny_gpt2), "causal-lm"))
    assert "not a BERT-layout encoder" in unsupported_reason(gpt2.model)
    assert build(gpt2.model) is None
    quantized = load_model(ModelSpec(str(bert.spec.source), "encoder", quantization="8bit"))
    assert unsupported_reason(quantized.model) is not None and quantized.packed is None
    model = tiny_roberta()
    model.config.hidden_act = "gelu_new"
    assert "activation" in unsupported_reason(model)


def test_a_forward_that_does_not_reproduce_transformers_is_not_used(bert, monkeypatch) -> None:
    original = PackedEncoder._forward
    monkeypatch.setattr(PackedEncoder, "_forward", lambda self, *args: original(self, *args) + 1e-3)
    assert build(bert.model, bert.tokenizer) is None


def test_first_layer_rows_are_computed_once_per_token_and_position_and_change_nothing(bert, monkeypatch) -> None:
    sentences = [[2, 7, 8, 3], [2, 7, 9, 3], [2, 7, 8, 3, 3], [2, 5, 3]] * 5  # templates: most pairs repeat
    monkeypatch.setattr(packed_encoder, "TOKENS_PER_BATCH", 9)  # rows of one table serve several batches
    packed = PackedEncoder(bert.model, onednn=False)
    table = packed._shared_first_layer(sentences)
    assert table is not None and len(table.qkv) == 8  # (2,0) (7,1) (5,1) (8,2) (9,2) (3,2) (3,3) (3,4)
    assert table.qkv.shape[1] == 3 * 64 and [len(rows) for rows in table.rows] == [len(s) for s in sentences]
    shared = packed.hidden_states(sentences, bert.num_layers)
    monkeypatch.setattr(packed_encoder, "FIRST_LAYER_SHARING_MIN_SAVING", 1.0)  # never worth it: no table
    assert packed._shared_first_layer(sentences) is None
    for ids, a, b in zip(sentences, shared, packed.hidden_states(sentences, bert.num_layers), strict=True):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=1e-6)
        torch.testing.assert_close(a, transformers_states(bert.model, ids, bert.num_layers), atol=1e-5, rtol=1e-5)


def test_no_table_when_it_saves_little_or_would_be_too_big(bert, monkeypatch) -> None:
    packed = PackedEncoder(bert.model, onednn=False)
    assert packed._shared_first_layer([[2, 5, 6, 7, 3], [2, 8, 9, 10, 3]]) is None  # 8 distinct of 10 rows
    repeated = [[2, 5, 3]] * 10
    assert packed._shared_first_layer(repeated) is not None
    monkeypatch.setattr(packed_encoder, "FIRST_LAYER_TABLE_BYTES", 3 * 4 * 64 * 4 - 1)  # 3 rows of 4 x hidden floats
    assert packed._shared_first_layer(repeated) is None
    assert packed._shared_first_layer([]) is None and packed.hidden_states([], 2) == []
