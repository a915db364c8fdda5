"""Scoring a judgments set through the metric registry, stored and cached runs, the agreement run's manifest."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairness_core import metric_quality
from fairness_core.metrics import metric_from_request
from fairness_core.store import RunStore

WORDS = ["the", "cat", "sat", "on", "a", "mat", "while", "dogs", "ran", "past", "quickly", "and", "birds",
         "sang", "loudly", "in", "old", "green", "trees"]


def judgments(n_items: int = 8, n_systems: int = 4) -> metric_quality.Judgments:
    """Candidates that copy more or fewer reference words; people prefer the ones that copy more."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(n_items):
        reference = " ".join(rng.choice(WORDS, 12))
        for k in range(n_systems):
            kept = reference.split()[: 3 + 3 * k]
            noise = list(rng.choice(WORDS, 3))
            rows.append({"item_id": f"doc{i}", "system": f"sys{k}", "candidate": " ".join(kept + noise),
                         "reference": reference, "human": len(kept) / 12 + rng.normal(0, 0.1),
                         "Copy rate": len(kept) / 12})
    return metric_quality.from_frame(pd.DataFrame(rows), "copying", stored=["Copy rate"])


def test_score_metric_equals_the_metric_on_all_candidates_at_once() -> None:
    data = judgments()
    got = metric_quality.score_metric(data, "bleu", batch_size=5)  # batches of whole items: 2 items (8 rows)
    direct = metric_from_request("bleu").score(data.frame["candidate"].tolist(), data.frame["reference"].tolist())
    assert np.allclose(got, direct["score"], rtol=1e-12)
    recall = metric_quality.score_metric(data, "bertscore", options={"model": "all-minilm-l6-v2"}, output="R")
    assert recall.shape == (32,) and np.isfinite(recall).all()


def test_score_metric_takes_a_tiny_model_by_path(tiny_bert: Path) -> None:
    data = judgments(n_items=3)
    scores = metric_quality.score_metric(data, "bertscore", options={"model": str(tiny_bert)})
    assert scores.shape == (12,) and np.isfinite(scores).all()
    with pytest.raises(ValueError, match="bertscore has no output 'X'"):
        metric_quality.score_metric(data, "bertscore", options={"model": str(tiny_bert)}, output="X")


def test_a_request_is_stored_once_and_read_back(store: RunStore) -> None:
    data = judgments()
    request = metric_quality.build_request(data, metric_quality.build_metrics(["bleu", "rouge1"]),
                                           stored=metric_quality.choose_stored(data, True), rule="pooled",
                                           n_resamples=200)
    assert metric_quality.find_stored(request, store) is None
    first = metric_quality.run_quality(request, store)
    assert not first.from_cache and [r.name for r in first.runs] == ["bleu", "rouge1", "Copy rate (stored)"]
    copy = first.correlations["Copy rate (stored)"]
    expected = metric_quality.correlate(data, "Copy rate (stored)", n_resamples=200)
    assert copy == expected  # the stored agreement run holds exactly what correlate computes
    again = metric_quality.run_quality(request, store)
    assert again.from_cache and again.correlations == first.correlations
    found = metric_quality.find_stored(request, store)
    assert found is not None and found.correlations == first.correlations
    manifest = first.agreement_manifest["request"]
    assert manifest["data"]["hash"] == data.data_hash and manifest["rule"] == "pooled"
    assert [m["name"] for m in manifest["metrics"]] == ["bleu", "rouge1", "Copy rate (stored)"]
    scores_manifest = first.runs[0].manifest["request"]
    assert scores_manifest["metric"]["name"] == "bleu" and scores_manifest["data"]["n"] == 32
    assert np.allclose(first.scores["bleu"], metric_quality.score_metric(data, "bleu"))


def test_another_rule_is_another_agreement_run_over_the_same_scores(store: RunStore) -> None:
    data = judgments()
    metrics = metric_quality.build_metrics(["bleu"])
    pooled = metric_quality.run_quality(metric_quality.build_request(data, metrics, n_resamples=50), store)
    system = metric_quality.run_quality(metric_quality.build_request(data, metrics, rule="system", n_resamples=50),
                                        store)
    assert system.runs[0].from_cache and system.agreement_run != pooled.agreement_run
    assert system.correlations["bleu"].rule == "system" and system.correlations["bleu"].n_systems == 4


def test_bad_requests_are_one_sentence() -> None:
    data = judgments()
    with pytest.raises(metric_quality.RequestError, match="unknown metric"):
        metric_quality.build_metrics(["bleu", "blue"])
    with pytest.raises(metric_quality.RequestError, match="--model applies to model-based metrics"):
        metric_quality.build_metrics(["bleu"], model="all-minilm-l6-v2")
    with pytest.raises(metric_quality.RequestError, match="has no stored score column 'BLEURT'"):
        metric_quality.choose_stored(data, ["BLEURT"])
    with pytest.raises(metric_quality.RequestError, match="unknown rule 'corpus'"):
        metric_quality.build_request(data, metric_quality.build_metrics(["bleu"]), rule="corpus")
    with pytest.raises(metric_quality.RequestError, match="no such file or folder"):
        metric_quality.load_judgments("/no/such/file.csv")
    with pytest.raises(metric_quality.RequestError, match="needs its file name"):
        metric_quality.load_judgments(b"item_id,system\n")


def test_a_report_shows_the_stored_correlations_and_compare_says_where_to_go(store: RunStore) -> None:
    """The report of a metric-quality run reads its correlations as the study stored them (with the unit each interval
    resamples),
    not as per-unit values to average; Compare refuses two of them in one sentence naming the paired alternatives."""
    from fairness_core.compare import CompareError, build_report, compare_runs, run_estimates

    data = judgments()
    outcome = metric_quality.run_quality(metric_quality.build_request(
        data, metric_quality.build_metrics(["bleu", "rouge1"]), rule="pooled", n_resamples=200), store)
    info = store.get_run(outcome.agreement_run)
    estimates = run_estimates(store, info).set_index("metric")
    for name in ("bleu", "rouge1"):
        stored = outcome.correlations[name]
        row = estimates.loc[name]
        assert (row["statistic"], row["rule"], row["unit"], row["n_units"]) == ("spearman", "pooled", "document", 8)
        assert (row["estimate"], row["ci_low"], row["ci_high"]) == pytest.approx(
            (stored.value, stored.ci_low, stored.ci_high), rel=1e-12)
    page = build_report(store, [outcome.agreement_run, outcome.runs[0].run_id], n_resamples=50)
    assert "resampling documents" in page and "docs/metric-quality.md lists no deviation" not in page
    assert "Backbones:" in page  # the study's deviations, from docs/metric-quality.md
    other = metric_quality.run_quality(metric_quality.build_request(
        data, metric_quality.build_metrics(["bleu"]), rule="system", n_resamples=50), store)
    system = run_estimates(store, store.get_run(other.agreement_run)).iloc[0]
    # the system rule resamples documents and systems (issue 33), and the report says so
    assert (system["rule"], system["unit"], system["n_units"]) == ("system", "documents and system", 8)
    assert system["estimate"] == pytest.approx(other.correlations["bleu"].value, rel=1e-12)
    assert "resampling documents and systems" in build_report(store, [other.agreement_run], n_resamples=50)
    with pytest.raises(CompareError, match=r"holds correlations with people.*mitigate evaluate"):
        compare_runs(store, [outcome.agreement_run, other.agreement_run])
