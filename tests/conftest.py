"""Shared fixtures. Tests never reach a model hub: HF_HUB_OFFLINE is forced before any import."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("FAIRNESS_LAB_PREWARM", "0")  # tests load the models they use themselves
os.environ.setdefault("FAIRNESS_LAB_SAMPLE_AHEAD", "0")  # no background sampling beside a test (but its own)
if os.environ.get("PYTEST_XDIST_WORKER"):
    # `make test` runs several workers on a 2-core machine: one BLAS/OpenMP thread each (servers they start inherit
    # it), so workers do not stall each other's thread pools; model results hold at one thread (the numeric pins run
    # again at one thread with AVX2 kernels too: tests/test_second_numeric_pass.py)
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(variable, "1")

from pathlib import Path

import pytest

from fairness_core.store import RunStore


def _isolated_cache() -> None:
    """Each test process gets a cache folder of its own (adapters, training data, file hashes), so no test sees what
    a user trained or imported on this machine: a stored BARTScore adapter once changed what the Mitigation page
    listed and failed CI. Only the derived model copies that take ~20 s each to make (GGUF conversions, the served
    model's folder) are shared with the user's cache, by link: they are keyed by the source file's identity."""
    import atexit
    import shutil
    import tempfile

    from fairness_core import config

    shared = config.cache_dir()  # the user's (FAIRNESS_LAB_CACHE or ~/.cache/fairness-lab), before it is replaced
    own = Path(tempfile.mkdtemp(prefix="fairness-lab-test-cache-"))
    for derived in ("gguf", "served"):
        (shared / derived).mkdir(parents=True, exist_ok=True)
        (own / derived).symlink_to(shared / derived, target_is_directory=True)
    os.environ[config.CACHE_ENV] = str(own)
    atexit.register(shutil.rmtree, own, True)  # removes the links, never what they point to


_isolated_cache()

REPO_ROOT = Path(__file__).resolve().parent.parent


#: files whose every test is a unit of work of its own (each field of the browser bad-input battery opens its own page)
ONE_UNIT_PER_TEST = ("tests/browser/test_bad_inputs_browser.py",)


def work_unit(nodeid: str) -> str:
    """The unit of work a test belongs to under `make test`'s workers: its file (so module-scoped fixtures, such as
    pipeline stores, servers and loaded models, are built once), or the test itself in `ONE_UNIT_PER_TEST`."""
    path = nodeid.split("::", 1)[0]
    return nodeid if path.startswith(ONE_UNIT_PER_TEST) else path


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """`make test`'s `--dist loadgroup` hands out `work_unit`s. xdist's own grouping reads an `xdist_group` mark by
    renaming the node id (`item._nodeid`), which pytest 9 no longer reads: every test went to whichever worker was
    free, and a file's module fixtures were built on every worker (measured 2026-11-28: test files split over 4)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class WorkUnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return WorkUnitScheduling(config, log)


#: what each unit of work took in a recent `make test` (tests/unit_costs.json): the longest units start first
UNIT_COSTS_FILE = Path(__file__).with_name("unit_costs.json")
#: a unit the file does not know yet is assumed to take this long per test
UNKNOWN_TEST_S = 1.0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Units (`work_unit`) are handed out longest first, by what they took last time (`UNIT_COSTS_FILE`; `make test`
    passes --no-loadscope-reorder so xdist keeps this order): a long unit started last decides when the run ends, so
    the longest-processing-time-first order keeps the four workers' ends close together (measured 2026-11-28: the
    browser units spread over the first 70% of the run still left the new-user tour, 331 s, to start 28 minutes in)."""
    units: dict[str, list[pytest.Item]] = {}
    for item in items:
        units.setdefault(work_unit(item.nodeid), []).append(item)
    known = json.loads(UNIT_COSTS_FILE.read_text(encoding="utf-8"))["seconds"] if UNIT_COSTS_FILE.exists() else {}
    ordered = sorted(units.items(), key=lambda unit: -known.get(unit[0], UNKNOWN_TEST_S * len(unit[1])))
    items[:] = [item for _, unit in ordered for item in unit]


_unit_seconds: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if os.environ.get("UNIT_COSTS_OUT") and not os.environ.get("PYTEST_XDIST_WORKER"):
        unit = work_unit(report.nodeid)
        _unit_seconds[unit] = _unit_seconds.get(unit, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """With UNIT_COSTS_OUT=FILE, write what each unit took (setup, call and teardown of its tests), for the order
    above; units under 5 s are left out (their test count stands in for them). Only a run on workers writes it: `make
    test`'s second numeric pass (no workers) inherits the variable and had overwritten the main pass's figures."""
    out = os.environ.get("UNIT_COSTS_OUT")
    if (not out or os.environ.get("PYTEST_XDIST_WORKER") or not _unit_seconds
            or not session.config.getoption("numprocesses", None)):
        return
    import datetime

    seconds = {unit: round(s) for unit, s in sorted(_unit_seconds.items(), key=lambda pair: -pair[1]) if s >= 5}
    Path(out).write_text(json.dumps({"measured": f"{datetime.date.today()}, make test's pytest pass",
                                     "how": "UNIT_COSTS_OUT=tests/unit_costs.json make test",
                                     "seconds": seconds}, indent=1) + "\n", encoding="utf-8")


#: the files the suite runs twice: on a worker at two threads, though the worker's others run at one, and again at
#: one thread with AVX2 kernels in a fresh interpreter (tests/test_second_numeric_pass.py), so the pins meet two
#: reduction orders and two kernel paths, as they did before the suite ran on workers
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
def pipeline_runs(tmp_path_factory: pytest.TempPathFactory):
    """A run store written by the real pipelines (decoding sweeps, a live move, metric-bias, CAIRO, adaptation,
    DATScore; tests/compare/pipeline_runs.py), built once per test session; open it with
    `copy_store(pipeline_runs, path)` (a test never writes to it, nor to its models).

    Under `make test` the first pytest worker that needs it builds it, with tiny models of its own, in the workers'
    common folder (a file lock; the others wait and read the same store, models and run ids): 16 test files use it,
    so each of the four workers built it before 2026-11-29 (13 s of CPU, 30-80 s of a worker at load 8-9)."""
    import fcntl
    import pickle
    import shutil

    from tests.compare.pipeline_runs import build_pipeline_store
    from tests.tiny_models import build_tiny_gpt2, build_tiny_m2m100

    root = tmp_path_factory.getbasetemp()
    shared = root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root  # the workers' common folder
    workdir = shared / "pipeline-runs"
    built = workdir / "pipeline-runs.pickle"  # written last: its presence means the build finished
    with open(shared / "pipeline-runs.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not built.exists():
            shutil.rmtree(workdir, ignore_errors=True)  # a build that failed half-way in another worker
            workdir.mkdir()
            runs = build_pipeline_store(workdir / "runs.duckdb", build_tiny_gpt2(workdir / "tiny-gpt2"),
                                        build_tiny_m2m100(workdir / "tiny-m2m100"), workdir)
            built.write_bytes(pickle.dumps(runs))
    return pickle.loads(built.read_bytes())
