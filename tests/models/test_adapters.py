"""Debiasing adapters (Sun et al. 2022 Eq. 3, Pfeiffer placement) in tiny models the tests build: a fresh adapter
leaves the backbone's outputs exactly as they were, a trained one changes them, switching it off restores them; the
packed BERT forward applies it as transformers' hooks do; adapter files round-trip, and bad ones are refused in one
sentence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from fairness_core.models import adapters as A
from fairness_core.models.loading import load_hf
from fairness_core.models.spec import ModelSpec


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAIRNESS_LAB_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _outputs(model, tokenizer, texts):
    encoded = tokenizer(texts, return_tensors="pt", padding=True)
    with torch.no_grad():
        out = model(**encoded)
    return out.logits if hasattr(out, "logits") else out.last_hidden_state


def _randomise(adapters, seed=0):
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for adapter in adapters:
            adapter.up.weight.copy_(torch.randn(adapter.up.weight.shape, generator=generator) * 0.5)
            adapter.up.bias.copy_(torch.randn(adapter.up.bias.shape, generator=generator) * 0.1)


@pytest.mark.parametrize("fixture, task, sites, kind", [
    ("tiny_bert", "encoder", 3, "post-ln"),
    ("tiny_bert_classifier", "classifier", 3, "post-ln"),  # BLEURT-style regression head
    ("tiny_gpt2", "causal-lm", 2, "pre-ln"),  # the offline SmolLM2 is a pre-LN decoder too
    ("tiny_bart", "seq2seq-lm", 2, "post-ln"),  # BART: one adapter in the encoder layer, one in the decoder layer
])
def test_a_fresh_adapter_leaves_the_backbone_exactly_as_it_was(fixture, task, sites, kind, request):
    folder = request.getfixturevalue(fixture)
    model, tokenizer = load_hf(ModelSpec(str(folder), task))
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    texts = ["The nurse said that she would help the patient.", "A man worked as a teacher."]
    if task == "seq2seq-lm":
        encoded = tokenizer(texts, return_tensors="pt", padding=True)
        run = lambda: model(**encoded, decoder_input_ids=encoded["input_ids"]).logits  # noqa: E731
    else:
        run = lambda: _outputs(model, tokenizer, texts)  # noqa: E731
    with torch.no_grad():
        before = run()
    adapters = A.attach(model, A.AdapterConfig(reduction_factor=4, activation="relu"))
    assert len(adapters) == sites and A.placement(model)[0] == kind and A.layout(model.config) == (kind, sites)
    with torch.no_grad():
        assert torch.equal(run(), before)  # the up-projection starts at zero: Adapter(h, r) = r
    _randomise(adapters)
    with torch.no_grad():
        assert not torch.allclose(run(), before, atol=1e-4)
        with A.disabled(model):
            assert torch.equal(run(), before)


def test_the_adapter_is_eq_3_after_the_feed_forward_layer_norm(tiny_bert):
    """Post-LN: the layer's output becomes LN(z + W_u g(W_d LN(z))) with z = feed-forward output + its input."""
    model, _tokenizer = load_hf(ModelSpec(str(tiny_bert), "encoder"))
    adapters = A.attach(model, A.AdapterConfig(reduction_factor=8, activation="gelu"))
    _randomise(adapters, seed=3)
    norm = model.encoder.layer[0].output.LayerNorm
    z = torch.randn(2, 5, 64)
    with torch.no_grad():
        got = norm(z)
        h = torch.nn.functional.layer_norm(z, (64,), norm.weight, norm.bias, norm.eps)
        delta = adapters[0].up(torch.nn.functional.gelu(adapters[0].down(h)))
        expected = torch.nn.functional.layer_norm(z + delta, (64,), norm.weight, norm.bias, norm.eps)
    assert torch.allclose(got, expected, atol=1e-6)


def test_the_packed_encoder_applies_the_adapter_like_transformers(tiny_bert):
    from fairness_core.models.hf import HFEncoder

    spec = ModelSpec(str(tiny_bert), "encoder")
    model, tokenizer = load_hf(spec)
    _randomise(A.attach(model, A.AdapterConfig(reduction_factor=4)))
    encoder = HFEncoder(spec, model, tokenizer)
    assert encoder.packed is not None  # the probe agreed with transformers' forward (hooks included)
    ids = tokenizer(["the nurse said that she would help the patient", "a man"])["input_ids"]
    packed = encoder.hidden_states(ids, 3)
    with torch.no_grad():
        for row, states in zip(ids, packed, strict=True):
            reference = model(input_ids=torch.tensor([row])).last_hidden_state[0].numpy()
            np.testing.assert_allclose(states, reference, atol=2e-5)


def _save(spec, model, adapters, adapter_id="bertscore-tiny-gender-0123456789"):
    manifest = {"id": adapter_id, "backbone": A.backbone_manifest(spec, model.config, "tiny-bert"),
                "adapter": A.AdapterConfig(4).manifest(), "trained": {"metric": {"name": "bertscore"},
                                                                      "attribute": "gender", "steps": 3}}
    return A.save_adapter(adapter_id, A.state_dict(adapters), manifest)


def test_adapter_files_round_trip_and_load_into_a_separate_copy(tiny_bert):
    from fairness_core.models import load_model

    spec = ModelSpec(str(tiny_bert), "encoder")
    model, tokenizer = load_hf(spec)
    adapters = A.attach(model, A.AdapterConfig(reduction_factor=4))
    _randomise(adapters)
    info = _save(spec, model, adapters)
    assert [a.adapter_id for a in A.list_adapters()] == [info.adapter_id]
    assert info.describe()["backbone"]["label"] == "tiny-bert" and len(info.sha256) == 64

    adapted = A.load_adapted(spec, info.adapter_id)
    plain = load_model(spec)
    assert adapted is A.load_adapted(spec, info.adapter_id)  # one copy per process and adapter version
    assert adapted.model is not plain.model and not A.adapters_of(plain.model)
    texts = ["the nurse said that she would help"]
    expected = _outputs(model, tokenizer, texts)
    assert torch.allclose(_outputs(adapted.model, adapted.tokenizer, texts), expected, atol=1e-6)

    exported = A.export_adapter(info.adapter_id)
    A.adapter_path(info.adapter_id).unlink()
    imported = A.import_adapter(exported, "teacher.safetensors")
    assert imported.sha256 == info.sha256
    assert A.import_adapter(exported, "again.safetensors").sha256 == info.sha256  # the same file twice: a no-op


def test_bad_adapter_files_and_ids_are_one_sentence(tiny_bert, tiny_gpt2):
    spec = ModelSpec(str(tiny_bert), "encoder")
    model, _ = load_hf(spec)
    adapters = A.attach(model, A.AdapterConfig(reduction_factor=4))
    info = _save(spec, model, adapters)
    with pytest.raises(A.AdapterError, match="no adapter 'missing-one'"):
        A.read_adapter("missing-one")
    with pytest.raises(A.AdapterError, match="is not an adapter id"):
        A.read_adapter("../etc/passwd")
    with pytest.raises(A.AdapterError, match="not a safetensors file"):
        A.import_adapter(b"hello", "notes.txt")
    from safetensors.torch import save

    with pytest.raises(A.AdapterError, match="not a debiasing adapter"):
        A.import_adapter(save({"x": torch.zeros(2)}), "other.safetensors")
    exported = A.export_adapter(info.adapter_id)
    _randomise(adapters, seed=9)
    altered = save(A.state_dict(adapters), metadata={"format": A.FORMAT, "manifest": A.json.dumps(info.manifest)})
    with pytest.raises(A.AdapterError, match="but other weights is already here"):
        A.import_adapter(altered, "altered.safetensors")
    truncated = dict(A.state_dict(adapters))
    truncated.pop("adapters.2.up.bias")
    with pytest.raises(A.AdapterError, match="do not match its manifest"):
        A.import_adapter(save(truncated, metadata={"format": A.FORMAT, "manifest": A.json.dumps(
            info.manifest | {"id": "another-id"})}), "short.safetensors")
    assert A.export_adapter(info.adapter_id) == exported  # nothing half-written replaced it
    with pytest.raises(A.AdapterError, match="trained in the encoder backbone tiny-bert, not in the causal-lm model"):
        A.check_backbone(info, ModelSpec(str(tiny_gpt2), "causal-lm"))
