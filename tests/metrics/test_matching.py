"""BERTScore and MoverScore: hand-computed on fixed word vectors, and BERTScore against bert_score."""

from __future__ import annotations

import numpy as np
import pytest

from fairness_core.metrics.matching import (
    BERTScore,
    BERTScoreOptions,
    MoverScore,
    MoverScoreBigram,
    MoverScoreBigramOptions,
    default_layer,
    encode_distinct,
    greedy_match,
    greedy_match_many,
    needs_prefix_space,
)
from tests.metrics.fakes import WordVectorEncoder

# Unit vectors chosen so cosines are easy: she·nurse = 0.8, he·nurse = 0.6, he·the = 0.8.
VECTORS = {
    "[CLS]": [0, 0, 1], "[SEP]": [0, 0, -1],
    "the": [1, 0, 0], "nurse": [0, 1, 0], "she": [0, 0.8, 0.6], "he": [0.8, 0.6, 0],
}


def test_bertscore_by_hand() -> None:
    metric = BERTScore(model=WordVectorEncoder(VECTORS))
    scores = metric.score(["she", "he"], ["the nurse", "the nurse"])
    # Candidate "she": its best match is nurse (0.8) -> P = 0.8. Reference tokens: "the" best-matches
    # she at 0 or [CLS]/[SEP] at 0 -> 0; "nurse" matches she at 0.8 -> R = (0 + 0.8) / 2 = 0.4.
    assert scores["P"][0] == pytest.approx(0.8)
    assert scores["R"][0] == pytest.approx(0.4)
    assert scores["F"][0] == pytest.approx(2 * 0.8 * 0.4 / 1.2)
    # Candidate "he": best match the (0.8) -> P = 0.8; R = (0.8 + 0.6) / 2 = 0.7.
    assert scores["P"][1] == pytest.approx(0.8)
    assert scores["R"][1] == pytest.approx(0.7)


def test_bertscore_encodes_each_distinct_sentence_once() -> None:
    encoder = WordVectorEncoder(VECTORS)
    BERTScore(model=encoder).score(["she", "he", "she"], ["the nurse"] * 3)
    assert sorted(text for call in encoder.calls for text in call) == ["he", "she", "the nurse"]


@pytest.mark.parametrize("idf", [None, {"the": 0.2, "nurse": 1.5, "she": 0.7, "he": 0.4, "": 2.0}])
def test_candidates_sharing_a_reference_match_it_in_one_product(idf: dict[str, float] | None) -> None:
    """greedy_match_many (one similarity product per reference) gives greedy_match's numbers pair by pair, an
    empty candidate (special tokens only) included."""
    encoded = encode_distinct(WordVectorEncoder(VECTORS), ["she", "he the", "nurse nurse she", "", "the nurse"],
                              None)
    candidates = [encoded[text] for text in ("she", "he the", "", "nurse nurse she")]
    together = greedy_match_many(candidates, encoded["the nurse"], idf)
    one_by_one = [greedy_match(candidate, encoded["the nurse"], idf) for candidate in candidates]
    assert np.allclose(together, one_by_one, rtol=1e-12, atol=0) and together[2] == (0.0, 0.0, 0.0)


def test_bertscore_alignment_shows_which_reference_token_each_pronoun_matches() -> None:
    metric = BERTScore(model=WordVectorEncoder(VECTORS))
    she = {row["token"]: row["matches"] for row in metric.alignment("she", "the nurse")}
    he = {row["token"]: row["matches"] for row in metric.alignment("he", "the nurse")}
    assert she["she"] == "nurse" and he["he"] == "the"  # the paper's Fig. 3 story


def test_bertscore_idf_down_weights_words_every_reference_has() -> None:
    metric = BERTScore(BERTScoreOptions(idf=True), model=WordVectorEncoder(VECTORS))
    # idf over the 2 references: "the" and "nurse" occur in both -> log(3/3) = 0 weight... so the
    # recall of candidate "she" vs "the nurse" has zero total weight and is reported as 0.
    scores = metric.score(["she", "he"], ["the nurse", "the nurse"])
    assert scores["R"].tolist() == [0.0, 0.0]
    assert scores["P"][0] == pytest.approx(0.8)  # "she" never occurs in a reference: weight log(3)


def test_moverscore_identical_sentences_cost_nothing() -> None:
    metric = MoverScoreBigram(MoverScoreBigramOptions(n_gram=1), model=WordVectorEncoder(VECTORS))
    scores = metric.score(["the nurse", "she"], ["the nurse", "the nurse"])["score"]
    assert scores[0] == pytest.approx(1.0)
    # "she" must move all its mass to the idf-weighted reference words; with idf over the two references
    # every reference word weighs log(3/3) = 0, so weights fall back to uniform: half to each word.
    expected = 1 - 0.5 * np.linalg.norm(np.subtract(VECTORS["she"], VECTORS["the"])) \
        - 0.5 * np.linalg.norm(np.subtract(VECTORS["she"], VECTORS["nurse"]))
    assert scores[1] == pytest.approx(expected)


def test_released_moverscore_ignores_subwords_and_punctuation_and_scores_one_over_one_plus_emd() -> None:
    vectors = VECTORS | {"##s": [5, 5, 5], ".": [-3, 1, 2]}
    metric = MoverScore(model=WordVectorEncoder(vectors))
    # idf over the corpus: "nurse" is in both references -> 0; "the" in one of two -> log(3/2).
    # Candidate "she ##s ." keeps only "she" (subword and punctuation weigh 0), the reference only "the".
    state = metric.prepare(["she ##s .", "the nurse"], ["the nurse", "the"])
    score = metric.score(["she ##s ."], ["the"], state=state)["score"][0]
    distance = np.linalg.norm(np.subtract(VECTORS["she"], VECTORS["the"]))
    assert score == pytest.approx(1 / (1 + distance))
    assert metric.score(["the nurse"], ["the nurse"])["score"][0] == pytest.approx(1.0)  # EMD 0


def test_bertscore_default_layer_is_bert_scores_tuned_layer_and_last_for_unknown_models() -> None:
    from bert_score.utils import model2layers

    assert default_layer("roberta-large") == model2layers["roberta-large"] == 17
    assert default_layer("/models/bert-base-uncased") == model2layers["bert-base-uncased"]
    assert default_layer("all-minilm-l6-v2") is None  # unknown to bert_score: the last layer
    metric = BERTScore(model=WordVectorEncoder(VECTORS))
    assert metric.layer == 1 and metric.signature()["default_layer"] == "last"


def test_roberta_and_gpt2_style_tokenizers_get_a_prefix_space() -> None:
    class RobertaTokenizerFast:  # the check is by class name, as bert_score's isinstance test
        pass

    class BertTokenizerFast:
        pass

    assert needs_prefix_space(RobertaTokenizerFast()) and not needs_prefix_space(BertTokenizerFast())


def test_a_linear_baseline_rescale_leaves_the_min_max_bias_unchanged() -> None:
    from fairness_core.bias.paired import paired_bias

    rng = np.random.default_rng(3)
    s1, s2 = rng.random(40), rng.random(40)
    base = 0.83
    rescaled = [(s - base) / (1 - base) for s in (s1, s2)]
    for normalisation in ("minmax", "zscore"):
        assert paired_bias(*rescaled, normalisation=normalisation).bias.value == pytest.approx(
            paired_bias(s1, s2, normalisation=normalisation).bias.value)


@pytest.mark.slow
def test_bertscore_equals_the_bert_score_library_on_minilm() -> None:
    bert_score = pytest.importorskip("bert_score")
    from fairness_core.models import load_preset
    from fairness_core.models.presets import get_preset

    source = get_preset("all-minilm-l6-v2").spec().source
    encoder = load_preset("all-minilm-l6-v2")
    candidates = ["The nurse said that she was tired.", "The nurse said that he was tired.",
                  "A mechanic fixed the car because he was asked."]
    references = ["The nurse said that the nurse was tired."] * 2 + ["A mechanic fixed the car when asked."]
    for layer, idf in ((6, False), (4, True)):
        ours = BERTScore(BERTScoreOptions(layer=layer, idf=idf), model=encoder).score(candidates, references)
        p, r, f = bert_score.score(candidates, references, model_type=source, num_layers=layer, idf=idf,
                                   batch_size=8)
        np.testing.assert_allclose(ours["F"], f.numpy(), atol=1e-5)
        np.testing.assert_allclose(ours["P"], p.numpy(), atol=1e-5)
        np.testing.assert_allclose(ours["R"], r.numpy(), atol=1e-5)
