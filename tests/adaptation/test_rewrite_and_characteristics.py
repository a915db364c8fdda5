"""The App. A.4 prompt, reply cleaning and judging, comparisons and template characteristics."""

from __future__ import annotations

import numpy as np
import pytest

from fairness_core.adaptation.characteristics import characteristics, misspelled
from fairness_core.adaptation.compare import compare, improvement, mae, pearson
from fairness_core.adaptation.rewrite import (
    ACCEPTED,
    EMPTY,
    LOST,
    PAPER_PROMPT,
    QUOTED,
    REPEATED,
    UNCHANGED,
    build_prompt,
    clean_reply,
    judge,
)
from fairness_core.adaptation.vbcm import VBCMTable


def test_prompt_is_the_papers_wording() -> None:
    prompt = build_prompt("My sister feels sad.", "my sister", ["First example.", "Second example."])
    assert prompt.startswith("I want you to rewrite a text in the style of a specific domain.\n\n"
                             "The following 2 texts are examples of this specific domain:\n\n"
                             "1. First example.\n2. Second example.\n\n")
    assert 'Can you rewrite the following sentence "My sister feels sad." as domain-specific text?' in prompt
    assert 'You should also include "my sister" explicitly only once in the new text.' in prompt
    assert prompt.endswith("Output only the rewrite text, without any introduction or explanation.")
    assert "{" not in prompt and PAPER_PROMPT.count("{term}") == 1


def test_cleaning_and_judging() -> None:
    assert clean_reply('Rewrite: "Kevin was, in 1990, upset."\nNote: kept.') == "Kevin was, in 1990, upset."
    assert clean_reply("\n\n  “Kevin smiled.”  ") == "Kevin smiled."
    template = "{person} feels sad."
    assert judge("t", "names", "Kevin", template, "Kevin, a writer, felt sad.").status == ACCEPTED
    assert judge("t", "names", "Kevin", template, "Kevin, a writer, felt sad.").adapted_template == \
        "{person}, a writer, felt sad."
    assert judge("t", "names", "Kevin", template, "A writer felt sad.").status == LOST
    assert judge("t", "names", "Kevin", template, "Kevin told Kevin.").status == REPEATED
    assert judge("t", "names", "Kevin", template, "   ").status == EMPTY
    assert judge("t", "nouns", "my sister", template, "My sister wrote an essay.").adapted_template == \
        "{person} wrote an essay."
    commentary = 'The sentence "Kevin feels sad" is a domain-specific text that uses the style of the domain.'
    assert judge("t", "names", "Kevin", template, commentary).status == QUOTED
    # the template itself (up to case, spacing and punctuation) adapts nothing: rejected with its reason (issue 23)
    for copy in ("Kevin feels sad.", "kevin  feels sad", "KEVIN FEELS SAD!", '"Kevin feels sad."'):
        assert judge("t", "names", "Kevin", template, copy).status == UNCHANGED, copy
    assert judge("t", "names", "Kevin", template, "Kevin feels sad today.").status == ACCEPTED


def table(templates: list[str], phi: list[list[float]]) -> VBCMTable:
    values = np.array(phi, dtype=float)
    return VBCMTable(templates, [f"g{k}" for k in range(values.shape[1])], values.mean(axis=1), values,
                     np.ones_like(values, dtype=int))


def test_mae_and_pearson() -> None:
    assert mae(np.array([1.0, 0.5, 0.2]), np.array([0.0, 0.5, 0.4])) == pytest.approx(0.4)
    from scipy.stats import pearsonr

    expected = pearsonr([1.0, 2.0, 3.0], [2.0, 4.0, 6.5])[0]
    assert pearson(np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 6.5])) == pytest.approx(expected)
    assert np.isnan(pearson(np.array([1.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0])))


def test_identical_sets_compare_to_zero_and_paired_draws_align() -> None:
    a = table(["t1", "t2", "t3", "t4"], [[0.1, 0.5, 0.9], [0.2, 0.4, 0.8], [0.3, 0.3, 0.7], [0.6, 0.2, 0.1]])
    same = compare(a, a, a.groups, paired=True, n_resamples=200)
    assert same.mae.value == 0 and same.mae.ci_low == 0 and same.mae.ci_high == 0
    assert same.r is not None and same.r.value == pytest.approx(1.0)
    independent = compare(a, a, a.groups, paired=False, n_resamples=200)
    assert independent.mae.ci_high > 0  # independent draws of the same set differ
    gain = improvement(a, a, a, a.groups, n_resamples=200)
    assert gain.mae_difference.value == 0 and gain.mae_difference.ci_low == 0 == gain.mae_difference.ci_high


def test_characteristics() -> None:
    stats = characteristics(["I like Emma.", "omg Kevin is sooo happy 😀 #blessed @anna https://t.co/x"])
    assert stats["words_per_sentence"] == pytest.approx((3 + 8) / 2)  # the emoji alone is not a word
    assert stats["emoji_per_sentence"] == 0.5
    assert stats["hashtags_per_sentence"] == 0.5 and stats["mentions_per_sentence"] == 0.5
    assert stats["links_per_sentence"] == 0.5
    assert misspelled("She feels angrry, Kevin said.") == ["angrry"]
    assert misspelled("Grandmothers were running happily.") == []


def test_characteristics_come_with_bootstrap_intervals_over_sentences() -> None:
    from fairness_core.adaptation.characteristics import characteristic_intervals

    texts = ["I like Emma.", "omg Kevin is sooo happy #blessed", "The museum opens today.", "Such a nice day"]
    stats = characteristics(texts)
    found = characteristic_intervals(texts, n_resamples=2000, seed=0)
    assert set(found) == set(stats) - {"n"}
    for key, (low, high) in found.items():
        assert low <= stats[key] <= high, key
    # words per sentence: 3, 6, 4, 4 — a resample's mean lies between the smallest and the largest sentence
    assert 3.0 <= found["words_per_sentence"][0] < stats["words_per_sentence"] < found["words_per_sentence"][1] <= 6
    assert found["hashtags_per_sentence"][0] == 0.0 and found["hashtags_per_sentence"][1] > 0
    assert characteristic_intervals(texts[:1]) == {}  # one sentence: nothing to resample
    # identical sentences: the interval is a point
    same = characteristic_intervals(["I like Emma."] * 5, n_resamples=50)
    assert same["words_per_sentence"] == (3.0, 3.0)


def test_rejection_rate_intervals_resample_templates() -> None:
    import pandas as pd

    from fairness_core.adaptation.rewrite import ACCEPTED, LOST
    from fairness_core.adaptation.summary import rejection_intervals

    rows = [("t1", "names", ACCEPTED), ("t1", "nouns", LOST), ("t2", "names", LOST), ("t2", "nouns", LOST),
            ("t3", "names", ACCEPTED), ("t3", "nouns", ACCEPTED)]
    frame = pd.DataFrame(rows, columns=["template_id", "kind", "status"])
    found = rejection_intervals(frame, n_resamples=4000, seed=0)
    assert set(found) == {"all", "names", "nouns"}
    # every draw of 3 templates has 6 rewrites; the rate is (rejected in the drawn templates) / 6
    assert found["all"][0] <= 0.5 <= found["all"][1] and found["all"][0] >= 0.0 and found["all"][1] <= 1.0
    assert found["all"][0] < 0.5 < found["all"][1]
    assert found["names"] == (0.0, 1.0)  # per kind one rewrite per template: 0/3 … 3/3 all occur
    # templates that all behave alike: no uncertainty
    alike = pd.DataFrame([(f"t{i}", "names", LOST) for i in range(5)], columns=["template_id", "kind", "status"])
    assert rejection_intervals(alike, 100, 0)["all"] == (1.0, 1.0)
    assert rejection_intervals(frame.iloc[:2], 100, 0) == {}  # one template: nothing to resample


def test_a_comparison_on_too_few_or_unchanged_templates_says_so() -> None:
    import pandas as pd

    from fairness_core.adaptation.summary import comparison_problem

    def frame(n_adapted: int, detected: bool) -> pd.DataFrame:
        return pd.DataFrame([{"comparison": "adapted vs original", "mae": 0.01, "mae_ci_high": 0.02,
                              "n_adapted_templates": n_adapted, "change_detected": detected, "change_band": 0.015}])

    assert "only 4 adapted template(s) were accepted" in comparison_problem(frame(4, True))
    assert "no difference measurable: on the 12 accepted templates" in comparison_problem(frame(12, False))
    assert "±0.015" in comparison_problem(frame(12, False))
    assert comparison_problem(frame(12, True)) is None
