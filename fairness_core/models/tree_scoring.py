"""Continuation log-probabilities of many short texts at once: every distinct token prefix computed once, short
texts packed into rows with a tree attention mask (the path of the stereotype benchmarks, models/lm_scoring.py).

Why: CrowS-Pairs, StereoSet and BBQ score tens of thousands of short texts (15-120 tokens) whose token sequences
share prefixes — the two sentences of a CrowS-Pairs pair up to the group word, a StereoSet cluster's three
sentences up to the blank, a BBQ context for its three answers (and the ambiguous context for the disambiguated
one that extends it, each for two questions). The cached-stem path of `lm_scoring` shares a context by copying
its keys/values to the rows that continue it, one stem at a time: right for one long reference and 24 summaries,
but with 58k BBQ contexts it runs 58k batch-of-one stems and 58k batches of three 4-token answers.

Here all sequences of a call go into one prefix trie (a node = one distinct token prefix); the trie is cut into
units of at most `ROW_TOKENS` nodes (a subtree with its ancestors), the units packed into rows of equal length
(first fit, largest first; units that share ancestors in a row hold them once), and the rows run in token-budget
batches, each node attending to its ancestors and itself only (a 4-D attention mask) at its depth as position id.
That is exactly what a plain forward pass computes for each of its positions, since a causal position sees only
the tokens before it; so the log-probabilities equal one plain forward pass per text within fp32 rounding. The
vocabulary projection runs once per distinct scored node (a token both sentences of a pair share is scored once).

The price is attention over the whole row (masked entries are computed and discarded): per token about
row width / (6 x hidden size) of the linear layers' work, ~8% at 256 tokens for SmolLM2. `plan_cost` says what a
call costs on this path, and `lm_scoring.continuation_scores` takes it only where it is the cheaper one. A model
whose forward ignores a 4-D mask or explicit positions (ALiBi, sliding windows, recurrent layers) fails a probe
once per model and never takes this path.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Nodes per packed row. Attention over a row costs ~ width/(6 x hidden) of a token's linear work (8% at 256 for
#: SmolLM2), while a shorter row duplicates more ancestors; BBQ's contexts (60-120 tokens, each with 3 answers,
#: shared by 2 questions) fit two or three to a row.
ROW_TOKENS = 256
#: The least a forward pass costs, in tokens: a pass reads every weight once, so one with fewer rows than this
#: (a BBQ stem of 60 tokens, three 4-token answers) runs its products far below the machine's matmul rate — 24 BBQ
#: items from 24 templates took 6.8 s of CPU on the cached-stem path (48 passes), which the token count alone
#: called cheaper than packing them.
MIN_FORWARD_TOKENS = 128
#: Rows a unit may be placed in (the most recently opened): first fit stays linear in the call's size.
OPEN_ROWS = 32
#: Largest |log-prob difference| between the packed rows and plain forward passes on the probe.
PROBE_TOLERANCE = 1e-4

#: Per model: whether its forward honours a 4-D mask and explicit position ids (probed once).
_TREE_OK: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


@dataclass
class Trie:
    """Distinct token prefixes of a call: node i is token `tokens[i]` at `depth[i]` after node `parent[i]` (-1 at
    the root); a parent is always numbered before its children."""

    tokens: list[int] = field(default_factory=list)
    parent: list[int] = field(default_factory=list)
    depth: list[int] = field(default_factory=list)
    children: list[dict[int, int]] = field(default_factory=list)
    roots: dict[int, int] = field(default_factory=dict)

    def add(self, sequence: Sequence[int]) -> list[int]:
        """Insert a sequence; its node per position."""
        nodes, parent, level = [], -1, self.roots
        for position, token in enumerate(sequence):
            node = level.get(token)
            if node is None:
                node = len(self.tokens)
                level[token] = node
                self.tokens.append(int(token))
                self.parent.append(parent)
                self.depth.append(position)
                self.children.append({})
            nodes.append(node)
            parent, level = node, self.children[node]
        return nodes

    def __len__(self) -> int:
        return len(self.tokens)


@dataclass(frozen=True)
class Plan:
    """A call's trie, its packed rows (node ids, parents before children) and each pair's nodes."""

    trie: Trie
    rows: list[list[int]]
    nodes: list[list[int]]  # per pair: the node at each position of context + continuation


def build_plan(pairs: Sequence[tuple[Sequence[int], Sequence[int]]], row_tokens: int = ROW_TOKENS) -> Plan:
    """The trie of every (context + continuation) and its rows; every sequence must fit a row."""
    trie = Trie()
    nodes = [trie.add(list(context) + list(continuation)) for context, continuation in pairs]
    size = [1] * len(trie)
    for node in range(len(trie) - 1, -1, -1):  # children are numbered after their parent
        if trie.parent[node] >= 0:
            size[trie.parent[node]] += size[node]
    # Rows of a balanced capacity: a batch pads every row to its widest, so rows of equal length waste least (next
    # fit in trie order into 256-token rows left them 78% full on CrowS-Pairs: 20% padding).
    wanted = len(trie)
    capacity = min(row_tokens, -(-wanted // max(1, -(-wanted // row_tokens))) + 8)
    units: list[int] = []  # subtrees that fit a row with their ancestors (a text longer than that: its last token)
    stack = sorted(trie.roots.values(), reverse=True)
    while stack:
        node = stack.pop()
        if trie.depth[node] + size[node] <= capacity or not trie.children[node]:
            units.append(node)
        else:
            stack.extend(sorted(trie.children[node].values(), reverse=True))
    # First fit, largest units first; a unit's ancestors already in a row cost nothing there; only the last
    # `OPEN_ROWS` rows are tried (bounded work on a call of a whole benchmark).
    members = {unit: _ancestors(trie, unit) + _subtree(trie, unit) for unit in units}
    open_rows: list[set[int]] = []
    for unit in sorted(units, key=lambda u: -len(members[u])):
        for row in open_rows[-OPEN_ROWS:]:
            new = [n for n in members[unit] if n not in row]
            if len(row) + len(new) <= capacity:
                row.update(new)
                break
        else:
            open_rows.append(set(members[unit]))
    return Plan(trie, [sorted(row) for row in open_rows], nodes)


def _ancestors(trie: Trie, node: int) -> list[int]:
    out = []
    node = trie.parent[node]
    while node >= 0:
        out.append(node)
        node = trie.parent[node]
    return out


def _subtree(trie: Trie, node: int) -> list[int]:
    out, stack = [], [node]
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(trie.children[current].values())
    return out


def _batches(rows: list[list[int]], tokens_per_batch: int) -> list[list[int]]:
    """Row indices sorted by length, cut so that rows x widest row stays within the budget."""
    batches: list[list[int]] = []
    current: list[int] = []
    for index in sorted(range(len(rows)), key=lambda r: len(rows[r])):
        if current and (len(current) + 1) * len(rows[index]) > tokens_per_batch:
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


def plan_cost(plan: Plan, hidden_size: int, tokens_per_batch: int) -> float:
    """Work of a plan in token-equivalents of the linear layers: padded tokens (at least `MIN_FORWARD_TOKENS` a
    pass), each plus its row's attention (~ width / (6 x hidden) of a token's linear work)."""
    cost = 0.0
    for batch in _batches(plan.rows, tokens_per_batch):
        width = max(len(plan.rows[r]) for r in batch)
        cost += max(len(batch) * width, MIN_FORWARD_TOKENS) * (1 + width / (6 * hidden_size))
    return cost


def tree_scores(model: Any, pairs: Sequence[tuple[Sequence[int], Sequence[int]]], plan: Plan,
                with_entropy: bool, tokens_per_batch: int, device: Any,
                logits_at: Callable[[Any, dict[str, Any], Any, Any], Callable[[int, int], Any]],
                token_scores: Callable[..., tuple[np.ndarray, np.ndarray | None]],
                on_progress: Callable[[int, int], None] | None = None) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """(log-probs, entropies) per pair from `plan`'s packed rows. `logits_at(model, inputs, rows, positions)` gives
    a function of a block of scored positions to their logits; `token_scores` turns those into log p and entropy
    (lm_scoring's helpers: the same arithmetic as its other paths). Pairs must have non-empty continuations."""
    import torch

    trie = plan.trie
    # each distinct scored node (a continuation token) once: its parent's hidden state predicts it
    wanted: dict[int, int] = {}
    for (context, continuation), nodes in zip(pairs, plan.nodes, strict=True):
        for position in range(len(context), len(context) + len(continuation)):
            wanted.setdefault(nodes[position], len(wanted))
    row_of: dict[int, int] = {}  # a row holding the scored node (so its parent too, at the same depth)
    for index, row in enumerate(plan.rows):
        for node in row:
            if node in wanted and node not in row_of:
                row_of[node] = index
    by_row: dict[int, list[int]] = {}
    for node in wanted:
        by_row.setdefault(row_of[node], []).append(node)
    logprob = np.zeros(len(wanted))
    entropy = np.zeros(len(wanted)) if with_entropy else None
    batches = _batches(plan.rows, tokens_per_batch)
    batch_of_row = {index: number for number, batch in enumerate(batches) for index in batch}
    done_after = [0] * len(batches)  # progress: a pair is done once the batch of its last scored node has run
    for (context, continuation), nodes in zip(pairs, plan.nodes, strict=True):
        done_after[max(batch_of_row[row_of[nodes[p]]]
                       for p in range(len(context), len(context) + len(continuation)))] += 1
    finished = 0
    low = torch.finfo(next(model.parameters()).dtype).min
    for batch_number, batch in enumerate(batches):
        width = max(len(plan.rows[r]) for r in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        positions = np.zeros((len(batch), width), dtype=np.int64)
        allowed = np.zeros((len(batch), width, width), dtype=bool)
        rows_at, positions_at, targets, slots = [], [], [], []
        for number, index in enumerate(batch):
            row = plan.rows[index]
            local = {node: at for at, node in enumerate(row)}
            for at, node in enumerate(row):
                ids[number, at] = trie.tokens[node]
                positions[number, at] = trie.depth[node]
                parent = trie.parent[node]
                if parent >= 0:
                    allowed[number, at] = allowed[number, local[parent]]
                allowed[number, at, at] = True
            for at in range(len(row), width):  # padding sees itself only (a row of all -inf gives NaN)
                allowed[number, at, at] = True
            for node in by_row.get(index, ()):
                rows_at.append(number)
                positions_at.append(local[trie.parent[node]])
                targets.append(trie.tokens[node])
                slots.append(wanted[node])
        mask = torch.zeros((len(batch), 1, width, width), dtype=next(model.parameters()).dtype)
        mask.masked_fill_(~torch.from_numpy(allowed)[:, None], low)
        inputs = {"input_ids": torch.from_numpy(ids).to(device), "position_ids": torch.from_numpy(positions).to(device),
                  "attention_mask": mask.to(device), "use_cache": False}
        if rows_at:
            logits_of = logits_at(model, inputs, torch.tensor(rows_at, device=device),
                                  torch.tensor(positions_at, device=device))
            picked, step_entropy = token_scores(logits_of, torch.tensor(targets, device=device), with_entropy)
            logprob[slots] = picked
            if entropy is not None and step_entropy is not None:
                entropy[slots] = step_entropy
        finished += done_after[batch_number]
        if on_progress is not None:
            on_progress(finished, len(pairs))
    out = []
    for (context, continuation), nodes in zip(pairs, plan.nodes, strict=True):
        slot = [wanted[nodes[p]] for p in range(len(context), len(context) + len(continuation))]
        out.append((logprob[slot].copy(), None if entropy is None else entropy[slot].copy()))
    return out


def tree_ok(model: Any, device: Any, logits_at: Callable[..., Any], token_scores: Callable[..., Any]) -> bool:
    """Whether packed rows give `model` the same log-probs as plain forward passes (probed once per model): two
    sequences sharing a prefix, so a node's row index differs from its depth and a wrong mask or position shows."""
    import torch

    known = _TREE_OK.get(model)
    if known is not None:
        return known
    vocab = int(getattr(model.config, "vocab_size", 0) or 0)
    result = False
    if vocab > 12:
        pairs = [([1, 5], [9, 2, 7]), ([1, 5, 9], [3, 11]), ([4], [6, 8])]
        try:
            plan = build_plan(pairs, row_tokens=64)
            got = tree_scores(model, pairs, plan, False, 4096, device, logits_at, token_scores)
            result = True
            for (context, continuation), (logprobs, _) in zip(pairs, got, strict=True):
                logits = model(input_ids=torch.tensor([context + continuation], device=device)).logits[0].float()
                steps = torch.log_softmax(logits[len(context) - 1:-1], dim=-1)
                expected = steps[torch.arange(len(continuation)), torch.tensor(continuation)].double().cpu().numpy()
                result = result and bool(np.all(np.abs(expected - logprobs) <= PROBE_TOLERANCE))
        except Exception:  # a model that refuses a 4-D mask or position ids: the cached-stem path is always right
            result = False
    _TREE_OK[model] = result
    return result
