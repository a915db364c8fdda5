"""Simulated judgments with a known truth, for checking that the intervals cover it (tests, docs).

The shape of REALSumm: `n_items` documents × `n_systems` systems. By default the systems are fixed (drawn once
from `system_seed`, like REALSumm's 24) and the documents are a sample from a population (drawn from `seed`), so
the truth of each rule is a property of the fixed systems and the document population — what an interval that
resamples documents speaks of. With `random_systems`, each dataset draws its systems too (from `seed`), and the
truth is a property of both populations (`population_truth`) — what an interval over documents and systems, or
over systems alone, speaks of:

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

from fairness_core.data.judgments import Judgments


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

    random_systems: bool = False  # each dataset draws its own systems (from its seed)
    fixed_documents: bool = False  # every dataset has the same documents (u_d from `system_seed + 1`)

    def systems(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(self.system_seed if seed is None else seed)
        return rng.normal(0, 1, self.n_systems), rng.normal(0, self.system_bias, self.n_systems)

    def draw(self, n_items: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """(human, metric) as (n_items, n_systems) matrices for a fresh sample of documents (and of systems, with
        `random_systems`; the same documents each time, with `fixed_documents`)."""
        quality, bias = self.systems(10_000_000 + seed if self.random_systems else None)
        rng = np.random.default_rng(seed)
        u = rng.normal(0, 1, (n_items, 1))
        if self.fixed_documents:
            u = np.random.default_rng(self.system_seed + 1).normal(0, 1, (n_items, 1))
        human = quality + self.a * u + rng.normal(0, self.noise_human, (n_items, self.n_systems))
        metric = self.b * quality + bias + self.c * u + rng.normal(0, self.noise_metric, (n_items, self.n_systems))
        return human, metric

    def judgments(self, seed: int) -> tuple[Judgments, np.ndarray]:
        """A judgments set of `n_items` documents and the metric's scores in its row order. Valid by construction
        (every system scores every item, in the readers' order), so the readers' row-by-row checks are skipped:
        coverage simulations build hundreds of these."""
        human, metric = self.draw(self.n_items, seed)
        frame = pd.DataFrame({"item_id": np.repeat([f"d{i}" for i in range(self.n_items)], self.n_systems),
                              "system": np.tile([f"s{k}" for k in range(self.n_systems)], self.n_items),
                              "candidate": "", "reference": "r", "source": "", "human": human.ravel()})
        return Judgments(f"simulated-{seed}", frame, "project-written"), metric.ravel()

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

    def population_truth(self, rule: str, samples: int = 20_000, seed: int = 987654) -> float:
        """Spearman ρ of the rule over the populations of systems and documents (what an interval that resamples
        systems speaks of). Human and metric scores are jointly normal, so the pooled and system rules are
        exact: Pearson r from the design's variances, then ρ = (6/π) arcsin(r/2) (Pearson 1907). System rule: the
        correlation of the systems' means over `n_items` documents (the document effect shifts every system
        alike). With `fixed_documents`, the pooled value is over these documents (their effects spread the
        candidates): Monte Carlo over `samples / 4` systems. The document rule is the expected within-document ρ
        over `n_systems` systems (Monte Carlo over `samples` documents: it does not depend on the document
        effect)."""
        from scipy.stats import rankdata

        b, spread = self.b, self.system_bias
        if rule == "pooled" and self.fixed_documents:  # the pooled value depends on these documents' effects
            from scipy.stats import spearmanr

            rng = np.random.default_rng(seed)
            u = np.random.default_rng(self.system_seed + 1).normal(0, 1, (self.n_items, 1))
            quality = rng.normal(0, 1, (1, samples // 4))
            human = quality + self.a * u + rng.normal(0, self.noise_human, (self.n_items, quality.shape[1]))
            metric = (b * quality + rng.normal(0, spread, quality.shape) + self.c * u
                      + rng.normal(0, self.noise_metric, human.shape))
            return float(spearmanr(metric.ravel(), human.ravel()).statistic)
        if rule == "system":
            noise_h, noise_m = self.noise_human ** 2 / self.n_items, self.noise_metric ** 2 / self.n_items
            r = b / np.sqrt((1 + noise_h) * (b * b + spread * spread + noise_m))
        elif rule == "pooled":
            r = (b + self.a * self.c) / np.sqrt((1 + self.a ** 2 + self.noise_human ** 2)
                                                 * (b * b + spread * spread + self.c ** 2 + self.noise_metric ** 2))
        else:
            rng = np.random.default_rng(seed)
            quality = rng.normal(0, 1, (samples, self.n_systems))
            human = quality + rng.normal(0, self.noise_human, quality.shape)
            metric = (b * quality + rng.normal(0, spread, quality.shape)
                      + rng.normal(0, self.noise_metric, quality.shape))
            rh, rm = rankdata(human, axis=1), rankdata(metric, axis=1)
            rh, rm = rh - rh.mean(axis=1, keepdims=True), rm - rm.mean(axis=1, keepdims=True)
            return float(((rh * rm).sum(axis=1) / np.sqrt((rh * rh).sum(axis=1) * (rm * rm).sum(axis=1))).mean())
        return float(6 / np.pi * np.arcsin(r / 2))
