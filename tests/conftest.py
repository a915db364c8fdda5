"""Shared fixtures. Tests never reach a model hub: HF_HUB_OFFLINE is forced before any import."""

from __future__ import annotations

import os
from collections.abc import Iterator

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("FAIRNESS_LAB_PREWARM", "0")  # tests load the models they use themselves
if os.environ.get("PYTEST_XDIST_WORKER"):
    # `make test` runs several workers on a 2-core machine: one BLAS/OpenMP thread each (servers they start inherit
    # it), so workers do not stall each other's thread pools; model results hold at one thread (the second pass of
    # `make test` runs the numeric pins at one thread with AVX2 kernels too)
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(variable, "1")

from pathlib import Path

import pytest

from fairness_core.store import RunStore

REPO_ROOT = Path(__file__).resolve().parent.parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `pytest -n N --dist loadgroup` (make test) a test file is one unit of work, so its module-scoped fixtures
    (pipeline stores, servers) are built once; a test that names its own `xdist_group` (each field of the browser
    bad-input battery) is a unit of its own.

    Units are handed out in the order of `items`: the real-browser units, which mostly wait, are spread over the
    first 70% of the run between the others, which mostly compute, so the workers neither all wait nor all compute
    at once, and no long browser unit is left for the end (`make test` passes --no-loadscope-reorder)."""
    units: dict[str, list[pytest.Item]] = {}
    for item in items:
        marker = item.get_closest_marker("xdist_group")
        if marker is None:
            group = item.nodeid.split("::", 1)[0]
            item.add_marker(pytest.mark.xdist_group(group))
        else:
            group = str(marker.args[0] if marker.args else marker.kwargs.get("name"))
        units.setdefault(group, []).append(item)
    browser = [unit for unit in units.values() if unit[0].nodeid.startswith("tests/browser/")]
    others = [unit for unit in units.values() if not unit[0].nodeid.startswith("tests/browser/")]
    keyed = [((i + 0.5) / len(browser) * 0.7, unit) for i, unit in enumerate(browser)]
    keyed += [((i + 0.5) / len(others), unit) for i, unit in enumerate(others)]
    items[:] = [item for _, unit in sorted(keyed, key=lambda pair: pair[0]) for item in unit]


#: the files `make test` runs twice (its NUMERIC_TESTS): in the main pass at two threads, though the worker's others run
#: at one, and in the second pass at one thread with AVX2 kernels, so the pins meet two reduction orders and two kernel
#: paths, as they did before the suite ran on workers
NUMERIC_PIN_FILES = ("tests/decoding/test_pin.py", "tests/metric_bias/test_pinned_results.py",
                     "tests/models/test_packed_encoder.py", "tests/models/test_cpu_linear.py",
                     "tests/models/test_sampling.py", "tests/models/test_sentence_embeddings.py")


@pytest.fixture(autouse=True, scope="module")
def _numeric_pins_at_two_threads(request: pytest.FixtureRequest) -> Iterator[None]:
    if not os.environ.get("PYTEST_XDIST_WORKER") or not request.node.nodeid.startswith(NUMERIC_PIN_FILES):
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


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
