"""Shared fixtures. Tests never reach a model hub: HF_HUB_OFFLINE is forced before any import."""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("FAIRNESS_LAB_PREWARM", "0")  # tests load the models they use themselves

from pathlib import Path

import pytest

from fairness_core.store import RunStore

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture()
def store(tmp_path: Path) -> RunStore:
    """A fresh run store in a temporary directory."""
    return RunStore(tmp_path / "runs.duckdb")


@pytest.fixture()
def isolated_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the default store (env var) at a temp file, for AppTest and CLI tests."""
    path = tmp_path / "app-runs.duckdb"
    monkeypatch.setenv("FAIRNESS_LAB_STORE", str(path))
    return path


@pytest.fixture(scope="session")
def tiny_gpt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Directory of a tiny random GPT-2 (causal LM) with its own BPE tokenizer."""
    from tests.tiny_models import build_tiny_gpt2

    return build_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2"))


@pytest.fixture(scope="session")
def tiny_bart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Directory of a tiny random BART (seq2seq LM)."""
    from tests.tiny_models import build_tiny_bart

    return build_tiny_bart(tmp_path_factory.mktemp("tiny-bart"))


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Directory of a tiny random BERT encoder."""
    from tests.tiny_models import build_tiny_bert

    return build_tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="session")
def tiny_bert_classifier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Directory of a tiny random BERT sequence classifier with 3 labels."""
    from tests.tiny_models import build_tiny_bert

    return build_tiny_bert(tmp_path_factory.mktemp("tiny-bert-cls"), num_labels=3)


@pytest.fixture(scope="session")
def tiny_m2m100(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Directory of a tiny random M2M-100 (multilingual seq2seq) with its own M2M100Tokenizer:
    language tokens `__en__`, `__fr__`, ... as in facebook/m2m100_418M."""
    from tests.tiny_models import build_tiny_m2m100

    return build_tiny_m2m100(tmp_path_factory.mktemp("tiny-m2m100"))


@pytest.fixture(scope="session")
def local_server(tmp_path_factory: pytest.TempPathFactory):
    """A real OpenAI-compatible server: `transformers serve` over a tiny GPT-2 whose generation config
    samples, on a free port of 127.0.0.1, stopped by its PID. Yields the TransformersServer (`.base_url`;
    the model name requests carry is `.model_dir`)."""
    from tests.endpoint_servers import TransformersServer, build_sampling_gpt2

    workdir = tmp_path_factory.mktemp("served")
    server = TransformersServer(build_sampling_gpt2(workdir / "tiny-sampling-gpt2"), workdir)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def pipeline_runs(tmp_path_factory: pytest.TempPathFactory, tiny_gpt2: Path, tiny_m2m100: Path):
    """A run store written by the real pipelines (decoding sweeps, a live move, metric-bias, CAIRO, adaptation,
    DATScore; tests/compare/pipeline_runs.py), built once; open it with `copy_store(pipeline_runs, path)`."""
    from tests.compare.pipeline_runs import build_pipeline_store

    workdir = tmp_path_factory.mktemp("pipeline-runs")
    return build_pipeline_store(workdir / "runs.duckdb", tiny_gpt2, tiny_m2m100, workdir)
