"""Metric-bias as stored jobs: computed once, served from the store, corpus state per attribute."""

from __future__ import annotations

import pytest

from fairness_core.data.pairs import Pair, PairDataset
from fairness_core.metric_bias import summary, task
from fairness_core.metrics import metric_from_request
from fairness_core.metrics.matching import BERTScore, BERTScoreOptions, MoverScore, MoverScoreBigram
from fairness_core.store import RunStore
from tests.metrics.fakes import WordVectorEncoder

DATASET = PairDataset("tiny", (
    Pair("p1", "the nurse said she is late", "the nurse said he is late", "the nurse said the nurse is late",
         "gender", stereotypical=1),
    Pair("p2", "old men run fast", "young men run fast", "men run fast", "age", stereotypical=1),
    Pair("p3", "poor people vote", "rich people vote", "people vote", "socioeconomic", stereotypical=2,
         reference2="the people vote"),
))


def test_runs_are_stored_and_a_repeat_is_served_without_scoring(store: RunStore, monkeypatch) -> None:
    metrics = [metric_from_request("chrf"), metric_from_request("bleu", config="metric-fairness-2022")]
    first = task.run_metrics(DATASET, metrics, store)
    assert [r.from_cache for r in first] == [False, False]
    task._metric.cache_clear()

    def refuse(*args, **kwargs):
        raise AssertionError("a stored run must not score again")

    monkeypatch.setattr(task, "work", refuse)
    again = task.run_metrics(DATASET, metrics, store)
    assert [r.from_cache for r in again] == [True, True]
    assert [r.run_id for r in again] == [r.run_id for r in first]
    assert again[0].manifest["request"]["metric"] == {"name": "chrf", "version": "1", "options": {"config": "default"}}


def test_pair_table_pairs_candidates_and_rescales_gaps(store: RunStore) -> None:
    runs = task.run_metrics(DATASET, [metric_from_request("chrf")], store)
    table = summary.pair_table(store, [r.run_id for r in runs])
    assert len(table) == 3 and set(table["attribute"]) == {"gender", "age", "socioeconomic"}
    row = table.set_index("item").loc["p3"]
    assert row["reference"] == "people vote" and row["reference2"] == "the people vote"
    assert row["stereotypical"] == 2
    # one pair per attribute: min-max over its 2 scores makes any non-zero gap ±100
    assert set(table["gap"].abs().round(6)) <= {0.0, 100.0}
    only_age = summary.pair_table(store, [r.run_id for r in runs], attributes=["age"], min_gap=1)
    assert list(only_age["item"]) == ["p2"]


def test_bias_table_and_the_cli_json_shape(store: RunStore) -> None:
    runs = task.run_metrics(DATASET, [metric_from_request("rouge1")], store)
    table = summary.bias_table(summary.pair_table(store, [r.run_id for r in runs]),
                               expected=summary.expected_pairs(DATASET))
    result = summary.summary_json(table)
    assert set(result) == {"gender", "age", "socioeconomic"}
    entry = result["gender"]["rouge1"]
    assert set(entry) == {"bias", "ci_low", "ci_high", "n_pairs", "n_excluded"} and entry["n_pairs"] == 1
    assert entry["bias"] == pytest.approx(0.0)  # she/he both miss "the nurse" alike


def _vectors() -> dict[str, list[float]]:
    words = {t for p in DATASET.pairs for s in (p.candidate1, p.candidate2, p.reference, p.reference2 or "")
             for t in s.split()} | {"[CLS]", "[SEP]"}
    return {w: [1.0, i % 3, i % 5] for i, w in enumerate(sorted(words))}


def test_multi_output_metrics_store_every_output(monkeypatch) -> None:
    metric = BERTScore(model=WordVectorEncoder(_vectors()))
    monkeypatch.setattr(task, "_metric", lambda name, options: metric)
    shard = {"metric": {"name": "bertscore", "options": {}}, "state": None, "pairs": DATASET.to_records()}
    rows = task.work({}, shard)
    assert {r["metric"] for r in rows} == {"bertscore", "bertscore.P", "bertscore.R"}  # primary = F
    assert len(rows) == 3 * 3 * 2  # outputs × pairs × candidates
    p3 = [r for r in rows if r["item"] == "p3" and r["metric"] == "bertscore"]
    assert [r["attrs"]["reference"] for r in p3] == ["people vote", "the people vote"]
    assert [r["attrs"]["stereotypical"] for r in p3] == [False, True]


BIG = PairDataset("big", tuple(
    Pair(f"q{i:03d}", f"w{i % 7} said she w{i % 5} late", f"w{i % 7} said he w{i % 5} late",
         f"w{i % 7} said the w{i % 3} is late", "gender" if i % 4 else "age")
    for i in range(150)))


@pytest.mark.parametrize("make", [
    lambda enc: BERTScore(BERTScoreOptions(idf=True), model=enc),
    lambda enc: MoverScore(model=enc),
    lambda enc: MoverScoreBigram(model=enc),
], ids=["bertscore-idf", "moverscore-v2", "moverscore-bigram"])
def test_corpus_statistics_make_scores_independent_of_the_shard_size(make, monkeypatch) -> None:
    words = {t for p in BIG.pairs for s in (p.candidate1, p.candidate2, p.reference) for t in s.split()}
    vectors = {w: [1.0 + i % 3, i % 5, (i * 7) % 11] for i, w in enumerate(sorted(words))}
    vectors |= {"[CLS]": [0, 0, 1], "[SEP]": [0, 1, 0]}
    metric = make(WordVectorEncoder(vectors))
    monkeypatch.setattr(task, "_metric", lambda name, options: metric)
    states = task.prepare_states(metric, BIG)
    assert set(states) == {"age", "gender"} and states["age"] != states["gender"]
    results = []
    for shard_pairs in (7, 64, len(BIG)):
        built = task.build_task(BIG, metric, states, shard_pairs=shard_pairs)
        rows = [row for shard in built.shards for row in task.work(built.request, shard)]
        results.append({(r["item"], r["variant"], r["metric"]): r["value"] for r in rows})
        assert set(built.request["corpus_state_sha256"]) == {"age", "gender"}
    assert results[0] == results[1] == results[2]


def test_stored_scores_become_runs_named_by_their_column(store: RunStore) -> None:
    data = PairDataset("stored", (
        Pair("a", "he runs", "she runs", "they run", "gender", stored=(("BLEU", 0.5, 0.25), ("bleu", 1.0, 1.0))),
        Pair("b", "he sat", "she sat", "they sat", "gender", stored=(("BLEU", 0.2, float("nan")), ("bleu", 0, 1))),
    ))
    runs = task.run_metrics(data, [], store, stored=["BLEU", "bleu"])
    # named "<header> (stored)": the authors' BLEU is never told from our recomputed bleu by case only
    assert [r.name for r in runs] == ["BLEU (stored)", "bleu (stored)"]
    table = summary.bias_table(summary.pair_table(store, [r.run_id for r in runs]),
                               expected=summary.expected_pairs(data))
    bleu = table.set_index("metric").loc["BLEU (stored)"]
    assert bleu["n_pairs"] == 1 and bleu["n_excluded"] == 1  # the NaN pair is excluded and counted
    assert bleu["bias"] == pytest.approx(100 * 0.25 / (0.5 - 0.25))


def test_progress_counts_pairs_times_metrics_over_the_whole_request(store: RunStore) -> None:
    """Issue 23: "2/2 batches (100%)" seconds into a six-metric run. Progress counts the work of the whole request:
    pairs scored, summed over the metrics, so the first of two metrics ends at half, not at 100%."""
    from fairness_core.jobs import CancelToken

    metrics = [metric_from_request("chrf"), metric_from_request("bleu", config="metric-fairness-2022")]
    seen = []
    runs, skipped = task.run_metric_steps(DATASET, metrics, [], store, seen.append, CancelToken())
    assert skipped == [] and len(runs) == 2
    assert {p.total for p in seen} == {3 * 2}
    assert [p.done for p in seen] == sorted(p.done for p in seen)  # never goes back when the next metric starts
    first_metric = [p for p in seen if p.step.startswith("chrf")]
    assert first_metric[-1].done == 3 and first_metric[-1].fraction == 0.5
    assert seen[-1].done == 6 and seen[-1].fraction == 1.0
    assert seen[-1].describe().startswith("bleu (2 of 2): 6/6 pairs × metrics scored (100%)")

    # a repeat is answered from the store: nothing is computed, and the steps served count as not computed here
    seen.clear()
    task.run_metric_steps(DATASET, metrics, [], store, seen.append, CancelToken())
    assert seen == []
