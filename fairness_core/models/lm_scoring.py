"""Per-token log-probabilities of continuations after contexts with a causal LM: the scoring path of every
LM-based metric (BARTScore with a decoder-only model, BARTScore-LM and DATScore-LM, `mitigate evaluate`).

The quantity is the plain one — log p(y_t | context, y_<t) for each continuation token, and on request the
entropy of the full next-token distribution at that step (DATScore Eq. 4) — computed with less work than one
padded forward pass over every (context + continuation):

- **the vocabulary projection only where a token is scored**: the model's body gives hidden states, and the
  output layer (SmolLM2: 576 x 49,152, a fifth of a token's products) and the log-softmax run only on the
  positions that predict a continuation token; the context's positions never reach the vocabulary;
- **shared prefixes once**: the longest prefix common to all contexts of the call (a prompt template, a chat
  template's system turn: 45 tokens of SmolLM2's translation prompt) runs once, and a context shared by several
  continuations (p(summary | reference): one reference for the 24 systems of a REALSumm document) runs once too;
  their key/value cache is copied to every row that continues them;
- **length buckets by a token budget**: rows are sorted by length and cut into batches of at most
  `TOKENS_PER_BATCH` tokens (padding included), so short rows do not pay for long ones;
- **many short texts packed** (models/tree_scoring.py, the stereotype benchmarks): where it costs less than the
  above (`_packed_share` compares both plans' work), every distinct token prefix of the call runs once, short
  texts packed into rows with a tree attention mask — a BBQ context once for its three answers and for the
  disambiguated context that extends it, the two sentences of a CrowS-Pairs pair up to the word they differ in.

Same numbers as the plain forward within float rounding (~1e-6 relative; the tests compare both on tiny models
at 1e-5): the cache holds exactly the keys and values the full forward computes for those positions, and a
causal model's position t never sees positions after it, so right padding changes nothing it computes.
Where a model does not allow a shortcut the plain computation runs instead: a cache that is not plain per-layer
keys and values (sliding windows, recurrent layers) gets no prefix sharing, and a model whose logits are not its
output layer applied to its last hidden state (checked once per model on a probe: soft-capping, logit scaling)
gets the full logits at the scored positions.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairness_core.models.threads import uses_model_threads

#: Tokens per batch, padding included (rows x the longest row). 2,048 as the packed encoder; on one REALSumm
#: document (SmolLM2, load ~8) 1,024, 2,048 and 4,096 took 57/56/52 s and 64/45/47 s of CPU in two rounds: noise.
TOKENS_PER_BATCH = 2048
#: A prefix common to every context is shared only when it is at least this long (shorter saves nothing).
MIN_SHARED_PREFIX = 4
#: Scored positions projected onto the vocabulary at a time (the logits of a block stay in the CPU's cache).
HEAD_ROWS = 32
#: Largest |logit difference| between head(last hidden state) and the model's own logits on the probe.
PROBE_TOLERANCE = 1e-4

#: Per model: whether its logits are its output layer applied to its last hidden state (checked once).
_HEAD_ONLY: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class ContinuationScores:
    """log p of each continuation token (float64) and, when asked for, each step's entropy in nats."""

    logprobs: np.ndarray
    entropies: np.ndarray | None = None


@dataclass
class _Stem:
    """A prefix whose key/value cache several rows continue: its ids and, once run, its per-layer keys/values."""

    ids: tuple[int, ...]
    keys_values: list[tuple[Any, Any]] | None = None


@dataclass(frozen=True)
class _Row:
    pair: int  # index into the call's pairs
    stem: int  # index into the stems (the row's cached prefix)
    ids: tuple[int, ...]  # the row's own tokens after its stem: rest of the context + continuation
    first_scored: int  # position in `ids` whose next-token distribution scores the first continuation token
    targets: tuple[int, ...]  # the continuation ids


def common_prefix_length(sequences: Sequence[Sequence[int]]) -> int:
    """Length of the longest prefix that every sequence starts with."""
    if not sequences:
        return 0
    shortest = min(len(s) for s in sequences)
    first = sequences[0]
    for position in range(shortest):
        token = first[position]
        if any(s[position] != token for s in sequences):
            return position
    return shortest


class ContextTooLongError(ValueError):
    """A text longer than the model's learned positions: one sentence instead of an index error in a batch."""


def learned_window(model: Any) -> int | None:
    """The positions a model with learned absolute position embeddings has (GPT-2's `wpe`), None for one whose
    positions are computed (rotary, ALiBi): those run past their trained length, worse but without failing."""
    embeddings = getattr(getattr(model, "transformer", None), "wpe", None)
    return int(embeddings.num_embeddings) if hasattr(embeddings, "num_embeddings") else None


def check_window(model: Any, pairs: Sequence[tuple[Sequence[int], Sequence[int]]]) -> None:
    """ContextTooLongError naming the first pair whose context and continuation together exceed the model's learned
    positions (issue 47's pairwise judge on a 128-position GPT-2 crashed with "index out of range in self")."""
    window = learned_window(model)
    if window is None:
        return
    for number, (context, continuation) in enumerate(pairs):
        if len(context) + len(continuation) > window:
            raise ContextTooLongError(
                f"text {number + 1} is {len(context) + len(continuation)} tokens ({len(context)} of context, "
                f"{len(continuation)} scored), but the model has {window} positions: shorten it or choose a model "
                "with a longer context")


@uses_model_threads()
def continuation_scores(
    model: Any,
    pairs: Sequence[tuple[Sequence[int], Sequence[int]]],
    with_entropy: bool = False,
    tokens_per_batch: int = TOKENS_PER_BATCH,
    share_prefixes: bool = True,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[ContinuationScores]:
    """Scores of each (context ids, continuation ids) pair with a transformers causal LM.

    A context must hold at least one token (the first continuation token is predicted from its last one); an
    empty continuation scores nothing (empty arrays). `on_progress(pairs done, pairs)` runs after every batch and
    may raise to stop (a job's Cancel). `share_prefixes=False` runs every row from its first token (the plain
    computation, for comparison).
    """
    import torch

    for number, (context, _) in enumerate(pairs):
        if len(context) == 0:
            raise ValueError(f"pair {number} has an empty context: the first token needs one to be predicted from")
    check_window(model, pairs)
    results: list[ContinuationScores | None] = [None] * len(pairs)
    empty = np.zeros(0, dtype=np.float64)
    live = []
    for index, (_, continuation) in enumerate(pairs):
        if len(continuation):
            live.append(index)
        else:
            results[index] = ContinuationScores(empty, empty.copy() if with_entropy else None)
    device = next(model.parameters()).device
    with torch.inference_mode():
        if share_prefixes and live:
            packed = _packed_share(model, pairs, live, tokens_per_batch, device)
            if packed:
                from fairness_core.models import tree_scoring

                chosen = [live[k] for k in packed["pairs"]]
                total, report = len(live), on_progress
                progress = None if report is None else (lambda finished, _: report(finished, total))
                for index, (logprobs, entropies) in zip(chosen, tree_scoring.tree_scores(
                        model, [pairs[i] for i in chosen], packed["plan"], with_entropy, tokens_per_batch, device,
                        _logits_at, _token_scores, on_progress=progress), strict=True):
                    results[index] = ContinuationScores(logprobs, entropies)
                offset = len(chosen)
                live = [i for i in live if results[i] is None]
                if on_progress is not None:
                    base_progress = on_progress
                    on_progress = lambda finished, total: base_progress(offset + finished, offset + total)  # noqa: E731
        stems, rows = _plan([(tuple(pairs[i][0]), tuple(pairs[i][1])) for i in live], share_prefixes)
        if any(stem.ids for stem in stems) and not _run_stems(model, stems, device):
            stems, rows = _plan([(tuple(pairs[i][0]), tuple(pairs[i][1])) for i in live], share=False)
        done = 0
        for batch in _batches(rows, tokens_per_batch):
            for row, scores in zip(batch, _score_batch(model, stems[batch[0].stem], batch, with_entropy, device),
                                   strict=True):
                results[live[row.pair]] = scores
            done += len(batch)
            if on_progress is not None:
                on_progress(done, len(live))
    return [r for r in results if r is not None]


def _packed_share(model: Any, pairs: Sequence[tuple[Sequence[int], Sequence[int]]], live: list[int],
                  tokens_per_batch: int, device: Any) -> dict[str, Any] | None:
    """The packed-trie plan (models/tree_scoring.py) of the pairs short enough for a row, when the model takes it
    and it costs less than the cached-stem plan of the same pairs; None otherwise."""
    from fairness_core.models import tree_scoring

    short = [k for k, i in enumerate(live) if len(pairs[i][0]) + len(pairs[i][1]) <= tree_scoring.ROW_TOKENS]
    if len(short) < 2:
        return None
    chosen = [(tuple(pairs[live[k]][0]), tuple(pairs[live[k]][1])) for k in short]
    hidden = _hidden_size(model)
    plan = tree_scoring.build_plan(chosen)
    packed_cost = tree_scoring.plan_cost(plan, hidden, tokens_per_batch)
    if packed_cost >= _stem_cost(chosen, hidden, tokens_per_batch):
        return None
    if not tree_scoring.tree_ok(model, device, _logits_at, _token_scores):
        return None
    return {"pairs": short, "plan": plan}


def _hidden_size(model: Any) -> int:
    config = getattr(model, "config", None)
    for name in ("hidden_size", "n_embd", "d_model"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return 512


def _stem_cost(pairs: list[tuple[tuple[int, ...], tuple[int, ...]]], hidden: int, tokens_per_batch: int) -> float:
    """Work of the cached-stem plan in the units of `tree_scoring.plan_cost`: stem tokens run one stem at a time,
    then padded rows, each attending to its stem and its row."""
    from fairness_core.models.tree_scoring import MIN_FORWARD_TOKENS

    stems, rows = _plan(pairs, share=True)
    cost = float(max(len(stems[0].ids), MIN_FORWARD_TOKENS if stems[0].ids else 0))
    cost += sum(max(len(s.ids) - len(stems[0].ids), MIN_FORWARD_TOKENS) for s in stems[1:])  # one call per stem
    for batch in _batches(rows, tokens_per_batch):
        width = max(len(r.ids) for r in batch) + len(stems[batch[0].stem].ids)
        cost += max(len(batch) * max(len(r.ids) for r in batch), MIN_FORWARD_TOKENS) * (1 + width / (6 * hidden))
    return cost


def _plan(pairs: list[tuple[tuple[int, ...], tuple[int, ...]]], share: bool) -> tuple[list[_Stem], list[_Row]]:
    """Stems (stem 0: the prefix common to all contexts; then one per context that several pairs share) and rows.

    Every row keeps at least its context's last token, so the position that predicts its first continuation
    token is its own (a stem ends one token before the context it was cut from)."""
    if not pairs:
        return [_Stem(())], []
    common = 0
    if share and len(pairs) > 1:
        common = min(common_prefix_length([c for c, _ in pairs]), min(len(c) for c, _ in pairs) - 1)
        if common < MIN_SHARED_PREFIX:
            common = 0
    stems = [_Stem(pairs[0][0][:common])]
    by_context: dict[tuple[int, ...], int] = {}
    if share:
        counts: dict[tuple[int, ...], int] = {}
        for context, _ in pairs:
            counts[context] = counts.get(context, 0) + 1
        for context, count in counts.items():
            if count > 1 and len(context) - 1 > common:
                by_context[context] = len(stems)
                stems.append(_Stem(context[:-1]))
    rows = []
    for pair, (context, continuation) in enumerate(pairs):
        stem = by_context.get(context, 0)
        own = context[len(stems[stem].ids):]
        rows.append(_Row(pair, stem, own + continuation, len(own) - 1, continuation))
    return stems, rows


def _cache(keys_values: list[tuple[Any, Any]], rows: int) -> Any:
    """A fresh transformers cache holding the stem's keys/values for `rows` rows (the forward appends to it)."""
    from transformers.cache_utils import DynamicCache

    return DynamicCache([(k.expand(rows, -1, -1, -1), v.expand(rows, -1, -1, -1)) for k, v in keys_values])


def _run_stems(model: Any, stems: list[_Stem], device: Any) -> bool:
    """Run each stem once through the model's body (no logits: nothing is scored there), the longer ones continuing
    the common prefix; False when the model's cache cannot be copied to other rows (then nothing is shared)."""
    import torch

    from fairness_core.models.sampling import _cache_layers

    common = stems[0]
    base: list[tuple[Any, Any]] | None = None
    if common.ids:
        out = model.base_model(input_ids=torch.tensor([common.ids], device=device), use_cache=True)
        layers = _cache_layers(out.past_key_values)
        if layers is None:
            return False
        base = common.keys_values = [(layer.keys, layer.values) for layer in layers]
    for stem in stems[1:]:
        rest = stem.ids[len(common.ids):]
        past = _cache(base, 1) if base is not None else None
        out = model.base_model(input_ids=torch.tensor([rest], device=device), past_key_values=past, use_cache=True)
        layers = _cache_layers(out.past_key_values)
        if layers is None:
            return False
        stem.keys_values = [(layer.keys, layer.values) for layer in layers]
    return True


def _batches(rows: list[_Row], tokens_per_batch: int) -> list[list[_Row]]:
    """Rows of one stem, sorted by length, cut so that rows x longest row stays within the budget."""
    batches: list[list[_Row]] = []
    by_stem: dict[int, list[_Row]] = {}
    for row in rows:
        by_stem.setdefault(row.stem, []).append(row)
    for stem_rows in by_stem.values():
        current: list[_Row] = []
        for row in sorted(stem_rows, key=lambda r: len(r.ids)):
            if current and (len(current) + 1) * len(row.ids) > tokens_per_batch:
                batches.append(current)
                current = []
            current.append(row)
        if current:
            batches.append(current)
    return batches


def _score_batch(model: Any, stem: _Stem, batch: list[_Row], with_entropy: bool,
                 device: Any) -> list[ContinuationScores]:
    import torch

    width = max(len(row.ids) for row in batch)
    pad = int(batch[0].ids[0])  # any id: right padding is never seen by the real positions (causal attention)
    ids = torch.full((len(batch), width), pad, dtype=torch.long)
    for number, row in enumerate(batch):
        ids[number, : len(row.ids)] = torch.tensor(row.ids, dtype=torch.long)
    past = _cache(stem.keys_values, len(batch)) if stem.keys_values is not None else None
    row_index = torch.tensor([n for n, row in enumerate(batch) for _ in row.targets])
    positions = torch.tensor([row.first_scored + k for row in batch for k in range(len(row.targets))])
    targets = torch.tensor([t for row in batch for t in row.targets], dtype=torch.long)
    inputs = {"input_ids": ids.to(device)}
    if past is not None:
        inputs |= {"past_key_values": past, "use_cache": True}
    logits_of = _logits_at(model, inputs, row_index.to(device), positions.to(device))
    picked, entropy = _token_scores(logits_of, targets.to(device), with_entropy)
    out, start = [], 0
    for row in batch:
        stop = start + len(row.targets)
        out.append(ContinuationScores(picked[start:stop].copy(),
                                      None if entropy is None else entropy[start:stop].copy()))
        start = stop
    return out


def _logits_at(model: Any, inputs: dict[str, Any], rows_at: Any, positions_at: Any) -> Callable[[int, int], Any]:
    """One forward pass of `inputs`; a function of a block [start, stop) of the scored (row, position) pairs to
    their logits: the output layer on those hidden states only, or the model's own logits where it has more."""
    if _head_only(model, rows_at.device):
        hidden = model.base_model(**inputs).last_hidden_state[rows_at, positions_at]
        head = model.get_output_embeddings()
        return lambda start, stop: head(hidden[start:stop])
    full = model(**inputs).logits[rows_at, positions_at]
    return lambda start, stop: full[start:stop]


def _token_scores(logits_of: Callable[[int, int], Any], targets: Any,
                  with_entropy: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """log p of each target and the entropy of its step's distribution, `HEAD_ROWS` scored positions at a time
    (a row of logits is the whole vocabulary: 196 kB for SmolLM2, so a block stays in cache and a batch of
    2,048 positions never holds its 400 MB of logits at once): log_softmax, the target's entry, and
    -sum(p * log p) with p = 0 adding nothing (the same arithmetic as on the full logits; the shortcut
    logsumexp - sum(p * logit) cancels digits on a confident step: 5.6e-5 relative on BARTScore-LM's
    entropy-weighted sums)."""
    import torch

    picked, entropies = [], []
    for start in range(0, len(targets), HEAD_ROWS):
        stop = min(start + HEAD_ROWS, len(targets))
        logprobs = torch.log_softmax(logits_of(start, stop).float(), dim=-1)
        picked.append(logprobs.gather(1, targets[start:stop, None]).squeeze(1))
        if with_entropy:
            entropies.append(-(logprobs.exp() * logprobs).nansum(dim=-1))
    as_numpy = lambda parts: torch.cat(parts).double().cpu().numpy()  # noqa: E731
    return as_numpy(picked), (as_numpy(entropies) if with_entropy else None)


def _head_only(model: Any, device: Any) -> bool:
    """Whether `model`'s logits are its output layer applied to its body's last hidden state (probed once)."""
    import torch

    known = _HEAD_ONLY.get(model)
    if known is not None:
        return known
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    result = False
    if head is not None:
        probe = torch.tensor([[int(i) % int(head.weight.shape[0]) for i in (1, 5, 9, 2, 7)]], device=device)
        try:
            expected = model(input_ids=probe).logits.float()
            got = head(model.base_model(input_ids=probe).last_hidden_state).float()
            result = got.shape == expected.shape and float((got - expected).abs().max()) <= PROBE_TOLERANCE
        except Exception:  # a model whose body cannot be called alone: the full logits are always right
            result = False
    _HEAD_ONLY[model] = result
    return result
