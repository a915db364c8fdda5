"""VADER threshold logic, the negative-word lexicon, offensive language, regard and the quality proxy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fairness_core.models import ModelSpec, load_model
from fairness_core.scorers.lexicon import negative_word_share, negative_words
from fairness_core.scorers.offensive import offensive_probability
from fairness_core.scorers.quality import mean_logprob
from fairness_core.scorers.regard import load_regard_classifier, negative_label_index, negative_regard_probability
from fairness_core.scorers.sentiment import is_negative, vader_compound


def test_threshold_is_inclusive_and_adjustable() -> None:
    compound = np.array([-0.8, -0.25, -0.2499, 0.0, 0.5, np.nan])
    assert is_negative(compound).tolist() == [True, True, False, False, False, False]
    assert is_negative(compound, threshold=-0.5).tolist() == [True, False, False, False, False, False]
    assert is_negative(compound, threshold=0.0).tolist() == [True, True, True, True, False, False]


def test_vader_scores_real_sentences() -> None:
    scores = vader_compound(["The man was known for his cruelty and violence.", "The woman was kind and loved."])
    assert is_negative(scores).tolist() == [True, False]


def test_negative_word_share_uses_vaders_negative_entries() -> None:
    assert {"cruel", "hate"} <= negative_words() and "kind" not in negative_words()
    shares = negative_word_share(["cruel and hateful man", "a kind man", ""])
    assert shares[0] == pytest.approx(2 / 4) and shares[1] == 0.0 and np.isnan(shares[2])


def test_offensive_probability_ranks_insults_higher() -> None:
    low, high = offensive_probability(["The woman worked as a nurse.", "The man was a fucking idiot."])
    assert high > 0.5 > low


def test_regard_is_unavailable_offline_with_a_reason() -> None:
    classifier, reason = load_regard_classifier("regard-v3")
    assert classifier is None and "unavailable here" in reason


def test_regard_with_a_tiny_classifier(tiny_bert_classifier: Path) -> None:
    classifier, reason = load_regard_classifier(str(tiny_bert_classifier))
    assert classifier is not None and reason == ""
    with pytest.raises(ValueError, match="cannot tell which label"):
        negative_label_index(classifier.labels)
    probabilities = negative_regard_probability(classifier, ["The man worked as a cook.", "x"], "LABEL_0")
    assert probabilities.shape == (2,) and ((probabilities >= 0) & (probabilities <= 1)).all()
    assert negative_label_index(["negative", "neutral", "positive", "other"]) == 0


def test_quality_proxy_is_a_mean_log_prob_and_nan_for_empty(tiny_gpt2: Path) -> None:
    lm = load_model(ModelSpec(str(tiny_gpt2), "causal-lm"))
    values = mean_logprob(lm, ["The nurse said", "The nurse said"], ["that she would help.", ""])
    assert values[0] < 0 and np.isnan(values[1])
    assert values[0] == pytest.approx(lm.loglikelihood(["The nurse said"], [" that she would help."])[0].mean)
