"""The `cairo run` pipeline: systems × prompt sets × scorer → generations (stored) → Eq. 1 bias table → search.

All generation goes through `fairness_core.generation.run_generation` as one request (every set of every
metric in one prompt set), so an interrupted run resumes, a repeated one is read back from the store,
and identical prompt texts (two paraphrase lists that agree) are generated once. The bias table is a
deterministic aggregation of the stored generations (Eq. 1 per system × metric × set, `bias.py`).

Prompt split (held-out r by prompts): the sampled original indices of each metric are split in two
halves, stratified by subgroup with a seeded shuffle; the combinations are chosen on the bias table of
half 1 and their r is reported on half 2 (the same systems, other prompts).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from fairness_core.cairo.bias import bias_table
from fairness_core.cairo.data import METRICS, ORIGINAL, CairoDataError, load_metric, prompt_set, sample_indices
from fairness_core.data.prompts import PromptItem, PromptSet
from fairness_core.data.quoting import quoted
from fairness_core.generation.systems import System
from fairness_core.models.interfaces import DecodingConfig

KNOBS = ("top_p", "top_k", "temperature")


#: new tokens per continuation (the paper: 25); a bound, so a typo of 100000 cannot run for days
MAX_NEW_TOKENS = 512


class CairoInputError(ValueError):
    """Bad pipeline input found before any work starts; one sentence."""


def parse_system(text: str) -> System:
    """`MODEL@knob=v,knob=v` or `MODEL@greedy` -> System, exactly as written: a knob not written stays at
    DecodingConfig's default (top_p and top_k off, temperature 1; `pipeline_manifest` shows all three), so
    `MODEL@top_k=20,temperature=1.3` is top-k sampling with no nucleus cut, and a bare `MODEL` is plain sampling."""
    model, _, knobs = text.strip().partition("@")
    if not model.strip():
        raise CairoInputError(f"system {quoted(text)} has no model (write MODEL@top_p=0.9)")
    values: dict[str, Any] = {}
    quantization = "none"
    greedy = False
    for part in [p.strip() for p in knobs.split(",") if p.strip()]:
        if part == "greedy":
            greedy = True
            continue
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq:
            raise CairoInputError(f"system {quoted(text)}: {quoted(part)} is not knob=value")
        if key == "quantization":
            quantization = value.strip()
            continue
        if key not in KNOBS:
            raise CairoInputError(f"system {quoted(text)}: unknown knob {quoted(key)}; knobs: {', '.join(KNOBS)}, "
                                  "greedy, quantization")
        try:
            values[key] = int(value) if key == "top_k" else float(value)
        except ValueError:
            raise CairoInputError(f"system {quoted(text)}: {key} {quoted(value)} is not a number") from None
    decoding = DecodingConfig(greedy=True) if greedy else DecodingConfig(**values)
    problems = decoding.problems()
    if problems:
        raise CairoInputError(f"system {quoted(text)}: {problems[0]}")
    try:
        return System(model.strip(), decoding, quantization=quantization)
    except ValueError as error:
        raise CairoInputError(str(error)) from None


def parse_seeds(text: str) -> tuple[int, ...]:
    """Comma-separated whole numbers ("0,1,2"); CairoInputError quoting the text for anything else (Python's own
    "invalid literal for int()" was what the page said)."""
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise CairoInputError(f"seeds must be comma-separated whole numbers, e.g. 0,1,2 (got {quoted(text)})") from None


def parse_systems(text: str) -> tuple[System, ...]:
    systems = tuple(parse_system(part) for part in text.split(";") if part.strip())
    if len(systems) < 3:
        raise CairoInputError(f"give at least 3 systems separated by ';' (got {len(systems)}); a correlation across "
                              "systems needs 3, and few similar systems are weak evidence")
    names = [s.name for s in systems]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise CairoInputError(f"system {duplicated[0]} is listed twice")
    return systems


@dataclass(frozen=True)
class RunRequest:
    systems: tuple[System, ...]
    metrics: tuple[str, ...] = ("BOLD gender", "HONEST gender (valid)")
    n_sets: int | None = None  # the original plus N paraphrase sets (None: all)
    #: which N: "round-robin" takes them in turn across paraphrasing models (every model contributes),
    #: "file" in the released file's order
    set_order: str = "round-robin"
    per_subgroup: int | None = 10  # original prompts per subgroup (None: all)
    scorer: tuple[str, dict] = ("jigsaw-toxicity", {})  # the offline identity-sensitive judge (issue 29)
    seeds: tuple[int, ...] = (0,)
    max_new_tokens: int = 25
    sample_seed: int = 0
    batch_size: int = 64
    #: user-supplied sets: metric -> set name -> texts aligned with the metric's originals (e.g. paraphrases
    #: made on the page); an empty text is skipped
    extra_sets: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    def problems(self) -> list[str]:
        found = []
        if len(self.metrics) < 2:
            found.append("choose at least two metrics to correlate")
        unknown = [m for m in self.metrics if m not in METRICS]
        if unknown:
            found.append(f"unknown metric {unknown[0]!r}; choose from {', '.join(METRICS)}")
        if self.set_order not in ("round-robin", "file"):
            found.append(f"set order must be round-robin or file (got {self.set_order!r})")
        if self.n_sets is not None and self.n_sets < 1:
            found.append(f"the number of paraphrase sets must be at least 1 (got {self.n_sets})")
        if self.per_subgroup is not None and self.per_subgroup < 2:
            found.append(f"prompts per subgroup must be at least 2 (got {self.per_subgroup}); the prompt split needs "
                         "one per half")
        if not self.seeds:
            found.append("give at least one seed")
        if not 1 <= self.max_new_tokens <= MAX_NEW_TOKENS:
            found.append(f"new tokens per continuation must be between 1 and {MAX_NEW_TOKENS} (got "
                         f"{self.max_new_tokens:,}; the paper uses 25)")
        return found


def order_sets(names: Sequence[str], order: str = "round-robin") -> list[str]:
    """Paraphrase sets in file order, or in turn across their paraphrasing models (M1 #1, M2 #1, M1 #2, …)."""
    if order == "file":
        return list(names)
    from fairness_core.cairo.data import paraphraser_of

    queues: dict[str, list[str]] = {}
    for name in names:
        queues.setdefault(paraphraser_of(name), []).append(name)
    ordered: list[str] = []
    while any(queues.values()):
        for queue in queues.values():
            if queue:
                ordered.append(queue.pop(0))
    return ordered


@dataclass
class PlannedSets:
    prompts: PromptSet
    where: dict[str, tuple[str, str, int]]  # prompt_id -> (metric, set name, original index)
    indices: dict[str, list[int]]  # metric -> sampled original indices
    notes: list[str]


def plan_sets(request: RunRequest) -> PlannedSets:
    """Every chosen set of every metric as one PromptSet (ids `metric|set|index`), same indices in each set."""
    problems = request.problems()
    if problems:
        raise CairoInputError(problems[0])
    items: list[PromptItem] = []
    where: dict[str, tuple[str, str, int]] = {}
    indices: dict[str, list[int]] = {}
    notes: list[str] = []
    for name in request.metrics:
        metric = load_metric(name)
        extra = request.extra_sets.get(name, {})
        for set_label, texts in extra.items():
            if len(texts) != metric.n:
                raise CairoInputError(f"set {set_label!r} of {name} has {len(texts)} prompts for {metric.n} originals")
        chosen = sample_indices(metric, request.per_subgroup, request.sample_seed)
        indices[name] = chosen
        names = [ORIGINAL, *order_sets([n for n in metric.sets if n != ORIGINAL], request.set_order)]
        if request.n_sets is not None:
            names = names[: 1 + request.n_sets]
        all_sets = {n: metric.sets[n] for n in names} | extra
        blanks = 0
        for set_label, texts in all_sets.items():
            base = prompt_set(metric, ORIGINAL, chosen)
            for item, index in zip(base.items, chosen, strict=True):
                text = " ".join(str(texts[index]).split())
                if not text:
                    blanks += 1
                    continue
                prompt_id = f"{name}|{set_label}|{index}"
                items.append(PromptItem(prompt_id, item.group, item.family, text, source=item.text, redact=item.redact))
                where[prompt_id] = (name, set_label, index)
        # slots DEGENERATE_RULE emptied when the data was read are counted as dropped, not again as empty
        degenerate = sum(index in metric.degenerate.get(set_label, {}) for set_label in all_sets for index in chosen)
        if degenerate:
            notes.append(f"{name}: {degenerate} degenerate paraphrase(s) dropped (rule: docs/cairo.md)")
        if blanks > degenerate:
            notes.append(f"{name}: {blanks - degenerate} empty paraphrase(s) skipped")
        notes.append(f"{name}: {len(all_sets)} prompt sets × {len(chosen)} prompts "
                     f"({request.per_subgroup or 'all'} per subgroup, sample seed {request.sample_seed})")
    return PlannedSets(PromptSet("CAIRO " + " + ".join(request.metrics), tuple(items)), where, indices, notes)


def generation_request(request: RunRequest, planned: PlannedSets) -> Any:
    from fairness_core.generation.task import GenerationRequest

    return GenerationRequest(systems=request.systems, prompts=planned.prompts,
                             scorers=((request.scorer[0], dict(request.scorer[1])),), samples=1,
                             seeds=tuple(request.seeds), max_new_tokens=request.max_new_tokens,
                             batch_size=request.batch_size)


def split_halves(planned: PlannedSets, request: RunRequest, seed: int = 0) -> dict[str, tuple[set[int], set[int]]]:
    """Per metric: original indices split in two halves, stratified by subgroup (seeded)."""
    halves = {}
    for name, chosen in planned.indices.items():
        metric = load_metric(name)
        first, second = set(), set()
        by_group: dict[str, list[int]] = {}
        for index in chosen:
            by_group.setdefault(metric.subgroups[index], []).append(index)
        for group, members in sorted(by_group.items()):
            random.Random(f"split:{seed}:{name}:{group}").shuffle(members)
            first |= set(members[::2])
            second |= set(members[1::2])
        halves[name] = (first, second)
    return halves


@dataclass
class PipelineOutcome:
    bias_table: pd.DataFrame
    generations: pd.DataFrame
    run_ids: list[str]
    status: str
    notes: list[str]
    split_rows: list[dict[str, Any]]
    value_column: str
    indices: dict[str, list[int]] = field(default_factory=dict)  # metric -> original indices used


def annotate(generations: pd.DataFrame, planned: PlannedSets) -> pd.DataFrame:
    frame = generations.copy()
    located = frame["prompt_id"].map(planned.where)
    frame["metric"] = located.map(lambda w: w[0])
    frame["prompt_set"] = located.map(lambda w: w[1])
    frame["orig_index"] = located.map(lambda w: w[2])
    return frame


def prompt_split_rows(frame: pd.DataFrame, value: str,
                      halves: dict[str, tuple[set[int], set[int]]]) -> list[dict[str, Any]]:
    """Select on half 1, evaluate on half 2, per metric pair and size."""
    from fairness_core.cairo.request import BiasTableError, metric_pairs, read_bias_table
    from fairness_core.cairo.search import split_r

    tables = []
    for half in (0, 1):
        mask = [int(i) in halves[m][half] for m, i in zip(frame["metric"], frame["orig_index"], strict=True)]
        tables.append(bias_table(frame[mask], value))
    try:
        first, second = (read_bias_table(t[["system", "metric", "prompt_set", "bias", "n_prompts"]], f"half {k + 1}")
                         for k, t in enumerate(tables))
    except BiasTableError as error:
        return [{"note": str(error)}]
    rows = []
    for a, b in metric_pairs(first):
        try:
            sa1, sb1, systems = first.pair(a, b)
            sa2, sb2, _ = second.pair(a, b)
        except BiasTableError as error:
            rows.append({"metric_a": a, "metric_b": b, "note": str(error)})
            continue
        for size in range(1, 2 + min(sa1.n_others, sb1.n_others)):
            selected, heldout = split_r(sa1, sb1, sa2, sb2, size)
            rows.append({"metric_a": a, "metric_b": b, "size": size, "n_systems": len(systems),
                         "r_selection_half": selected, "r_heldout_half": heldout})
    return rows


def run_pipeline(request: RunRequest, store: Any, on_progress: Callable[[Any], None] | None = None,
                 cancel: Any = None, executor: Any = None) -> PipelineOutcome:
    """Generate (resumably, through the store), score, and aggregate into the Eq. 1 bias table."""
    from fairness_core.generation.task import GenerationInputError, run_generation

    try:
        planned = plan_sets(request)
    except CairoDataError as error:
        raise CairoInputError(str(error)) from None
    generation = generation_request(request, planned)
    try:
        outcome = run_generation(generation, store, on_progress=on_progress, cancel=cancel, executor=executor)
    except GenerationInputError as error:
        raise CairoInputError(str(error)) from None
    value = outcome.plan.scorer_columns[0][0]
    frame = annotate(outcome.generations, planned)
    if outcome.status != "complete" or frame.empty or value not in frame:
        return PipelineOutcome(pd.DataFrame(), frame, outcome.run_ids, outcome.status, planned.notes, [], value,
                               planned.indices)
    table = bias_table(frame, value)
    notes = list(planned.notes)
    skipped = int(table["n_skipped"].sum())
    if skipped:
        notes.append(f"{skipped} generation(s) had no score (NaN) and were skipped")
    split = prompt_split_rows(frame, value, split_halves(planned, request))
    return PipelineOutcome(table, frame, outcome.run_ids, outcome.status, notes, split, value, planned.indices)


def pipeline_manifest(request: RunRequest) -> dict[str, Any]:
    """What determines a pipeline's bias table (for the page's job key and the shipped demo's provenance)."""
    from fairness_core.generation.systems import decoding_record

    return {"systems": [s.name for s in request.systems],
            # every knob of every system, the ones the user did not write at their defaults (shown, not added)
            "decoding": {s.name: decoding_record(s.decoding) for s in request.systems},
            "metrics": list(request.metrics), "n_sets": request.n_sets,
            "set_order": request.set_order,
            "per_subgroup": request.per_subgroup, "scorer": [request.scorer[0], dict(request.scorer[1])],
            "seeds": list(request.seeds), "max_new_tokens": request.max_new_tokens,
            "sample_seed": request.sample_seed, "extra_sets": {m: sorted(v) for m, v in request.extra_sets.items()}}


def systems_text(systems: Sequence[System]) -> str:
    return "; ".join(s.name for s in systems)
