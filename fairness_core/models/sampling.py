"""Per-row sampling: one batch, each row with its own temperature / top-k / top-p and random stream.

Why a hand-written decode loop instead of `model.generate` with a logits processor: `generate`
samples the whole batch from the global RNG, so a row's text would depend on which other rows
share its batch. Here every row owns a `torch.Generator` seeded from (run seed, prompt, sample
index), so a row's output is the same alone, in any batch, in any shard, on a resumed run — which is
what lets a sweep batch across prompts, samples *and* configurations and still be reproducible.

The warping itself follows the order and tie rules of transformers' warpers (temperature, then
top-k keeping ties with the k-th value, then top-p removing the low tail whose cumulative
probability is <= 1 - p while always keeping the most likely token), so a single setting gives the
same tokens as `generate` with the same seed (tested).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from fairness_core.models.interfaces import DecodingConfig

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
    """Apply each row's temperature, top-k and top-p to (batch, vocab) logits; removed tokens get -inf."""
    import torch

    scores = scores / settings.temperature.to(scores.device)[:, None]
    vocab = scores.shape[-1]
    # One ascending sort serves both filters: masking by top-k does not reorder the survivors.
    sorted_scores, sorted_indices = torch.sort(scores, descending=False, dim=-1)
    k = settings.top_k.to(scores.device)
    k = torch.where((k <= 0) | (k > vocab), torch.full_like(k, vocab), k)
    kth_largest = sorted_scores.gather(-1, (vocab - k)[:, None])
    removed_sorted = sorted_scores < kth_largest
    sorted_scores = sorted_scores.masked_fill(removed_sorted, float("-inf"))
    cumulative = sorted_scores.softmax(dim=-1).cumsum(dim=-1)
    top_p = settings.top_p.to(scores.device)[:, None]
    tail = (cumulative <= (1 - top_p)) & (top_p < 1.0)
    removed_sorted = removed_sorted | tail
    removed_sorted[:, -1] = False  # the most likely token always survives
    removed = removed_sorted.scatter(-1, sorted_indices, removed_sorted)
    return scores.masked_fill(removed, float("-inf"))


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
) -> list[str]:
    """Sample one continuation per row (prompt, config, seed), `batch_size` rows at a time (all by default).

    `max_new_tokens` is one limit for all rows or one per row. `stop_at_sentence_end` retires a row
    once its first sentence is settled: the truncated output is then exactly what full-length
    generation would give (later tokens cannot change it, and a row's random stream is its own), at a
    fraction of the cost; the raw text ends there too.
    """
    if not (len(prompts) == len(configs) == len(seeds)):
        raise ValueError(f"got {len(prompts)} prompts, {len(configs)} configs and {len(seeds)} seeds")
    limits = [max_new_tokens] * len(prompts) if isinstance(max_new_tokens, int) else list(max_new_tokens)
    if len(limits) != len(prompts):
        raise ValueError(f"got {len(prompts)} prompts but {len(limits)} max_new_tokens")
    size = batch_size or max(len(prompts), 1)
    texts: list[str] = []
    for start in range(0, len(prompts), size):
        chunk = slice(start, start + size)
        texts += _sample_batch(model, tokenizer, prompts[chunk], configs[chunk], seeds[chunk], limits[chunk],
                               stop_at_sentence_end, add_special_tokens)
    return texts


def _sample_batch(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str],
    configs: Sequence[DecodingConfig],
    seeds: Sequence[int],
    limits: Sequence[int],
    stop_at_sentence_end: bool,
    add_special_tokens: bool,
) -> list[str]:
    """One left-padded batch; finished rows leave it."""
    import torch

    if not prompts:
        return []
    device = next(model.parameters()).device
    encoded = tokenizer(list(prompts), return_tensors="pt", padding=True, add_special_tokens=add_special_tokens)
    input_ids = encoded["input_ids"].to(device)
    mask = encoded["attention_mask"].to(device)
    batch = input_ids.shape[0]
    settings = RowSettings.from_configs(configs)
    generators = [torch.Generator(device="cpu").manual_seed(int(seed)) for seed in seeds]
    eos_ids = _eos_ids(model, tokenizer)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos_ids[0]
    max_new_tokens = max(limits)
    limit = torch.tensor(list(limits))
    new_tokens = torch.full((batch, max_new_tokens), pad_id, dtype=torch.long)
    active = torch.arange(batch)  # rows still generating; finished rows leave the batch
    position = (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 0)
    with torch.no_grad():
        out = model(input_ids=input_ids, attention_mask=mask, position_ids=position, use_cache=True,
                    logits_to_keep=1)
        cache = out.past_key_values
        position = position[:, -1:]
        for step in range(max_new_tokens):
            logits = out.logits[:, -1, :].float()
            probs = warp_logits(logits, settings.select(active)).softmax(dim=-1).cpu()
            tokens = torch.stack([
                torch.multinomial(probs[row : row + 1], 1, generator=generators[int(index)])[0, 0]
                for row, index in enumerate(active)
            ])
            new_tokens[active, step] = tokens
            finished = torch.isin(tokens, torch.tensor(eos_ids)) | (limit[active] <= step + 1)
            if stop_at_sentence_end:
                texts = tokenizer.batch_decode(new_tokens[active, : step + 1], skip_special_tokens=True)
                finished |= torch.tensor([sentence_complete(text) for text in texts])
            if step == max_new_tokens - 1 or bool(finished.all()):
                break
            keep = (~finished).nonzero().squeeze(-1)
            if len(keep) < len(active):  # shrink the batch: finished rows cost nothing from now on
                active, tokens, mask, position = active[keep], tokens[keep], mask[keep.to(device)], position[keep]
                cache.batch_select_indices(keep.to(device))
            mask = torch.cat([mask, mask.new_ones((len(active), 1))], dim=-1)
            position = position + 1
            out = model(input_ids=tokens[:, None].to(device), attention_mask=mask, position_ids=position,
                        past_key_values=cache, use_cache=True)
    return tokenizer.batch_decode(new_tokens, skip_special_tokens=True)


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
