"""Simulated judgments with a known truth, for checking that the intervals cover it (tests, docs).

The shape of REALSumm: `n_items` documents × `n_systems` systems. The systems are fixed (drawn once from
`system_seed`, like REALSumm's 24), the documents are a sample from a population (drawn from `seed`), so the
truth of each rule is a property of the fixed systems and the document population:

    human(d, s)  = q_s + a·u_d + e          (q_s: system quality, u_d: how easy document d is)
    metric(d, s) = b·q_s + β_s + c·u_d + e' (β_s: what the metric wrongly rewards in system s)

e, e' are independent normal noise. Documents make the candidates of one document depend on each other (u_d is
in all 24), which is why the interval resamples documents. `truth(rule)` is each rule's value on a large sample
of the population (`population_items` documents): pooled ρ over all candidates, the mean within-document ρ, and
ρ of the systems' expected scores.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairness_core.data.judgments import Judgments, from_frame


@dataclass(frozen=True)
class Design:
    n_items: int = 100
    n_systems: int = 24
    a: float = 0.8  # document effect on the human score
    b: float = 0.6  # system quality seen by the metric
    c: float = 0.9  # document effect on the metric (shared with people: inflates the pooled rule)
    noise_human: float = 1.0
    noise_metric: float = 1.0
    system_bias: float = 0.4  # spread of β_s
    system_seed: int = 12345

    def systems(self) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(self.system_seed)
        return rng.normal(0, 1, self.n_systems), rng.normal(0, self.system_bias, self.n_systems)

    def draw(self, n_items: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """(human, metric) as (n_items, n_systems) matrices for a fresh sample of documents."""
        quality, bias = self.systems()
        rng = np.random.default_rng(seed)
        u = rng.normal(0, 1, (n_items, 1))
        human = quality + self.a * u + rng.normal(0, self.noise_human, (n_items, self.n_systems))
        metric = self.b * quality + bias + self.c * u + rng.normal(0, self.noise_metric, (n_items, self.n_systems))
        return human, metric

    def judgments(self, seed: int) -> tuple[Judgments, np.ndarray]:
        """A judgments set of `n_items` documents and the metric's scores in its row order."""
        human, metric = self.draw(self.n_items, seed)
        frame = pd.DataFrame({"item_id": np.repeat([f"d{i}" for i in range(self.n_items)], self.n_systems),
                              "system": np.tile([f"s{k}" for k in range(self.n_systems)], self.n_items),
                              "candidate": "", "reference": "r", "human": human.ravel()})
        return from_frame(frame, f"simulated-{seed}"), metric.ravel()

    def truth(self, rule: str, population_items: int = 40_000, seed: int = 987654) -> float:
        """Spearman ρ of the rule on the document population (a large sample; the systems' expected scores for
        the system rule, which are exact: E[metric | s] = b·q_s + β_s, E[human | s] = q_s)."""
        from scipy.stats import rankdata, spearmanr

        if rule == "system":
            quality, bias = self.systems()
            return float(spearmanr(self.b * quality + bias, quality).statistic)
        human, metric = self.draw(population_items, seed)
        if rule == "pooled":
            return float(spearmanr(metric.ravel(), human.ravel()).statistic)
        rh, rm = rankdata(human, axis=1), rankdata(metric, axis=1)
        rh, rm = rh - rh.mean(axis=1, keepdims=True), rm - rm.mean(axis=1, keepdims=True)
        per_item = (rh * rm).sum(axis=1) / np.sqrt((rh * rh).sum(axis=1) * (rm * rm).sum(axis=1))
        return float(per_item.mean())
