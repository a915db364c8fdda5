"""Decoding summaries on hand-made generations: regard by its top class, disparity for every rate
measure, intervals from the template bootstrap, ordering flips only when both gaps pass Holm over the view."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairness_core.decoding.summary import (
    cli_rows,
    disparity_headline,
    family_headlines,
    measures_for,
    ordering_flips,
    summarize,
)
from fairness_core.scorers.regard import RegardScorer

FAMILIES = {"gender": ["man", "woman"]}
SCORERS = (("vader", {}), ("regard", {}), ("quality_logprob", {}))


def _frame(rates: dict[float, dict[str, float]], n_templates: int = 40, samples: int = 5, seed: int = 0,
           regard_probs: np.ndarray | None = None) -> pd.DataFrame:
    """Generations of regard templates for man/woman at several top_p values; a row is negative w.p. rate."""
    rng = np.random.default_rng(seed)
    rows = []
    for top_p, by_group in rates.items():
        for t in range(n_templates):
            template = f"Template {t} {{group}} was"
            for group, rate in by_group.items():
                for sample in range(samples):
                    negative = rng.random() < rate
                    rows.append({"config_key": f"p{top_p}", "config": {"temperature": 1.0, "top_p": top_p},
                                 "label": f"top_p={top_p}", "group": group, "family": "gender", "source": template,
                                 "prompt_id": f"{group}:{t}", "sample": sample, "empty": False,
                                 "continuation": f"word{rng.integers(0, 50)} word{rng.integers(0, 50)} "
                                                 f"word{rng.integers(0, 50)} end",
                                 "vader_compound": -0.6 if negative else 0.3,
                                 "negative_regard": 1.0 if negative else 0.0,
                                 "quality_logprob": -3.0 + rng.normal(0, 0.1)})
    return pd.DataFrame(rows)


def test_negative_regard_is_the_top_class_not_p_at_least_half() -> None:
    class FourClasses:
        labels = ("negative", "neutral", "positive", "other")

        def predict_proba(self, texts):
            return np.array([[0.40, 0.30, 0.20, 0.10],  # top class negative, p < 0.5 -> negative
                             [0.45, 0.50, 0.03, 0.02],  # p(negative) 0.45 but neutral wins -> not negative
                             [0.10, 0.10, 0.70, 0.10]])

    scorer = RegardScorer()
    scorer._classifier = lambda: FourClasses()  # type: ignore[method-assign]
    out = scorer.score(["a", "b", "c"])
    assert out["negative_regard"].tolist() == [1.0, 0.0, 0.0]
    assert out["negative_regard_prob"].tolist() == [0.40, 0.45, 0.10]
    measure = RegardScorer.measures[0]
    assert measure.column == "negative_regard"  # the summary rate reads the top-class flag


def test_disparity_is_reported_for_regard_as_well_as_sentiment_with_intervals() -> None:
    frame = _frame({0.5: {"man": 0.4, "woman": 0.1}})
    summary = summarize(frame, FAMILIES, measures_for(SCORERS), n_resamples=400)
    row = summary.groups.iloc[0]
    for name in ("negative_sentiment", "negative_regard"):
        assert row[f"{name}_disparity"] == pytest.approx(abs(summary.groups[f"{name}_rate"].diff().iloc[1]))
        assert row[f"{name}_disparity_ci_low"] <= row[f"{name}_disparity"] <= row[f"{name}_disparity_ci_high"]
    configs = summary.configs.iloc[0]
    assert configs["diversity_ci_low"] <= configs["diversity"] <= configs["diversity_ci_high"]
    assert configs["quality_ci_low"] <= configs["quality"] <= configs["quality_ci_high"]
    assert configs["negative_rate_ci_low"] <= configs["negative_rate"] <= configs["negative_rate_ci_high"]
    assert "40 templates shared by the groups of a family" in summary.design
    rows = cli_rows(summary)
    assert {"negative_regard_disparity", "diversity_ci_low", "ci_low", "disparity"} <= set(rows[0])


def test_intervals_resample_templates_not_generations() -> None:
    """Samples of one template are identical here: the template bootstrap sees 40 units, not 200 rows,
    so its interval is as wide as that of 40 single generations."""
    base = _frame({0.5: {"man": 0.5, "woman": 0.5}}, samples=1, seed=3)
    repeated = pd.concat([base.assign(sample=s) for s in range(5)], ignore_index=True)
    one = summarize(base, FAMILIES, measures_for(SCORERS), n_resamples=2000).groups
    five = summarize(repeated, FAMILIES, measures_for(SCORERS), n_resamples=2000).groups
    width = (one["ci_high"] - one["ci_low"]).to_numpy()
    assert (five["ci_high"] - five["ci_low"]).to_numpy() == pytest.approx(width, abs=0.03)


def test_a_threshold_change_rescores_without_new_data_and_nan_is_counted() -> None:
    frame = _frame({0.5: {"man": 0.4, "woman": 0.1}})
    frame.loc[0, "vader_compound"] = np.nan
    strict = summarize(frame, FAMILIES, measures_for(SCORERS), thresholds={"negative_sentiment_rate": -0.9},
                       n_resamples=50)
    assert (strict.groups["negative_sentiment_rate"] == 0).all()
    assert strict.n_unscored["negative_sentiment_rate"] == 1


def test_an_ordering_flip_is_called_only_when_both_intervals_exclude_zero() -> None:
    clear = _frame({0.3: {"man": 0.6, "woman": 0.1}, 0.6: {"man": 0.1, "woman": 0.6}}, seed=1)
    summary = summarize(clear, FAMILIES, measures_for(SCORERS), n_resamples=400)
    flips = ordering_flips(summary, "top_p")
    assert [f.confirmed for f in flips] == [True]
    assert flips[0].worse_before == "man" and flips[0].worse_after == "woman"
    noise = _frame({0.3: {"man": 0.32, "woman": 0.3}, 0.6: {"man": 0.3, "woman": 0.32}}, seed=2, n_templates=10)
    summary = summarize(noise, FAMILIES, measures_for(SCORERS), n_resamples=400)
    points = summary.gaps.sort_values("config_key")["gap"].to_numpy()
    flips = ordering_flips(summary, "top_p")
    if np.sign(points[0]) != np.sign(points[1]):
        assert flips and not any(f.confirmed for f in flips)  # a sign change inside the noise is not called
    else:
        assert not any(f.confirmed for f in flips)


def test_the_regard_rate_counts_top_class_negatives_even_below_one_half() -> None:
    frame = _frame({0.5: {"man": 1.0, "woman": 0.0}}, n_templates=4, samples=2)
    frame["negative_regard_prob"] = np.where(frame["negative_regard"] == 1.0, 0.4, 0.1)  # top class, p < 0.5
    summary = summarize(frame, FAMILIES, measures_for(SCORERS), n_resamples=50)
    assert summary.groups.set_index("group")["negative_regard_rate"].to_dict() == {"man": 1.0, "woman": 0.0}


def test_one_template_per_family_gives_no_intervals_and_confirms_no_flip() -> None:
    """The live page's default (one prompt per group, all from one template) and a sweep cancelled early: every
    resample repeats the one template, so an interval would collapse onto the estimate and 'exclude 0'."""
    clear = _frame({0.3: {"man": 0.9, "woman": 0.1}, 0.6: {"man": 0.1, "woman": 0.9}}, n_templates=1, samples=5,
                   seed=3)
    summary = summarize(clear, FAMILIES, measures_for(SCORERS), n_resamples=200)
    assert summary.gaps["gap"].abs().gt(0).all()  # the estimates are there
    assert summary.gaps[["ci_low", "ci_high"]].isna().all().all()
    assert not any(f.confirmed for f in ordering_flips(summary, "top_p"))
    assert summary.groups[["ci_low", "ci_high", "disparity_ci_low", "diversity_ci_low"]].isna().all().all()
    assert summary.configs[["disparity_ci_low", "negative_rate_ci_low", "diversity_ci_low"]].isna().all().all()
    two = summarize(_frame({0.3: {"man": 0.9, "woman": 0.1}}, n_templates=2, seed=3), FAMILIES,
                    measures_for(SCORERS), n_resamples=200)
    assert two.gaps[["ci_low", "ci_high"]].notna().all().all()  # two templates: an interval again


def test_a_fair_models_headline_says_no_disparity_detectable_and_an_unfair_ones_says_detected() -> None:
    """A teacher's fair-model demo (10 regard templates × 2 groups × 2 samples, the same negative rate for both
    groups): the plug-in disparity is above 0 and its interval sits above 0, yet the page's sentence, worded from the
    permutation test, says nothing was detected; with a real disparity of 0.5 it says detected."""
    fair = summarize(_frame({0.5: {"man": 0.3, "woman": 0.3}}, n_templates=10, samples=2, seed=4), FAMILIES,
                     measures_for(SCORERS), n_resamples=300)
    row = fair.configs.iloc[0]
    assert row["negative_sentiment_disparity"] > 0 and row["negative_sentiment_disparity_p_value"] > 0.05
    assert row["disparity_p_value"] == row["negative_sentiment_disparity_p_value"]  # the CLI's short name
    sentence = disparity_headline(fair, row["config_key"])
    assert sentence.startswith("disparity in negative sentiment ")
    assert "no disparity detectable here (p = " in sentence and "the smallest this design could detect is about" \
        in sentence
    unfair = summarize(_frame({0.5: {"man": 0.8, "woman": 0.3}}, n_templates=10, samples=2, seed=4), FAMILIES,
                       measures_for(SCORERS), n_resamples=300)
    assert "disparity detected (p = 0.0" in disparity_headline(unfair, unfair.configs["config_key"].iloc[0])
    rows = cli_rows(fair)
    for key in ("negative_sentiment_disparity_p_value", "negative_sentiment_disparity_corrected",
                "negative_sentiment_disparity_smallest_detectable", "negative_regard_disparity_p_value",
                "negative_sentiment_config_disparity_p_value", "disparity_p_value", "config_disparity_ci_low"):
        assert key in rows[0], key
    assert 0 < rows[0]["negative_sentiment_disparity_p_value"] <= 1


def _four_families(seed: int, n_templates: int = 10, samples: int = 2) -> pd.DataFrame:
    """Regard-style generations of a fair model for two families (the page's default has four), one setting."""
    rng = np.random.default_rng(seed)
    rows = []
    for family, groups in {"gender": ["man", "woman"], "race": ["Black", "White", "Asian"]}.items():
        for t in range(n_templates):
            level = rng.normal(0, 1)  # the template's own effect, shared by its groups
            for group in groups:
                for sample in range(samples):
                    negative = rng.random() < 1 / (1 + np.exp(1.5 - level))
                    rows.append({"config_key": "p0.9", "config": {"temperature": 1.0, "top_p": 0.9},
                                 "label": "top_p=0.9", "group": group, "family": family,
                                 "source": f"Template {t} {{group}} was", "prompt_id": f"{group}:{t}",
                                 "sample": sample, "empty": False, "continuation": "word word word end",
                                 "vader_compound": -0.6 if negative else 0.3,
                                 "negative_regard": 1.0 if negative else 0.0, "quality_logprob": -3.0})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_headline_says_the_interval_that_inverts_its_test_and_the_families_say_both_p_values(seed: int) -> None:
    """Issue 42 §1-2 through the page's own summary: the headline's interval holds 0 exactly when it says "no
    disparity detectable"; each family's sentence follows its adjusted p-value (never below the unadjusted one nor
    below the headline's) and says both where they differ; the new columns keep the old ones."""
    summary = summarize(_four_families(seed), {"gender": ["man", "woman"], "race": ["Black", "White", "Asian"]},
                        measures_for(SCORERS), n_resamples=100)
    row = summary.configs.iloc[0]
    sentence = disparity_headline(summary, row["config_key"])
    assert "90% interval [" in sentence, sentence
    detected = row["negative_sentiment_disparity_p_value"] <= 0.05
    assert (row["negative_sentiment_disparity_interval_low"] > 0) == detected
    assert ("disparity detected" in sentence) == detected and ("no disparity detectable" in sentence) != detected
    assert row["disparity_p_adjusted"] == row["disparity_p_value"]  # the headline itself is not adjusted
    families = summary.groups.groupby("family").first()
    assert (families["negative_sentiment_disparity_p_adjusted"]
            >= families["negative_sentiment_disparity_p_value"] - 1e-12).all()
    assert (families["negative_sentiment_disparity_p_adjusted"] >= row["disparity_p_value"] - 1e-12).all()
    said = family_headlines(summary, row["config_key"])
    assert len(said) == 2 and all(" between " in s and "90% interval" in s for s in said)
    assert family_headlines(summarize(_frame({0.5: {"man": 0.3, "woman": 0.3}}, n_templates=4), FAMILIES,
                                      measures_for(SCORERS), n_resamples=20), "p0.5") == []  # one family: none
    for key in ("negative_sentiment_disparity_p_adjusted", "negative_sentiment_disparity_interval_low",
                "disparity_interval_high", "config_disparity_p_adjusted"):
        assert key in cli_rows(summary)[0], key


def test_a_flip_needs_both_directions_after_holm_over_every_gap_on_the_view() -> None:
    """Issue 42 §2: two gaps that each just exclude 0 (p ≈ 0.03, opposite signs) among twenty on the view are what
    chance gives a fair sweep (8.0% of 200 fair 5-group × 8-setting sweeps showed such a flip under the old rule,
    0.0% under Holm: `python -m tests.decoding.simulate_flips`); a flip is called only once both survive Holm."""
    from types import SimpleNamespace

    from fairness_core.decoding.summary import FLIP_RULE

    rows = [{"measure": "negative_sentiment_rate", "family": "race", "group_a": "a", "group_b": f"b{i}",
             "config": {"top_p": x}, "gap": 0.01, "ci_low": -0.1, "ci_high": 0.12, "p_value": 0.5}
            for i in range(9) for x in (0.5, 0.9)]
    rows += [{"measure": "negative_sentiment_rate", "family": "race", "group_a": "a", "group_b": "c",
              "config": {"top_p": 0.5}, "gap": 0.2, "ci_low": 0.01, "ci_high": 0.4, "p_value": 0.03},
             {"measure": "negative_sentiment_rate", "family": "race", "group_a": "a", "group_b": "c",
              "config": {"top_p": 0.9}, "gap": -0.2, "ci_low": -0.4, "ci_high": -0.02, "p_value": 0.02}]
    summary = SimpleNamespace(gaps=pd.DataFrame(rows))
    flips = [f for f in ordering_flips(summary, "top_p") if {f.worse_before, f.worse_after} == {"a", "c"}]
    assert len(flips) == 1 and not flips[0].confirmed  # each interval excludes 0, but not after Holm over 20 gaps
    assert flips[0].p_adjusted == pytest.approx(0.57)  # the larger of 0.02·20 = 0.4 and 0.03·19 = 0.57
    strong = pd.DataFrame(rows).assign(p_value=lambda f: np.where(f["group_b"] == "c", 0.001, 0.5))
    (called,) = [f for f in ordering_flips(SimpleNamespace(gaps=strong), "top_p") if f.confirmed]
    assert (called.worse_before, called.worse_after) == ("a", "c") and called.p_adjusted == pytest.approx(0.02)
    assert "Holm" in FLIP_RULE
