"""The Ray executor on a real local Ray instance (2 CPUs, started once for this module): same rows
as the local executor, a killed worker's shard is retried without duplicate rows, cancel and
resume work, a model loads once per worker, a bug in a work unit fails the run without retries."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from fairness_core.jobs import CancelToken, LocalExecutor, Task, get_executor, run_task
from fairness_core.store import CANCELLED, COMPLETE, FAILED, RunStore
from tests.jobs import ray_work_units
from tests.jobs.slow_task import N_SHARDS, ROWS_PER_SHARD, make_task

ray = pytest.importorskip("ray")
from fairness_core.jobs.ray_executor import RayExecutor  # noqa: E402

pytestmark = pytest.mark.slow  # a Ray instance takes a few seconds to start

WORKER_KEY_ENV = "LAB_RAY_TEST_ENDPOINT_KEY"
WORKER_KEY = "sk-worker-0d15ea5e1234"  # in the Ray workers' environment only
DRIVER_KEY = "sk-driver-be11ab1e5678"  # what the driver's environment holds under the same name


@pytest.fixture(scope="module")
def ray_executor() -> Iterator[RayExecutor]:
    """A local Ray instance with 2 CPUs (even if RAY_ADDRESS points elsewhere), shut down after the module."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("RAY_ADDRESS", raising=False)
        # The workers' own environment holds an endpoint key (as a cluster node's would); the driver's
        # loses it when this block ends.
        patch.setenv(WORKER_KEY_ENV, WORKER_KEY)
        executor = RayExecutor(num_cpus=2)
        assert executor.connect()["CPU"] == 2
    yield executor
    ray.shutdown()


def _comparable(rows: pd.DataFrame) -> pd.DataFrame:
    return rows.drop(columns=["run_id"]).reset_index(drop=True)


def _task(kind: str, work, **shard_fields) -> Task:
    base = make_task()
    shards = [{**shard, **shard_fields} for shard in base.shards]
    return Task(kind, base.request, shards, work)


def test_a_decoding_sweep_on_ray_stores_the_rows_the_local_executor_stores(
        ray_executor: RayExecutor, tiny_gpt2: Path, tmp_path: Path) -> None:
    """A sweep is one system per decoding setting on the generic generate-then-score task."""
    from fairness_core.data.prompts import parse_custom
    from fairness_core.generation.grid import expand_grid, parse_grid
    from fairness_core.generation.systems import System
    from fairness_core.generation.task import GenerationRequest, load_generations, plan_generation

    prompts = parse_custom("man: The man worked as\nwoman: The woman worked as\nman: He was\nwoman: She was")
    configs = expand_grid(parse_grid("top_p=0.5,0.9;temperature=0.7,1.0"), 6)
    request = GenerationRequest(tuple(System(str(tiny_gpt2), config) for config in configs), prompts,
                                (("vader", {}), ("negative_words", {})), samples=3, max_new_tokens=6,
                                truncate="first-sentence", batch_size=8)
    outcomes, stores = [], []
    for name, executor in (("local", LocalExecutor()), ("ray", ray_executor)):
        store = RunStore(tmp_path / f"{name}.duckdb")
        plan = plan_generation(request, store)
        outcomes.append(run_task(plan.task, store, executor=executor))
        stores.append(store)
    local, on_ray = outcomes
    assert len(local.run.manifest["request"]["systems"]) == 4 and local.computed_shards == 6  # 48 rows / 8
    assert on_ray.status == COMPLETE and on_ray.computed_shards == 6
    assert on_ray.run_id == local.run_id  # same manifest: the executor is not part of what was computed
    local_rows, ray_rows = (_comparable(store.rows(o.run_id)) for store, o in zip(stores, outcomes, strict=True))
    pd.testing.assert_frame_equal(ray_rows, local_rows, check_exact=True)
    generations = load_generations(stores[0], request)
    assert len(generations) == 4 * 4 * 3  # configs x prompts x samples
    assert generations["vader_compound"].notna().all()


def test_a_model_loads_once_per_ray_worker(ray_executor: RayExecutor, tiny_gpt2: Path, store: RunStore,
                                           tmp_path: Path) -> None:
    """Runs right after the sweep (tests run in file order), so the workers that imported torch for it do not
    import it again; the model is a copy of the tiny GPT-2 in a folder of its own, a model no worker has loaded
    yet (the sweep loaded `tiny_gpt2`, and a worker that had would report no load at all)."""
    import shutil

    model = shutil.copytree(tiny_gpt2, tmp_path / "tiny-gpt2-copy")
    shards = [{"index": index} for index in range(10)]
    task = Task("test-ray-model-cache", {"model": str(model)}, shards, ray_work_units.report_model_loads)
    rows = store.rows(run_task(task, store, executor=ray_executor).run_id)
    loads_per_worker = rows.groupby("grp")["value"].sum()
    assert len(rows) == 10 and (loads_per_worker == 1).all()
    assert len(loads_per_worker) < 10  # workers were reused: 10 shards, fewer processes


def test_a_worker_killed_mid_run_is_survived_without_duplicate_rows(
        ray_executor: RayExecutor, store: RunStore, tmp_path: Path) -> None:
    killed = [5, 30]  # shards (by first item) whose first attempt kills its worker process
    task = _task("test-ray-kill", ray_work_units.dies_the_first_time, marker_dir=str(tmp_path), die_on=killed)
    outcome = run_task(task, store, executor=ray_executor)
    assert outcome.status == COMPLETE and outcome.computed_shards == N_SHARDS
    for start in killed:
        assert (tmp_path / f"died-{start}").exists()
        attempts = (tmp_path / f"attempts-{start}.log").read_text().split()
        assert len(attempts) == 2 and attempts[0] != attempts[1]  # retried, in a new worker process
    assert (tmp_path / "attempts-0.log").read_text().count("\n") == 1
    rows = store.rows(outcome.run_id)
    assert len(rows) == N_SHARDS * ROWS_PER_SHARD and rows["item"].is_unique
    expected = run_task(make_task(), RunStore(tmp_path / "local.duckdb"))
    pd.testing.assert_frame_equal(_comparable(rows)[["shard", "item", "value"]],
                                  _comparable(RunStore(tmp_path / "local.duckdb").rows(expected.run_id))[
                                      ["shard", "item", "value"]])


def test_cancel_stops_the_run_and_a_later_run_resumes_it(ray_executor: RayExecutor, store: RunStore) -> None:
    task = _task("test-ray-cancel", ray_work_units.sleepy_squares, delay_s=0.5)
    cancel = CancelToken()

    def cancel_after_two(progress) -> None:
        if progress.done >= 2:
            cancel.cancel()

    partial = run_task(task, store, on_progress=cancel_after_two, cancel=cancel, executor=ray_executor)
    assert partial.status == CANCELLED
    stored = store.completed_shards(partial.run_id)
    assert 2 <= len(stored) < N_SHARDS
    resumed = run_task(task, store, executor=ray_executor)
    assert resumed.status == COMPLETE and resumed.run_id == partial.run_id
    assert resumed.computed_shards == N_SHARDS - len(stored)
    rows = store.rows(resumed.run_id)
    assert len(rows) == N_SHARDS * ROWS_PER_SHARD and rows["item"].is_unique


def test_no_more_shards_are_in_flight_than_the_bound(
        ray_executor: RayExecutor, store: RunStore, tmp_path: Path) -> None:
    trace = tmp_path / "trace.log"
    task = _task("test-ray-bound", ray_work_units.traced_squares, delay_s=0.1, trace=str(trace))
    one_at_a_time = RayExecutor(max_in_flight=1)  # joins the module's running instance (2 CPUs)
    assert run_task(task, store, executor=one_at_a_time).status == COMPLETE
    events = trace.read_text().split("\n")[:-1]
    assert len(events) == 2 * N_SHARDS
    assert all(events[i].startswith("start") and events[i + 1] == events[i].replace("start", "end")
               for i in range(0, len(events), 2))  # each shard ended before the next one started


def test_an_error_in_the_work_unit_fails_the_run_without_retrying(
        ray_executor: RayExecutor, store: RunStore, tmp_path: Path) -> None:
    task = _task("test-ray-bug", ray_work_units.fails_on_shard, marker_dir=str(tmp_path), fail_on=15)
    with pytest.raises(ValueError, match="bad shard starting at 15"):
        run_task(task, store, executor=ray_executor)
    assert store.list_runs()[0].status == FAILED
    assert (tmp_path / "attempts-15.log").read_text().count("\n") == 1


def test_executors_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(get_executor("local"), LocalExecutor)
    monkeypatch.setenv("RAY_ADDRESS", "ray://head.example:10001")
    joined = get_executor("ray")
    assert isinstance(joined, RayExecutor) and "head.example" in joined.describe()
    with pytest.raises(ValueError, match="unknown executor 'spark'"):
        get_executor("spark")


def test_the_cli_runs_metric_bias_on_ray_with_the_local_results(
        ray_executor: RayExecutor, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from fairness_core.cli import main

    command = ["metric-bias", "--format", "demo", "--metrics", "bleu,chrf", "--resamples", "50", "--json"]
    assert main(["--store", str(tmp_path / "local.duckdb"), *command]) == 0
    local = capsys.readouterr()
    assert main(["--store", str(tmp_path / "ray.duckdb"), *command, "--executor", "ray"]) == 0
    on_ray = capsys.readouterr()
    assert "executor: Ray (a local Ray instance)" in on_ray.err and "executor" not in local.err
    assert json.loads(on_ray.out) == json.loads(local.out)


def test_endpoint_systems_run_on_ray_workers_with_the_local_rows(ray_executor: RayExecutor, tmp_path: Path) -> None:
    """Each worker builds its own client from the shard's endpoint source (no key in it) and asks the server."""
    from fairness_core.data.prompts import parse_custom
    from fairness_core.generation.systems import System
    from fairness_core.generation.task import GenerationRequest, run_generation
    from fairness_core.models import DecodingConfig
    from fairness_core.models.endpoint import Endpoint
    from tests.endpoint_servers import FakeServer

    server = FakeServer()
    try:
        source = Endpoint(server.base_url, "fake-model", max_in_flight=2).source()
        request = GenerationRequest(
            systems=(System(source, DecodingConfig(top_p=0.5)), System(source, DecodingConfig(temperature=0.7))),
            prompts=parse_custom("man: The man worked as\nwoman: The woman worked as"), scorers=(("vader", {}),),
            samples=2, max_new_tokens=5, batch_size=3)
        frames = []
        for name, executor in (("local", LocalExecutor()), ("ray", ray_executor)):
            outcome = run_generation(request, RunStore(tmp_path / f"{name}.duckdb"), executor=executor)
            assert outcome.status == COMPLETE and len(outcome.generations) == 8
            frames.append(outcome.generations.drop(columns=["run_id"]))
        pd.testing.assert_frame_equal(frames[1], frames[0], check_exact=True)
        asked = [body for body in server.completions() if body["prompt"].startswith("The ")]
        assert len(asked) == 16  # 8 rows, once per executor: nothing was served twice within a run
    finally:
        server.stop()


def test_a_ray_worker_asks_an_endpoint_with_the_key_from_its_own_environment(
        ray_executor: RayExecutor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Shards carry the endpoint's source, which holds the NAME of the key's variable; each worker reads the
    value from its own environment, so its requests carry the worker's key, and no key reaches the store."""
    from fairness_core.data.prompts import parse_custom
    from fairness_core.generation.systems import System
    from fairness_core.generation.task import GenerationRequest, run_generation
    from fairness_core.models import DecodingConfig
    from fairness_core.models.endpoint import Endpoint
    from tests.endpoint_servers import FakeServer

    monkeypatch.setenv(WORKER_KEY_ENV, DRIVER_KEY)  # the driver probes the server for the manifest with its own
    server = FakeServer()
    try:
        source = Endpoint(server.base_url, "fake-model", key_env=WORKER_KEY_ENV).source()
        request = GenerationRequest(systems=(System(source, DecodingConfig(top_p=0.5)),),
                                    prompts=parse_custom("man: The man worked as\nwoman: The woman worked as"),
                                    samples=2, max_new_tokens=5, batch_size=2)
        path = tmp_path / "ray.duckdb"
        outcome = run_generation(request, RunStore(path), executor=ray_executor)
        assert outcome.status == COMPLETE and len(outcome.generations) == 4
        assert all(raw.startswith(" said t=1.0 p=0.5 k=None s=") for raw in outcome.generations["raw"])

        answered = [headers for url, headers, body in server.requests
                    if url.endswith("/completions") and str(body.get("prompt", "")).startswith("The ")]
        assert len(answered) == 4 and {h["authorization"] for h in answered} == {f"Bearer {WORKER_KEY}"}
        driver = [headers for url, headers, _ in server.requests if url.endswith("/models")]
        assert f"Bearer {DRIVER_KEY}" in {h["authorization"] for h in driver}  # the driver used its own

        # every table of the store as text (DuckDB compresses strings, so its file bytes alone prove little)
        store = RunStore(path)
        tables = store.query("SELECT table_name FROM information_schema.tables")["table_name"]
        dumped = "\n".join(store.query(f'SELECT * FROM "{table}"').to_csv() for table in tables)
        assert f"127.0.0.1:{server.port}" in dumped and "fake-model" in dumped  # the manifest names the endpoint
        assert WORKER_KEY not in dumped and DRIVER_KEY not in dumped
        raw = b"".join(p.read_bytes() for p in tmp_path.glob("ray.duckdb*"))
        assert WORKER_KEY.encode() not in raw and DRIVER_KEY.encode() not in raw
        assert not outcome.generations.astype(str).apply(lambda c: c.str.contains("sk-")).any().any()
    finally:
        server.stop()
