"""Hugging Face transformers backends for the four model interfaces."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from fairness_core.models.interfaces import (
    CHAT_ROLES,
    CausalLM,
    DecodingConfig,
    Encoder,
    Seq2SeqLM,
    TextClassifier,
    TokenEmbeddings,
    TokenScores,
)
from fairness_core.models.languages import UnknownLanguageError
from fairness_core.models.loading import load_hf
from fairness_core.models.spec import ModelSpec
from fairness_core.models.threads import uses_model_threads


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> Iterator[list[int]]:
    """Indices grouped into batches of similar length (less padding, same results)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


class _HFModel:
    def __init__(self, spec: ModelSpec, model: Any = None, tokenizer: Any = None) -> None:
        self.spec = spec.resolved()
        if model is None:
            model, tokenizer = load_hf(self.spec)
        self.model = model
        self.tokenizer = tokenizer
        self.name = spec.display_name
        self.device = str(next(model.parameters()).device)
        self.cache_key = spec.cache_key()
        self.batch_size = 16

    @property
    def input_device(self) -> Any:
        return next(self.model.parameters()).device


class SampledRows:
    """Rows sampled ahead of being asked for (`HFCausalLM.sample_ahead`, what `decoding.prefetch` calls), by
    everything that determines one: (prompt, setting, seed, token limit, stop rule). A row's text depends on nothing
    else (`models.sampling`: each row has its own random stream), so `generate_rows` answers such a row from here,
    exactly as sampling it would, without running the model. Only rows sampled ahead are kept: an ordinary call
    samples every row it is given (a row asked for again is the run store's to answer). Bounded (`max_rows`, the
    least recently used go first); a call stopped part-way keeps nothing."""

    def __init__(self, max_rows: int = 4096) -> None:
        from collections import OrderedDict

        self.max_rows = max_rows
        self._rows: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(prompt: str, config: DecodingConfig, seed: int, max_new_tokens: int, stop_at_sentence_end: bool
            ) -> tuple[Any, ...]:
        return (prompt, config, int(seed), int(max_new_tokens), bool(stop_at_sentence_end))

    @classmethod
    def keys(cls, prompts: Sequence[str], configs: Sequence[DecodingConfig], seeds: Sequence[int],
             max_new_tokens: int, stop_at_sentence_end: bool) -> list[tuple[Any, ...]]:
        return [cls.key(prompt, config, seed, max_new_tokens, stop_at_sentence_end)
                for prompt, config, seed in zip(prompts, configs, seeds, strict=True)]

    def get(self, key: tuple[Any, ...]) -> Any:
        with self._lock:
            row = self._rows.get(key)
            if row is not None:
                self._rows.move_to_end(key)
            return row

    def put(self, key: tuple[Any, ...], row: Any) -> None:
        with self._lock:
            self._rows[key] = row
            self._rows.move_to_end(key)
            while len(self._rows) > self.max_rows:
                self._rows.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()

    def __len__(self) -> int:
        return len(self._rows)


class SampledLogprobs:
    """The log-probabilities this model gave the tokens it sampled, by prompt token ids (the most recent rows).

    A sweep scores its generations' quality right after sampling them, with the generator as the scorer:
    `loglikelihood` finds those rows here instead of running the model over them a second time. Bounded by
    the tokens kept (`max_tokens`, oldest prompts dropped first); rows are indexed by their first tokens, so a
    lookup compares a handful of rows even when a prompt has thousands of samples.
    """

    INDEX_TOKENS = 3

    def __init__(self, max_tokens: int = 2_000_000) -> None:
        from collections import OrderedDict

        self.max_tokens = max_tokens
        # prompt ids -> first tokens of the continuation -> rows (sampled ids, their log-probs)
        self._rows: OrderedDict[tuple[int, ...], dict[tuple[int, ...], list[tuple[np.ndarray, np.ndarray]]]] = \
            OrderedDict()
        self._tokens: dict[tuple[int, ...], int] = {}
        self._total = 0
        self._lock = threading.Lock()

    def record(self, sampled: Sequence[Any]) -> None:
        """Remember `SampledRow`s (prompt ids, sampled ids, log-probs); the oldest prompts go first when full."""
        with self._lock:
            for row in sampled:
                if not row.token_ids:
                    continue
                prompt = tuple(row.prompt_ids)
                entry = (np.asarray(row.token_ids, dtype=np.int64), np.asarray(row.logprobs, dtype=np.float32))
                by_start = self._rows.setdefault(prompt, {})
                for width in range(1, min(self.INDEX_TOKENS, len(entry[0])) + 1):
                    by_start.setdefault(tuple(row.token_ids[:width]), []).append(entry)
                self._rows.move_to_end(prompt)
                self._tokens[prompt] = self._tokens.get(prompt, 0) + len(entry[0])
                self._total += len(entry[0])
            while self._total > self.max_tokens and self._rows:
                prompt, _ = self._rows.popitem(last=False)
                self._total -= self._tokens.pop(prompt, 0)

    def lookup(self, context_ids: Sequence[int], continuation_ids: Sequence[int]) -> np.ndarray | None:
        """The recorded log-probs of `continuation_ids` after `context_ids`, if a sampled row starts with them."""
        wanted = np.asarray(continuation_ids, dtype=np.int64)
        if not len(wanted):
            return None
        start = tuple(int(t) for t in wanted[: self.INDEX_TOKENS])
        with self._lock:
            for tokens, logprobs in self._rows.get(tuple(context_ids), {}).get(start, ()):
                if len(tokens) >= len(wanted) and np.array_equal(tokens[: len(wanted)], wanted):
                    return logprobs[: len(wanted)].copy()
        return None


class HFCausalLM(_HFModel, CausalLM):
    reports_steps = True  # generate, chat and generate_rows take on_progress (the sampler calls it every step)
    reports_scoring_progress = True  # loglikelihood takes on_progress (after each batch)

    def __init__(self, spec: ModelSpec, model: Any = None, tokenizer: Any = None) -> None:
        super().__init__(spec, model, tokenizer)
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.tokenizer.padding_side = "left"  # generation continues from the right edge
        self.sampled = SampledLogprobs()
        self.rows = SampledRows()  # rows sampled ahead (decoding.prefetch) are not sampled again when asked for
        from fairness_core.models.sampling import PrefillCache

        # Prompts' prefill kept across calls: a live slider move samples the prompts of the move before.
        self.prefill_cache = PrefillCache()
        if self.spec.quantization == "none":
            from fairness_core.models.cpu_linear import use_onednn_linears

            # A decoding step's few rows run 1.3-7x faster on oneDNN than on MKL (models/cpu_linear.py).
            probe = self.tokenizer("The nurse said that", add_special_tokens=False)["input_ids"] or [0]
            use_onednn_linears(self.model, probe_ids=probe)

    def generate(
        self,
        prompts: Sequence[str],
        decoding: DecodingConfig | Sequence[DecodingConfig],
        n: int = 1,
        seed: int = 0,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> list[list[str]]:
        """Continuation j of prompt i depends only on (seed, prompt text, j): each row samples from its
        own generator (`row_seed`), never the global RNG, so batch size and other threads cannot change it.
        `on_progress(rows finished, rows)` after every decoding step; it may raise to stop (a job's Cancel)."""
        return self._generate(prompts, decoding, n, seed, add_special_tokens=True, on_progress=on_progress)

    def format_chat(self, messages: Sequence[Mapping[str, str]]) -> str:
        """The tokenizer's chat template with the assistant turn opened; the plain format without one."""
        if not self.has_chat_template:
            return super().format_chat(messages)
        for position, message in enumerate(messages):  # same message checks as the plain format
            if message.get("role") not in CHAT_ROLES or not isinstance(message.get("content"), str):
                raise ValueError(f"message {position} must have a role in {', '.join(CHAT_ROLES)} and a text "
                                 f"content (got role {message.get('role')!r})")
        return self.tokenizer.apply_chat_template([dict(m) for m in messages], tokenize=False,
                                                  add_generation_prompt=True)

    @property
    def has_chat_template(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))

    def chat(
        self,
        conversations: Sequence[Sequence[Mapping[str, str]]],
        decoding: DecodingConfig | Sequence[DecodingConfig],
        n: int = 1,
        seed: int = 0,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> list[list[str]]:
        prompts = [self.format_chat(messages) for messages in conversations]
        # A templated prompt already carries the model's special tokens (BOS included where it has one).
        return self._generate(prompts, decoding, n, seed, add_special_tokens=not self.has_chat_template,
                              on_progress=on_progress)

    @uses_model_threads()
    def _generate(
        self,
        prompts: Sequence[str],
        decoding: DecodingConfig | Sequence[DecodingConfig],
        n: int,
        seed: int,
        add_special_tokens: bool,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> list[list[str]]:
        from fairness_core.models.sampling import row_seed, sample_rows_detailed

        configs = [decoding] * len(prompts) if isinstance(decoding, DecodingConfig) else list(decoding)
        if len(configs) != len(prompts):
            raise ValueError(f"got {len(prompts)} prompts but {len(configs)} decoding configs")
        if n < 1:
            raise ValueError(f"n must be at least 1 (got {n})")
        rows = [(i, j) for i in range(len(prompts)) for j in range(n)]
        sampled = sample_rows_detailed(
            self.model, self.tokenizer, [prompts[i] for i, _ in rows], [configs[i] for i, _ in rows],
            [row_seed(seed, prompts[i], j) for i, j in rows], [configs[i].max_new_tokens for i, _ in rows],
            batch_size=self.batch_size, add_special_tokens=add_special_tokens, on_progress=on_progress,
            prefill_cache=self.prefill_cache,
        )
        self.sampled.record(sampled)
        texts = [row.text for row in sampled]
        return [texts[i * n : (i + 1) * n] for i in range(len(prompts))]

    @uses_model_threads()
    def generate_rows(
        self,
        prompts: Sequence[str],
        configs: Sequence[DecodingConfig],
        seeds: Sequence[int],
        max_new_tokens: int,
        stop_at_sentence_end: bool = False,
        on_step: Callable[[list[tuple[int, str, bool]]], None] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> list[str]:
        """Rows with different settings share one batch: each row has its own warping and generator.
        `on_step` sees (row, text so far, finished) for the rows in flight after every step; `on_progress`
        (rows finished, rows) too, and may raise to stop (a job's Cancel)."""
        if not (len(prompts) == len(configs) == len(seeds)):
            raise ValueError(f"got {len(prompts)} prompts, {len(configs)} configs and {len(seeds)} seeds")
        rows = [self.rows.get(key)
                for key in SampledRows.keys(prompts, configs, seeds, max_new_tokens, stop_at_sentence_end)]
        missing = [index for index, row in enumerate(rows) if row is None]
        known = len(rows) - len(missing)
        if known:
            self.sampled.record([row for row in rows if row is not None])  # quality scoring finds them again
            if on_step is not None:
                on_step([(index, row.text, True) for index, row in enumerate(rows) if row is not None])
        if missing:
            step = None if on_step is None else (
                lambda updates: on_step([(missing[index], text, done) for index, text, done in updates]))
            progress = None if on_progress is None else (
                lambda finished, total: on_progress(known + finished, len(rows)))
            sampled = self._sample(missing, prompts, configs, seeds, max_new_tokens, stop_at_sentence_end,
                                   on_step=step, on_progress=progress)
            self.sampled.record(sampled)
            for index, row in zip(missing, sampled, strict=True):
                rows[index] = row
        elif on_progress is not None:
            on_progress(len(rows), len(rows))  # a stop asked for now still stops here
        return [row.text for row in rows]

    def sample_ahead(self, prompts: Sequence[str], configs: Sequence[DecodingConfig], seeds: Sequence[int],
                     max_new_tokens: int, stop_at_sentence_end: bool = False,
                     on_progress: Callable[[int, int], None] | None = None) -> int:
        """Sample rows before anyone asks for them and keep them (`rows`): a later `generate_rows` of the same
        (prompt, setting, seed, limit, stop rule) is answered from there. Rows kept already are skipped; returns
        how many were sampled. `on_progress` as in `generate_rows` (it may raise to stop: nothing is kept then)."""
        keys = SampledRows.keys(prompts, configs, seeds, max_new_tokens, stop_at_sentence_end)
        todo = [index for index, key in enumerate(keys) if self.rows.get(key) is None]
        if not todo:
            return 0
        sampled = self._sample(todo, prompts, configs, seeds, max_new_tokens, stop_at_sentence_end,
                               on_progress=on_progress)
        for index, row in zip(todo, sampled, strict=True):
            self.rows.put(keys[index], row)
        return len(todo)

    def _sample(self, indices: list[int], prompts: Sequence[str], configs: Sequence[DecodingConfig],
                seeds: Sequence[int], max_new_tokens: int, stop_at_sentence_end: bool, **callbacks: Any) -> list[Any]:
        """The `SampledRow`s of rows `indices` of the call, in one batch with the kept prefill."""
        from fairness_core.models.sampling import sample_rows_detailed

        return sample_rows_detailed(
            self.model, self.tokenizer, [prompts[i] for i in indices], [configs[i] for i in indices],
            [seeds[i] for i in indices], max_new_tokens, stop_at_sentence_end,
            batch_size=max(self.batch_size, len(indices)), prefill_cache=self.prefill_cache, **callbacks)

    @uses_model_threads()
    def loglikelihood(self, contexts: Sequence[str], continuations: Sequence[str],
                      on_progress: Callable[[int, int], None] | None = None) -> list[TokenScores]:
        """Per pair, log p(token) of each continuation token given the context and the tokens before it.

        A continuation this model has just sampled after this context (same token ids) is answered from
        the sampling pass's own record (`SampledLogprobs`): the same quantity, equal to a fresh forward
        pass within float rounding (~1e-5), without running the model again. The rest runs through
        `models.lm_scoring.continuation_scores` (shared prefixes once, the vocabulary only where a token is
        scored); `on_progress(pairs done, pairs)` after each of its batches, and it may raise to stop.
        """
        from fairness_core.models.lm_scoring import continuation_scores

        if len(contexts) != len(continuations):
            raise ValueError(f"got {len(contexts)} contexts but {len(continuations)} continuations")
        pairs = [self.scoring_ids(context, continuation)
                 for context, continuation in zip(contexts, continuations, strict=True)]
        results: list[TokenScores | None] = [None] * len(pairs)
        for index, (context_ids, continuation_ids) in enumerate(pairs):
            recorded = self.sampled.lookup(context_ids, continuation_ids)
            if recorded is not None:
                results[index] = TokenScores(tokens=self.tokenizer.convert_ids_to_tokens(continuation_ids),
                                             logprobs=np.asarray(recorded, dtype=np.float64))
        missing = [i for i, result in enumerate(results) if result is None]
        scored = continuation_scores(self.model, [pairs[i] for i in missing], on_progress=on_progress)
        for index, scores in zip(missing, scored, strict=True):
            results[index] = TokenScores(tokens=self.tokenizer.convert_ids_to_tokens(pairs[index][1]),
                                         logprobs=scores.logprobs)
        return [r for r in results if r is not None]

    def scoring_ids(self, context: str, continuation: str) -> tuple[list[int], list[int]]:
        """(context ids, continuation ids) as `loglikelihood` scores them: each text tokenised on its own, no
        special tokens; an empty context is the BOS token (or EOS), since the first token needs a predecessor."""
        prefix = self.tokenizer.bos_token_id if self.tokenizer.bos_token_id is not None else self.tokenizer.eos_token_id
        context_ids = self.tokenizer(context, add_special_tokens=False)["input_ids"] if context else []
        continuation_ids = self.tokenizer(continuation, add_special_tokens=False)["input_ids"]
        return (context_ids or [prefix]), continuation_ids


def generation_kwargs(cfg: DecodingConfig) -> dict[str, Any]:
    if cfg.greedy:
        return {"do_sample": False, "max_new_tokens": cfg.max_new_tokens}
    # top_k=0 disables transformers' default top-k of 50, which would otherwise silently apply.
    return {
        "do_sample": True,
        "temperature": cfg.temperature,
        "top_k": cfg.top_k if cfg.top_k is not None else 0,
        "top_p": cfg.top_p if cfg.top_p is not None else 1.0,
        "max_new_tokens": cfg.max_new_tokens,
    }


class HFSeq2SeqLM(_HFModel, Seq2SeqLM):
    def __init__(self, spec: ModelSpec, model: Any = None, tokenizer: Any = None) -> None:
        super().__init__(spec, model, tokenizer)
        from fairness_core.models.languages import language_family

        self.language_family = language_family(getattr(self.model.config, "model_type", None), self.tokenizer)
        # The tokenizer's language state is shared by every caller of this cached model: it is set and
        # used under one lock, and calls without languages get the checkpoint's own defaults back.
        self._tokenizer_lock = threading.Lock()
        self._language_ids: set[int] | None = None
        self._default_languages = (getattr(self.tokenizer, "src_lang", None), getattr(self.tokenizer, "tgt_lang", None))

    def _language_codes(self, src_lang: str | None, tgt_lang: str | None) -> tuple[str | None, str | None]:
        """ISO 639-1 codes -> this model's codes (checked against its tokenizer); defaults when None."""
        from fairness_core.models.languages import model_language_code

        if self.language_family is None:
            if src_lang is not None or tgt_lang is not None:
                raise UnknownLanguageError(
                    f"{self.name} has no language codes (it is not an M2M-100, NLLB or mBART-50 model), "
                    "so src_lang/tgt_lang cannot be used with it."
                )
            return None, None
        codes = []
        for iso, default in ((src_lang, self._default_languages[0]), (tgt_lang, self._default_languages[1])):
            if iso is None:
                codes.append(default)
                continue
            code = model_language_code(self.language_family, iso)
            if self._language_token_id(code) is None:
                raise UnknownLanguageError(f"{self.name} has no language {iso!r} (its code {code!r} is not in "
                                           "its tokenizer).")
            codes.append(code)
        return codes[0], codes[1]

    def _language_token_id(self, code: str | None) -> int | None:
        if code is None:
            return None
        lang_code_to_id = getattr(self.tokenizer, "lang_code_to_id", None)
        if self.language_family == "m2m100" and isinstance(lang_code_to_id, dict):
            return lang_code_to_id.get(code)  # == tokenizer.get_lang_id(code)
        token_id = self.tokenizer.convert_tokens_to_ids(code)
        return None if token_id is None or token_id == self.tokenizer.unk_token_id else int(token_id)

    def _all_language_token_ids(self) -> set[int]:
        from fairness_core.models.languages import family_codes

        if self.language_family is None:
            return set()
        if self._language_ids is None:  # one pass over the vocabulary, then kept
            ids = (self._language_token_id(code) for code in family_codes(self.language_family, self.tokenizer))
            self._language_ids = {i for i in ids if i is not None}
        return self._language_ids

    def _encode(self, sources: Sequence[str], targets: Sequence[str] | None, src_lang: str | None,
                tgt_lang: str | None) -> tuple[Any, int | None]:
        """Tokenized sources (and targets as `labels`) with the language tokens; the target language id."""
        src_code, tgt_code = self._language_codes(src_lang, tgt_lang)
        if self.language_family is not None and targets is not None and tgt_code is None:
            raise UnknownLanguageError(f"{self.name} needs tgt_lang (an ISO 639-1 code such as 'fr') to read "
                                       "targets.")
        with self._tokenizer_lock:
            if src_code is not None:
                self.tokenizer.src_lang = src_code
            if tgt_code is not None:
                self.tokenizer.tgt_lang = tgt_code
            encoded = dict(self.tokenizer(list(sources), return_tensors="pt", padding=True, truncation=True))
            if targets is not None:
                labels = self.tokenizer(text_target=list(targets), return_tensors="pt", padding=True, truncation=True)
                encoded["labels"], encoded["labels_mask"] = labels["input_ids"], labels["attention_mask"].bool()
        return encoded, self._language_token_id(tgt_code)

    def _forward(self, sources: Sequence[str], targets: Sequence[str], src_lang: str | None = None,
                 tgt_lang: str | None = None) -> tuple[Any, Any, Any]:
        """Log-probabilities at each target position, the target ids and the mask of scored positions."""
        import torch

        encoded, tgt_lang_id = self._encode(sources, targets, src_lang, tgt_lang)
        label_ids, label_mask = encoded["labels"], encoded["labels_mask"]
        masked = label_ids.masked_fill(~label_mask, -100)
        with torch.no_grad():
            out = self.model(
                input_ids=encoded["input_ids"].to(self.input_device),
                attention_mask=encoded["attention_mask"].to(self.input_device),
                labels=masked.to(self.input_device),
            )
        scored = label_mask.clone()
        if tgt_lang_id is not None:
            # The target-language token is forced, not predicted: it conditions the rest but is not scored.
            scored[:, 0] &= label_ids[:, 0] != tgt_lang_id
        return torch.log_softmax(out.logits.float(), dim=-1).cpu(), label_ids, scored

    @uses_model_threads()
    def token_logprobs(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        with_entropy: bool = False,
        src_lang: str | None = None,
        tgt_lang: str | None = None,
    ) -> list[TokenScores]:
        import torch

        if len(sources) != len(targets):
            raise ValueError(f"got {len(sources)} sources but {len(targets)} targets")
        self._language_codes(src_lang, tgt_lang)  # a bad code fails before any work
        results: list[TokenScores | None] = [None] * len(sources)
        lengths = [len(s) + len(t) for s, t in zip(sources, targets, strict=True)]
        for batch in length_sorted_batches(lengths, self.batch_size):
            logprobs, label_ids, scored = self._forward([sources[i] for i in batch], [targets[i] for i in batch],
                                                        src_lang, tgt_lang)
            picked = torch.gather(logprobs, 2, label_ids.unsqueeze(-1)).squeeze(-1)
            entropy = -(logprobs.exp() * logprobs).sum(-1) if with_entropy else None
            for row, index in enumerate(batch):
                keep = scored[row]
                ids = label_ids[row][keep].tolist()
                results[index] = TokenScores(
                    tokens=self.tokenizer.convert_ids_to_tokens(ids),
                    logprobs=picked[row][keep].numpy().astype(np.float64),
                    entropies=None if entropy is None else entropy[row][keep].numpy().astype(np.float64),
                )
        return [r for r in results if r is not None]

    @uses_model_threads()
    def step_distributions(self, source: str, target: str, src_lang: str | None = None,
                           tgt_lang: str | None = None) -> np.ndarray:
        logprobs, _, scored = self._forward([source], [target], src_lang, tgt_lang)
        return logprobs[0][scored[0]].numpy()

    @uses_model_threads()
    def generate(
        self,
        sources: Sequence[str],
        src_lang: str | None = None,
        tgt_lang: str | None = None,
        decoding: DecodingConfig | None = None,
        n: int = 1,
        seed: int = 0,
    ) -> list[list[str]]:
        """Output j of source i depends only on (seed, source text, j); the target language is forced
        as the first generated token (M2M-100 `get_lang_id`, NLLB/mBART `convert_tokens_to_ids`)."""
        from fairness_core.models.sampling import row_seed, sample_seq2seq_rows

        decoding = decoding if decoding is not None else DecodingConfig(greedy=True)
        if n < 1:
            raise ValueError(f"n must be at least 1 (got {n})")
        _, tgt_code = self._language_codes(src_lang, tgt_lang)
        forced_bos = self._language_token_id(tgt_code) if self.language_family is not None else None
        if self.language_family is not None and forced_bos is None:
            raise UnknownLanguageError(f"{self.name} needs tgt_lang (an ISO 639-1 code such as 'fr') to translate.")
        rows = [(i, j) for i in range(len(sources)) for j in range(n)]
        texts: list[str] = [""] * len(rows)
        for batch in length_sorted_batches([len(sources[i]) for i, _ in rows], self.batch_size):
            encoded, _ = self._encode([sources[rows[r][0]] for r in batch], None, src_lang, tgt_lang)
            outputs = sample_seq2seq_rows(
                self.model, self.tokenizer, encoded["input_ids"], encoded["attention_mask"], [decoding] * len(batch),
                [row_seed(seed, sources[rows[r][0]], rows[r][1]) for r in batch], decoding.max_new_tokens,
                forced_bos_token_id=forced_bos, skip_token_ids=self._all_language_token_ids(),
            )
            for r, text in zip(batch, outputs, strict=True):
                texts[r] = text
        return [texts[i * n : (i + 1) * n] for i in range(len(sources))]


class HFEncoder(_HFModel, Encoder):
    def __init__(self, spec: ModelSpec, model: Any = None, tokenizer: Any = None) -> None:
        super().__init__(spec, model, tokenizer)
        self.num_layers = int(getattr(self.model.config, "num_hidden_layers", 0))
        self.batch_size = 64
        self._packed: Any = None  # PackedEncoder, False when unsupported, None until first asked
        self._packed_lock = threading.Lock()

    @property
    def packed(self) -> Any:
        """The padding-free fp32 CPU forward (models/packed_encoder.py) when this model supports it, else None."""
        with self._packed_lock:
            if self._packed is None:
                from fairness_core.models.packed_encoder import build

                self._packed = build(self.model, self.tokenizer) or False
        return self._packed or None

    @uses_model_threads()
    def hidden_states(self, token_ids: Sequence[Sequence[int]], layer: int,
                      on_batch: Callable[[int, int], None] | None = None,
                      batch_size: int | None = None) -> list[np.ndarray]:
        """(tokens, hidden) float32 states at `layer` (0 = embeddings) of already tokenised sentences.

        Same numbers either way (float rounding apart): the packed forward where the model supports it,
        else transformers' forward on length-sorted, padded batches of `batch_size` sentences (default
        `self.batch_size`). `on_batch(done, total)` runs before each batch (progress, cancellation).
        """
        import torch

        if not 0 <= layer <= self.num_layers:
            raise ValueError(f"{self.name} has layers 0..{self.num_layers} (0 = embeddings); got {layer}")
        packed = self.packed
        if packed is not None:
            return [states.numpy() for states in packed.hidden_states(token_ids, layer, on_batch)]
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        size = batch_size or self.batch_size
        out: list[np.ndarray | None] = [None] * len(token_ids)
        with torch.inference_mode():
            for number, batch in enumerate(length_sorted_batches([len(ids) for ids in token_ids], size)):
                if on_batch is not None:
                    on_batch(number * size, len(token_ids))
                width = max(len(token_ids[i]) for i in batch)
                input_ids = torch.full((len(batch), width), pad, dtype=torch.long)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                for row, i in enumerate(batch):
                    input_ids[row, : len(token_ids[i])] = torch.tensor(list(token_ids[i]), dtype=torch.long)
                    mask[row, : len(token_ids[i])] = 1
                last = layer == self.num_layers
                result = self.model(input_ids=input_ids.to(self.input_device),
                                    attention_mask=mask.to(self.input_device), output_hidden_states=not last)
                hidden = (result.last_hidden_state if last else result.hidden_states[layer]).float().cpu()
                for row, i in enumerate(batch):
                    out[i] = hidden[row, : len(token_ids[i])].numpy()
        return [states for states in out if states is not None]

    def token_embeddings(self, texts: Sequence[str], layer: int | None = None) -> list[TokenEmbeddings]:
        ids = self.tokenizer(list(texts), truncation=True)["input_ids"]
        special_ids = set(self.tokenizer.all_special_ids)
        states = self.hidden_states(ids, self.num_layers if layer is None else layer)
        return [TokenEmbeddings(tokens=self.tokenizer.convert_ids_to_tokens(row), vectors=vectors,
                                special=np.array([i in special_ids for i in row], dtype=bool))
                for row, vectors in zip(ids, states, strict=True)]

    @property
    def sentence_max_length(self) -> int | None:
        """The `max_seq_length` of the model's sentence-transformers config (all-MiniLM-L6-v2: 256), if it has
        one: sentence-transformers cuts texts there, not at the tokenizer's longer model_max_length."""
        import json
        from pathlib import Path

        config = Path(str(self.spec.source)) / "sentence_bert_config.json"
        try:
            value = json.loads(config.read_text(encoding="utf-8")).get("max_seq_length")
        except (OSError, ValueError):
            return None
        return int(value) if isinstance(value, int) and value > 0 else None

    def sentence_embeddings(self, texts: Sequence[str]) -> np.ndarray:
        """(n, hidden): sentence-transformers' mean pooling — the mean of the last layer over every token of
        the text, [CLS] and [SEP] included (the attention mask without padding), L2-normalised — with texts cut
        at `sentence_max_length` where the model has one. This is the embedding all-MiniLM-L6-v2 is trained
        and published with (its modules: Transformer, Pooling(mean_tokens), Normalize)."""
        limit = self.sentence_max_length
        encoded = self.tokenizer(list(texts), truncation=True, **({"max_length": limit} if limit else {}))
        hidden_size = int(getattr(self.model.config, "hidden_size", 0))
        out = np.zeros((len(texts), hidden_size), dtype=np.float32)
        states = self.hidden_states(encoded["input_ids"], self.num_layers)
        for row, vectors in enumerate(states):
            mean = vectors.astype(np.float32).mean(axis=0)
            out[row] = mean / max(float(np.linalg.norm(mean)), 1e-12)  # torch's normalize: eps 1e-12
        return out


class HFTextClassifier(_HFModel, TextClassifier):
    def __init__(self, spec: ModelSpec, model: Any = None, tokenizer: Any = None) -> None:
        super().__init__(spec, model, tokenizer)
        id2label = getattr(self.model.config, "id2label", None) or {}
        self.labels = [str(id2label.get(i, f"LABEL_{i}")) for i in range(int(self.model.config.num_labels))]
        self.multi_label = getattr(self.model.config, "problem_type", None) == "multi_label_classification"

    @uses_model_threads()
    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        out = np.zeros((len(texts), len(self.labels)))
        for batch in length_sorted_batches([len(t) for t in texts], self.batch_size):
            encoded = self.tokenizer([texts[i] for i in batch], return_tensors="pt", padding=True, truncation=True)
            with torch.no_grad():
                logits = self.model(**{k: v.to(self.input_device) for k, v in encoded.items()}).logits.float().cpu()
            probs = torch.sigmoid(logits) if self.multi_label or len(self.labels) == 1 else torch.softmax(logits, -1)
            out[batch] = probs.numpy()
        return out


BACKENDS: dict[str, type[_HFModel]] = {
    "causal-lm": HFCausalLM,
    "seq2seq-lm": HFSeq2SeqLM,
    "encoder": HFEncoder,
    "classifier": HFTextClassifier,
}
