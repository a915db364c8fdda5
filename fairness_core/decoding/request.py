"""Build and validate a decoding-sweep request from plain values — shared by the CLI and the page.

A request is one model × a grid of decoding settings (each setting is a `System`), a prompt set,
samples, seed and the scorers to apply. Everything is checked here before any model loads or any
run is created: every problem is a `RequestError` with one sentence, and work above the documented
limits (`LIMITS`) is refused with its estimate (`LimitError`) unless the caller confirms it (the
page asks; the CLI takes `--allow-large` up to the hard limits).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairness_core.data.prompts import PromptError, PromptSet, load_prompt_source, validate
from fairness_core.generation.grid import GridError, expand_grid, parse_grid
from fairness_core.models.endpoint import Endpoint, is_endpoint
from fairness_core.models.interfaces import DecodingConfig
from fairness_core.scorers.sentiment import DEFAULT_NEGATIVE_THRESHOLD


class RequestError(ValueError):
    """A bad decoding request; the message is one sentence for the user."""


class LimitError(RequestError):
    """A request above the limits; the message gives the estimate and the limit."""


@dataclass(frozen=True)
class Limits:
    """Documented limits (docs/decoding.md). `confirm_*` need a confirmation, `max_*` are refused outright."""

    max_configs: int = 500
    max_samples: int = 1_000
    max_new_tokens: int = 512
    max_generations: int = 500_000
    confirm_generations: int = 20_000
    #: rough cost on this project's reference machine (2 CPU cores, SmolLM2-135M): seconds per new token per row
    seconds_per_token: float = 0.0025  # measured 0.0021: 990 generations x 20 tokens in 41.6 s (quiet)
    #: what the page's time estimate starts from: a whole small sweep as the page runs it (plan, generation with
    #: first-sentence stopping, the default scorers, storing) per max new token per generation on the quiet
    #: reference machine, scaled by the machine's load (`ui.jobs.estimate_s`). 2026-11-26: real time over
    #: (units x probed slowdown) in 8 runs of `python -m bench.estimates` ranged 0.0013-0.0057, median ~0.004
    sweep_seconds_per_token: float = 0.004  # 2026-11-28: 880 new tokens in 3.2 s at load 0.5 (bench.job_estimates)
    confirm_seconds: float = 30 * 60


LIMITS = Limits()
#: the page's job kind for a sweep (estimates are learnt per kind)
SWEEP_KIND = "sweep"


def sweep_work(generations: int, max_new_tokens: int) -> Any:
    """What a sweep costs (`fairness_core.jobs.estimates.Work`): at most `max_new_tokens` new tokens for each
    generation it computes, at the documented cost of a whole small sweep per new token (`Limits`)."""
    from fairness_core.jobs.estimates import Work

    return Work(SWEEP_KIND, int(generations) * int(max_new_tokens), LIMITS.sweep_seconds_per_token,
                "new tokens (at most)")
MAX_RESAMPLES = 100_000
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$")


@dataclass(frozen=True)
class Estimate:
    generations: int
    seconds: float

    def describe(self) -> str:
        from fairness_core.jobs import format_seconds

        return f"{self.generations:,} generations, about {format_seconds(self.seconds)} on 2 CPU cores"


@dataclass(frozen=True)
class DecodingRequest:
    model: str
    prompts: PromptSet
    configs: tuple[DecodingConfig, ...]
    samples: int = 5
    max_new_tokens: int = 30
    seed: int = 0
    quantization: str = "none"
    #: (scorer name, options) in the scorer registry; which rates and means the summary shows comes from
    #: each scorer's declared measures
    scorers: tuple[tuple[str, dict[str, Any]], ...] = ()
    #: threshold overrides for adjustable measures (e.g. {"negative_sentiment_rate": -0.25})
    thresholds: dict[str, float] = field(default_factory=dict)
    batch_size: int = 96
    full_length: bool = False
    n_resamples: int = 1000

    @property
    def n_generations(self) -> int:
        return len(self.configs) * len(self.prompts.items) * self.samples

    def estimate(self) -> Estimate:
        return estimate(len(self.configs), len(self.prompts.items), self.samples, self.max_new_tokens)


def estimate(n_configs: int, n_prompts: int, samples: int, max_new_tokens: int,
             limits: Limits = LIMITS) -> Estimate:
    generations = int(n_configs) * int(n_prompts) * int(samples)
    return Estimate(generations, generations * int(max_new_tokens) * limits.seconds_per_token)


def check_limits(n_configs: int, n_prompts: int, samples: int, max_new_tokens: int, confirmed: bool = False,
                 limits: Limits = LIMITS) -> Estimate:
    """The estimate, or LimitError naming it and the limit (confirmation lifts only the soft limits)."""
    work = estimate(n_configs, n_prompts, samples, max_new_tokens, limits)
    hard = [(n_configs, limits.max_configs, "decoding configurations"), (samples, limits.max_samples,
             "samples per prompt"), (max_new_tokens, limits.max_new_tokens, "max new tokens"),
            (work.generations, limits.max_generations, "generations")]
    for value, limit, what in hard:
        if value > limit:
            raise LimitError(f"{value:,} {what} is above the limit of {limit:,} (this request: {work.describe()}); "
                             "split it into smaller sweeps")
    if not confirmed and (work.generations > limits.confirm_generations or work.seconds > limits.confirm_seconds):
        raise LimitError(f"this sweep is large ({work.describe()}); the limit without confirmation is "
                         f"{limits.confirm_generations:,} generations or "
                         f"{int(limits.confirm_seconds // 60)} minutes — confirm to run it anyway "
                         "(--allow-large on the CLI)")
    return work


@dataclass(frozen=True)
class ServedLimits:
    """Per-session caps when the app is served for a class (`FAIRNESS_LAB_SERVED=1`, docs/SECURITY.md): thirty
    students share two cores, so a page's sweep stays small and a bigger one is the teacher's, on the CLI."""

    max_configs: int = 12  # decoding configurations in one sweep
    max_generations: int = 2_000  # generations in one sweep (stored ones included: the estimate's count)
    session_generations: int = 6_000  # generations one browser session may have computed by its sweeps
    max_live_generations: int = 200  # rows of one live move (prompts per group x groups x samples)


SERVED_LIMITS = ServedLimits()
CLI_HINT = "python -m fairness_core decoding --grid ... (see docs/decoding.md)"


def check_served(n_configs: int, generations: int, used_by_session: int = 0, live: bool = False,
                 limits: ServedLimits = SERVED_LIMITS) -> None:
    """Refuse, in one sentence, a request above a served app's per-session caps, pointing to the teacher's CLI."""
    if live:
        if generations > limits.max_live_generations:
            raise LimitError(f"{generations:,} generations in one live move is above this server's classroom cap of "
                             f"{limits.max_live_generations:,}; lower the prompts per group or samples, or use a sweep")
        return
    checks = [(n_configs, limits.max_configs, "decoding configurations in one sweep"),
              (generations, limits.max_generations, "generations in one sweep"),
              (used_by_session + generations, limits.session_generations, "generations in this session's sweeps")]
    for value, limit, what in checks:
        if value > limit:
            raise LimitError(f"{value:,} {what} is above this server's classroom cap of {limit:,}; ask the teacher "
                             f"to run it with the command line ({CLI_HINT})")


def check_model_source(model: str) -> str:
    """A preset key, a local model directory, a .gguf file or a Hugging Face id (owner/name); else one sentence."""
    from fairness_core.models.presets import PRESETS

    text = (model or "").strip()
    if not text:
        raise RequestError("choose a generator: a preset, a Hugging Face id (owner/name) or a local model folder")
    if text in {preset.key for preset in PRESETS}:
        return text
    if is_endpoint(text):
        try:
            Endpoint.parse(text)
        except ValueError as error:
            raise RequestError(str(error)) from None
        return text
    path = Path(text).expanduser()
    looks_like_path = text.startswith(("/", ".", "~")) or "\\" in text or text.count("/") > 1
    if text.endswith(".gguf"):
        if not path.is_file():
            raise RequestError(f"the GGUF file {text} does not exist")
        return text
    if path.exists():
        if not path.is_dir():
            raise RequestError(f"{text} is a file, not a model folder (a folder with config.json) or a .gguf file")
        if not (path / "config.json").is_file():
            raise RequestError(f"the folder {text} holds no config.json, so it is not a Hugging Face model folder")
        return text
    if looks_like_path:
        raise RequestError(f"the model folder {text} does not exist")
    if not _HUB_ID.match(text) or ".." in text:
        raise RequestError(f"{text[:80]!r} is neither a preset, a local model folder nor a Hugging Face id "
                           "(owner/name, letters, digits, '-', '_' and '.')")
    return text


def check_threshold(value: float, what: str = "the negative-sentiment threshold") -> float:
    value = float(value)
    if not math.isfinite(value) or not -1.0 <= value <= 1.0:
        raise RequestError(f"{what} must be a number between -1 and 1 (VADER's compound range); got {value}")
    return value


def default_scorers(model: str, quality_scorer: str | None = "same", regard_model: str | None = "regard-v3",
                    regard_negative_label: str | None = None) -> tuple[tuple[str, dict[str, Any]], ...]:
    """The page's and CLI's default scorers (as registry entries): sentiment, offensive language, the Jigsaw
    toxicity classifier (offline, identity-sensitive; it reads the continuation only), negative words, the
    quality proxy (under the generator unless another model is named) and regard when asked."""
    scorers: list[tuple[str, dict[str, Any]]] = [("vader", {}), ("offensive", {}), ("jigsaw-toxicity", {}),
                                                 ("negative_words", {})]
    if quality_scorer:
        scorers.append(("quality_logprob", {"model": model if quality_scorer == "same" else quality_scorer}))
    if regard_model:
        options: dict[str, Any] = {"model": regard_model}
        if regard_negative_label:
            options["negative_label"] = regard_negative_label
        scorers.append(("regard", options))
    return tuple(scorers)


def parse_configs(grid: str, max_new_tokens: int) -> tuple[DecodingConfig, ...]:
    try:
        return tuple(expand_grid(parse_grid(grid), max_new_tokens))
    except (GridError, ValueError) as error:  # ValueError: a DecodingConfig refusing a value (top_k=1e20)
        raise RequestError(str(error)) from None


def load_prompts(spec: str, groups: str | None = None, per_group: int = 20, seed: int = 0) -> PromptSet:
    try:
        prompts = load_prompt_source(spec, per_group=per_group, seed=seed)
        if groups:
            prompts = prompts.only_groups(groups.split(","))
        validate(prompts)
    except PromptError as error:
        raise RequestError(str(error)) from None
    return prompts


def build_request(
    model: str,
    prompts: PromptSet,
    grid: str | tuple[DecodingConfig, ...],
    samples: int = 5,
    max_new_tokens: int = 30,
    seed: int = 0,
    threshold: float = DEFAULT_NEGATIVE_THRESHOLD,
    quantization: str = "none",
    scorers: tuple[tuple[str, dict[str, Any]], ...] | None = None,
    batch_size: int = 96,
    full_length: bool = False,
    n_resamples: int = 1000,
    confirmed: bool = False,
) -> DecodingRequest:
    """Validate plain values (cheap checks only: nothing loads) and return the request."""
    for value, what in ((samples, "samples per prompt"), (max_new_tokens, "max new tokens"),
                        (batch_size, "batch size")):
        if not isinstance(value, int) or value <= 0:
            raise RequestError(f"{what} must be a positive whole number (got {value})")
    if not isinstance(seed, int) or seed < 0:
        raise RequestError(f"the seed must be a whole number >= 0 (got {seed})")
    if not 1 <= n_resamples <= MAX_RESAMPLES:
        raise RequestError(f"bootstrap resamples must be between 1 and {MAX_RESAMPLES:,} (got {n_resamples})")
    model = check_model_source(model)
    threshold = check_threshold(threshold)
    configs = parse_configs(grid, max_new_tokens) if isinstance(grid, str) else tuple(
        DecodingConfig(c.temperature, c.top_k, c.top_p, c.greedy, max_new_tokens) for c in grid)
    if not configs:
        raise RequestError("the decoding grid is empty")
    for config in configs:
        problems = config.problems()
        if problems:
            raise RequestError("; ".join(problems))
    try:
        validate(prompts)
    except PromptError as error:
        raise RequestError(str(error)) from None
    check_limits(len(configs), len(prompts.items), samples, max_new_tokens, confirmed)
    return DecodingRequest(model=model, prompts=prompts, configs=configs, samples=samples,
                           max_new_tokens=max_new_tokens, seed=seed, quantization=quantization,
                           scorers=default_scorers(model) if scorers is None else scorers,
                           thresholds={"negative_sentiment_rate": threshold}, batch_size=batch_size,
                           full_length=full_length, n_resamples=n_resamples)
