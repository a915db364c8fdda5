"""Trigram entropy (Dhamala et al., Eq. 1) on hand-computed examples."""

from __future__ import annotations

import math

import pytest

from fairness_core.generation.diversity import STOPWORDS, frequent_ngrams, tokens, trigram_entropy


def test_two_distinct_trigrams_give_ln2() -> None:
    # "a b c d" has trigrams (a b c) and (b c d), each with share 1/2: H = ln 2.
    assert trigram_entropy(["a b c d"]) == pytest.approx(math.log(2))


def test_repeated_outputs_have_zero_entropy() -> None:
    assert trigram_entropy(["the cat sat", "The cat sat"]) == 0.0


def test_shares_are_pooled_over_texts_and_never_span_two_texts() -> None:
    # (a b c) twice, (x y z) once; "a b" has no trigram, and no trigram crosses text boundaries.
    expected = -(2 / 3 * math.log(2 / 3) + 1 / 3 * math.log(1 / 3))
    assert trigram_entropy(["a b c", "a b c", "x y z", "a b"]) == pytest.approx(expected)


def test_no_trigrams_is_zero() -> None:
    assert trigram_entropy([]) == 0.0
    assert trigram_entropy(["hi", ""]) == 0.0


def test_tokens_split_punctuation_and_keep_contractions() -> None:
    assert tokens("He's a nurse, isn't he?") == ["he's", "a", "nurse", ",", "isn't", "he", "?"]


def test_frequent_ngrams_skip_stopwords_and_punctuation() -> None:
    texts = ["The nurse was kind.", "A nurse was rude."]
    assert frequent_ngrams(texts, n=1, top=2, stopwords=STOPWORDS) == [("nurse", 2), ("kind", 1)]
    assert ("nurse was", 2) in frequent_ngrams(texts, n=2, top=3, stopwords=STOPWORDS)
