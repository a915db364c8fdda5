"""Per-row sampling: many rows, each with its own temperature / top-k / top-p and random stream.

Why a hand-written decode loop instead of `model.generate` with a logits processor: `generate`
samples the whole batch from the global RNG, so a row's text would depend on which other rows
share its batch. Here every row owns a `torch.Generator` seeded from (run seed, prompt, sample
index), so a row's output is the same alone, in any batch, in any shard, on a resumed run — which is
what lets a sweep batch across prompts, samples *and* configurations and still be reproducible.

Continuous batching (`refill=True`): `sample_rows` keeps `batch_size` rows in flight. When a row finishes (end of
sequence, its own token limit, or a settled first sentence) it leaves the batch, and once enough
slots are free the next waiting rows are prefilled and join it, so the batch stays full to the end
instead of draining. Joining rows are left-padded to the batch's key/value width (or the batch is
left-padded to theirs); every row carries its own attention mask and position ids, so padding never
shifts a row's positions, and key/value columns that no remaining row uses are dropped.

The warping itself follows the order and tie rules of transformers' warpers (temperature, then
top-k keeping ties with the k-th value, then top-p removing the low tail whose cumulative
probability is <= 1 - p while always keeping the most likely token), and the draw is exactly
`torch.multinomial(probs, 1, generator=row_generator)`, so a single setting gives the same tokens
as `generate` with the same seed (tested).
"""

from __future__ import annotations

import hashlib
import re
from collections import deque
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from fairness_core.models.interfaces import DecodingConfig
from fairness_core.models.threads import uses_model_threads

#: `on_progress(finished_rows, total_rows)`, called after every decoding step; raising stops the call there
ProgressCallback = Callable[[int, int], None]

# A sentence ends at . ! or ? (with any closing quotes/brackets) followed by whitespace or the end
# of the text, or at a line break. Deliberately simple: "Dr. Smith" ends a sentence here, which
# the paper's truncation also does not try to avoid; the raw text is always kept beside it.
# It lives here (not in generation/) because the sampler retires rows with it and models never
# import generation code; generation/text.py builds its first-sentence cut on the same pattern.
SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*(?=\s|$)|\n")


def sentence_complete(continuation: str) -> bool:
    """True once more text can no longer change the first sentence of `continuation`.

    A terminator at the very end is not enough ("3." may become "3.5", "." may gain a closing
    quote): the first sentence is settled only when something follows its end, or at a line break.
    """
    match = SENTENCE_END.search(continuation)
    return match is not None and (match.group() == "\n" or match.end() < len(continuation))


def row_seed(seed: int, prompt_id: str, sample: int) -> int:
    """Seed of one row: (run seed, prompt, sample index) — the same across decoding configs.

    Sharing the random stream across configs ("common random numbers") makes configs differ by
    their setting rather than by luck, and keeps a row's output independent of its batch.
    """
    digest = hashlib.sha256(f"{seed}|{prompt_id}|{sample}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & ((1 << 63) - 1)


@dataclass(frozen=True)
class RowSettings:
    """Per-row warping parameters as tensors of shape (batch,). top_k 0 = off, top_p 1.0 = off."""

    temperature: Any
    top_k: Any
    top_p: Any

    @classmethod
    def from_configs(cls, configs: Sequence[DecodingConfig]) -> RowSettings:
        import torch

        # Greedy is top-k = 1: the argmax is the only token left, whatever the random draw.
        return cls(
            temperature=torch.tensor([1.0 if c.greedy else c.temperature for c in configs], dtype=torch.float32),
            top_k=torch.tensor([1 if c.greedy else (c.top_k or 0) for c in configs], dtype=torch.long),
            top_p=torch.tensor([1.0 if c.greedy or c.top_p is None else c.top_p for c in configs],
                               dtype=torch.float32),
        )

    def select(self, rows: Any) -> RowSettings:
        return RowSettings(self.temperature[rows], self.top_k[rows], self.top_p[rows])


def warp_logits(scores: Any, settings: RowSettings) -> Any:
    """Apply each row's temperature, top-k and top-p to (batch, vocab) logits; removed tokens get -inf.

    transformers' order and rules: temperature, then top-k (keeping ties with the k-th value), then
    top-p on the top-k-renormalised distribution, always keeping the most likely token. Rows with
    neither filter skip both; each row's result does not depend on the other rows.
    """
    import torch

    scores = scores / settings.temperature.to(scores.device)[:, None]
    vocab = scores.shape[-1]
    k = settings.top_k.to(scores.device)
    by_k = (k > 0) & (k < vocab)
    if bool(by_k.any()):
        rows = by_k.nonzero().squeeze(-1)
        subset = scores[rows]
        kth = torch.topk(subset, int(k[rows].max()), dim=-1).values.gather(-1, (k[rows] - 1)[:, None])
        scores[rows] = subset.masked_fill(subset < kth, float("-inf"))
    top_p = settings.top_p.to(scores.device)
    by_p = top_p < 1.0
    if bool(by_p.any()):
        rows = by_p.nonzero().squeeze(-1)
        scores[rows] = _top_p(scores[rows], top_p[rows])
    return scores


#: First guess of how many top tokens hold a row's top-p mass; grown 8x for the rows they do not hold it for,
#: and a row that would need more than 1/8 of the vocabulary is sorted whole (cheaper than such a topk).
TOP_P_FIRST_K = 64


def _top_p(scores: Any, top_p: Any) -> Any:
    """transformers' top-p without sorting the vocabulary: a token survives unless the probability mass of
    the tokens below it, itself included, is <= 1 - p, i.e. unless the mass strictly above it is >= p.

    transformers sorts all 49k logits of SmolLM2 for this (0.5 s of a 2.5 s live move); here `topk`
    fetches each row's most likely tokens, 64 first and 8x more for the rows they do not yet hold mass
    p for, and the tail masses are computed in float64 as total minus mass above (the total summed in
    float32), then compared in float32 as transformers compares its cumulative sum. The kept set is the
    same in exact arithmetic; at float rounding the two can differ only when a tail mass lies within
    ~1e-7 of 1 - p.
    """
    import torch

    vocab = scores.shape[-1]
    probs = scores.softmax(dim=-1)
    total = probs.sum(dim=-1, keepdim=True).double()  # within ~1e-7 of 1 either way; a float64 sum is 6x slower
    limit = (1 - top_p)[:, None]  # float32, as transformers computes it
    removed_all = torch.ones_like(scores, dtype=torch.bool)
    pending = torch.arange(scores.shape[0], device=scores.device)
    k = min(TOP_P_FIRST_K, vocab)
    while pending.numel():
        if k * 8 > vocab:
            k = vocab
        values, indices = (torch.sort(probs[pending], dim=-1, descending=True) if k == vocab
                           else torch.topk(probs[pending], k, dim=-1))
        wide = values.to(torch.float64)
        removed = (total[pending] - (wide.cumsum(dim=-1) - wide)).float() <= limit[pending]
        settled = removed[:, -1] if k < vocab else torch.ones_like(removed[:, -1])  # the cut lies inside the top k
        removed[:, 0] = False  # the most likely token always survives
        rows = pending[settled]
        removed_all[rows] = removed_all[rows].scatter_(-1, indices[settled], removed[settled])
        pending = pending[~settled]
        k = min(k * 8, vocab)
    return scores.masked_fill(removed_all, float("-inf"))


class PerRowWarper:
    """A logits processor for `model.generate(..., logits_processor=[PerRowWarper(...)])`.

    Use it with `do_sample=True, temperature=1.0, top_k=0, top_p=1.0` so the built-in warpers do
    nothing. It gives every row its own setting, but `generate` still samples from the global RNG;
    `sample_rows` below adds per-row random streams.
    """

    def __init__(self, configs: Sequence[DecodingConfig]) -> None:
        self.settings = RowSettings.from_configs(configs)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        return warp_logits(scores.float(), self.settings)


#: With continuous batching, waiting rows join once this share of the batch's slots is free: one
#: prefill (and one key/value merge, which copies the whole cache) for many rows rather than one per
#: finished row. On 2 CPU cores 1/2 beat 1/8 in a short side-by-side run (noisy; see the report).
REFILL_SHARE = 1 / 2


@dataclass(frozen=True)
class SampledRow:
    """One sampled continuation with what produced it: the prompt's token ids, the sampled token ids
    (special tokens included) and each sampled token's log-probability under the model itself
    (the raw distribution: before temperature, top-k and top-p)."""

    text: str
    prompt_ids: tuple[int, ...]
    token_ids: tuple[int, ...]
    logprobs: tuple[float, ...]


def sample_rows(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str],
    configs: Sequence[DecodingConfig],
    seeds: Sequence[int],
    max_new_tokens: int | Sequence[int],
    stop_at_sentence_end: bool = False,
    batch_size: int | None = None,
    add_special_tokens: bool = True,
    refill: bool = False,
    on_progress: ProgressCallback | None = None,
) -> list[str]:
    """Sample one continuation per row (prompt, config, seed) with `batch_size` rows in flight (all by default).

    `max_new_tokens` is one limit for all rows or one per row. Rows enter the batch in the order
    given (put prompts of similar length together: less padding). With `refill` the slots of
    finished rows go to waiting rows as the batch runs (continuous batching); by default
    consecutive batches each drain completely, which measured faster on a 2-core CPU
    (bench/decoding_sweep.py; the refill path's merges are not yet profiled). Both give the same texts:
    a row's output depends only on its prompt, setting and seed. `stop_at_sentence_end` retires a
    row once its first sentence is settled: the truncated output is then exactly what full-length
    generation would give (later tokens cannot change it, and a row's random stream is its own), at
    a fraction of the cost; the raw text ends there too.

    `on_progress(finished, total)` is called after every decoding step with the number of rows finished; it
    may raise to stop the call there. The model layer knows nothing of jobs: a work unit passes
    `fairness_core.jobs.checkpoint`, which reports the share done and raises `ShardCancelled` once the job is
    cancelled.
    """
    return [row.text for row in sample_rows_detailed(model, tokenizer, prompts, configs, seeds, max_new_tokens,
                                                      stop_at_sentence_end, batch_size, add_special_tokens, refill,
                                                      on_progress=on_progress)]


@uses_model_threads()
def sample_rows_detailed(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str],
    configs: Sequence[DecodingConfig],
    seeds: Sequence[int],
    max_new_tokens: int | Sequence[int],
    stop_at_sentence_end: bool = False,
    batch_size: int | None = None,
    add_special_tokens: bool = True,
    refill: bool = False,
    on_step: Callable[[list[tuple[int, str, bool]]], None] | None = None,
    on_progress: ProgressCallback | None = None,
    prefill_cache: PrefillCache | None = None,
) -> list[SampledRow]:
    """`sample_rows` with each row's token ids and the model's own log-probability of every sampled token.

    `on_step`, when given, is called after every decoding step with (row, text so far, finished) for
    each row in flight, so a page can show text as it is generated; `on_progress` as in `sample_rows`.
    `prefill_cache` keeps the prompts' prefill for later calls and reuses what earlier calls kept.
    """
    if not (len(prompts) == len(configs) == len(seeds)):
        raise ValueError(f"got {len(prompts)} prompts, {len(configs)} configs and {len(seeds)} seeds")
    limits = [max_new_tokens] * len(prompts) if isinstance(max_new_tokens, int) else list(max_new_tokens)
    if len(limits) != len(prompts):
        raise ValueError(f"got {len(prompts)} prompts but {len(limits)} max_new_tokens")
    if batch_size is not None and batch_size <= 0:
        raise ValueError(f"batch_size must be positive (got {batch_size})")
    if any(int(limit) <= 0 for limit in limits):
        raise ValueError("max_new_tokens must be positive")
    if not prompts:
        return []
    sampler = _RowSampler(model, tokenizer, prompts, configs, seeds, limits, stop_at_sentence_end, add_special_tokens,
                          on_step, on_progress, prefill_cache)
    texts = sampler.run(min(batch_size or len(prompts), len(prompts)), refill)
    return [SampledRow(text, tuple(prompt), tuple(tokens), tuple(logprobs))
            for text, prompt, tokens, logprobs in zip(texts, sampler.prompt_ids, sampler.tokens, sampler.logprobs,
                                                      strict=True)]


@dataclass
class _Batch:
    """The rows in flight: row numbers, last logits, attention mask, last position ids, key/value cache."""

    rows: Any  # (B,) long: indices into the call's rows
    logits: Any  # (B, vocab)
    mask: Any  # (B, T) long: 1 where the key/value column belongs to the row
    position: Any  # (B, 1) long: position id of each row's last token
    cache: Any  # transformers cache holding T columns

    @property
    def size(self) -> int:
        return int(self.rows.shape[0])


class PrefillCache:
    """Prompts' prefill kept across sampler calls: per prompt (token ids), its key/value columns and the logits
    of its last position, as the prefill computed them (least recently used dropped beyond `max_bytes`).

    Why: a live slider move samples the same prompts as the move before with another setting; their forward
    pass (11 prompts of ~8 tokens: about one decoding step's work, ~10% of a move) gives the same numbers every
    time. A kept row is put back in a batch exactly as its prefill left it (right-aligned in the batch's
    left-padded width, padding masked out), so the samples are those of a fresh prefill (tested). Owned by one
    loaded model (`HFCausalLM.prefill_cache`); the weights of a loaded model never change.
    """

    def __init__(self, max_bytes: int = 64 * 2**20) -> None:
        import threading
        from collections import OrderedDict

        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[int, ...], tuple[list[tuple[Any, Any]], Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, prompt: tuple[int, ...]) -> tuple[list[tuple[Any, Any]], Any] | None:
        with self._lock:
            entry = self._entries.get(prompt)
            if entry is None:
                self.misses += 1
                return None
            self._entries.move_to_end(prompt)
            self.hits += 1
            return entry[0], entry[1]

    def put(self, prompt: tuple[int, ...], keys_values: list[tuple[Any, Any]], logits: Any) -> None:
        size = sum(k.numel() * k.element_size() + v.numel() * v.element_size() for k, v in keys_values)
        size += logits.numel() * logits.element_size()
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop(prompt, None)
            if old is not None:
                self._bytes -= old[2]
            self._entries[prompt] = (keys_values, logits, size)
            self._bytes += size
            while self._bytes > self.max_bytes and self._entries:
                _, (_, _, dropped) = self._entries.popitem(last=False)
                self._bytes -= dropped

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0


class _RowSampler:
    """One `sample_rows` call: per-row settings, generators and tokens, and the decode loop."""

    def __init__(self, model: Any, tokenizer: Any, prompts: Sequence[str], configs: Sequence[DecodingConfig],
                 seeds: Sequence[int], limits: Sequence[int], stop_at_sentence_end: bool,
                 add_special_tokens: bool,
                 on_step: Callable[[list[tuple[int, str, bool]]], None] | None = None,
                 on_progress: ProgressCallback | None = None, prefill_cache: PrefillCache | None = None) -> None:
        import torch

        self.model, self.tokenizer = model, tokenizer
        self.prefill_cache = prefill_cache
        self.device = next(model.parameters()).device
        self.settings = RowSettings.from_configs(configs)
        self.generators = [torch.Generator(device="cpu").manual_seed(int(seed)) for seed in seeds]
        self.limits = [int(limit) for limit in limits]
        self.stop_at_sentence_end = stop_at_sentence_end
        eos_ids = _eos_ids(model, tokenizer)
        self.eos_ids = set(eos_ids)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos_ids[0]
        self.prompt_ids = tokenizer(list(prompts), add_special_tokens=add_special_tokens)["input_ids"]
        self.tokens: list[list[int]] = [[] for _ in prompts]
        self.logprobs: list[list[float]] = [[] for _ in prompts]
        self.on_step = on_step
        self.on_progress = on_progress
        self.share_prefill = True  # rows with the same prompt share one prefill while the cache allows it

    def run(self, slots: int, refill: bool) -> list[str]:
        import torch

        total = len(self.prompt_ids)
        pending = deque(range(total))
        batch: _Batch | None = None
        threshold = max(1, int(slots * REFILL_SHARE))
        finished = 0
        with torch.inference_mode():
            while batch is not None or pending:
                free = slots - (batch.size if batch is not None else 0)
                can_join = batch is None or (refill and free >= threshold and _mergeable(batch.cache))
                if pending and free > 0 and can_join:
                    joining = self._prefill([pending.popleft() for _ in range(min(free, len(pending)))])
                    batch = joining if batch is None else _merge(batch, joining)
                assert batch is not None
                tokens, logprobs = self._draw(batch)
                done = self._record(batch.rows.tolist(), tokens.tolist(), logprobs.tolist())
                finished += sum(done)
                if self.on_progress is not None:
                    self.on_progress(finished, total)  # progress, and cancellation within one step
                batch = self._step(batch, tokens, torch.tensor(done, dtype=torch.bool))
        return self.tokenizer.batch_decode(self.tokens, skip_special_tokens=True)

    def _prefill(self, rows: list[int], use_cache: bool = True) -> _Batch:
        """Run the prompts of `rows` (left-padded to the longest) and return them as a batch.

        Rows with the same prompt (other samples, other settings) share one forward pass: the prompt runs
        once and its key/value cache and logits are copied to each of its rows (a sweep repeats every
        prompt configs x samples times).
        """
        import torch

        keys = [tuple(self.prompt_ids[row]) for row in rows]
        distinct = list(dict.fromkeys(keys))
        if use_cache and self.prefill_cache is not None and self.share_prefill and all(distinct):
            kept = self._prefill_kept(rows, keys, distinct)
            if kept is not None:
                return kept
        if self.share_prefill and len(distinct) < len(rows):
            first = {key: row for key, row in zip(reversed(keys), reversed(rows), strict=True)}
            shared = self._prefill([first[key] for key in distinct])
            position = {key: index for index, key in enumerate(distinct)}
            expanded = _expand(shared, torch.tensor([position[key] for key in keys]), torch.tensor(rows))
            if expanded is not None:
                return expanded
            self.share_prefill = False  # a cache we cannot copy rows of: prefill every row from now on
        width = max(len(self.prompt_ids[row]) for row in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for index, row in enumerate(rows):
            prompt = self.prompt_ids[row]
            if prompt:
                ids[index, width - len(prompt):] = torch.tensor(prompt)
                mask[index, width - len(prompt):] = 1
        ids, mask = ids.to(self.device), mask.to(self.device)
        position = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
        out = self.model(input_ids=ids, attention_mask=mask, position_ids=position, use_cache=True, logits_to_keep=1)
        return _Batch(torch.tensor(rows), out.logits[:, -1, :], mask, position[:, -1:], out.past_key_values)

    def _prefill_kept(self, rows: list[int], keys: list[tuple[int, ...]],
                      distinct: list[tuple[int, ...]]) -> _Batch | None:
        """The batch from the prefill cache: prompts it lacks are prefilled together first (as a fresh prefill
        would) and kept; then every row gets its prompt's columns, right-aligned in the batch's width. None when
        the model's cache cannot be taken apart by rows (then nothing is kept)."""
        import torch

        assert self.prefill_cache is not None
        entries = {key: self.prefill_cache.get(key) for key in distinct}
        missing = [key for key in distinct if entries[key] is None]
        if missing:
            first = {key: row for key, row in zip(reversed(keys), reversed(rows), strict=True)}
            fresh = self._prefill([first[key] for key in missing], use_cache=False)
            layers = _cache_layers(fresh.cache)
            if layers is None:
                self.prefill_cache = None
                return None
            width = fresh.mask.shape[1]
            for index, key in enumerate(missing):
                start = width - len(key)
                kept = [(layer.keys[index : index + 1, :, start:].clone(),
                         layer.values[index : index + 1, :, start:].clone()) for layer in layers]
                entries[key] = (kept, fresh.logits[index].clone())
                self.prefill_cache.put(key, *entries[key])
        width = max(len(key) for key in keys)
        mask = torch.zeros((len(rows), width), dtype=torch.long, device=self.device)
        columns = []
        for layer_number in range(len(next(iter(entries.values()))[0])):  # type: ignore[index]
            sample_keys = entries[keys[0]][0][layer_number][0]  # type: ignore[index]
            shape = (len(rows), sample_keys.shape[1], width, sample_keys.shape[3])
            columns.append((sample_keys.new_zeros(shape), sample_keys.new_zeros(shape)))
        logits = []
        for index, key in enumerate(keys):
            kept_columns, last_logits = entries[key]  # type: ignore[misc]
            start = width - len(key)
            mask[index, start:] = 1
            for (keys_out, values_out), (keys_in, values_in) in zip(columns, kept_columns, strict=True):
                keys_out[index, :, start:] = keys_in[0]
                values_out[index, :, start:] = values_in[0]
            logits.append(last_logits)
        from transformers.cache_utils import DynamicCache

        position = torch.tensor([[len(key) - 1] for key in keys], device=self.device)
        return _Batch(torch.tensor(rows), torch.stack(logits), mask, position, DynamicCache(columns))

    def _draw(self, batch: _Batch) -> tuple[Any, Any]:
        """Each row's next token, and its log-probability under the model's raw (unwarped) distribution."""
        logits = batch.logits.float()
        probs = warp_logits(logits, self.settings.select(batch.rows)).softmax(dim=-1).cpu()
        tokens = categorical(probs, [self.generators[row] for row in batch.rows.tolist()])
        chosen = logits.gather(-1, tokens.to(logits.device)[:, None]).squeeze(-1)
        return tokens, (chosen - logits.logsumexp(dim=-1)).cpu()

    def _record(self, rows: list[int], tokens: list[int], logprobs: list[float]) -> list[bool]:
        """Append each row's new token; True for rows that are finished."""
        done = []
        for row, token, logprob in zip(rows, tokens, logprobs, strict=True):
            self.tokens[row].append(token)
            self.logprobs[row].append(logprob)
            done.append(token in self.eos_ids or len(self.tokens[row]) >= self.limits[row])
        decode = range(len(rows)) if self.on_step is not None else [i for i, end in enumerate(done) if not end]
        if (self.stop_at_sentence_end or self.on_step is not None) and decode:
            texts = self.tokenizer.batch_decode([self.tokens[rows[i]] for i in decode], skip_special_tokens=True)
            if self.stop_at_sentence_end:
                for i, text in zip(decode, texts, strict=True):
                    done[i] = done[i] or sentence_complete(text)
            if self.on_step is not None:
                self.on_step([(rows[i], text, done[i]) for i, text in zip(decode, texts, strict=True)])
        return done

    def _step(self, batch: _Batch, tokens: Any, done: Any) -> _Batch | None:
        """Drop finished rows, then feed every remaining row its new token (one forward pass)."""
        import torch

        if bool(done.all()):
            return None
        if bool(done.any()):
            batch = _select(batch, (~done).nonzero().squeeze(-1))
            tokens = tokens[~done]
        mask = torch.cat([batch.mask, batch.mask.new_ones((batch.size, 1))], dim=-1)
        position = batch.position + 1
        out = self.model(input_ids=tokens[:, None].to(self.device), attention_mask=mask, position_ids=position,
                         past_key_values=batch.cache, use_cache=True)
        return _Batch(batch.rows, out.logits[:, -1, :], mask, position, out.past_key_values)


def _cache_layers(cache: Any) -> list[Any] | None:
    """The cache's layers when each holds plain (batch, heads, columns, dim) keys and values, else None."""
    try:
        from transformers.cache_utils import DynamicCache, DynamicLayer
    except ImportError:  # pragma: no cover - transformers without the layered cache API
        return None
    if type(cache) is not DynamicCache or not all(type(layer) is DynamicLayer for layer in cache.layers):
        return None
    if not all(layer.is_initialized and layer.keys.dim() == 4 for layer in cache.layers):
        return None
    return list(cache.layers)


def _expand(batch: _Batch, source: Any, rows: Any) -> _Batch | None:
    """`batch` with its row `source[i]` copied to position i (as row `rows[i]`); None for a cache we cannot copy."""
    layers = _cache_layers(batch.cache)
    if layers is None:
        return None
    on_device = source.to(batch.mask.device)
    for layer in layers:
        layer.keys = layer.keys.index_select(0, on_device)
        layer.values = layer.values.index_select(0, on_device)
    return _Batch(rows, batch.logits.index_select(0, source.to(batch.logits.device)),
                  batch.mask.index_select(0, on_device),
                  batch.position.index_select(0, source.to(batch.position.device)), batch.cache)


def _mergeable(cache: Any) -> bool:
    """Rows can join a running batch only through a cache whose columns we can pad and concatenate."""
    return _cache_layers(cache) is not None


def _select(batch: _Batch, keep: Any) -> _Batch:
    """Keep the rows at `keep`, and drop leading key/value columns that none of them uses any more."""
    mask = batch.mask[keep.to(batch.mask.device)]
    layers = _cache_layers(batch.cache)
    if layers is None:  # another cache type: rows only
        batch.cache.batch_select_indices(keep.to(batch.mask.device))
        return _Batch(batch.rows[keep], batch.logits[keep.to(batch.logits.device)], mask, batch.position[keep],
                      batch.cache)
    start = int(mask.any(dim=0).long().argmax())  # first column some kept row attends to
    rows_on = keep.to(layers[0].keys.device)
    for layer in layers:
        layer.keys = layer.keys[rows_on, :, start:]
        layer.values = layer.values[rows_on, :, start:]
    return _Batch(batch.rows[keep], batch.logits[keep.to(batch.logits.device)], mask[:, start:],
                  batch.position[keep.to(batch.position.device)], batch.cache)


def _merge(batch: _Batch, joining: _Batch) -> _Batch:
    """One batch from two: the narrower side is left-padded (masked) to the wider key/value width."""
    import torch
    from torch.nn.functional import pad

    width = max(batch.mask.shape[1], joining.mask.shape[1])

    def widen(tensor: Any, columns: int, dim_from_end: int) -> Any:
        if columns == 0:
            return tensor
        return pad(tensor, (0, 0) * (dim_from_end - 1) + (columns, 0))

    grow_a, grow_b = width - batch.mask.shape[1], width - joining.mask.shape[1]
    layers_a, layers_b = _cache_layers(batch.cache), _cache_layers(joining.cache)
    assert layers_a is not None and layers_b is not None
    for layer_a, layer_b in zip(layers_a, layers_b, strict=True):
        layer_a.keys = torch.cat([widen(layer_a.keys, grow_a, 2), widen(layer_b.keys, grow_b, 2)], dim=0)
        layer_a.values = torch.cat([widen(layer_a.values, grow_a, 2), widen(layer_b.values, grow_b, 2)], dim=0)
    return _Batch(
        torch.cat([batch.rows, joining.rows]),
        torch.cat([batch.logits, joining.logits]),
        torch.cat([widen(batch.mask, grow_a, 1), widen(joining.mask, grow_b, 1)]),
        torch.cat([batch.position, joining.position]),
        batch.cache,
    )


_EXPONENTIAL_FROM_UNIFORM: bool | None = None


def _exponential_from_uniform() -> bool:
    """Whether torch's CPU `exponential_` is `-log1p(-u)` of the generator's float64 uniforms (checked once).

    `torch.multinomial(p, 1, generator=g)` draws q ~ Exp(1) for every category with `exponential_`
    and returns argmax(p / q). Drawing the uniforms with `torch.rand` and transforming them in one
    vectorised call gives the same q, several times faster; where this torch build does it
    differently, `categorical` calls `torch.multinomial` row by row instead.
    """
    global _EXPONENTIAL_FROM_UNIFORM
    if _EXPONENTIAL_FROM_UNIFORM is None:
        import torch

        same = True
        for seed, size in ((0, 4099), (1, 3), (2, 50_000)):
            expected = torch.empty(size).exponential_(generator=torch.Generator().manual_seed(seed))
            ours = _exponentials(torch.rand(size, generator=torch.Generator().manual_seed(seed), dtype=torch.float64))
            same = same and torch.equal(expected, ours)
        _EXPONENTIAL_FROM_UNIFORM = same
    return _EXPONENTIAL_FROM_UNIFORM


def _exponentials(uniform: Any) -> Any:
    """Exp(1) variates from float64 uniforms, as torch's CPU kernel computes them: float(-log1p(-u))."""
    return uniform.neg_().log1p_().neg_().float()


def categorical(probs: Any, generators: Sequence[Any]) -> Any:
    """One draw per row of (rows, vocab) CPU probabilities, row i from `generators[i]`.

    Exactly `torch.multinomial(probs[i:i+1], 1, generator=generators[i])` for every row (same
    random stream, same token), computed for all rows at once.
    """
    import torch

    if not _exponential_from_uniform():
        return torch.stack([torch.multinomial(probs[row : row + 1], 1, generator=generator)[0, 0]
                            for row, generator in enumerate(generators)])
    uniform = torch.empty(probs.shape, dtype=torch.float64)
    for row, generator in enumerate(generators):
        torch.rand(probs.shape[1], generator=generator, dtype=torch.float64, out=uniform[row])
    # Every category draws its uniform (that is the random stream), but only tokens that survived the
    # filters can win the race: transform those alone (top-p keeps a few dozen of 49k).
    rows, columns = (probs > 0).nonzero(as_tuple=True)
    race = torch.zeros(probs.shape, dtype=probs.dtype)
    race[rows, columns] = probs[rows, columns] / _exponentials(uniform[rows, columns])
    return race.argmax(dim=-1)

@uses_model_threads()
def sample_seq2seq_rows(
    model: Any,
    tokenizer: Any,
    input_ids: Any,
    attention_mask: Any,
    configs: Sequence[DecodingConfig],
    seeds: Sequence[int],
    max_new_tokens: int,
    forced_bos_token_id: int | None = None,
    skip_token_ids: Collection[int] = (),
) -> list[str]:
    """One output per encoded source row, each row with its own warping and generator (greedy = top-k 1).

    The decoder starts from the model's decoder start token, then `forced_bos_token_id` (the target
    language of M2M-100 / NLLB / mBART) when given. The text leaves out special tokens and
    `skip_token_ids` (language tokens, which transformers 5 does not always flag as special).
    """
    import torch

    if not (input_ids.shape[0] == len(configs) == len(seeds)):
        raise ValueError(f"got {input_ids.shape[0]} sources, {len(configs)} configs and {len(seeds)} seeds")
    if not len(seeds):
        return []
    device = next(model.parameters()).device
    input_ids, attention_mask = input_ids.to(device), attention_mask.to(device)
    batch = input_ids.shape[0]
    settings = RowSettings.from_configs(configs)
    generators = [torch.Generator(device="cpu").manual_seed(int(seed)) for seed in seeds]
    eos_ids = torch.tensor(_eos_ids(model, tokenizer))
    start_id = model.config.decoder_start_token_id
    if start_id is None:
        start_id = model.generation_config.decoder_start_token_id
    prefix = [int(start_id)] + ([int(forced_bos_token_id)] if forced_bos_token_id is not None else [])
    decoder_ids = torch.tensor([prefix] * batch, device=device)
    new_tokens = torch.full((batch, max_new_tokens), tokenizer.pad_token_id, dtype=torch.long)
    done = torch.zeros(batch, dtype=torch.bool)
    with torch.no_grad():
        encoder_outputs = model.get_encoder()(input_ids=input_ids, attention_mask=attention_mask)
        out = model(encoder_outputs=encoder_outputs, attention_mask=attention_mask, decoder_input_ids=decoder_ids,
                    use_cache=True)
        for step in range(max_new_tokens):
            probs = warp_logits(out.logits[:, -1, :].float(), settings).softmax(dim=-1).cpu()
            tokens = torch.stack([torch.multinomial(probs[row : row + 1], 1, generator=generators[row])[0, 0]
                                  for row in range(batch)])
            tokens = tokens.masked_fill(done, tokenizer.pad_token_id)  # finished rows only pad
            new_tokens[:, step] = tokens
            done |= torch.isin(tokens, eos_ids)
            if bool(done.all()):
                break
            out = model(encoder_outputs=encoder_outputs, attention_mask=attention_mask,
                        decoder_input_ids=tokens[:, None].to(device), past_key_values=out.past_key_values,
                        use_cache=True)
    skipped = set(skip_token_ids) | set(tokenizer.all_special_ids)
    return [tokenizer.decode([i for i in row if i not in skipped], skip_special_tokens=True)
            for row in new_tokens.tolist()]


def _eos_ids(model: Any, tokenizer: Any) -> list[int]:
    eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if eos is None:
        eos = tokenizer.eos_token_id
    ids = eos if isinstance(eos, list) else [eos]
    return [int(i) for i in ids if i is not None] or [-1]
