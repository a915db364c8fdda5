"""The metric M of Eq. 4-5 as a differentiable torch function of the (adapted) backbone, one per paradigm.

- matching: BERTScore F (Zhang et al. 2020) as `metrics.matching.BERTScore` computes it: token states of the
  metric's layer, L2-normalised, greedy cosine matching, special tokens matchable but weighted 0, no idf;
- generation: BARTScore F = (mean log p(cand | ref) + mean log p(ref | cand)) / 2 as `metrics.generation.BARTScore`
  computes it: a seq2seq model reads the source and scores the target; a decoder-only model scores the target after
  the metric's paraphrase prompt;
- regression: the first logit of a sequence classifier read on (reference, candidate), as `metrics.learned`.

`Objective.scores(pairs)` returns a tensor of M(candidate, reference) with gradients to the adapters; inside
`no_grad` and `adapters.disabled(model)` it is the original metric (the teacher of Eq. 5). Tests check each against
the registered metric's own numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: longest input, in tokens (the paper's data loader cut texts at 150 words)
MAX_TOKENS = 256
#: padded tokens per forward pass of a length-sorted chunk (short and long texts of a step are not padded together)
TOKENS_PER_CHUNK = 1024


def _length_chunks(lengths: Sequence[int]) -> list[list[int]]:
    """Indices sorted by length, cut into chunks whose padded size (count × longest) stays within the budget."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    chunks: list[list[int]] = []
    current: list[int] = []
    for index in order:
        if current and (len(current) + 1) * lengths[index] > TOKENS_PER_CHUNK:
            chunks.append(current)
            current = []
        current.append(index)
    if current:
        chunks.append(current)
    return chunks


class Objective:
    """M(candidate, reference) of one metric over a model with adapters."""

    paradigm = ""

    def __init__(self, model: Any, tokenizer: Any) -> None:
        self.model = model
        self.tokenizer = tokenizer

    @property
    def device(self) -> Any:
        return next(self.model.parameters()).device

    @property
    def max_tokens(self) -> int:
        """`MAX_TOKENS`, or fewer when the model has fewer positions."""
        config = self.model.config
        positions = getattr(config, "n_positions", None) or getattr(config, "max_position_embeddings", None)
        return min(MAX_TOKENS, int(positions)) if positions else MAX_TOKENS

    def scores(self, candidates: Sequence[str], references: Sequence[str]) -> Any:
        raise NotImplementedError


class MatchingObjective(Objective):
    """BERTScore F at hidden layer `layer` (0 = embeddings)."""

    paradigm = "matching"

    def __init__(self, model: Any, tokenizer: Any, layer: int) -> None:
        super().__init__(model, tokenizer)
        from fairness_core.metrics.matching import needs_prefix_space

        self.layer = layer
        self.prefix = " " if needs_prefix_space(tokenizer) and not getattr(tokenizer, "add_prefix_space", False) \
            else ""
        self.special = set(tokenizer.all_special_ids)
        self.num_layers = int(model.config.num_hidden_layers)

    def encode(self, texts: Sequence[str]) -> tuple[Any, Any, Any]:
        """(unit token states (n, T, H), real-token mask (n, T), source weights (n, T): 0 on special tokens).

        Texts run through the model in length-sorted chunks of at most `TOKENS_PER_CHUNK` padded tokens, so a
        batch mixing short and long texts does not pad every short one to the longest."""
        import torch

        ids = self.tokenizer([self.prefix + t.strip() for t in texts], truncation=True,
                             max_length=self.max_tokens)["input_ids"]
        width = max(len(row) for row in ids)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        device = self.device
        hidden = int(self.model.config.hidden_size)
        rows: list[Any] = [None] * len(ids)
        for chunk in _length_chunks([len(row) for row in ids]):
            chunk_width = max(len(ids[i]) for i in chunk)
            input_ids = torch.full((len(chunk), chunk_width), pad, dtype=torch.long)
            mask = torch.zeros((len(chunk), chunk_width), dtype=torch.long)
            for row, i in enumerate(chunk):
                input_ids[row, : len(ids[i])] = torch.tensor(ids[i])
                mask[row, : len(ids[i])] = 1
            out = self.model(input_ids=input_ids.to(device), attention_mask=mask.to(device),
                             output_hidden_states=self.layer != self.num_layers)
            states = out.last_hidden_state if self.layer == self.num_layers else out.hidden_states[self.layer]
            for row, i in enumerate(chunk):
                rows[i] = states[row, : len(ids[i])]
        states = torch.zeros((len(ids), width, hidden), device=device)
        states = torch.nn.utils.rnn.pad_sequence(rows, batch_first=True) if rows else states
        states = torch.nn.functional.normalize(states.float(), dim=-1, eps=1e-12)
        mask = torch.zeros((len(ids), width), dtype=torch.bool)
        weights = torch.zeros((len(ids), width))
        for row, tokens in enumerate(ids):
            mask[row, : len(tokens)] = True
            weights[row, : len(tokens)] = torch.tensor([0.0 if t in self.special else 1.0 for t in tokens])
        return states, mask.to(device), weights.to(device)

    def scores(self, candidates: Sequence[str], references: Sequence[str]) -> Any:
        """BERTScore F of each (candidate, reference); each distinct text is encoded once."""
        import torch

        distinct = list(dict.fromkeys([t.strip() for t in candidates] + [t.strip() for t in references]))
        index = {text: i for i, text in enumerate(distinct)}
        states, mask, weights = self.encode(distinct)
        c = torch.tensor([index[t.strip()] for t in candidates], device=states.device)
        r = torch.tensor([index[t.strip()] for t in references], device=states.device)
        sim = torch.bmm(states[c], states[r].transpose(1, 2))  # (n, Tc, Tr)
        low = torch.finfo(sim.dtype).min
        best_for_cand = sim.masked_fill(~mask[r][:, None, :], low).max(dim=2).values  # (n, Tc)
        best_for_ref = sim.masked_fill(~mask[c][:, :, None], low).max(dim=1).values  # (n, Tr)
        wc, wr = weights[c], weights[r]
        precision = (best_for_cand * wc).sum(1) / wc.sum(1).clamp_min(1e-12)
        recall = (best_for_ref * wr).sum(1) / wr.sum(1).clamp_min(1e-12)
        return 2 * precision * recall / (precision + recall).clamp_min(1e-12)


class GenerationObjective(Objective):
    """BARTScore F: the mean of mean token log p(cand | ref) and mean token log p(ref | cand)."""

    paradigm = "generation"

    def __init__(self, model: Any, tokenizer: Any, prompt: str | None = None) -> None:
        super().__init__(model, tokenizer)
        from fairness_core.metrics.generation import PROMPT

        self.prompt = PROMPT if prompt is None else prompt
        self.seq2seq = bool(getattr(model.config, "is_encoder_decoder", False))

    def direction(self, sources: Sequence[str], targets: Sequence[str]) -> Any:
        """Mean token log p(target | source), one value per pair."""
        return self._seq2seq(sources, targets) if self.seq2seq else self._decoder_only(sources, targets)

    def _decoder_only(self, sources: Sequence[str], targets: Sequence[str]) -> Any:
        import torch

        tok = self.tokenizer
        prefix = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        rows = []
        limit = self.max_tokens
        for source, target in zip(sources, targets, strict=True):
            context = tok(self.prompt.format(source=source), add_special_tokens=False)["input_ids"] or [prefix]
            continuation = tok(" " + target, add_special_tokens=False)["input_ids"][: limit // 2]
            rows.append((context[-(limit - len(continuation)):], continuation))  # the prompt's end stays
        width = max(len(a) + len(b) for a, b in rows)
        pad = tok.pad_token_id if tok.pad_token_id is not None else 0
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for row, (context, continuation) in enumerate(rows):
            sequence = context + continuation
            ids[row, : len(sequence)] = torch.tensor(sequence)
            mask[row, : len(sequence)] = 1
        # The vocabulary projection only where a continuation token is predicted: the full (rows, width, vocabulary)
        # logits of a 49k-token vocabulary cost a fifth of the compute and most of the memory of a step.
        rows_index = torch.tensor([row for row, (c, t) in enumerate(rows) for _ in t], device=self.device)
        positions = torch.tensor([len(c) - 1 + k for c, t in rows for k in range(len(t))], device=self.device)
        targets = torch.tensor([token for _, t in rows for token in t], device=self.device)
        head = self.model.get_output_embeddings()
        if head is None or getattr(self.model.config, "final_logit_softcapping", None):
            logits = self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device)).logits
            picked = logits[rows_index, positions]
        else:
            hidden = self.model.base_model(input_ids=ids.to(self.device),
                                           attention_mask=mask.to(self.device)).last_hidden_state
            picked = head(hidden[rows_index, positions])
        token_logprobs = torch.log_softmax(picked.float(), dim=-1).gather(1, targets[:, None]).squeeze(1)
        sums = torch.zeros(len(rows), device=self.device).index_add(0, rows_index, token_logprobs)
        counts = torch.tensor([len(t) for _, t in rows], device=self.device, dtype=sums.dtype)
        return sums / counts

    def _seq2seq(self, sources: Sequence[str], targets: Sequence[str]) -> Any:
        import torch

        encoded = self.tokenizer(list(sources), return_tensors="pt", padding=True, truncation=True,
                                 max_length=self.max_tokens)
        labels = self.tokenizer(text_target=list(targets), return_tensors="pt", padding=True, truncation=True,
                                max_length=self.max_tokens)
        label_ids, label_mask = labels["input_ids"], labels["attention_mask"].bool()
        out = self.model(input_ids=encoded["input_ids"].to(self.device),
                         attention_mask=encoded["attention_mask"].to(self.device),
                         labels=label_ids.masked_fill(~label_mask, -100).to(self.device))
        logprobs = torch.log_softmax(out.logits.float(), dim=-1)
        picked = torch.gather(logprobs, 2, label_ids.to(self.device).unsqueeze(-1)).squeeze(-1)
        weights = label_mask.to(self.device).float()
        return (picked * weights).sum(1) / weights.sum(1).clamp_min(1)

    def scores(self, candidates: Sequence[str], references: Sequence[str]) -> Any:
        precision = self.direction(references, candidates)  # p(sys | ref)
        recall = self.direction(candidates, references)  # p(ref | sys)
        return (precision + recall) / 2


class RegressionObjective(Objective):
    """The first logit of a sequence classifier read on (reference, candidate) (BLEURT, FrugalScore)."""

    paradigm = "regression"

    def scores(self, candidates: Sequence[str], references: Sequence[str]) -> Any:
        encoded = self.tokenizer(list(references), list(candidates), return_tensors="pt", padding=True,
                                 truncation=True, max_length=self.max_tokens)
        logits = self.model(**{k: v.to(self.device) for k, v in encoded.items()}).logits
        return logits[:, 0].float()


def objective_for(family: str, model: Any, tokenizer: Any, layer: int | None = None,
                  prompt: str | None = None) -> Objective:
    """The objective of a metric family ("matching", "generation", "regression")."""
    if family == "matching":
        if layer is None:
            raise ValueError("a matching objective needs the metric's layer")
        return MatchingObjective(model, tokenizer, layer)
    if family == "generation":
        return GenerationObjective(model, tokenizer, prompt)
    if family == "regression":
        return RegressionObjective(model, tokenizer)
    raise ValueError(f"debiasing adapters are trained for matching, generation and regression metrics, not {family}")
