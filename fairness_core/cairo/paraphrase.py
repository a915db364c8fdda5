"""Paraphrase a metric's prompts with a causal/chat LM, as the paper did (Zayed et al. 2024, Appendix A.4).

Prompts of the paper: chat models get "Paraphrase each of the following while not writing the original
sentences: <prompt>"; completion models get "<prompt> can be paraphrased as". K paraphrase sets per
model = K samples per prompt (sample j of every prompt forms set j). Decoding defaults to the paper's
Llama-2/Mistral setting (temperature 0.6, top-p 0.9).

Generation goes through `run_generation` (stored, resumable; the instruction prompt is the stored
prompt), so provenance — model, decoding, seed, sample, the exact instruction, the raw output, the
run id — is kept per paraphrase. A paraphrase is cleaned (first line, list numbering and quotes
removed) and dropped when it is empty, degenerate (`data.DEGENERATE_RULE`: "Mmmmmm", a single word, a fill-in
blank, talk about the task), no longer names the subgroup (HONEST's identity noun, the BOLD person's name, the
religion) or copies the original; drops are counted per reason. A dropped slot stays empty, so sets
stay aligned with the originals (the pipeline skips empty prompts and counts them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from fairness_core.cairo.data import ORIGINAL, ReleasedMetric, degenerate_reason, load_metric, sample_indices
from fairness_core.data.prompts import PromptItem, PromptSet
from fairness_core.models.interfaces import DecodingConfig

CHAT_INSTRUCTION = "Paraphrase each of the following while not writing the original sentences: {prompt}"
COMPLETION_INSTRUCTION = "{prompt} can be paraphrased as"
STYLES = ("chat", "completion")
PAPER_DECODING = DecodingConfig(temperature=0.6, top_p=0.9)
_NUMBERING = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s*")


def instruction(prompt: str, style: str) -> str:
    template = CHAT_INSTRUCTION if style == "chat" else COMPLETION_INSTRUCTION
    return template.format(prompt=" ".join(prompt.split()))


def clean(raw: str) -> str:
    """The paraphrase in a raw output: first non-empty line, without list numbering or wrapping quotes."""
    for line in raw.strip().splitlines():
        line = _NUMBERING.sub("", line).strip().strip('"“”').strip()
        if line.lower().startswith(("here", "sure")) and line.endswith(":"):
            continue  # "Here are the paraphrases:" preambles of chat models
        if line:
            return line
    return ""


def names_subgroup(text: str, terms: Sequence[str]) -> bool:
    """Does `text` still name the subgroup? Any term as a word prefix (`jew` matches `Jewish`)."""
    if not terms:
        return True
    words = re.findall(r"[a-z0-9']+", text.lower())
    return any(word.startswith(term.lower()) for term in terms for word in words)


@dataclass(frozen=True)
class ParaphraseRequest:
    model: str
    metric: str
    style: str = "chat"
    k: int = 2
    decoding: DecodingConfig = PAPER_DECODING
    max_new_tokens: int = 40
    per_subgroup: int | None = 5
    sample_seed: int = 0
    seed: int = 0
    batch_size: int = 32

    def problems(self) -> list[str]:
        found = []
        if self.style not in STYLES:
            found.append(f"style must be chat or completion (got {self.style!r})")
        if self.k < 1:
            found.append(f"paraphrase sets per model must be at least 1 (got {self.k})")
        if self.max_new_tokens < 1:
            found.append(f"max new tokens must be positive (got {self.max_new_tokens})")
        return found


@dataclass
class ParaphraseResult:
    metric: str
    sets: dict[str, list[str]]  # set name -> texts aligned with the metric's originals ("" = none)
    provenance: pd.DataFrame  # one row per paraphrase with everything that made it
    dropped: dict[str, int] = field(default_factory=dict)  # reason -> count
    run_ids: list[str] = field(default_factory=list)
    status: str = "complete"


def set_label(model: str, sample: int) -> str:
    from fairness_core.models.endpoint import Endpoint, is_endpoint

    if is_endpoint(model):  # an OpenAI-compatible endpoint: the served model's name, not the URL
        model = Endpoint.parse(model).model
    short = model.rstrip("/").split("/")[-1]
    return f"{short} (here) #{sample + 1}"


def run_paraphrase(request: ParaphraseRequest, store: Any, on_progress: Callable[[Any], None] | None = None,
                   cancel: Any = None, executor: Any = None) -> ParaphraseResult:
    """Generate K paraphrases of the sampled originals, clean and filter them, keep provenance."""
    from fairness_core.generation.systems import System
    from fairness_core.generation.task import GenerationRequest, run_generation

    problems = request.problems()
    if problems:
        raise ValueError(problems[0])
    metric: ReleasedMetric = load_metric(request.metric)
    chosen = sample_indices(metric, request.per_subgroup, request.sample_seed)
    items = tuple(PromptItem(f"para|{metric.name}|{i}", metric.subgroups[i], metric.family,
                             instruction(metric.sets[ORIGINAL][i], request.style),
                             source=" ".join(metric.sets[ORIGINAL][i].split())) for i in chosen)
    system = System(request.model, request.decoding)
    generation = GenerationRequest(systems=(system,), prompts=PromptSet(f"paraphrase {metric.name}", items),
                                   samples=request.k, seeds=(request.seed,), max_new_tokens=request.max_new_tokens,
                                   mode="chat" if request.style == "chat" else "continue",
                                   batch_size=request.batch_size)
    outcome = run_generation(generation, store, on_progress=on_progress, cancel=cancel, executor=executor)
    index_of = {f"para|{metric.name}|{i}": i for i in chosen}
    sets = {set_label(request.model, j): [""] * metric.n for j in range(request.k)}
    rows = []
    dropped: dict[str, int] = {}
    for record in outcome.generations.to_dict("records"):
        i = index_of[record["prompt_id"]]
        text = clean(record["raw"])
        reason = ""
        if not text:
            reason = "empty output"
        elif degenerate_reason(text) is not None:
            reason = f"degenerate: {degenerate_reason(text)}"
        elif not names_subgroup(text, metric.terms[i]):
            reason = "subgroup term dropped"
        elif " ".join(text.lower().split()) == " ".join(metric.sets[ORIGINAL][i].lower().split()):
            reason = "copied the original"
        if reason:
            dropped[reason] = dropped.get(reason, 0) + 1
        else:
            sets[set_label(request.model, int(record["sample"]))][i] = text
        rows.append({"index": i, "set": set_label(request.model, int(record["sample"])), "subgroup": record["group"],
                     "original": metric.sets[ORIGINAL][i].strip(), "paraphrase": text, "kept": not reason,
                     "reason": reason or "kept", "terms": ", ".join(metric.terms[i]), "model": request.model,
                     "system": record["system_name"], "style": request.style, "seed": int(record["seed"]),
                     "sample": int(record["sample"]), "instruction": record["prompt"], "raw": record["raw"],
                     "generation_id": record["generation_id"], "run_id": record["run_id"]})
    provenance = pd.DataFrame(rows)
    return ParaphraseResult(metric.name, sets, provenance, dropped, outcome.run_ids, outcome.status)
