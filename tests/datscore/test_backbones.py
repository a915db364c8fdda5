"""Eq. 1 / Eq. 4 through the backbones, checked against a manual torch computation on tiny random models."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fairness_core.models import ModelSpec, load_model
from fairness_core.translation import weights as W
from fairness_core.translation.backbones import CausalLMBackbone, ScoreRequest, Seq2SeqBackbone, backbone_for


@pytest.fixture(scope="module")
def m2m(tiny_m2m100: Path):
    return load_model(ModelSpec(str(tiny_m2m100), "seq2seq-lm"))


@pytest.fixture(scope="module")
def gpt2(tiny_gpt2: Path):
    return load_model(ModelSpec(str(tiny_gpt2), "causal-lm"))


def _manual_seq2seq(m2m, source: str, target: str, src: str, tgt: str) -> tuple[np.ndarray, np.ndarray]:
    """log P(y_t | X, y_<t) and the full-vocabulary entropy per step, computed by hand with torch."""
    import torch

    tok = m2m.tokenizer
    tok.src_lang, tok.tgt_lang = src, tgt
    enc = tok(source, return_tensors="pt")
    labels = tok(text_target=target, return_tensors="pt")["input_ids"][0]
    assert tok.convert_ids_to_tokens(int(labels[0])) == f"__{tgt}__"
    decoder_input = torch.cat([torch.tensor([m2m.model.config.decoder_start_token_id]), labels[:-1]])
    with torch.no_grad():
        logits = m2m.model(**enc, decoder_input_ids=decoder_input[None]).logits[0]
    logp = torch.log_softmax(logits.double(), -1)
    steps = range(1, len(labels))  # the forced language token is given, not scored
    picked = np.array([float(logp[t, labels[t]]) for t in steps])
    entropy = np.array([float(-(logp[t].exp() * logp[t]).sum()) for t in steps])
    return picked, entropy


def test_eq1_eq4_seq2seq_matches_a_manual_computation(m2m) -> None:
    backbone = backbone_for(m2m)
    assert isinstance(backbone, Seq2SeqBackbone) and backbone.metric_label == "DATScore"
    requests = [ScoreRequest("L'infirmière a dit qu'elle aiderait le patient.", "The nurse said that she would help.",
                             "fr", "en"),
                ScoreRequest("The doctor said.", "La enfermera dijo que ayudaría al paciente.", "en", "es"),
                ScoreRequest("Le médecin a dit.", "The doctor said that he would help the patient.", "fr", "en")]
    scored = backbone.score(requests)
    for request, result in zip(requests, scored, strict=True):
        picked, entropy = _manual_seq2seq(m2m, request.source, request.target, request.src_lang, request.tgt_lang)
        np.testing.assert_allclose(result.logprobs, picked, atol=1e-4)
        np.testing.assert_allclose(result.entropies, entropy, atol=1e-4)
        assert W.direction_score(result.logprobs, term_weighting="uniform") == pytest.approx(picked.mean(), abs=1e-4)
        assert W.direction_score(result.logprobs, result.entropies, "entropy") == pytest.approx(
            float((entropy * picked).sum()), abs=1e-3)
    # Eq. 4 from the full per-step distributions equals the entropies the backbone reports
    steps = m2m.step_distributions(requests[0].source, requests[0].target, src_lang="fr", tgt_lang="en")
    np.testing.assert_allclose(W.step_entropies(steps), scored[0].entropies, atol=1e-4)


def test_seq2seq_translation_forces_each_target_language(m2m) -> None:
    backbone = backbone_for(m2m)
    out = backbone.translate(["Le médecin a dit.", "L'infirmière a dit."], "fr", "es", max_new_tokens=5)
    assert len(out) == 2 and all(isinstance(t, str) for t in out)


def test_lm_variant_scores_the_target_after_the_translation_prompt(gpt2) -> None:
    import torch

    assert backbone_for(gpt2).metric_label == "DATScore-LM"
    backbone = CausalLMBackbone(gpt2, template="{src_name}: {text} {tgt_name}:")  # tiny GPT-2: 128 positions
    requests = [ScoreRequest("The nurse said that she would help.", "The doctor said that he would help.", "fr", "en"),
                ScoreRequest("A person worked as a teacher.", "The man was regarded.", "en", "es")]
    scored = backbone.score(requests)
    tok = gpt2.tokenizer
    for request, result in zip(requests, scored, strict=True):
        prompt = backbone.prompt(request.source, request.src_lang, request.tgt_lang)
        assert "French" in prompt or "Spanish" in prompt
        context = tok(prompt)["input_ids"]
        target = tok(" " + request.target, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
        with torch.no_grad():
            logits = gpt2.model(input_ids=torch.tensor([context + target])).logits[0]
        logp = torch.log_softmax(logits.double(), -1)
        positions = range(len(context) - 1, len(context) + len(target) - 1)
        picked = np.array([float(logp[p, t]) for p, t in zip(positions, target, strict=True)])
        entropy = np.array([float(-(logp[p].exp() * logp[p]).sum()) for p in positions])
        np.testing.assert_allclose(result.logprobs, picked, atol=1e-4)
        np.testing.assert_allclose(result.entropies, entropy, atol=1e-4)
        assert result.tokens[-1] == tok.eos_token


def test_lm_reply_cleaning() -> None:
    from fairness_core.translation.backbones import clean_reply

    assert clean_reply("English: The museum is shut.\nMore text", "en") == "The museum is shut."
    assert clean_reply("\n  \"El museo está cerrado.\"", "es") == "El museo está cerrado."
    assert clean_reply("", "es") == ""


def test_token_pieces_are_shown_as_a_reader_sees_them(tiny_gpt2) -> None:
    """The DATScore token table shows " cat", not the byte-level BPE piece "Ġcat" (issue 23)."""
    from transformers import AutoTokenizer

    from fairness_core.translation.backbones import readable_tokens

    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2)
    ids = tokenizer(" the cat", add_special_tokens=False)["input_ids"]
    pieces = tokenizer.convert_ids_to_tokens(ids)
    readable = readable_tokens(tokenizer, pieces)
    assert len(readable) == len(pieces) and "".join(readable) == " the cat"
    assert not any("Ġ" in token for token in readable)
