"""`Encoder.sentence_embeddings`: mean over ordinary tokens of the last layer, L2-normalised."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fairness_core.models import ModelSpec, load_model


def test_mean_of_ordinary_tokens_normalised(tiny_bert: Path) -> None:
    encoder = load_model(ModelSpec(str(tiny_bert), "encoder"))
    texts = ["the nurse", "the nurse said that she would help the patient", ""]
    embeddings = encoder.sentence_embeddings(texts)
    assert embeddings.shape == (3, encoder.model.config.hidden_size)
    np.testing.assert_allclose(np.linalg.norm(embeddings, axis=1), 1.0, atol=1e-5)
    # By hand from the token embeddings: [CLS]/[SEP] and padding are left out.
    short = encoder.token_embeddings(texts[:1])[0]
    mean = short.vectors[~short.special].mean(axis=0)
    np.testing.assert_allclose(embeddings[0], mean / np.linalg.norm(mean), atol=1e-5)
    # Padding never leaks in: a text embedded alone equals the same text in a padded batch.
    np.testing.assert_allclose(encoder.sentence_embeddings(texts[:1])[0], embeddings[0], atol=1e-5)
    # The generic interface default (from token_embeddings) agrees with the batched backend.
    from fairness_core.models.interfaces import Encoder

    np.testing.assert_allclose(Encoder.sentence_embeddings(encoder, texts), embeddings, atol=1e-5)


def test_minilm_puts_paraphrases_closer_than_unrelated_sentences() -> None:
    from fairness_core.models import availability, get_preset, load_preset

    if not availability(get_preset("all-minilm-l6-v2")).usable:
        pytest.skip("all-MiniLM-L6-v2 is not installed here")
    minilm = load_preset("all-minilm-l6-v2")
    a, paraphrase, unrelated = minilm.sentence_embeddings([
        "The nurse said she would help the patient.",
        "The nurse told the patient that she would assist him.",
        "Stock markets fell sharply after the interest rate decision.",
    ])
    assert float(a @ paraphrase) > float(a @ unrelated) + 0.2
