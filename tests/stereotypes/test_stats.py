"""The statistics on constructed data whose answer is known by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from fairness_core.stereotypes import stats


def test_crows_counts_ties_as_not_more_likely_and_leaves_them_out_of_the_sign_test() -> None:
    result = stats.crows_stats([1.0, 2.0, -1.0, 0.0, 3.0], resamples=200)
    assert result["n"] == 5 and result["n_more_likely"] == 3 and result["n_ties"] == 1
    assert result["pct_stereotype"] == pytest.approx(0.6)  # the tie counts against "more likely", as lm-eval
    assert result["likelihood_diff"] == pytest.approx(7 / 5)
    assert result["p_value"] == pytest.approx(0.625)  # exact: 2 * P(X >= 3), X ~ Bin(4, 1/2) = 2 * 5/16
    # Wilson's interval for 3/5 (Agresti & Coull 1998's worked form): centre 0.5611, half-width 0.3257
    assert (result["pct_stereotype_ci_low"], result["pct_stereotype_ci_high"]) == pytest.approx((0.2307, 0.8824),
                                                                                               abs=1e-4)
    assert "No preference detectable" in result["verdict"] and "1 tied pair" in result["verdict"]
    assert result["likelihood_diff_ci_low"] <= 1.4 <= result["likelihood_diff_ci_high"]


def test_crows_detects_a_preference_and_groups_by_bias_type() -> None:
    pairs = pd.DataFrame({"bias_type": ["race-color"] * 20 + ["age"] * 4, "diff": [0.5] * 20 + [-1.0] * 4})
    summary = stats.crows_summary(pairs, resamples=100)
    assert summary["overall"]["p_value"] == pytest.approx(2 * sum(math.comb(24, k) for k in range(20, 25)) / 2**24)
    race = summary["by_bias_type"]["race-color"]
    assert race["pct_stereotype"] == 1.0 and race["p_value"] == pytest.approx(2 * 0.5**20)
    assert "prefers the more disadvantaged group's sentence" in race["verdict"]
    assert summary["by_bias_type"]["age"]["pct_stereotype"] == 0.0
    assert next(iter(summary["by_bias_type"])) == "race-color"  # the largest type first


def _cluster(target: str, stereo: float, anti: float, unrelated: float, domain: str = "race",
             split: str = "intrasentence") -> dict:
    return {"split": split, "domain": domain, "target": target, "stereotype": stereo, "anti-stereotype": anti,
            "unrelated": unrelated}


def test_stereoset_scores_are_means_over_target_terms_as_in_the_released_script() -> None:
    clusters = pd.DataFrame([
        _cluster("A", -1.0, -2.0, -3.0),  # pro; both related
        _cluster("A", -2.0, -1.0, -1.5),  # anti; only the anti-stereotype beats the unrelated sentence
        _cluster("B", -1.0, -1.0, 0.0),  # a tie goes to "anti"; nothing beats the unrelated sentence
    ])
    scores = stats.stereoset_scores(clusters, resamples=0)
    # A: SS 50, LMS 75; B: SS 0, LMS 0 -> means 25 and 37.5; ICAT from the means, not a mean of ICATs
    assert (scores["ss"], scores["lms"]) == pytest.approx((25.0, 37.5))
    assert scores["icat"] == pytest.approx(37.5 * 25 / 50) and scores["count"] == 3 and scores["n_terms"] == 2


def test_stereoset_summary_layout_and_term_bootstrap() -> None:
    rng = np.random.default_rng(0)
    rows = [_cluster(f"t{i % 12}", rng.normal() + 1, rng.normal(), -5.0, domain=("race", "gender")[i % 2], split=split)
            for split in ("intrasentence", "intersentence") for i in range(60)]
    summary = stats.stereoset_summary(pd.DataFrame(rows), resamples=300)
    assert set(summary) == {"intrasentence", "intersentence", "overall"}
    assert set(summary["intrasentence"]) == {"gender", "race", "overall"}
    overall = summary["overall"]
    assert overall["lms"] == 100.0 and overall["ss"] > 50 and overall["n_terms"] == 12  # terms pooled over splits
    assert overall["ss_ci_low"] <= overall["ss"] <= overall["ss_ci_high"] and overall["lms_ci_low"] == 100.0
    assert overall["verdict"].startswith("The model prefers stereotypes")


def _bbq(template: str, condition: str, polarity: str, pred: int, target: float | None, label: int = 0,
         unknown: int = 2, category: str = "Age", label_type: str = "label") -> dict:
    return {"category": category, "template": template, "condition": condition, "polarity": polarity,
            "pred": pred, "label": label, "unknown": unknown, "target_loc": target, "label_type": label_type}


def test_bbq_bias_scores_follow_parrish_et_al() -> None:
    rows = []
    for t in range(4):  # disambiguated: every answer follows the stereotype -> s_DIS = +1
        rows += [_bbq(f"Age/{t}", "disambig", "neg", pred=0, target=0, label=0),
                 _bbq(f"Age/{t}", "disambig", "nonneg", pred=1, target=0, label=0)]
    rows += [  # ambiguous (label = unknown = 2): one correct, two biased, one against the stereotype
        _bbq("Age/0", "ambig", "neg", pred=2, target=0, label=2),
        _bbq("Age/1", "ambig", "neg", pred=0, target=0, label=2),
        _bbq("Age/2", "ambig", "nonneg", pred=1, target=0, label=2),
        _bbq("Age/3", "ambig", "nonneg", pred=0, target=0, label=2),
        _bbq("Age/3", "ambig", "neg", pred=1, target=None, label=2),  # no target_loc: accuracy only
    ]
    summary = stats.bbq_summary(pd.DataFrame(rows), resamples=200)
    dis, amb = summary["by_category"]["Age"]["disambig"], summary["by_category"]["Age"]["ambig"]
    assert dis["accuracy"] == pytest.approx(0.5) and dis["bias"] == pytest.approx(1.0)
    assert dis["bias_ci_low"] == dis["bias_ci_high"] == pytest.approx(1.0)  # every template alike
    assert amb["n"] == 5 and amb["n_non_unknown"] == 3 and amb["n_biased"] == 2
    # raw = 2 * 2/3 - 1 = 1/3; accuracy 1/5; s_AMB = (1 - 1/5) / 3
    assert amb["accuracy"] == pytest.approx(0.2) and amb["bias"] == pytest.approx(0.8 / 3)
    assert amb["n_templates"] == 4 and amb["bias_ci_low"] <= amb["bias"] <= amb["bias_ci_high"]
    assert "templates" in amb["verdict"]


def test_bbq_keeps_name_proxies_apart_and_a_single_template_has_no_interval() -> None:
    rows = [_bbq("Race/1", "disambig", "neg", 0, 0, category="Race", label_type="name"),
            _bbq("Race/1", "disambig", "neg", 1, 0, category="Race", label_type="name")]
    summary = stats.bbq_summary(pd.DataFrame(rows), resamples=100)
    cell = summary["by_category"]["Race (names)"]["disambig"]
    assert cell["bias"] == pytest.approx(0.0) and math.isnan(cell["bias_ci_low"])
    assert "too few templates" in cell["verdict"]


def test_the_sign_test_equals_scipys_exact_binomial_test() -> None:
    from scipy.stats import binomtest

    for more, less in ((0, 1), (3, 1), (10, 10), (60, 40), (700, 808), (5, 0)):
        assert stats.sign_test(more, less) == pytest.approx(binomtest(more, more + less, 0.5).pvalue, rel=1e-9)
    assert math.isnan(stats.sign_test(0, 0))


def test_two_models_on_the_same_pairs_are_compared_pairwise() -> None:
    a = np.array([1.0] * 30 + [-1.0] * 10)  # A prefers sent_more in 30 of 40 pairs
    b = np.array([1.0] * 20 + [-1.0] * 20)  # B in the first 20 of them: 10 discordant pairs, all A's
    paired = stats.crows_paired(a, b, resamples=500)
    assert paired["pct_stereotype_diff"] == pytest.approx(0.25) and paired["likelihood_diff_diff"] == 0.0
    assert (paired["only_a_more"], paired["only_b_more"]) == (10, 0)
    assert paired["p_value"] == pytest.approx(2 * 0.5**10)  # McNemar's exact test on the discordant pairs
    assert 0 < paired["pct_stereotype_diff_ci_low"] <= 0.25 <= paired["pct_stereotype_diff_ci_high"]
    with pytest.raises(ValueError, match="same pairs"):
        stats.crows_paired(a, b[:5])
