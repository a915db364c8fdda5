"""Scoring a benchmark's texts with a causal LM as one stored job (kind "stereotype-scores"): shards of (context,
continuation) requests, each answered by `CausalLM.loglikelihood` (`models/lm_scoring.py`: a shared context runs
once), so a repeated request is read back from the run store and an interrupted one resumes.

The protocols (the requests a benchmark makes; `PROTOCOLS` is recorded in every manifest):
- CrowS-Pairs, lm-evaluation-harness `crows_pairs` for causal LMs: the summed log-probability of " " + sentence
  after the tokenizer's BOS token alone (EOS where it has none: `HFCausalLM.scoring_ids` puts it there).
- StereoSet intrasentence, the released GPT-2 rule (`eval_generative_models.py`): the sentence after BOS, scored by
  its mean token log-probability (the log of their geometric mean of token probabilities: the same order);
  intersentence: log p(" " + sentence | context) per token (a deviation: their GPT-2 used a trained
  next-sentence head, which a plain LM does not have).
- BBQ, lm-evaluation-harness's multiple-choice rule: each answer's summed log-probability as " " + answer after
  "{context}\n\nQ: {question}\nA:"; the predicted answer is the most likely of the three (the "unknown" option is
  scored like any other answer, by its own wording).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.stereotypes import data as D
from fairness_core.stereotypes.request import StereotypeInputError, StereotypeRequest

KIND = "stereotype-scores"
JOB_KIND = "stereotypes"
SCHEMA = 1
SHARD = 96  # texts per shard: a few seconds of SmolLM2 on this CPU, so progress moves and Cancel takes effect
IMPORTED_SHARD = 8192  # imported scores per shard: no model runs, so one write per few thousand
PROTOCOLS = {
    "crows-pairs": {"context": "", "continuation": " {sentence}", "score": "sum of token log-probs after BOS"},
    "stereoset": {"intrasentence": {"context": "", "continuation": "{sentence}"},
                  "intersentence": {"context": "{context}", "continuation": " {sentence}"},
                  "score": "mean token log-prob"},
    "bbq": {"context": "{context}\n\nQ: {question}\nA:", "continuation": " {answer}",
            "score": "sum of token log-probs; prediction = argmax"},
}
#: CrowS-Pairs with a masked LM, as its paper scores it (`models.masked_lm`): the tokens both sentences share,
#: each masked in turn, their log-probabilities summed
MASKED_PROTOCOL = {"context": "", "continuation": "{sentence}",
                   "score": "pseudo-log-likelihood of the unmodified tokens (Nangia et al. 2020), each masked in turn"}
MASKED_PROTOCOL_TEXT = ("each sentence scored by the pseudo-log-likelihood of the tokens both sentences share, each "
                        "masked in turn and scored given the rest ([CLS]/[SEP] and the group words not scored; "
                        "Nangia et al. 2020's metric for masked LMs)")
#: the protocols in words (the page's caption)
PROTOCOL_TEXT = {
    "crows-pairs": "each sentence scored by its summed log-probability of ' ' + sentence after BOS alone "
                   "(lm-evaluation-harness, crows_pairs)",
    "stereoset": "each sentence scored by its mean token log-probability: after BOS (intrasentence, StereoSet's "
                 "GPT-2 rule) or after the context (intersentence)",
    "bbq": "each answer scored by its summed log-probability as ' ' + answer after '{context}\n\nQ: {question}\nA:'; "
           "the most likely answer is the model's",
}
#: seconds per token of work (`stereotype_work`'s unit: the texts' tokens, a context shared by several answers
#: counted once) for SmolLM2-135M (fp32) on the quiet 2-core reference machine, through the packed prefix trie
#: (models/tree_scoring.py), per benchmark: the trie shares more of BBQ's contexts than of CrowS-Pairs' sentences.
#: Measured with the CLI on the quiet machine (load 1.3-1.9, 2026-11-29, round 6's last session; docs/stereotypes.md
#: "Speed"): the whole of CrowS-Pairs (54k of this unit: characters / 4, as `stereotype_work` counts; 49,771 real
#: tokens) in 79 s of wall and StereoSet intrasentence (72k) in 74 s, start-up and the model's load included, and a BBQ
#: slice of 600 items (46k) in 66 s, which the earlier figure for BBQ already predicted (65 s); (wall - LOAD_SECONDS)
#: / units. The earlier CrowS-Pairs and StereoSet figures (0.0022, 0.0018)
#: came from CPU seconds at load 5-12 and overstated a quiet machine's time 1.7x.
SECONDS_PER_TOKEN = {"crows-pairs": 0.0014, "stereoset": 0.0010, "bbq": 0.0013}
#: loading the model once (SmolLM2's GGUF is converted on first use, ~45 s, once per machine)
LOAD_SECONDS = 5.0
CHARS_PER_TOKEN = 4.0
#: an estimate, not measured here (no GPU on this machine): SmolLM2-135M's linear layers (0.27 GFLOP a token) at
#: ~15 TFLOPS effective on one data-centre GPU in fp32/TF32 with short rows
GPU_TOKENS_PER_S = 50_000
#: an estimate for an endpoint that returns prompt log-probs: one request of `endpoint.LOGLIKELIHOOD_BATCH` texts
#: in ~0.5 s, `max_in_flight` (default 8) at once; the server's own speed decides
ENDPOINT_SECONDS_PER_REQUEST, ENDPOINT_IN_FLIGHT, ENDPOINT_TEXTS_PER_REQUEST = 0.5, 8, 16


def scoring_requests(request: StereotypeRequest) -> list[tuple[str, str, str, str]]:
    """(item id, variant, context, continuation) of every text the benchmark scores, in the data's order."""
    out: list[tuple[str, str, str, str]] = []
    if request.benchmark == "crows-pairs":
        for pair in request.items:
            out += [(pair.item, "more", "", " " + pair.sent_more), (pair.item, "less", "", " " + pair.sent_less)]
    elif request.benchmark == "stereoset":
        for cluster in request.items:
            for label in D.STEREOSET_LABELS:
                sentence_id, sentence = cluster.sentences[label]
                if cluster.split == "intrasentence":
                    out.append((sentence_id, label, "", sentence))
                else:
                    out.append((sentence_id, label, cluster.context, " " + sentence))
    else:
        for item in request.items:
            prompt = f"{item.context}\n\nQ: {item.question}\nA:"
            out += [(item.item, f"ans{k}", prompt, " " + answer) for k, answer in enumerate(item.answers)]
    return out


def uses_masked_lm(request: StereotypeRequest) -> bool:
    """Whether the request's model is a masked LM, scored by pseudo-log-likelihood (CrowS-Pairs only)."""
    from fairness_core.models.presets import is_masked_lm

    return request.predictions is None and bool(request.model) and is_masked_lm(str(request.model))


def score_work(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    """Score one shard: summed log-probability and token count per text (or the imported score as it is)."""
    from fairness_core.jobs import checkpoint

    texts = shard["texts"]
    if "scores" in shard:  # predictions made elsewhere: stored as given
        checkpoint(len(texts), len(texts))
        return [{"item": item, "grp": None, "variant": variant, "metric": "score", "value": float(score),
                 "text": None, "attrs": {}} for (item, variant), score in zip(texts, shard["scores"], strict=True)]
    if shard.get("masked"):  # a pair's two sentences sit together in a shard (SHARD is even)
        model = load_masked_lm(shard["model"])
        sentences: dict[str, dict[str, str]] = {}
        for item, variant, _, continuation in texts:
            sentences.setdefault(item, {})[variant] = continuation.strip()
        items = list(sentences)
        scored = model.pseudo_log_likelihoods([(sentences[i]["more"], sentences[i]["less"]) for i in items],
                                              on_progress=lambda done, total: checkpoint(done, total))
        checkpoint(len(texts), len(texts))
        return [{"item": item, "grp": None, "variant": variant, "metric": "pseudo_logprob", "value": value,
                 "text": sentences[item][variant], "attrs": {}}
                for item, pair in zip(items, scored, strict=True) for variant, value in zip(("more", "less"), pair,
                                                                                        strict=True)]
    model = load_causal_lm(shard["model"])
    contexts, continuations = [t[2] for t in texts], [t[3] for t in texts]
    if model.reports_scoring_progress:
        scored = model.loglikelihood(contexts, continuations, on_progress=checkpoint)
    else:
        scored = model.loglikelihood(contexts, continuations)
    checkpoint(len(texts), len(texts))
    return [{"item": item, "grp": None, "variant": variant, "metric": "logprob", "value": scores.total,
             "text": continuation, "attrs": {"n_tokens": len(scores.logprobs)}}
            for (item, variant, _, continuation), scores in zip(texts, scored, strict=True)]


def load_causal_lm(model: str) -> Any:
    """The causal LM for a model id through the process cache; one sentence when it cannot score texts."""
    return _load_scoring_model(model, "causal-lm", "loglikelihood", " cannot score texts by likelihood")


def load_masked_lm(model: str) -> Any:
    """The masked LM for a model id through the process cache; one sentence when it cannot score pairs."""
    return _load_scoring_model(model, "masked-lm", "pseudo-log-likelihood", "")


def _load_scoring_model(model: str, task: str, capability: str, cannot_words: str) -> Any:
    from fairness_core.models import ModelUnavailableError, load_model, resolve_model

    try:
        loaded = load_model(resolve_model(model, task))
    except (ModelUnavailableError, ValueError) as error:
        raise StereotypeInputError(f"--model {model}: {error}") from None
    why = loaded.cannot(capability)
    if why:
        raise StereotypeInputError(f"--model {model}{cannot_words}: {why}")
    return loaded


def check_lengths(model: Any, texts: list[tuple[str, str, str, str]], name: str) -> None:
    """One sentence when the longest texts (by characters; only they are tokenised) exceed the model's window,
    instead of an index error deep in a batch. Models without a known window (endpoints) are not checked."""
    config = getattr(getattr(model, "model", None), "config", None)
    window = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
    if not isinstance(window, int) or not hasattr(model, "scoring_ids"):
        return
    for item, _, context, continuation in sorted(texts, key=lambda t: -len(t[2]) - len(t[3]))[:20]:
        context_ids, continuation_ids = model.scoring_ids(context, continuation)
        if len(context_ids) + len(continuation_ids) > window:
            raise StereotypeInputError(f"--model {name} takes {window} tokens, but item {item} needs "
                                       f"{len(context_ids) + len(continuation_ids)}; choose a model with a longer "
                                       "context or leave that item out with --subset")


def model_record(request: StereotypeRequest) -> dict[str, Any]:
    if request.predictions is not None:
        digest = hashlib.sha256(json.dumps(request.predictions, sort_keys=True).encode()).hexdigest()[:16]
        return {"predictions": {"name": request.predictions_name, "format": request.predictions_format,
                                "sha256": digest}}
    from fairness_core.models import resolve_model

    try:
        task = "masked-lm" if uses_masked_lm(request) else "causal-lm"
        return {"model": resolve_model(request.model or "", task).to_manifest()}
    except Exception as error:  # an unknown id or a model of another task: the user's input, one sentence
        raise StereotypeInputError(f"--model {request.model}: {error}") from None


def _data_name(request: StereotypeRequest) -> str:
    """What the run scored, as the Run store lists it: "crows-pairs (sample of 100; religion)"."""
    parts = ([f"sample of {request.limit}"] if request.limit is not None else []) + list(request.subset)
    return request.benchmark + (f" ({'; '.join(parts)})" if parts else "")


def score_task(request: StereotypeRequest) -> Any:
    from fairness_core.jobs import Task

    texts = scoring_requests(request)
    masked = uses_masked_lm(request)
    if masked and request.benchmark != "crows-pairs":
        raise StereotypeInputError(f"--model {request.model} is a masked language model, which scores CrowS-Pairs "
                                   f"(its paper's pseudo-log-likelihood); {request.benchmark} is scored by causal "
                                   "LMs here")
    payload = {"schema": SCHEMA, "benchmark": request.benchmark,
               "protocol": MASKED_PROTOCOL if masked else PROTOCOLS[request.benchmark],
               "data": {"name": _data_name(request), "hash": request.items_hash(), "n": len(request.items)},
               "selection": request.selection(),
               **model_record(request)}
    shards = []
    size = SHARD if request.predictions is None else IMPORTED_SHARD
    for start in range(0, len(texts), size):
        part = texts[start:start + size]
        shard: dict[str, Any] = {"texts": [list(t) for t in part]}
        if request.predictions is not None:
            shard = {"texts": [[t[0], t[1]] for t in part],
                     "scores": [request.predictions[f"{t[0]}\t{t[1]}"] for t in part]}
        else:
            shard["model"] = request.model
            if masked:
                shard["masked"] = True
        shards.append(shard)
    return Task(KIND, payload, shards, score_work)


def stereotype_work(request: StereotypeRequest) -> Any:
    """What a request costs (`fairness_core.jobs.estimates.Work`): its scored tokens (a context shared by a BBQ
    item's three answers counted once), plus loading the model."""
    from fairness_core.jobs.estimates import Work

    if request.predictions is not None:
        return Work(JOB_KIND, len(request.items), 1e-4, "items read", 0.5)
    if uses_masked_lm(request):  # a pass of the whole sentence per token it scores: tokens² per sentence
        passes = sum((len(c) / CHARS_PER_TOKEN) ** 2 for _, _, _, c in scoring_requests(request))
        # an estimate at the causal rate per token (not measured on a real masked LM here: none is installed)
        return Work(JOB_KIND, passes, SECONDS_PER_TOKEN["crows-pairs"], "token positions scored", LOAD_SECONDS)
    seen: set[str] = set()
    chars = 0
    for _, _, context, continuation in scoring_requests(request):
        if context not in seen:
            seen.add(context)
            chars += len(context)
        chars += len(continuation)
    return Work(JOB_KIND, chars / CHARS_PER_TOKEN, SECONDS_PER_TOKEN[request.benchmark], "tokens scored",
                LOAD_SECONDS)


def cost_note(request: StereotypeRequest, here_s: float | None = None) -> str:
    """What scoring `request` costs, said before it starts: here (`here_s`, the page's estimate at the machine's
    load now; else the quiet reference machine's), on one GPU and through an endpoint (both estimates)."""
    from fairness_core.jobs import format_seconds as format_duration

    work = stereotype_work(request)
    if request.predictions is not None:
        return f"Reading {len(request.items):,} items' scores from the file: about a second."
    texts = len(scoring_requests(request))
    seconds = work.reference_s if here_s is None else here_s
    where = "here at the machine's load now" if here_s is not None else "here on a quiet 2-core machine"
    gpu = work.units / GPU_TOKENS_PER_S + LOAD_SECONDS
    requests = -(-texts // ENDPOINT_TEXTS_PER_REQUEST)
    endpoint = requests / ENDPOINT_IN_FLIGHT * ENDPOINT_SECONDS_PER_REQUEST
    return (f"{texts:,} texts, ~{work.units:,.0f} tokens: ~{format_duration(seconds)} {where} with SmolLM2-135M "
            f"(measured throughput; a model n times larger takes about n times longer); estimates not measured "
            f"here: ~{format_duration(gpu)} on one GPU, ~{format_duration(endpoint)} through an endpoint "
            f"({requests:,} requests of {ENDPOINT_TEXTS_PER_REQUEST} texts, {ENDPOINT_IN_FLIGHT} at once, at "
            f"~{ENDPOINT_SECONDS_PER_REQUEST} s each).")


@dataclass
class StereotypeResult:
    request: StereotypeRequest
    status: str = "complete"  # complete | cancelled
    run_id: str = ""
    from_cache: bool = False
    items: pd.DataFrame = field(default_factory=pd.DataFrame)  # one row per pair / cluster / BBQ item
    summary: dict[str, Any] = field(default_factory=dict)
    manifest: dict[str, Any] = field(default_factory=dict)  # the stored run's manifest (what determines the numbers)

    @property
    def complete(self) -> bool:
        return self.status == "complete" and bool(self.summary)


def run_stereotypes(request: StereotypeRequest, store: Any, on_progress: Callable[[Any], None] | None = None,
                    cancel: Any = None, executor: Any = None) -> StereotypeResult:
    """Score every text (stored, resumable), then the benchmark's statistics with their intervals."""
    from fairness_core.jobs import run_task

    task = score_task(request)
    if request.predictions is None and store.find_complete(task.manifest) is None:
        # refuse a model that cannot score, or a text past its window, before a run record exists
        if uses_masked_lm(request):
            load_masked_lm(request.model or "")
        else:
            check_lengths(load_causal_lm(request.model or ""), scoring_requests(request), request.model or "")
    outcome = run_task(task, store, on_progress=on_progress, cancel=cancel, executor=executor)
    result = StereotypeResult(request, outcome.status, outcome.run_id, outcome.from_cache,
                              manifest=dict(outcome.run.manifest or {}))
    if outcome.status != "complete":
        return result
    rows = store.rows(outcome.run_id)
    result.items, result.summary = summarise(request, rows)
    return result


def _score_table(rows: pd.DataFrame) -> dict[tuple[str, str], tuple[float, int]]:
    tokens = [a.get("n_tokens", 1) if isinstance(a, dict) else 1 for a in rows["attrs"]]
    return {(i, v): (float(x), int(n)) for i, v, x, n in zip(rows["item"], rows["variant"], rows["value"], tokens,
                                                            strict=True)}


def summarise(request: StereotypeRequest, rows: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The per-item table and the statistics (`stats`) from a run's stored rows."""
    from fairness_core.stereotypes import stats

    scores = _score_table(rows)
    if request.benchmark == "crows-pairs":
        frame = pd.DataFrame([{"item": p.item, "bias_type": p.bias_type, "direction": p.direction,
                               "sent_more": p.sent_more, "sent_less": p.sent_less,
                               "logprob_more": scores[(p.item, "more")][0], "logprob_less": scores[(p.item, "less")][0]}
                              for p in request.items])
        frame["diff"] = frame["logprob_more"] - frame["logprob_less"]
        return frame, stats.crows_summary(frame, request.resamples, request.seed)
    if request.benchmark == "stereoset":
        records = []
        imported = request.predictions is not None
        for c in request.items:
            record = {"id": c.id, "split": c.split, "domain": c.domain, "target": c.target, "context": c.context}
            for label in D.STEREOSET_LABELS:
                sentence_id, sentence = c.sentences[label]
                value, n = scores[(sentence_id, label)]
                record[label] = value if imported else value / max(n, 1)  # mean token log-prob
                record[f"{label}_sentence"] = sentence
            records.append(record)
        frame = pd.DataFrame(records)
        return frame, stats.stereoset_summary(frame, request.resamples, request.seed)
    records = []
    for item in request.items:
        lps = [scores[(item.item, f"ans{k}")][0] for k in range(3)]
        records.append({"item": item.item, "category": item.category, "template": item.template,
                        "condition": item.condition, "polarity": item.polarity, "label_type": item.label_type,
                        "context": item.context, "question": item.question, "ans0": item.answers[0],
                        "ans1": item.answers[1], "ans2": item.answers[2], "label": item.label,
                        "unknown": item.unknown, "target_loc": item.target_loc, "logprob0": lps[0],
                        "logprob1": lps[1], "logprob2": lps[2], "pred": int(np.argmax(lps))})
    frame = pd.DataFrame(records)
    return frame, stats.bbq_summary(frame, request.resamples, request.seed)
