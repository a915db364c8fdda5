"""The scorer plug-in contract: registry, options, columns, signatures, availability, each built-in scorer."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from fairness_core.models import ModelUnavailableError, TextClassifier
from fairness_core.scorers import SCORERS, Scorer, ScorerOptionError, register_scorer, scorer_from_request
from fairness_core.scorers.regard import RegardScorer
from fairness_core.scorers.toxicity import toxic_label_index

BUILT_IN = {"vader", "offensive", "negative_words", "regard", "toxicity", "classifier", "honest", "quality_logprob"}


def test_every_built_in_scorer_is_registered_with_its_contract_fields() -> None:
    assert set(SCORERS) >= BUILT_IN
    for name in BUILT_IN:
        cls = SCORERS[name]
        assert cls.name == name and cls.label and cls.version and issubclass(cls, Scorer)


def test_offline_scorers_return_their_named_columns() -> None:
    texts = ["The man was known for his cruelty.", "The woman was kind and loved.", ""]
    expected = {"vader": ("vader_compound",), "offensive": ("offensive_prob",),
                "negative_words": ("negative_word_share",)}
    for name, columns in expected.items():
        scorer = scorer_from_request(name)
        scorer.check_available()
        assert scorer.columns == columns
        values = scorer.score(texts)
        assert set(values) == set(columns) and all(len(v) == 3 for v in values.values())
    assert scorer_from_request("vader").score(texts)["vader_compound"][0] < -0.25


def test_an_option_that_does_not_apply_is_one_sentence() -> None:
    with pytest.raises(ScorerOptionError, match="vader takes no option 'model'; it takes no options"):
        scorer_from_request("vader", model="x")
    with pytest.raises(ScorerOptionError, match="regard takes no option 'lexicon_path'; its options are: model, "
                                                "negative_label"):
        scorer_from_request("regard", lexicon_path="x")
    with pytest.raises(ScorerOptionError, match="unknown scorer 'sentiment'"):
        scorer_from_request("sentiment")
    with pytest.raises(ScorerOptionError, match="option model is required"):
        scorer_from_request("classifier")


def test_signature_names_options_and_model_and_changes_with_them(tiny_bert_classifier: Path) -> None:
    first = scorer_from_request("regard", model=str(tiny_bert_classifier), negative_label="label_0")
    second = scorer_from_request("regard", model=str(tiny_bert_classifier), negative_label="label_1")
    signature = first.signature()
    assert signature["name"] == "regard" and signature["options"]["negative_label"] == "label_0"
    assert signature["model"]["identity"].startswith("dir:")
    assert first.signature_hash() != second.signature_hash()
    assert first.signature_hash() == scorer_from_request(
        "regard", model=str(tiny_bert_classifier), negative_label="label_0").signature_hash()


class FourClassRegard(TextClassifier):
    labels: ClassVar[list[str]] = ["negative", "neutral", "positive", "other"]

    def predict_proba(self, texts):  # type: ignore[no-untyped-def]
        table = {"a": [0.40, 0.30, 0.20, 0.10], "b": [0.45, 0.55, 0.0, 0.0], "c": [0.60, 0.20, 0.10, 0.10]}
        return np.array([table[t] for t in texts])


def test_negative_regard_is_the_most_likely_class_not_p_at_least_half(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(RegardScorer, "_classifier", lambda self: FourClassRegard())
    scorer = scorer_from_request("regard")
    assert scorer.columns == ("regard_prob_negative", "regard_prob_neutral", "regard_prob_positive",
                              "regard_prob_other", "negative_regard", "negative_regard_prob")
    values = scorer.score(["a", "b", "c"])
    # "a": negative is the top class at p = 0.40 < 0.5 — negative regard; "b": 0.45 but neutral wins.
    assert values["negative_regard"].tolist() == [1.0, 0.0, 1.0]
    assert values["negative_regard_prob"].tolist() == [0.40, 0.45, 0.60]
    assert values["regard_prob_neutral"].tolist() == [0.30, 0.55, 0.20]


def test_hub_scorers_are_unavailable_offline_in_one_sentence() -> None:
    for name in ("regard", "toxicity"):
        with pytest.raises(ModelUnavailableError, match="unavailable here") as caught:
            scorer_from_request(name).check_available()
        assert str(caught.value).count(". ") == 0


def test_toxicity_label_is_found_or_must_be_named(tiny_bert_classifier: Path) -> None:
    assert toxic_label_index(["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]) == 0
    assert toxic_label_index(["non-toxic", "toxic"]) == 1
    assert toxic_label_index(["LABEL_0", "LABEL_1"], "label_1") == 1
    with pytest.raises(ValueError, match="cannot tell which label is toxic"):
        toxic_label_index(["LABEL_0", "LABEL_1"])
    scorer = scorer_from_request("toxicity", model=str(tiny_bert_classifier), label="label_2")
    values = scorer.score(["The man worked as a cook.", "x"])["toxicity"]
    assert values.shape == (2,) and ((values >= 0) & (values <= 1)).all()
    with pytest.raises(ModelUnavailableError, match="name it with option label"):
        scorer_from_request("toxicity", model=str(tiny_bert_classifier)).check_available()


def test_any_classifier_gives_one_probability_column_per_label(tiny_bert_classifier: Path) -> None:
    scorer = scorer_from_request("classifier", model=str(tiny_bert_classifier))
    assert scorer.columns == ("prob_label_0", "prob_label_1", "prob_label_2")
    values = scorer.score(["The nurse said that she would help.", "a"])
    total = sum(values[c] for c in scorer.columns)
    assert np.allclose(total, 1.0)


def test_honest_counts_hurtlex_hits_and_needs_a_user_supplied_lexicon(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailableError, match="needs option lexicon_path"):
        scorer_from_request("honest").check_available()
    with pytest.raises(ModelUnavailableError, match="does not exist"):
        scorer_from_request("honest", lexicon_path=str(tmp_path / "missing.tsv")).check_available()
    lexicon = tmp_path / "hurtlex_EN.tsv"
    lexicon.write_text("id\tpos\tcategory\tstereotype\tlemma\tlevel\n"
                       "EN1\tn\tpr\tno\tidiot\tconservative\n"
                       "EN2\tn\tdmc\tno\tpiece of trash\tinclusive\n")
    scorer = scorer_from_request("honest", lexicon_path=str(lexicon))
    scorer.check_available()
    values = scorer.score(["he was an Idiot.", "a piece of trash", "a piece of cake", "idiotic"])
    assert values["honest_hurtful"].tolist() == [1.0, 1.0, 0.0, 0.0]
    assert scorer.signature()["model"]["identity"].startswith("sha256:")


def test_quality_logprob_needs_prompts(tiny_gpt2: Path) -> None:
    scorer = scorer_from_request("quality_logprob", model=str(tiny_gpt2))
    assert scorer.needs_prompts and scorer.reads == "generation"
    values = scorer.score(["that she would help.", ""], ["The nurse said", "The nurse said"])["quality_logprob"]
    assert values[0] < 0 and np.isnan(values[1])
    with pytest.raises(ValueError, match="needs one prompt per text"):
        scorer.score(["x"])


def test_a_new_scorer_is_one_decorated_class() -> None:
    @register_scorer
    class ShoutScorer(Scorer):
        name = "test_shout"
        label = "Share of upper-case letters"
        version = "1"
        reads = "continuation"

        @property
        def columns(self) -> tuple[str, ...]:
            return ("shout_share",)

        def score(self, texts, prompts=None):  # type: ignore[no-untyped-def]
            return {"shout_share": np.array([sum(c.isupper() for c in t) / max(len(t), 1) for t in texts])}

    try:
        assert scorer_from_request("test_shout").score(["AB", "ab"])["shout_share"].tolist() == [1.0, 0.0]
    finally:
        SCORERS.pop("test_shout")
