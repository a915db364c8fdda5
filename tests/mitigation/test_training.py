"""Training an adapter is a job like every other: stored as a run with its loss curve, published as an adapter file,
cancelled mid-shard without a half-written result, and resumed after `kill -9` to the adapter an uninterrupted run
gives (fp32 tolerance). A tiny BERT the tests build stands in for MiniLM; the training data are the real ones."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from fairness_core.jobs import CancelToken
from fairness_core.mitigation import build_train_request, train
from fairness_core.models.adapters import list_adapters, load_weights
from fairness_core.store import RunStore
from tests.mitigation.training_cache import build_once, fresh_cache

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def data_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_once(tmp_path_factory.mktemp("data-cache"))


def _cache(data_cache: Path, target: Path) -> Path:
    return fresh_cache(data_cache, target)


@pytest.fixture()
def cache(data_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = _cache(data_cache, tmp_path / "cache")
    monkeypatch.setenv("FAIRNESS_LAB_CACHE", str(folder))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the same kernels for every run compared below
    return folder


def _weights(adapter_id: str) -> dict[str, torch.Tensor]:
    return load_weights(adapter_id)


def _assert_same_adapter(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    for key in a:
        assert torch.allclose(a[key], b[key], rtol=1e-5, atol=1e-7), key


def test_a_training_run_is_stored_with_its_loss_curve_and_published(cache, tiny_bert, tmp_path):
    store = RunStore(tmp_path / "runs.duckdb")
    request = build_train_request("bertscore", str(tiny_bert), steps=12, seed=3)
    outcome = train(request, store)
    assert outcome.status == "complete" and outcome.steps_done == 12 and not outcome.from_cache
    assert outcome.trainable_parameters == 3 * (2 * 64 * 4 + 4 + 64)  # 3 layers, hidden 64, bottleneck 64 / 16
    assert outcome.total_parameters > outcome.trainable_parameters
    manifest = outcome.manifest["request"]
    assert manifest["backbone"]["identity"].startswith("dir:") and len(manifest["data"]["sha256"]) == 64
    assert manifest["train"]["lr"] == 1e-3 and manifest["train"]["steps"] == 12 and manifest["adapter"]["sites"] == 3
    [info] = list_adapters()
    assert info.adapter_id == outcome.adapter_id
    assert info.manifest["trained"]["run_id"] == outcome.run_id and len(info.manifest["trained"]["loss_curve"]) == 12
    again = train(request, store)  # the same request: read back, nothing trained
    assert again.from_cache and again.adapter_id == outcome.adapter_id


def test_cancel_mid_shard_stores_only_whole_shards_and_publishes_nothing(cache, tiny_bert, tmp_path):
    store = RunStore(tmp_path / "runs.duckdb")
    # two shards of 10 steps: the second is cancelled (30 steps, three shards, until 2026-11-29: the third shard
    # proved nothing the second does not, and three runs trained it; 13.5 s -> 9.9 s)
    request = build_train_request("bertscore", str(tiny_bert), steps=20, seed=1)
    cancel = CancelToken()

    def on_progress(progress) -> None:
        if progress.done >= 1:  # shard 2 is in flight: cancel it between two of its steps
            cancel.cancel()

    outcome = train(request, store, on_progress=on_progress, cancel=cancel)
    assert outcome.status == "cancelled" and outcome.adapter_id is None
    assert outcome.steps_done == 10 and list_adapters() == []
    resumed = train(request, store)
    assert resumed.status == "complete" and resumed.run_id == outcome.run_id and resumed.steps_done == 20
    uninterrupted_cache = _cache(cache, tmp_path / "other-cache")
    os.environ["FAIRNESS_LAB_CACHE"] = str(uninterrupted_cache)  # monkeypatch restores it
    straight = train(request, RunStore(tmp_path / "other.duckdb"))
    reference = _weights(straight.adapter_id)
    os.environ["FAIRNESS_LAB_CACHE"] = str(cache)
    _assert_same_adapter(_weights(resumed.adapter_id), reference)


def _train_process(tiny_bert: Path, store: Path, cache: Path, steps: int) -> subprocess.Popen:
    env = os.environ | {"FAIRNESS_LAB_CACHE": str(cache), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1",
                        "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "fairness_core", "--store", str(store), "mitigate", "train",
                             "--model", str(tiny_bert), "--steps", str(steps), "--seed", "7", "--json"],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_run_killed_with_sigkill_resumes_to_the_uninterrupted_adapter(data_cache, tiny_bert, tmp_path):
    steps = 40  # four shards of 10 steps, a checkpoint after each
    cache = _cache(data_cache, tmp_path / "cache")
    store = tmp_path / "runs.duckdb"
    process = _train_process(tiny_bert, store, cache, steps)
    checkpoints = cache / "mitigation" / "checkpoints"
    deadline = time.monotonic() + 600
    while not list(checkpoints.glob("*/step-0000010.pt")):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL
    runs = RunStore(store).query("SELECT r.status, count(s.shard) AS done FROM runs r LEFT JOIN shards s "
                                 "USING (run_id) WHERE r.kind = 'mitigation-train' GROUP BY r.status")
    assert list(runs["status"]) == ["running"] and int(runs["done"].iloc[0]) < 4  # nothing marked complete
    assert not list(cache.glob("adapters/*.safetensors"))  # no adapter before the run is complete

    resumed = _train_process(tiny_bert, store, cache, steps)
    out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    result = json.loads(out)
    assert result["steps"] == steps and not result["from_cache"]

    other_cache = _cache(data_cache, tmp_path / "other-cache")
    straight = _train_process(tiny_bert, tmp_path / "other.duckdb", other_cache, steps)
    out_straight, err = straight.communicate(timeout=600)
    assert straight.returncode == 0, err
    assert json.loads(out_straight)["adapter_id"] == result["adapter_id"]
    from safetensors.torch import load_file

    name = f"{result['adapter_id']}.safetensors"
    _assert_same_adapter(load_file(cache / "adapters" / name), load_file(other_cache / "adapters" / name))


@pytest.mark.parametrize("metric, fixture", [("bartscore", "tiny_gpt2"), ("bartscore", "tiny_bart"),
                                             ("bleurt", "tiny_bert_classifier")])
def test_generation_and_regression_adapters_train_and_score(cache, tmp_path, metric, fixture, request):
    """The generation paradigm (BARTScore-style: decoder-only as offline, seq2seq as the paper's BART) and the
    regression paradigm (BLEURT: a sequence classifier) train and then score through the registered metric."""
    from fairness_core.metrics import metric_from_request

    folder = str(request.getfixturevalue(fixture))
    outcome = train(build_train_request(metric, folder, steps=2, batch=4), RunStore(tmp_path / "runs.duckdb"))
    assert outcome.status == "complete" and outcome.adapter_id.startswith(metric)
    plain = metric_from_request(metric, model=folder)
    adapted = metric_from_request(metric, model=folder, adapter=outcome.adapter_id)
    adapted.validate()
    assert adapted.signature()["adapter"]["id"] == outcome.adapter_id and "adapter" not in plain.signature()
    candidates, references = ["the nurse said that she would help"], ["the nurse said that the nurse would help"]
    primary = plain.primary
    before = plain.score(candidates, references)[primary]
    after = adapted.score(candidates, references)[primary]
    assert before.shape == after.shape == (1,) and abs(float(after[0]) - float(before[0])) > 0  # trained: it moved
