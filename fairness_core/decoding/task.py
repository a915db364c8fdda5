"""Run a decoding sweep through the generic generate-then-score task (`generation.run_generation`).

A sweep is one model × a grid of decoding settings: each setting is a `System`, so a setting's
generations are stored once, keyed by (system, prompt text, sample, seed, …), and any later sweep,
live slider move or prompt subset that asks for them reads them back. Scorers come from the scorer
registry as named in the request; an unavailable one (no regard model offline) is left out with a
one-sentence note. Nothing here names a scorer.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from fairness_core.decoding.request import DecodingRequest, RequestError
from fairness_core.generation.grid import config_dict
from fairness_core.generation.systems import System
from fairness_core.generation.task import (
    GenerationInputError,
    GenerationPlan,
    GenerationRequest,
    available_scorers,
    load_generations,
    plan_generation,
    run_generation,
    run_planned_together,
    token_usage,  # noqa: F401 - re-exported: tokens an endpoint counted for a run (CLI and page show it)
)


def systems_of(request: DecodingRequest) -> tuple[System, ...]:
    return tuple(System(request.model, config, request.quantization) for config in request.configs)


def generation_request(request: DecodingRequest, scorers: tuple[tuple[str, dict], ...] | None = None
                       ) -> GenerationRequest:
    """The generic task's request: systems = the model under each setting, first-sentence truncation."""
    return GenerationRequest(systems=systems_of(request), prompts=request.prompts,
                             scorers=request.scorers if scorers is None else scorers, samples=request.samples,
                             seeds=(request.seed,), max_new_tokens=request.max_new_tokens, truncate="first-sentence",
                             mode="continue", full_length=request.full_length, batch_size=request.batch_size)


@dataclass
class DecodingPlan:
    """A checked sweep: the generic plan, the scorers that run here, and notes on those that do not."""

    request: DecodingRequest
    generation: GenerationRequest
    plan: GenerationPlan
    notes: list[str] = field(default_factory=list)

    @property
    def from_store(self) -> bool:
        return self.plan.task is None

    def manifest(self) -> dict[str, Any]:
        """What determines the sweep's numbers (the job key of the page)."""
        return {"model": self.request.model, "configs": [config_dict(c) for c in self.request.configs],
                "prompts": {"name": self.request.prompts.name, "hash": self.request.prompts.content_hash()},
                "samples": self.request.samples, "max_new_tokens": self.request.max_new_tokens,
                "seed": self.request.seed, "quantization": self.request.quantization,
                "full_length": self.request.full_length, "scorers": self.plan.scorer_signatures}


def plan_decoding(request: DecodingRequest, store: Any) -> DecodingPlan:
    """Load what is needed (models through the process cache), drop unavailable scorers with a note,
    and plan the missing work; bad input is a RequestError (one sentence), nothing is written."""
    try:
        scorers, notes = available_scorers(request.scorers)
        generation = generation_request(request, scorers)
        plan = plan_generation(generation, store)
    except GenerationInputError as error:
        raise RequestError(str(error)) from None
    return DecodingPlan(request, generation, plan, notes)


@dataclass
class DecodingOutcome:
    plan: DecodingPlan
    generations: pd.DataFrame  # one row per generation: load_generations' columns + config, config_key, label
    run_ids: list[str]
    from_cache: bool
    status: str  # complete | cancelled

    @property
    def expected(self) -> int:
        return self.plan.request.n_generations

    @property
    def partial(self) -> bool:
        return len(self.generations) < self.expected

    def partial_label(self) -> str:
        """'partial: k of n generations' when a cancelled (or interrupted) run left some out, else ''."""
        if not self.partial:
            return ""
        return f"partial: {len(self.generations):,} of {self.expected:,} generations"


def with_configs(generations: pd.DataFrame, request: DecodingRequest) -> pd.DataFrame:
    """Add the decoding setting of each row (config dict, config_key = system key, label) in grid order."""
    frame = generations.copy()
    systems = systems_of(request)
    keys = [system.key() for system in systems]
    configs = {key: config_dict(system.decoding) for key, system in zip(keys, systems, strict=True)}
    labels = {key: system.decoding.label() for key, system in zip(keys, systems, strict=True)}
    order = {key: index for index, key in enumerate(keys)}
    frame["config_key"] = frame["system"]
    frame["config"] = frame["system"].map(configs)
    frame["label"] = frame["system"].map(labels)
    frame["config_order"] = frame["system"].map(order)
    return frame.sort_values("config_order", kind="stable").reset_index(drop=True)


@contextlib.contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Run the block under the model layer's thread policy (`fairness_core.models.threads.model_threads`) with
    `threads` as a cap, decided once for the whole job (None: each model call decides for itself).

    The live path passes every core when nothing else runs on the model workers and one each when several do
    (`ui.jobs.threads_now`); the policy lowers that further when other work keeps cores busy right now (with more
    threads than free cores each small matrix product waits for all of them: measured 35 ms vs 1.7 ms per linear
    layer with two threads at load average ~18). The count is set for the calling thread only and put back when
    the block ends, so one worker's choice does not change a generation running on another.
    """
    if threads is None:
        yield
        return
    from fairness_core.models.threads import model_threads

    with model_threads(cap=threads):
        yield


def run_decoding(plan: DecodingPlan, store: Any, on_progress: Callable[[Any], None] | None = None,
                 cancel: Any = None, executor: Any = None, threads: int | None = None,
                 on_partial: Callable[[dict[str, Any]], None] | None = None) -> DecodingOutcome:
    """Compute what the store lacks (resuming an interrupted run) and read every generation back.
    `on_partial` sees each generation's text as it is generated (`generation.task.run_generation`)."""
    with torch_threads(threads if plan.plan.task is not None else None):
        outcome = run_generation(plan.generation, store, on_progress=on_progress, cancel=cancel,
                                 executor=executor, on_partial=on_partial)
    record_read_settings(plan, store, outcome.run_ids)
    return DecodingOutcome(plan, with_configs(outcome.generations, plan.request), outcome.run_ids,
                           outcome.from_cache, outcome.status)


def record_read_settings(plan: DecodingPlan, store: Any, run_ids: list[str]) -> None:
    """Record the request's thresholds and resamples beside the runs it made (`reading.settings`: not part of a
    run's identity), so Compare, the report, the planner and `slices` read the run as its summary does."""
    from fairness_core.reading import made_by, record_settings

    infos = [store.get_run(run_id) for run_id in run_ids] if store.path.exists() else []
    mine = [info.run_id for info in infos if info is not None and made_by(info, plan.plan)]
    if mine:
        record_settings(store, mine, plan.request.thresholds, plan.request.n_resamples)


def batch_group(plan: DecodingPlan) -> str:
    """What live requests must share to be generated in one sampler call: the model and what shapes its rows
    (prompts, samples, tokens, full length, quantization) and the scorers, but not their settings or seeds. Every
    row keeps its own setting and its own random stream (seed, prompt, sample), so a row's text does not depend
    on which other requests share its call (`fairness_core.models.sampling`)."""
    from fairness_core.store.manifest import manifest_hash

    manifest = plan.manifest()
    manifest.pop("configs")
    manifest.pop("seed")
    return manifest_hash({"live-batch": manifest, "batch_size": plan.request.batch_size})


def run_batched(plans: list[DecodingPlan], store: Any, on_partial: Callable[[int, dict[str, Any]], None] | None
                = None, cancel: Any = None, threads: int | None = None) -> list[DecodingOutcome]:
    """Generate several compatible requests (same `batch_group`) in one sampler call; each gets its own outcome.

    Each request is planned again against the store now (another job may have stored some of its rows while it
    waited); the rows each one lacks, and only those (no cross product of settings x seeds), are generated
    together, each generation once, and then each request is stored as its own run with its own manifest, exactly
    as if it had run alone (`generation.task.run_planned_together`). `on_partial(i, partial)` gets the partial
    texts of request `i`'s rows only.
    """
    if len({batch_group(plan) for plan in plans}) != 1:
        raise ValueError("run_batched needs requests of one batch group (same model, prompts, samples, tokens "
                         "and scorers)")
    fresh = [plan_decoding(plan.request, store) for plan in plans]
    with torch_threads(threads if any(plan.plan.task is not None for plan in fresh) else None):
        together = run_planned_together([plan.plan for plan in fresh], store, on_partial=on_partial, cancel=cancel)
    for plan, outcome in zip(fresh, together, strict=True):
        record_read_settings(plan, store, outcome.run_ids)
    return [DecodingOutcome(plan, with_configs(outcome.generations, plan.request), outcome.run_ids,
                            outcome.from_cache, outcome.status) for plan, outcome in zip(fresh, together, strict=True)]


def stored_generations(plan: DecodingPlan, store: Any) -> pd.DataFrame:
    """What the store already holds for the plan (e.g. after a cancel), without computing anything."""
    return with_configs(load_generations(store, plan.generation), plan.request)


_WARM_LOCK = threading.Lock()
_WARMING: dict[str, threading.Thread] = {}
_READY: set[str] = set()


def prewarm(model: str, quantization: str = "none") -> threading.Thread:
    """Load (and on first use convert) the generator in a background thread, once per process and model.

    The page calls it on its first visit; an app can call it at start-up. Errors are left for the real
    load to report.
    """
    with _WARM_LOCK:
        running = _WARMING.get(f"{model}|{quantization}")
        if running is not None:
            return running

        def load() -> None:
            from fairness_core.models import load_model, load_preset, resolve_model

            try:
                load_model(resolve_model(model, "causal-lm", quantization=quantization))
                from fairness_core.scorers.lexicon import negative_words
                from fairness_core.scorers.offensive import offensive_probability

                negative_words()
                offensive_probability(["warm up"])
                load_preset("jigsaw-toxicity")
                _READY.add(f"{model}|{quantization}")
            except Exception:
                return

        thread = threading.Thread(target=load, name=f"prewarm-{model}", daemon=True)
        _WARMING[f"{model}|{quantization}"] = thread
        thread.start()
        return thread


def is_ready(model: str, quantization: str = "none") -> bool:
    """True once `prewarm` has loaded the generator and the offline scorers in this process."""
    return f"{model}|{quantization}" in _READY
