"""LM-based metrics over REALSumm: the model layer's scoring path (models/lm_scoring.py) beside the path it replaced.

Default (a few minutes): the first `--documents` REALSumm documents (24 summaries each), both BARTScore directions
— p(summary | reference) and p(reference | summary) — with SmolLM2-135M-Instruct, on two paths in one process,
alternating over `--repeats` rounds (medians of wall and CPU time, the load average printed with every figure):

Both run under the model layer's thread policy (models/threads.py), so the ratio is the scoring paths'.

* **before**: the code this replaced, kept here verbatim — one padded forward pass over every (context +
  continuation) in length-sorted batches of 8 (BARTScore-LM, DATScore-LM) or 16 (`loglikelihood`: BARTScore with
  the paraphrase prompt, `mitigate evaluate`), full logits and log-softmax at every position;
* **now**: `CausalLMBackbone.score` / `HFCausalLM.loglikelihood` — shared prefixes once, the vocabulary projection
  only at scored positions, token-budget batches.

It prints the work (tokens through the body, positions through the output layer, GFLOP) of each path and the
largest relative difference of the metric's scores (mean token log-prob, entropy-weighted sum) between them.

`--full` (long: run it on a quiet machine): every REALSumm summary with `metric_quality.score_metric` (BARTScore-LM
F, both directions, the entropy and uniform weightings from one pass; `--metric bartscore` for the paraphrase
prompt), the new path only, with its pooled Spearman; `--old-documents N` also times the old path on the first N
documents, to extrapolate. `--threads N` fixes torch's threads (`FAIRNESS_TORCH_THREADS`); by default the model
layer's policy decides from the load.

    .venv/bin/python -m bench.lm_scoring [--documents 2] [--repeats 3] [--metric bartscore-lm|bartscore]
    .venv/bin/python -m bench.lm_scoring --full [--metric bartscore-lm] [--old-documents 4]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

import numpy as np


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min) / {five:.1f} (5 min) on {os.cpu_count()} cores"


# -- the path this replaced, verbatim (translation/backbones.py and models/hf.py before issue 37) ---------------
def before_backbone_score(backbone: Any, requests: list[Any], batch_size: int = 8) -> list[Any]:
    """`CausalLMBackbone.score` as it was: padded batches of 8, full logits, log-softmax everywhere."""
    import torch

    from fairness_core.models.hf import length_sorted_batches
    from fairness_core.models.interfaces import TokenScores
    from fairness_core.translation.backbones import readable_tokens

    hf_model, tokenizer = backbone.model.model, backbone.model.tokenizer
    pairs = [backbone._pair_ids(r) for r in requests]
    results: list[Any] = [None] * len(pairs)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    device = next(hf_model.parameters()).device
    for batch in length_sorted_batches([len(a) + len(b) for a, b in pairs], batch_size):
        sequences = [pairs[i][0] + pairs[i][1] for i in batch]
        width = max(len(s) for s in sequences)
        ids = torch.full((len(batch), width), pad, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for row, sequence in enumerate(sequences):
            ids[row, : len(sequence)] = torch.tensor(sequence)
            mask[row, : len(sequence)] = 1
        with torch.no_grad():
            logits = hf_model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits
        logprobs = torch.log_softmax(logits.float(), dim=-1).cpu()
        for row, index in enumerate(batch):
            context_ids, target_ids = pairs[index]
            start = len(context_ids)
            positions = torch.arange(start - 1, start - 1 + len(target_ids))
            step = logprobs[row, positions]
            picked = step[torch.arange(len(target_ids)), torch.tensor(target_ids)]
            entropy = -(step.exp() * step).nan_to_num(0.0).sum(-1)
            results[index] = TokenScores(tokens=readable_tokens(tokenizer, tokenizer.convert_ids_to_tokens(target_ids)),
                                         logprobs=picked.numpy().astype(np.float64),
                                         entropies=entropy.numpy().astype(np.float64))
    return results


def before_loglikelihood(lm: Any, contexts: list[str], continuations: list[str], batch_size: int = 16) -> list[Any]:
    """`HFCausalLM.loglikelihood`'s model part as it was (BARTScore called it in chunks of 32 pairs)."""
    import torch

    from fairness_core.models.hf import length_sorted_batches
    from fairness_core.models.interfaces import TokenScores

    out: list[Any] = []
    for start in range(0, len(contexts), 32):
        pairs = [lm.scoring_ids(c, t) for c, t in zip(contexts[start:start + 32], continuations[start:start + 32],
                                                      strict=True)]
        results: list[Any] = [None] * len(pairs)
        pad = lm.tokenizer.pad_token_id
        for batch in length_sorted_batches([len(a) + len(b) for a, b in pairs], batch_size):
            sequences = [pairs[i][0] + pairs[i][1] for i in batch]
            width = max(len(s) for s in sequences)
            ids = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, sequence in enumerate(sequences):
                ids[row, : len(sequence)] = torch.tensor(sequence)
                mask[row, : len(sequence)] = 1
            with torch.no_grad():
                logits = lm.model(input_ids=ids, attention_mask=mask).logits
            logprobs = torch.log_softmax(logits.float(), dim=-1).cpu()
            for row, index in enumerate(batch):
                context_ids, continuation_ids = pairs[index]
                positions = torch.arange(len(context_ids) - 1, len(context_ids) - 1 + len(continuation_ids))
                token_lp = logprobs[row, positions, torch.tensor(continuation_ids, dtype=torch.long)]
                results[index] = TokenScores(tokens=lm.tokenizer.convert_ids_to_tokens(continuation_ids),
                                             logprobs=token_lp.numpy().astype(np.float64))
        out += results
    return out


# -- side by side ----------------------------------------------------------------------------------------------
def _work(pairs: list[tuple[list[int], list[int]]], config: Any) -> dict[str, float]:
    """Tokens through the body and positions through the output layer, before and now, and their GFLOP."""
    from fairness_core.models.lm_scoring import _batches, _plan

    hidden, inner, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    kv = hidden * config.num_key_value_heads // config.num_attention_heads
    body_flop = 2 * layers * (2 * hidden * hidden + 2 * hidden * kv + 3 * hidden * inner)
    head_flop = 2 * hidden * config.vocab_size
    before_tokens = sum(len(c) + len(t) for c, t in pairs)
    stems, rows = _plan([(tuple(c), tuple(t)) for c, t in pairs], share=True)
    now_tokens = sum(len(s.ids) for s in stems[:1]) + sum(len(s.ids) - len(stems[0].ids) for s in stems[1:])
    now_tokens += sum(len(batch) * max(len(r.ids) for r in batch) for batch in _batches(rows, 2048))
    scored = sum(len(t) for _, t in pairs)
    return {"before_tokens": before_tokens, "now_tokens": now_tokens, "scored": scored,
            "before_gflop": before_tokens * (body_flop + head_flop) / 1e9,
            "now_gflop": (now_tokens * body_flop + scored * head_flop) / 1e9}


def side_by_side(documents: int, repeats: int, metric: str) -> None:
    from fairness_core import metric_quality as mq
    from fairness_core.metrics.generation import PROMPT
    from fairness_core.models import load_model, resolve_model
    from fairness_core.models.threads import model_threads
    from fairness_core.translation import weights as W
    from fairness_core.translation.backbones import CausalLMBackbone, ScoreRequest

    judgments = mq.load_judgments("realsumm")
    frame = judgments.frame[judgments.frame["item_id"].isin(judgments.items[:documents])]
    lm = load_model(resolve_model("smollm2-135m-instruct", "causal-lm"))
    distinct = sorted(set(zip(frame["reference"], frame["candidate"], strict=True)))
    if metric == "bartscore-lm":
        backbone = CausalLMBackbone(lm)
        requests = [ScoreRequest(r, c, "en", "en") for r, c in distinct] + \
                   [ScoreRequest(c, r, "en", "en") for r, c in distinct]
        pairs = [backbone._pair_ids(r) for r in requests]
        sides = {"before (padded batches of 8, full logits)": lambda: before_backbone_score(backbone, requests),
                 "now (models/lm_scoring.py)": lambda: backbone.score(requests)}

        def figures(scores: list[Any]) -> np.ndarray:
            return np.array([[W.direction_score(s.logprobs, term_weighting=W.UNIFORM),
                              W.direction_score(s.logprobs, s.entropies, W.ENTROPY)] for s in scores])
    else:
        contexts = [PROMPT.format(source=r) for r, _ in distinct] + [PROMPT.format(source=c) for _, c in distinct]
        continuations = [" " + c for _, c in distinct] + [" " + r for r, _ in distinct]
        pairs = [lm.scoring_ids(c, t) for c, t in zip(contexts, continuations, strict=True)]
        sides = {"before (chunks of 32, padded batches of 16)": lambda: before_loglikelihood(lm, contexts,
                                                                                          continuations),
                 "now (models/lm_scoring.py)": lambda: lm.loglikelihood(contexts, continuations)}

        def figures(scores: list[Any]) -> np.ndarray:
            return np.array([[s.mean] for s in scores])
    work = _work(pairs, lm.model.config)
    print(f"{metric} on the first {documents} REALSumm documents: {len(distinct)} summaries x 2 directions = "
          f"{len(pairs)} scored texts; SmolLM2-135M-Instruct; {_load()}", flush=True)
    print(f"  work before: {work['before_tokens']:,} tokens through the body and the output layer "
          f"({work['before_gflop']:,.0f} GFLOP); now: {work['now_tokens']:,} tokens through the body, "
          f"{work['scored']:,} scored positions through the output layer ({work['now_gflop']:,.0f} GFLOP): "
          f"{work['before_gflop'] / work['now_gflop']:.2f}x less", flush=True)
    wall: dict[str, list[float]] = {name: [] for name in sides}
    cpu: dict[str, list[float]] = {name: [] for name in sides}
    outputs: dict[str, np.ndarray] = {}
    for round_number in range(repeats):  # alternate sides so background load hits both alike
        for name, run in sides.items():
            started_wall, started_cpu = time.perf_counter(), time.process_time()
            with model_threads():  # both paths under the same thread policy: this compares the scoring paths
                outputs[name] = figures(run())
            wall[name].append(time.perf_counter() - started_wall)
            cpu[name].append(time.process_time() - started_cpu)
            print(f"    round {round_number + 1} {name:<46} {wall[name][-1]:7.1f} s wall / {cpu[name][-1]:7.1f} s "
                  f"CPU ({_load()})", flush=True)
    before, now = list(sides)
    for name in sides:
        print(f"  {name:<48} median {statistics.median(wall[name]):7.1f} s wall / "
              f"{statistics.median(cpu[name]):7.1f} s CPU")
    ratio = statistics.median(wall[before]) / statistics.median(wall[now])
    cpu_ratio = statistics.median(cpu[before]) / statistics.median(cpu[now])
    relative = np.abs(outputs[now] - outputs[before]) / np.maximum(np.abs(outputs[before]), 1e-12)
    what = "mean token log-prob" + (", entropy-weighted sum" if relative.shape[1] > 1 else "")
    print(f"speed-up now vs before: {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU; largest relative difference of the "
          f"scores {float(relative.max()):.1e} ({what}); {_load()}")
    per_summary = statistics.median(wall[now]) / len(distinct)
    print(f"  now: {per_summary:.2f} s wall per summary (both directions): all 2,400 REALSumm summaries "
          f"~{per_summary * 2260 / 60:.0f} min at this load (2,260 distinct)")


def full_corpus(metric: str, old_documents: int) -> None:
    from fairness_core import metric_quality as mq

    judgments = mq.load_judgments("realsumm")
    print(f"{metric} over all {len(judgments):,} REALSumm summaries (both directions), the model layer's path; "
          f"{_load()}", flush=True)
    built = mq.build_metrics([metric])[0]
    started_wall, started_cpu = time.perf_counter(), time.process_time()
    last = [0.0]

    def progress(done: int, total: int) -> None:
        if time.perf_counter() - last[0] > 60:
            last[0] = time.perf_counter()
            print(f"    {done:,}/{total:,} summaries, {last[0] - started_wall:.0f} s ({_load()})", flush=True)

    scores = mq.score_metric(judgments, built, on_progress=progress)
    wall, cpu = time.perf_counter() - started_wall, time.process_time() - started_cpu
    c = mq.correlate(judgments, scores, n_resamples=1000, seed=0)
    print(f"  {wall:.0f} s wall ({wall / 60:.1f} min), {cpu:.0f} s CPU; pooled Spearman {c.spearman:.3f} "
          f"[{c.ci_low:.3f}, {c.ci_high:.3f}] over {c.n_documents} documents; {_load()}", flush=True)
    if metric == "bartscore-lm":
        uniform = mq.score_metric(judgments, mq.build_metrics(["bartscore-lm"], options={
            "bartscore-lm": {"term_weighting": "uniform"}})[0])  # from the per-process cache: no model pass
        u = mq.correlate(judgments, uniform, n_resamples=1000, seed=0)
        print(f"  term_weighting=uniform (same pass): pooled Spearman {u.spearman:.3f} [{u.ci_low:.3f}, "
              f"{u.ci_high:.3f}]")
    if old_documents:
        side_by_side(old_documents, 1, metric)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=2, help="REALSumm documents side by side (24 summaries each)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--metric", choices=("bartscore-lm", "bartscore"), default="bartscore-lm")
    parser.add_argument("--full", action="store_true", help="every REALSumm summary, the new path (long)")
    parser.add_argument("--old-documents", type=int, default=0, help="with --full: the old path on N documents too")
    parser.add_argument("--threads", type=int, default=None, help="fix torch's threads (default: the policy)")
    args = parser.parse_args(argv)
    if args.threads:
        os.environ["FAIRNESS_TORCH_THREADS"] = str(args.threads)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.full:
        full_corpus(args.metric, args.old_documents)
    else:
        side_by_side(args.documents, args.repeats, args.metric)


if __name__ == "__main__":
    main()
