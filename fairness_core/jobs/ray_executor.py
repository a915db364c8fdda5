"""Run a task's shards as Ray tasks: on a local Ray instance, or on a cluster given by `RAY_ADDRESS`.

The seam is the same as the local executor's: `map(task, shard_indices, cancel)` yields
(shard index, rows) as each shard finishes, and `run_task` in the driver alone writes them to the
store (DuckDB allows one writer; workers never see the store). What Ray adds:

- Shards run in parallel on every CPU of the cluster. A work unit is a pure module-level function,
  so Ray pickles it by reference and each worker imports it; the request is put in the object
  store once and shared by all shards.
- A worker process that dies (OOM killer, a node lost) is retried by Ray (`max_retries`); an
  exception raised by the work unit is not retried: it is a bug or bad input and fails the run.
  Rows come back only from the attempt that finished, so a retried shard is written once.
- Ray reuses worker processes, so models load once per worker through the process-wide model
  cache, as they load once per process locally.
- At most `max_in_flight` shards are submitted at a time (default 2 x the cluster's CPUs), so
  memory in the object store does not grow with the number of shards.
- Cancel stops submitting, cancels the shards in flight (`ray.cancel`) and returns at once; their
  partial work is discarded and a later run resumes from the shards already stored.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fairness_core.jobs.runner import CancelToken, Rows, Task, WorkUnit

#: The project root: local Ray workers get it on their PYTHONPATH so they import fairness_core.
PROJECT_ROOT = Path(__file__).resolve().parents[2]
#: Environment a worker needs to behave like the driver (offline switches, caches, store-free config).
#: A local Ray instance inherits the driver's whole environment; a remote cluster gets these.
PASSED_ENV = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HOME", "NLTK_DATA", "TOKENIZERS_PARALLELISM",
              "FAIRNESS_LAB_CACHE")
#: Seconds between cancel checks while waiting for a shard.
POLL_S = 0.2
#: Object store size for a local instance: rows are small; Ray's default (30% of RAM) is not needed.
LOCAL_OBJECT_STORE_BYTES = 512 * 1024**2


class RayUnavailableError(RuntimeError):
    """Ray is not installed, or the cluster cannot be reached; the message is one sentence."""


def _run_shard(work: WorkUnit, request: dict[str, Any], shard: dict[str, Any]) -> Rows:
    """What a Ray worker runs for one shard (the request arrives resolved from the object store)."""
    return work(request, shard)


class RayExecutor:
    """Shards as Ray tasks; rows stream back to the driver as each shard finishes.

    `address`: a cluster to join (default: `RAY_ADDRESS`; unset = start a local instance with
    `num_cpus`, default all of this machine's). Ray starts on the first `map`, not here, so
    building an executor (CLI parsing, a sidebar choice) costs nothing.
    """

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        num_cpus: int | None = None,
        max_in_flight: int | None = None,
        max_retries: int = 3,
        cpus_per_shard: float = 1.0,
    ) -> None:
        self.address = address if address is not None else (os.environ.get("RAY_ADDRESS") or None)
        self.num_cpus = num_cpus
        self.max_in_flight = max_in_flight
        self.max_retries = max_retries
        self.cpus_per_shard = cpus_per_shard

    def describe(self) -> str:
        where = f"the Ray cluster at {self.address}" if self.address else "a local Ray instance"
        return f"Ray ({where})"

    def connect(self) -> dict[str, float]:
        """Join or start Ray once per process; returns the cluster's resources (CPU, memory, ...)."""
        ray = _import_ray()
        if not ray.is_initialized():
            if self.address:
                options: dict[str, Any] = {"address": self.address, "runtime_env": _cluster_runtime_env()}
            else:
                # "local" always starts a fresh instance, never attaching to one `ray start`ed here.
                options = {"address": "local", "num_cpus": self.num_cpus or os.cpu_count() or 1,
                           "object_store_memory": LOCAL_OBJECT_STORE_BYTES}
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no telemetry prompt or upload
            try:
                with _local_worker_path(enabled=not self.address):
                    ray.init(include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False,
                             **options)
            except (ConnectionError, RuntimeError, ValueError) as error:
                where = self.address or "a local instance"
                raise RayUnavailableError(f"could not start or join Ray ({where}): {error}") from error
        return dict(ray.cluster_resources())

    def map(
        self, task: Task, shard_indices: Sequence[int], cancel: CancelToken | None = None
    ) -> Iterator[tuple[int, Rows]]:
        ray = _import_ray()
        resources = self.connect()
        limit = self.max_in_flight or max(2, 2 * int(resources.get("CPU", 1)))
        remote = ray.remote(_run_shard).options(
            num_cpus=self.cpus_per_shard, max_retries=self.max_retries, retry_exceptions=False,
            name=f"{task.kind}-shard")
        request_ref = ray.put(task.request)
        waiting = deque(shard_indices)
        in_flight: dict[Any, int] = {}  # object ref -> shard index
        try:
            while waiting or in_flight:
                if cancel is not None and cancel.cancelled:
                    return
                while waiting and len(in_flight) < limit:
                    index = waiting.popleft()
                    in_flight[remote.remote(task.work, request_ref, task.shards[index])] = index
                ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=POLL_S)
                for ref in ready:
                    index = in_flight.pop(ref)
                    yield index, ray.get(ref)
        finally:
            # Cancelled, failed, or the caller stopped reading: nothing left running for this task.
            for ref in in_flight:
                ray.cancel(ref, force=False)


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as error:
        raise RayUnavailableError(
            "the Ray executor needs the ray package (pip install ray==2.60.0); use --executor local") from error
    return ray


def _passed_env() -> dict[str, str]:
    return {name: os.environ[name] for name in PASSED_ENV if name in os.environ}


@contextmanager
def _local_worker_path(enabled: bool) -> Iterator[None]:
    """While a local instance starts, PYTHONPATH leads with the project root, so that its raylet and every worker
    it starts (they inherit its environment, as they inherit the rest of the driver's) import fairness_core (and
    tests' work units) from here; the driver's own environment is put back afterwards.

    Why not a runtime_env with that PYTHONPATH (as before 2026-11-29): Ray keeps a job with its own runtime_env
    off the workers it prestarts at `ray.init`, so the first shards waited for fresh workers to be started through
    the runtime-env agent (a 12-shard task's first run took 9-14 s, now 4-7 s, at load 8 on the 2-core machine);
    with the environment inherited, the prestarted workers take the first shards."""
    if not enabled:
        yield
        return
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT_ROOT), before or "") if p)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before


def _cluster_runtime_env() -> dict[str, Any]:
    """Workers on other machines get the fairness_core package shipped by Ray (py_modules); its
    third-party dependencies must be installed there (same requirements.txt + lock)."""
    import fairness_core

    return {"py_modules": [str(Path(fairness_core.__file__).parent)], "env_vars": _passed_env()}
