"""A run's own settings (`fairness_core.reading.settings`, issue 42 §5): recorded beside the run, outside its
identity; read back by every view; given ones win and say so; a read-only store is read as it is."""

from __future__ import annotations

import os

import pytest

from fairness_core.reading import (
    DEFAULTS,
    GIVEN,
    RECORDED,
    ReadSettings,
    SettingsError,
    differing_thresholds,
    record_settings,
    settings_of,
)
from fairness_core.store import RunStore, build_manifest

REQUEST = {"scorers": [{"name": "vader"}, {"name": "offensive"}], "seeds": [3], "systems": []}


def a_run(store: RunStore, name: str = "a") -> str:
    info = store.begin_run(build_manifest("generation", {**REQUEST, "name": name}), 1)
    store.finish_run(info.run_id, "complete")
    return info.run_id


def test_a_run_without_a_record_reads_at_its_scorers_thresholds_and_says_so(store: RunStore) -> None:
    info = store.get_run(a_run(store))
    settings = settings_of(store, info)
    assert settings.threshold_map == {"negative_sentiment_rate": -0.25, "offensive_rate": 0.5}
    assert (settings.n_resamples, settings.seed, settings.source) == (1000, 3, DEFAULTS)
    assert "permutation test" in settings.test and "Holm" in settings.multiplicity


def test_what_a_sweep_records_is_read_back_and_is_not_part_of_the_runs_identity(store: RunStore) -> None:
    run_id = a_run(store)
    before = store.get_run(run_id)
    record_settings(store, [run_id], {"negative_sentiment_rate": -0.5}, 200)
    after = store.get_run(run_id)
    assert (after.manifest, after.manifest_hash) == (before.manifest, before.manifest_hash)
    settings = settings_of(store, after)
    assert (settings.threshold_map["negative_sentiment_rate"], settings.n_resamples, settings.source) == \
        (-0.5, 200, RECORDED)
    assert settings.words() == ("negative_sentiment_rate at \u22120.5; offensive_rate at 0.5; 200 resamples, seed 3 "
                                "(recorded with the run)")
    given = settings_of(store, after, {"negative_sentiment_rate": -0.25})
    assert (given.threshold_map["negative_sentiment_rate"], given.n_resamples, given.source) == (-0.25, 200, GIVEN)
    assert settings_of(store, after, {"negative_sentiment_rate": -0.5}).source == RECORDED  # the same as recorded
    store.delete_run(run_id)
    assert store.read_settings(run_id) == {}


def test_runs_read_at_different_thresholds_are_said_to_differ(store: RunStore) -> None:
    first, second = a_run(store, "a"), a_run(store, "b")
    record_settings(store, [second], {"negative_sentiment_rate": -0.5}, 1000)
    read = {run_id: settings_of(store, store.get_run(run_id)) for run_id in (first, second)}
    sentence = differing_thresholds(read)
    assert f"run {first} at \u22120.25, run {second} at \u22120.5" in sentence
    assert differing_thresholds(read, ["offensive_rate"]) == ""
    assert differing_thresholds({"x": ReadSettings((("a_rate", 0.5),)), "y": ReadSettings()}) == ""  # one side only


def test_a_read_only_store_is_read_as_it_is(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    run_id = a_run(store)
    signature = store.path.stat().st_mtime_ns, store.path.stat().st_size
    # the file as a reader without write permission sees it (the tests may run as root, who writes anything)
    monkeypatch.setattr(os, "access", lambda path, mode: mode != os.W_OK)
    record_settings(RunStore(store.path), [run_id], {"negative_sentiment_rate": -0.5}, 200)  # nothing written
    assert (store.path.stat().st_mtime_ns, store.path.stat().st_size) == signature
    assert settings_of(RunStore(store.path), store.get_run(run_id)).source == DEFAULTS


@pytest.mark.parametrize(("thresholds", "resamples", "phrase"), [
    ({"negative_sentiment_rate": float("nan")}, 10, "threshold of negative_sentiment_rate must be a finite number"),
    (None, 0, "resamples must be a whole number of at least 1"),
])
def test_a_bad_setting_is_one_sentence(store: RunStore, thresholds, resamples: int, phrase: str) -> None:
    info = store.get_run(a_run(store))
    with pytest.raises(SettingsError, match=phrase):
        settings_of(store, info, thresholds, resamples)
    with pytest.raises(SettingsError, match=phrase):
        record_settings(store, [info.run_id], thresholds, resamples)
    assert store.read_settings(info.run_id) == {}  # nothing partial is written
