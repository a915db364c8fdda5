"""Hugging Face transformers backends for the four model interfaces."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from fairness_core.models.interfaces import (
    CausalLM,
    DecodingConfig,
    Encoder,
    Seq2SeqLM,
    TextClassifier,
    TokenEmbeddings,
    TokenScores,
)
from fairness_core.models.loading import load_hf
from fairness_core.models.spec import ModelSpec


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


class HFCausalLM(_HFModel, CausalLM):
    def __init__(self, spec: ModelSpec, model: Any = None, tokenizer: Any = None) -> None:
        super().__init__(spec, model, tokenizer)
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.tokenizer.padding_side = "left"  # generation continues from the right edge

    def generate(
        self,
        prompts: Sequence[str],
        decoding: DecodingConfig | Sequence[DecodingConfig],
        n: int = 1,
        seed: int = 0,
    ) -> list[list[str]]:
        import torch

        configs = [decoding] * len(prompts) if isinstance(decoding, DecodingConfig) else list(decoding)
        if len(configs) != len(prompts):
            raise ValueError(f"got {len(prompts)} prompts but {len(configs)} decoding configs")
        results: list[list[str]] = [[] for _ in prompts]
        groups: dict[DecodingConfig, list[int]] = {}
        for index, cfg in enumerate(configs):
            groups.setdefault(cfg, []).append(index)
        for cfg, indices in groups.items():
            for start in range(0, len(indices), self.batch_size):
                chunk = indices[start : start + self.batch_size]
                generator_seed = seed + chunk[0]
                torch.manual_seed(generator_seed)
                encoded = self.tokenizer([prompts[i] for i in chunk], return_tensors="pt", padding=True)
                encoded = {k: v.to(self.input_device) for k, v in encoded.items()}
                with torch.no_grad():
                    output = self.model.generate(
                        **encoded,
                        **generation_kwargs(cfg),
                        num_return_sequences=n,
                        pad_token_id=self.tokenizer.pad_token_id,
                    )
                new_tokens = output[:, encoded["input_ids"].shape[1] :]
                texts = self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)
                for position, index in enumerate(chunk):
                    results[index] = texts[position * n : (position + 1) * n]
        return results

    def generate_rows(
        self,
        prompts: Sequence[str],
        configs: Sequence[DecodingConfig],
        seeds: Sequence[int],
        max_new_tokens: int,
        stop_at_sentence_end: bool = False,
    ) -> list[str]:
        """Rows with different settings share one batch: each row has its own warping and generator."""
        from fairness_core.generation.sampling import sample_rows

        return sample_rows(self.model, self.tokenizer, prompts, configs, seeds, max_new_tokens, stop_at_sentence_end)

    def loglikelihood(self, contexts: Sequence[str], continuations: Sequence[str]) -> list[TokenScores]:
        import torch

        if len(contexts) != len(continuations):
            raise ValueError(f"got {len(contexts)} contexts but {len(continuations)} continuations")
        prefix = self.tokenizer.bos_token_id if self.tokenizer.bos_token_id is not None else self.tokenizer.eos_token_id
        pairs = []
        for context, continuation in zip(contexts, continuations, strict=True):
            context_ids = self.tokenizer(context, add_special_tokens=False)["input_ids"] if context else []
            continuation_ids = self.tokenizer(continuation, add_special_tokens=False)["input_ids"]
            if not context_ids:
                context_ids = [prefix]  # the first continuation token needs something to be predicted from
            pairs.append((context_ids, continuation_ids))
        results: list[TokenScores | None] = [None] * len(pairs)
        pad = self.tokenizer.pad_token_id
        for batch in length_sorted_batches([len(a) + len(b) for a, b in pairs], self.batch_size):
            sequences = [pairs[i][0] + pairs[i][1] for i in batch]
            width = max(len(s) for s in sequences)
            ids = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, sequence in enumerate(sequences):  # right padding: positions stay aligned
                ids[row, : len(sequence)] = torch.tensor(sequence)
                mask[row, : len(sequence)] = 1
            with torch.no_grad():
                logits = self.model(
                    input_ids=ids.to(self.input_device), attention_mask=mask.to(self.input_device)
                ).logits
            logprobs = torch.log_softmax(logits.float(), dim=-1).cpu()
            for row, index in enumerate(batch):
                context_ids, continuation_ids = pairs[index]
                start = len(context_ids)
                positions = torch.arange(start - 1, start - 1 + len(continuation_ids))
                target = torch.tensor(continuation_ids, dtype=torch.long)
                token_lp = logprobs[row, positions, target].numpy().astype(np.float64)
                results[index] = TokenScores(
                    tokens=self.tokenizer.convert_ids_to_tokens(continuation_ids), logprobs=token_lp
                )
        return [r for r in results if r is not None]


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
    def _forward(self, sources: Sequence[str], targets: Sequence[str]) -> tuple[Any, Any, Any]:
        import torch

        encoded = self.tokenizer(list(sources), return_tensors="pt", padding=True, truncation=True)
        labels = self.tokenizer(text_target=list(targets), return_tensors="pt", padding=True, truncation=True)
        label_ids = labels["input_ids"]
        label_mask = labels["attention_mask"].bool()
        masked = label_ids.masked_fill(~label_mask, -100)
        with torch.no_grad():
            out = self.model(
                input_ids=encoded["input_ids"].to(self.input_device),
                attention_mask=encoded["attention_mask"].to(self.input_device),
                labels=masked.to(self.input_device),
            )
        return torch.log_softmax(out.logits.float(), dim=-1).cpu(), label_ids, label_mask

    def token_logprobs(
        self, sources: Sequence[str], targets: Sequence[str], with_entropy: bool = False
    ) -> list[TokenScores]:
        import torch

        if len(sources) != len(targets):
            raise ValueError(f"got {len(sources)} sources but {len(targets)} targets")
        results: list[TokenScores | None] = [None] * len(sources)
        lengths = [len(s) + len(t) for s, t in zip(sources, targets, strict=True)]
        for batch in length_sorted_batches(lengths, self.batch_size):
            logprobs, label_ids, label_mask = self._forward([sources[i] for i in batch], [targets[i] for i in batch])
            picked = torch.gather(logprobs, 2, label_ids.unsqueeze(-1)).squeeze(-1)
            entropy = -(logprobs.exp() * logprobs).sum(-1) if with_entropy else None
            for row, index in enumerate(batch):
                keep = label_mask[row]
                ids = label_ids[row][keep].tolist()
                results[index] = TokenScores(
                    tokens=self.tokenizer.convert_ids_to_tokens(ids),
                    logprobs=picked[row][keep].numpy().astype(np.float64),
                    entropies=None if entropy is None else entropy[row][keep].numpy().astype(np.float64),
                )
        return [r for r in results if r is not None]

    def step_distributions(self, source: str, target: str) -> np.ndarray:
        logprobs, _, label_mask = self._forward([source], [target])
        return logprobs[0][label_mask[0]].numpy()


class HFEncoder(_HFModel, Encoder):
    def __init__(self, spec: ModelSpec, model: Any = None, tokenizer: Any = None) -> None:
        super().__init__(spec, model, tokenizer)
        self.num_layers = int(getattr(self.model.config, "num_hidden_layers", 0))
        self.batch_size = 64

    def token_embeddings(self, texts: Sequence[str], layer: int | None = None) -> list[TokenEmbeddings]:
        import torch

        if layer is not None and not 0 <= layer <= self.num_layers:
            raise ValueError(f"{self.name} has layers 0..{self.num_layers} (0 = embeddings); got {layer}")
        special_ids = set(self.tokenizer.all_special_ids)
        results: list[TokenEmbeddings | None] = [None] * len(texts)
        for batch in length_sorted_batches([len(t) for t in texts], self.batch_size):
            encoded = self.tokenizer([texts[i] for i in batch], return_tensors="pt", padding=True, truncation=True)
            with torch.no_grad():
                out = self.model(
                    **{k: v.to(self.input_device) for k, v in encoded.items()}, output_hidden_states=True
                )
            hidden = out.hidden_states[self.num_layers if layer is None else layer].float().cpu()
            for row, index in enumerate(batch):
                length = int(encoded["attention_mask"][row].sum())
                ids = encoded["input_ids"][row][:length].tolist()
                results[index] = TokenEmbeddings(
                    tokens=self.tokenizer.convert_ids_to_tokens(ids),
                    vectors=hidden[row, :length].numpy(),
                    special=np.array([i in special_ids for i in ids], dtype=bool),
                )
        return [r for r in results if r is not None]


class HFTextClassifier(_HFModel, TextClassifier):
    def __init__(self, spec: ModelSpec, model: Any = None, tokenizer: Any = None) -> None:
        super().__init__(spec, model, tokenizer)
        id2label = getattr(self.model.config, "id2label", None) or {}
        self.labels = [str(id2label.get(i, f"LABEL_{i}")) for i in range(int(self.model.config.num_labels))]
        self.multi_label = getattr(self.model.config, "problem_type", None) == "multi_label_classification"

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
