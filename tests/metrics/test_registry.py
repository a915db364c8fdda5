"""The metric plug-in contract: registration, options from plain values, signatures."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from fairness_core.metrics import (
    METRICS,
    Metric,
    MetricOptionError,
    MetricOptions,
    metric_from_request,
    metric_names,
    register_metric,
)
from fairness_core.metrics.registry import metric_from_signature


def test_every_builtin_metric_is_one_registered_class() -> None:
    expected = {"bleu", "rouge1", "meteor", "nist", "chrf", "bertscore", "moverscore", "moverscore-bigram",
                "bartscore", "bleurt", "frugalscore"}
    assert expected <= set(METRICS)
    assert metric_names()[:5] == ["bleu", "rouge1", "meteor", "nist", "chrf"]  # n-gram first
    for name in expected:
        cls = METRICS[name]
        assert cls.name == name and cls.label and cls.version and cls.outputs
        assert issubclass(cls.Options, MetricOptions)


def test_an_option_that_does_not_apply_is_one_sentence() -> None:
    with pytest.raises(MetricOptionError) as caught:
        metric_from_request("bleu", idf=True)
    assert str(caught.value) == "bleu takes no option 'idf'; its options are: config"
    with pytest.raises(MetricOptionError, match="bertscore option 'layer' cannot be 'deep'"):
        metric_from_request("bertscore", layer="deep")
    with pytest.raises(MetricOptionError, match="layer must be 0 or more"):
        metric_from_request("bertscore", layer=-1)


def test_plain_values_are_coerced_to_the_declared_types() -> None:
    metric = metric_from_request("bertscore", layer="4", idf="true")
    assert metric.options.layer == 4 and metric.options.idf is True


def test_the_signature_is_name_version_options_and_rebuilds_the_metric() -> None:
    bleu = metric_from_request("bleu", config="metric-fairness-2022")
    assert bleu.signature() == {"name": "bleu", "version": "1", "options": {"config": "metric-fairness-2022"}}
    again = metric_from_signature(bleu.signature())
    assert type(again) is type(bleu) and again.options == bleu.options
    bertscore = metric_from_request("bertscore").signature()  # names the model without loading it
    assert {"name", "version", "options", "model"} <= set(bertscore) and "identity" in bertscore["model"]


def test_adding_a_metric_is_one_class() -> None:
    @dataclass(frozen=True)
    class LengthOptions(MetricOptions):
        per: str = "word"

    @register_metric
    class LengthRatio(Metric):
        name = "test-length-ratio"
        label = "Length ratio"
        family = "n-gram"
        Options = LengthOptions

        def score(self, candidates, references, sources=None, state=None):
            ratios = [len(c.split()) / len(r.split()) for c, r in zip(candidates, references, strict=True)]
            return {"score": np.array(ratios)}

    try:
        metric = metric_from_request("test-length-ratio", per="word")
        assert metric.score(["a b"], ["a b c d"])["score"].tolist() == [0.5]
        with pytest.raises(MetricOptionError, match="its options are: per"):
            metric_from_request("test-length-ratio", model="x")
    finally:
        METRICS.pop("test-length-ratio")


def test_a_class_that_breaks_the_contract_is_refused() -> None:
    class NoFamily(Metric):
        name = "test-no-family"
        label = "x"
        family = "astrology"

        def score(self, candidates, references, sources=None, state=None):
            return {}

    with pytest.raises(TypeError, match="family must be one of"):
        register_metric(NoFamily)
