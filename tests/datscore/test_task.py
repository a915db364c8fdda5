"""The stored pipeline on a tiny M2M-100: translations and direction scores in the store, cache, resume."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fairness_core.datscore import synthetic
from fairness_core.datscore import task as T
from fairness_core.datscore.metaeval import pipeline_report
from fairness_core.datscore.request import ScoreRequest
from fairness_core.jobs import CancelToken


def test_pipeline_stores_translations_and_eight_directions_then_serves_from_the_store(tiny_m2m100: Path,
                                                                                      store) -> None:
    data = synthetic.load().subset(2)
    request = ScoreRequest(data, "fr", "en", str(tiny_m2m100), max_new_tokens=4)
    first = T.run_pipeline(request, store)
    assert not first.from_cache
    translations = store.rows(first.translations_run)
    assert set(translations["grp"]) == {"Trans1", "Trans2"} and len(translations) == 4  # 2 sources + 2 references
    assert set(translations[translations["grp"] == "Trans1"]["variant"]) == {"en"}
    assert set(translations[translations["grp"] == "Trans2"]["variant"]) == {"es"}
    scores = first.scores
    assert len(scores) == 12 * 8 and set(scores["direction"]) == set(T.D.LABELS)
    into_hypo = scores[scores["direction"] == "Ref→Hypo"].iloc[0]
    assert len(into_hypo["attrs"]["tokens"]) == len(into_hypo["attrs"]["entropies"]) == into_hypo["attrs"]["n_tokens"]
    manifest = first.manifests[T.DIRECTION_SCORES]["request"]
    assert manifest["languages"]["Trans1"] == "en" and manifest["backbone"]["kind"] == "seq2seq"
    second = T.run_pipeline(request, store)
    assert second.from_cache and second.directions_run == first.directions_run
    report = pipeline_report(second, data.ranking, n_resamples=20)
    assert report["metric"] == "DATScore" and report["synthetic"] and len(report["scores"]) == 12
    kinds = [row["kind"] for row in report["meta_evaluation"]]
    assert kinds.count("full") == 1 and kinds.count("ablation") == 5
    assert kinds.count("single") == 8 and kinds.count("leave-one-out") == 8 and kinds.count("covariate") == 1
    assert all(row["n"] == 30 for row in report["meta_evaluation"])  # 2 sources x 15 pairs
    # Eq. 2 with the stored entropy scores and the reported weights
    order, matrix = T.score_matrix(second.scores, "entropy", segment_order=[s.segment_id for s in data.segments])
    weights = np.array([report["weights"]["entropy"][d] for d in T.D.LABELS])
    np.testing.assert_allclose([report["scores"][s] for s in order], matrix @ weights)


def test_a_cancelled_pipeline_resumes_without_recomputing_finished_shards(tiny_m2m100: Path, store,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(T, "SEGMENT_SHARD", 4)
    request = ScoreRequest(synthetic.load().subset(2), "fr", "en", str(tiny_m2m100), max_new_tokens=4)
    cancel = CancelToken()
    seen = []

    def on_progress(progress) -> None:
        seen.append(progress.done)
        if progress.done >= 2:  # translations (1 shard) + 1 direction shard
            cancel.cancel()

    with pytest.raises(T.PipelineCancelled, match="resumes"):
        T.run_pipeline(request, store, on_progress=on_progress, cancel=cancel)
    calls = []
    real = T.direction_work
    monkeypatch.setattr(T, "direction_work", lambda r, s: calls.append(1) or real(r, s))
    outcome = T.run_pipeline(request, store)
    assert len(outcome.scores) == 12 * 8 and len(calls) == 2  # 3 shards of 4 segments; one was stored
