"""Executor throughput: one generate-then-score task run by the local executor and by Ray, side by side.

The task is a decoding sweep with SmolLM2-135M-Instruct (generate, cut to the first sentence, then
score every output with VADER, the offensive-language classifier, the negative-word lexicon and
SmolLM2's own log-probability as the quality proxy; regard is off: no regard classifier is offline).
The same plan runs three times, each into a fresh temporary store so nothing is served from a cache:

  local     - `LocalExecutor`: this process, one batch after another, torch on every core
  ray cold  - `RayExecutor` on a local Ray instance (one worker per core, 1 torch thread each), from
              nothing: Ray start-up, worker processes, their imports and model loads all count
  ray warm  - the same again on the running instance: workers and their cached models are reused,
              which is what every run after the first (or a long run, amortised) sees

Throughput = generated outputs per second; the ratios are Ray's throughput over the local one.

    .venv/bin/python -m bench.ray_executor [--prompts 12] [--samples 4] [--grid "top_p=0.5,0.9"]
"""

from __future__ import annotations

import argparse
import os
import pickle
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=12, help="regard prompts (templates x groups), first N")
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=20)
    parser.add_argument("--grid", default="top_p=0.5,0.9")
    parser.add_argument("--batch-size", type=int, default=16, help="rows per shard (= per Ray task)")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import ray
    import torch

    from fairness_core.data.prompts import PromptSet, regard_prompts
    from fairness_core.generation.grid import expand_grid, parse_grid
    from fairness_core.generation.sweep import prepare_sweep
    from fairness_core.jobs import LocalExecutor, run_task
    from fairness_core.jobs.ray_executor import RayExecutor
    from fairness_core.store import RunStore

    every = regard_prompts()
    prompts = PromptSet(every.name, every.items[: args.prompts])
    configs = expand_grid(parse_grid(args.grid), args.max_new_tokens)
    cores = os.cpu_count() or 1

    with tempfile.TemporaryDirectory() as tmp:
        def plan_in(name: str):  # a fresh store: every run computes everything
            store = RunStore(Path(tmp) / f"{name}.duckdb")
            plan = prepare_sweep("smollm2-135m-instruct", prompts, configs, args.samples, args.max_new_tokens,
                                 seed=0, regard_model=None, store=store, batch_size=args.batch_size)
            return plan, store

        plan, store = plan_in("local")  # loads SmolLM2 in this process (not timed: both sides need it)
        outputs = sum(len(shard["rows"]) for shard in plan.task.shards)
        print(f"SmolLM2-135M-Instruct sweep: {len(configs)} configs x {len(prompts.items)} prompts x "
              f"{args.samples} samples = {outputs} outputs in {len(plan.task.shards)} shards of "
              f"<= {args.batch_size}; max {args.max_new_tokens} new tokens; {cores} cores, "
              f"load average {os.getloadavg()[0]:.2f}", flush=True)

        timings: dict[str, float] = {}
        rows: dict[str, object] = {}
        started = time.perf_counter()
        outcome = run_task(plan.task, store, executor=LocalExecutor())
        timings["local"] = time.perf_counter() - started
        rows["local"] = store.rows(outcome.run_id).drop(columns=["run_id"])
        print(f"local ({torch.get_num_threads()} torch threads): {timings['local']:.1f} s", flush=True)

        executor = RayExecutor(num_cpus=cores)
        for name in ("ray cold", "ray warm"):
            plan, store = plan_in(name.replace(" ", "-"))
            started = time.perf_counter()
            if name == "ray cold":
                executor.connect()
                timings["ray start-up"] = time.perf_counter() - started
            outcome = run_task(plan.task, store, executor=executor)
            timings[name] = time.perf_counter() - started
            rows[name] = store.rows(outcome.run_id).drop(columns=["run_id"])
            print(f"{name}: {timings[name]:.1f} s", flush=True)
        ray.shutdown()

    payload = pickle.dumps(rows["local"].to_dict("records"))
    same = all(rows[name].equals(rows["local"]) for name in ("ray cold", "ray warm"))
    print(f"\nrows identical to the local executor's: {same}; rows sent back to the driver: "
          f"{len(payload) / 1e3:.0f} kB pickled in all")
    print(f"Ray start-up (ray.init, local instance): {timings['ray start-up']:.1f} s")
    for name in ("local", "ray cold", "ray warm"):
        print(f"  {name:<9} {timings[name]:7.1f} s   {outputs / timings[name]:6.2f} outputs/s")
    print(f"throughput ratio Ray / local: cold {timings['local'] / timings['ray cold']:.2f}x, "
          f"warm {timings['local'] / timings['ray warm']:.2f}x (one run, side by side, this machine)")


if __name__ == "__main__":
    main()
