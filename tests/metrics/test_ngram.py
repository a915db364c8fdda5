"""n-gram metrics under both configurations, against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from fairness_core.metrics import MetricOptionError, metric_from_request


def one(name: str, config: str, candidate: str, reference: str) -> float:
    return float(metric_from_request(name, config=config).score([candidate], [reference])["score"][0])


@pytest.mark.parametrize(("config", "scale"), [("default", 100.0), ("metric-fairness-2022", 1.0)])
def test_bleu_is_the_geometric_mean_of_1_to_4_gram_precisions(config: str, scale: float) -> None:
    # candidate "the cat sat on a mat" vs "the cat sat on the mat": matched 1..4-grams 5/6, 3/5, 2/4, 1/3;
    # equal lengths, so no brevity penalty and no smoothing comes into play.
    expected = (5 / 6 * 3 / 5 * 2 / 4 * 1 / 3) ** 0.25
    assert one("bleu", config, "the cat sat on a mat", "the cat sat on the mat") == pytest.approx(expected * scale)


def test_rouge1_stems_only_in_the_paper_configuration() -> None:
    # "the cats sat" vs "the cat sat": 2 of 3 unigrams match without stemming, all 3 with it.
    assert one("rouge1", "default", "the cats sat", "the cat sat") == pytest.approx(2 / 3)
    assert one("rouge1", "metric-fairness-2022", "the cats sat", "the cat sat") == pytest.approx(1.0)


@pytest.mark.parametrize("config", ["default", "metric-fairness-2022"])
def test_meteor_of_an_exact_match_is_one_minus_the_fragmentation_penalty(config: str) -> None:
    # P = R = 1, one chunk over 4 matches: penalty 0.5 * (1/4)^3.
    assert one("meteor", config, "a b c d", "a b c d") == pytest.approx(1 - 0.5 * (1 / 4) ** 3)


@pytest.mark.parametrize("config", ["default", "metric-fairness-2022"])
def test_nist_of_an_exact_match_counts_unigram_information_only(config: str) -> None:
    # One reference "a b c d": each unigram carries log2(4/1) = 2 bits; every longer n-gram is as
    # frequent as its prefix, so it carries log2(1/1) = 0. NIST = 4 * 2 / 4 = 2.
    assert one("nist", config, "a b c d", "a b c d") == pytest.approx(2.0)


def test_nist_uses_bigrams_in_the_paper_configuration() -> None:
    # "he is sick" vs "he is ill": default n=5 is capped at the 3-token candidate; the paper uses n=2.
    default = one("nist", "default", "he is sick", "he is ill")
    paper = one("nist", "metric-fairness-2022", "he is sick", "he is ill")
    assert math.isfinite(default) and paper == pytest.approx(default)  # trigram information is 0 here


def test_chrf_sacrebleu_averages_over_the_orders_that_exist() -> None:
    # "ab" vs "ac": 1-gram P = R = 1/2; 2-gram P = R = 0; no longer n-grams -> F = 1/4 -> 25 on sacrebleu's scale.
    assert one("chrf", "default", "ab", "ac") == pytest.approx(25.0)
    assert one("chrf", "default", "a b c d", "a b c d") == pytest.approx(100.0)


def test_chrf_nltk_averages_over_all_six_orders() -> None:
    # nltk keeps orders 1..6 and scores an order with no n-grams as 0: "abcd" matches itself on
    # orders 1-4 only -> 4/6; "ab" vs "ac" -> F1 = 1/2 on order 1 only -> 1/12.
    assert one("chrf", "metric-fairness-2022", "a b c d", "a b c d") == pytest.approx(4 / 6)
    assert one("chrf", "metric-fairness-2022", "ab", "ac") == pytest.approx(1 / 12)


def test_identity_swap_does_not_move_surface_metrics() -> None:
    # Both candidates miss the reference's noun by one token, so n-gram metrics score them alike.
    metric = metric_from_request("bleu", config="metric-fairness-2022")
    scores = metric.score(["the nurse said she is late", "the nurse said he is late"],
                          ["the nurse said the nurse is late"] * 2)["score"]
    assert scores[0] == scores[1]


def test_unknown_names_and_options_are_one_sentence_errors() -> None:
    with pytest.raises(MetricOptionError, match="unknown metric 'ter'"):
        metric_from_request("ter")
    with pytest.raises(MetricOptionError, match="bleu: unknown configuration 'sacrebleu-2017'"):
        metric_from_request("bleu", config="sacrebleu-2017")


def test_a_non_finite_library_value_stays_nan() -> None:
    """nltk NIST divides by zero for an empty reference: the pair must be excluded later, not scored 0."""
    metric = metric_from_request("nist", config="metric-fairness-2022")
    metric._fn = lambda cand, ref: float("inf") if cand == "x" else 1.0
    values = metric.score(["x", "y"], ["r", "r"])["score"]
    assert math.isnan(values[0]) and values[1] == 1.0
