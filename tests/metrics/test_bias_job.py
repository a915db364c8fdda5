"""Metric-bias as a stored job: computed once, served from the store, queried with DuckDB."""

from __future__ import annotations

import pytest

from fairness_core.data.pairs import Pair, PairDataset
from fairness_core.metrics import bias_job
from fairness_core.metrics.registry import MetricRequest
from fairness_core.store import RunStore

DATASET = PairDataset("tiny", (
    Pair("p1", "the nurse said she is late", "the nurse said he is late", "the nurse said the nurse is late",
         "gender", stereotypical=1),
    Pair("p2", "old men run fast", "young men run fast", "men run fast", "age", stereotypical=1),
    Pair("p3", "poor people vote", "rich people vote", "people vote", "socioeconomic", stereotypical=2,
         reference2="the people vote"),
))


def test_runs_are_stored_and_a_repeat_is_served_without_building_metrics(store: RunStore, monkeypatch) -> None:
    requests = [MetricRequest("chrf"), MetricRequest("bleu", config="metric-fairness-2022")]
    first = bias_job.run_metrics(DATASET, requests, store)
    assert [r.from_cache for r in first] == [False, False]
    bias_job._metric.cache_clear()

    def refuse(self):
        raise AssertionError("a stored run must not build a metric or load a model")

    monkeypatch.setattr(MetricRequest, "build", refuse)
    again = bias_job.run_metrics(DATASET, requests, store)
    assert [r.from_cache for r in again] == [True, True]
    assert [r.run_id for r in again] == [r.run_id for r in first]


def test_pair_table_pairs_candidates_and_rescales_gaps(store: RunStore) -> None:
    runs = bias_job.run_metrics(DATASET, [MetricRequest("chrf")], store)
    table = bias_job.pair_table(store, [r.run_id for r in runs])
    assert len(table) == 3 and set(table["attribute"]) == {"gender", "age", "socioeconomic"}
    row = table.set_index("item").loc["p3"]
    assert row["reference"] == "people vote" and row["reference2"] == "the people vote"
    assert row["stereotypical"] == 2
    # one pair per attribute: min-max over its 2 scores makes any non-zero gap ±100
    assert set(table["gap"].abs().round(6)) <= {0.0, 100.0}
    assert list(table["gap"].abs()) == sorted(table["gap"].abs(), reverse=True)
    only_age = bias_job.pair_table(store, [r.run_id for r in runs], attributes=["age"], min_gap=1)
    assert list(only_age["item"]) == ["p2"]


def test_bias_table_and_the_cli_json_shape(store: RunStore) -> None:
    runs = bias_job.run_metrics(DATASET, [MetricRequest("rouge1")], store)
    table = bias_job.bias_table(bias_job.pair_table(store, [r.run_id for r in runs]))
    summary = bias_job.summary_json(table)
    assert set(summary) == {"gender", "age", "socioeconomic"}
    entry = summary["gender"]["rouge1"]
    assert set(entry) == {"bias", "ci_low", "ci_high", "n_pairs"} and entry["n_pairs"] == 1
    assert entry["bias"] == pytest.approx(0.0)  # she/he both miss "the nurse" alike


def test_multi_output_metrics_store_every_output(monkeypatch) -> None:
    from fairness_core.metrics.matching import BERTScore
    from tests.metrics.fakes import WordVectorEncoder

    words = {t for p in DATASET.pairs for s in (p.candidate1, p.candidate2, p.reference, p.reference2 or "")
             for t in s.split()} | {"[CLS]", "[SEP]"}
    vectors = {w: [1.0, i % 3, i % 5] for i, w in enumerate(sorted(words))}
    monkeypatch.setattr(bias_job, "_metric", lambda request: BERTScore(WordVectorEncoder(vectors)))
    rows = bias_job.work({}, {"metric": {"name": "bertscore"}, "pairs": DATASET.to_records()})
    assert {r["metric"] for r in rows} == {"bertscore", "bertscore.P", "bertscore.R"}  # primary = F
    assert len(rows) == 3 * 3 * 2  # outputs × pairs × candidates
    p3 = [r for r in rows if r["item"] == "p3" and r["metric"] == "bertscore"]
    assert [r["attrs"]["reference"] for r in p3] == ["people vote", "the people vote"]
    assert [r["attrs"]["stereotypical"] for r in p3] == [False, True]
