"""Executor throughput: the generic generate-then-score task run by the local executor and by Ray, side by side.

The task is `fairness_core.generation.run_generation`'s job for one `GenerationRequest`: SmolLM2-135M-Instruct
as two systems (top-p 0.5 and 0.9 by default) on the first regard prompts, cut to the first sentence, then
scored with VADER, the offensive-language classifier, the negative-word lexicon and SmolLM2's own
log-probability as the quality proxy (regard is off: no regard classifier is offline). The same request
runs four times, each into a fresh temporary store so nothing is served from a cache:

  local       - `LocalExecutor`: this process, one batch after another, torch's default thread count
  local 1t    - the same with one torch thread (what each Ray worker uses): on a busy machine torch's threads
                wait for each other, and one thread can be much faster than two
  ray cold    - `RayExecutor` on a local Ray instance (one worker per core, 1 torch thread each), from
                nothing: Ray start-up, worker processes, their imports and model loads all count
  ray warm    - the same again on the running instance: workers and their cached models are reused,
                which is what every run after the first (or a long run, amortised) sees

The local runs reuse the models planning loaded (the generator and every scorer), so they are warm too.
Throughput = generated outputs per second; the ratios are Ray's throughput over the local ones. The load
average is printed: other processes on the machine change every number, and the ratios are only comparable
within one run of this bench.

    .venv/bin/python -m bench.ray_executor [--prompts 12] [--samples 4] [--top-p 0.5,0.9]
"""

from __future__ import annotations

import argparse
import os
import pickle
import tempfile
import time
from pathlib import Path

SCORERS = (("vader", {}), ("offensive", {}), ("negative_words", {}), ("quality_logprob", {}))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=12, help="regard prompts (templates x groups), first N")
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=20)
    parser.add_argument("--top-p", default="0.5,0.9", help="one system per top-p value (comma-separated)")
    parser.add_argument("--batch-size", type=int, default=16, help="rows per shard (= per Ray task)")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import ray
    import torch

    from fairness_core.data.prompts import PromptSet, regard_prompts
    from fairness_core.generation.systems import System
    from fairness_core.generation.task import GenerationRequest, load_generations, plan_generation
    from fairness_core.jobs import LocalExecutor, run_task
    from fairness_core.jobs.ray_executor import RayExecutor
    from fairness_core.models.interfaces import DecodingConfig
    from fairness_core.store import RunStore

    every = regard_prompts()
    prompts = PromptSet(every.name, every.items[: args.prompts])
    systems = tuple(System("smollm2-135m-instruct", DecodingConfig(top_p=float(p), max_new_tokens=args.max_new_tokens))
                    for p in args.top_p.split(","))
    request = GenerationRequest(systems, prompts, SCORERS, samples=args.samples, max_new_tokens=args.max_new_tokens,
                                truncate="first-sentence", batch_size=args.batch_size)
    cores = os.cpu_count() or 1

    with tempfile.TemporaryDirectory() as tmp:
        def plan_in(name: str):  # a fresh store: every run computes everything
            store = RunStore(Path(tmp) / f"{name}.duckdb")
            return plan_generation(request, store), store

        plan, _ = plan_in("plan")  # loads SmolLM2 and the scorers in this process (not timed: every run needs them)
        outputs = plan.n_to_generate
        print(f"generate-then-score task: {len(systems)} systems (SmolLM2-135M-Instruct, top-p {args.top_p}) x "
              f"{len(prompts.items)} prompts x {args.samples} samples = {outputs} outputs, {len(SCORERS)} scorers, "
              f"in {len(plan.task.shards)} shards of <= {args.batch_size}; max {args.max_new_tokens} new tokens; "
              f"{cores} cores, load average {os.getloadavg()[0]:.2f}", flush=True)

        timings: dict[str, float] = {}
        rows: dict[str, object] = {}

        def generations(store: RunStore) -> object:
            frame = load_generations(store, request)
            return frame.drop(columns=["run_id"]).sort_values("generation_id").reset_index(drop=True)

        default_threads = torch.get_num_threads()
        for name, threads in (("local", default_threads), ("local 1t", 1)):
            plan, store = plan_in(name.replace(" ", "-"))
            os.environ["FAIRNESS_TORCH_THREADS"] = str(threads)  # the model layer's thread policy reads it
            started = time.perf_counter()
            run_task(plan.task, store, executor=LocalExecutor())
            timings[name] = time.perf_counter() - started
            del os.environ["FAIRNESS_TORCH_THREADS"]
            rows[name] = generations(store)
            threads_text = f"{threads} torch thread{'s' if threads > 1 else ''}"
            print(f"{name} ({threads_text}): {timings[name]:.1f} s; load average {os.getloadavg()[0]:.2f}", flush=True)

        executor = RayExecutor(num_cpus=cores)
        for name in ("ray cold", "ray warm"):
            plan, store = plan_in(name.replace(" ", "-"))
            started = time.perf_counter()
            if name == "ray cold":
                executor.connect()
                timings["ray start-up"] = time.perf_counter() - started
            run_task(plan.task, store, executor=executor)
            timings[name] = time.perf_counter() - started
            rows[name] = generations(store)
            print(f"{name}: {timings[name]:.1f} s; load average {os.getloadavg()[0]:.2f}", flush=True)
        ray.shutdown()

    payload = pickle.dumps(rows["local"].to_dict("records"))
    same = all(rows[name].equals(rows["local"]) for name in ("local 1t", "ray cold", "ray warm"))
    print(f"\ngenerations and scores identical to the local executor's: {same}; {len(rows['local'])} generations, "
          f"{len(payload) / 1e3:.0f} kB pickled in all")
    print(f"Ray start-up (ray.init, local instance): {timings['ray start-up']:.1f} s")
    for name in ("local", "local 1t", "ray cold", "ray warm"):
        print(f"  {name:<9} {timings[name]:7.1f} s   {outputs / timings[name]:6.2f} outputs/s")
    print(f"throughput ratio Ray / local ({default_threads} torch threads): cold "
          f"{timings['local'] / timings['ray cold']:.2f}x, warm {timings['local'] / timings['ray warm']:.2f}x")
    print(f"throughput ratio Ray / local (1 torch thread): cold {timings['local 1t'] / timings['ray cold']:.2f}x, "
          f"warm {timings['local 1t'] / timings['ray warm']:.2f}x (one run each, side by side, this machine)")


if __name__ == "__main__":
    main()
