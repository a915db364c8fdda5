"""Build and validate a stereotype-benchmark request from plain values (the CLI's flags and the page's widgets call
`build_request`); every problem is one `StereotypeInputError` sentence naming the field, raised before anything
runs or is stored.

The selection is deterministic (a seeded sample) so a repeated request is the same run and is read back from the
store: CrowS-Pairs samples pairs within bias types in proportion to their size; StereoSet samples clusters within
each split; BBQ deals items round-robin over templates (each template's items shuffled), so a small sample covers
as many templates — the unit of its intervals — as it can.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairness_core.stereotypes import data as D

MAX_RESAMPLES = 20_000
#: the page's default selection: answers offline in well under a minute with SmolLM2 on this CPU (docs/stereotypes.md)
DEFAULT_LIMITS = {"crows-pairs": 100, "stereoset": 60, "bbq": 24}
DEFAULT_MODEL = "smollm2-135m-instruct"


class StereotypeInputError(ValueError):
    """Bad input for a stereotype benchmark; the message is one sentence for the user."""


@dataclass(frozen=True)
class StereotypeRequest:
    benchmark: str
    model: str | None  # a model id (preset, hub id, local directory, .gguf); None with predictions
    subset: tuple[str, ...]  # bias types (CrowS-Pairs), splits (StereoSet), categories (BBQ); () = all
    limit: int | None  # pairs / clusters per split / items; None = all
    seed: int = 0
    resamples: int = 1000
    predictions: dict[str, float] | None = None  # "item\tvariant" -> score, imported (`predictions.py`)
    predictions_name: str = ""
    predictions_format: str = ""  # stereoset | lm-eval | bbq-prediction
    items: tuple[Any, ...] = field(default=(), repr=False)  # the selected pairs / clusters / items

    def selection(self) -> dict[str, Any]:
        return {"subset": list(self.subset), "limit": self.limit, "seed": self.seed, "n": len(self.items)}

    def items_hash(self) -> str:
        ids = [getattr(item, "item", None) or item.id for item in self.items]
        return hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16]


def _subset(benchmark: str, subset: str | list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    if subset is None:
        return ()
    names = [s.strip() for s in (subset.split(",") if isinstance(subset, str) else subset) if s.strip()]
    allowed = {"crows-pairs": D.CROWS_BIAS_TYPES, "stereoset": D.STEREOSET_SPLITS, "bbq": D.BBQ_CATEGORIES}[benchmark]
    unknown = [n for n in names if n not in allowed]
    if unknown:
        raise StereotypeInputError(f"--subset {unknown[0]!r} is not a {benchmark} subset; choose from "
                                   f"{', '.join(allowed)}")
    return tuple(dict.fromkeys(names))


def _stratified(keys: list[str], limit: int | None, seed: int) -> list[int]:
    """Indices of a seeded sample of `limit` rows, proportional to each key's size (at least one per key while the
    limit allows), in the data's order."""
    if limit is None or limit >= len(keys):
        return list(range(len(keys)))
    rng = np.random.default_rng(seed)
    by_key: dict[str, list[int]] = {}
    for index, key in enumerate(keys):
        by_key.setdefault(key, []).append(index)
    share = {k: limit * len(v) / len(keys) for k, v in by_key.items()}
    quotas = {k: max(1, int(share[k])) for k in by_key}
    while sum(quotas.values()) > limit:  # the minimum of one can overshoot: trim the largest
        largest = max(quotas, key=lambda k: (quotas[k], k))
        quotas[largest] -= 1
    while sum(quotas.values()) < limit:  # largest remainder first, never past a key's size
        open_keys = [k for k in by_key if quotas[k] < len(by_key[k])]
        quotas[max(open_keys, key=lambda k: (share[k] - quotas[k], k))] += 1
    chosen: list[int] = []
    for key, indices in by_key.items():
        chosen += list(rng.choice(indices, size=min(quotas[key], len(indices)), replace=False))
    return sorted(int(i) for i in chosen)


def _round_robin(items: list[D.BBQItem], limit: int | None, seed: int) -> list[D.BBQItem]:
    if limit is None or limit >= len(items):
        return items
    rng = np.random.default_rng(seed)
    by_template: dict[str, list[D.BBQItem]] = {}
    for item in items:
        by_template.setdefault(item.template, []).append(item)
    queues = [list(rng.permutation(len(v))) for v in by_template.values()]
    templates = list(by_template.values())
    order = list(rng.permutation(len(templates)))
    chosen: list[D.BBQItem] = []
    while len(chosen) < limit:
        for t in order:
            if queues[t] and len(chosen) < limit:
                chosen.append(templates[t][int(queues[t].pop())])
    return sorted(chosen, key=lambda i: (D.BBQ_CATEGORIES.index(i.category), i.example_id))


def select_items(benchmark: str, subset: tuple[str, ...], limit: int | None, seed: int) -> tuple[Any, ...]:
    """The pairs, clusters or items a request scores."""
    if benchmark == "crows-pairs":
        pairs = [p for p in D.crows_pairs() if not subset or p.bias_type in subset]
        return tuple(pairs[i] for i in _stratified([p.bias_type for p in pairs], limit, seed))
    if benchmark == "stereoset":
        clusters: list[D.StereoCluster] = []
        for split in subset or D.STEREOSET_SPLITS:
            part = [c for c in D.stereoset() if c.split == split]
            clusters += [part[i] for i in _stratified([c.domain for c in part], limit, seed)]
        return tuple(clusters)
    items = [item for category in (subset or D.BBQ_CATEGORIES) for item in D.bbq(category)]
    return tuple(_round_robin(items, limit, seed))


def build_request(benchmark: str, model: str | None = DEFAULT_MODEL, subset: str | list[str] | None = None,
                  limit: int | None = None, seed: int = 0, resamples: int = 1000,
                  predictions: bytes | None = None, predictions_name: str = "predictions") -> StereotypeRequest:
    """A validated request. `predictions` are bytes (the page's upload, the CLI's file read by the command), never
    a path: a visitor of the served app cannot name a server file."""
    if benchmark not in D.BENCHMARKS:
        raise StereotypeInputError(f"BENCHMARK {benchmark!r} is not one of {', '.join(D.BENCHMARKS)}")
    chosen = _subset(benchmark, subset)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise StereotypeInputError(f"--limit must be a whole number of at least 1 (got {limit!r})")
    if not isinstance(resamples, int) or not 0 <= resamples <= MAX_RESAMPLES:
        raise StereotypeInputError(f"--resamples must be between 0 and {MAX_RESAMPLES:,} (got {resamples!r})")
    if not isinstance(seed, int) or seed < 0:
        raise StereotypeInputError(f"--seed must be a whole number of 0 or more (got {seed!r})")
    if predictions is not None and model is not None:
        raise StereotypeInputError("give --model or --predictions, not both")
    if predictions is None and (model is None or not str(model).strip()):
        raise StereotypeInputError("--model is empty; give a preset key, a hub id, a local directory or a .gguf file")
    try:
        items = select_items(benchmark, chosen, limit, seed)
    except D.BenchmarkDataError as error:
        raise StereotypeInputError(str(error)) from None
    scores, fmt = None, ""
    if predictions is not None:
        from fairness_core.stereotypes.predictions import PredictionsError, parse_predictions

        try:
            scores, fmt = parse_predictions(benchmark, predictions, items, predictions_name or "predictions")
        except PredictionsError as error:
            raise StereotypeInputError(str(error)) from None
    return StereotypeRequest(benchmark, None if predictions is not None else str(model).strip(), chosen, limit,
                             seed, resamples, scores, predictions_name if predictions is not None else "", fmt,
                             items)
