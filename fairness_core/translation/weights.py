"""DATScore's arithmetic: direction scores (Eq. 1) with uniform or entropy term weights (Eq. 4), one-vs-rest
direction weights (Eq. 3), the weighted sum (Eq. 2), and the meta-evaluation statistics: WMT's Kendall
τ-like (Eq. 5) and Pearson |r|.

Equation numbers are the paper's (../shared/seeds/datscore_data-augmented-translation-score.txt). Pure numpy:
no model, no store; the backbones (`backbones.py`) produce the per-token log-probabilities and entropies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

# Token aggregations of Eq. 1 (names kept from the stored runs: "uniform" is the mean, "entropy" the paper's
# entropy-weighted sum). Two vary the weights (1 vs entropy) and two the normalisation (sum vs mean), so an
# ablation can change one of them at a time.
UNIFORM, ENTROPY = "uniform", "entropy"  # mean log-prob (BARTScore) | Σ_t H_t log p (Eq. 1 + Eq. 4, DATScore)
SUM, ENTROPY_MEAN = "sum", "entropy-mean"  # Σ_t log p (w_t = 1 as Eq. 1 writes it) | Σ H_t log p / Σ H_t
TERM_WEIGHTINGS = (UNIFORM, SUM, ENTROPY, ENTROPY_MEAN)
TERM_LABELS = {UNIFORM: "mean (w_t = 1/m, BARTScore)", SUM: "plain sum (w_t = 1)",
               ENTROPY: "entropy-weighted sum (Eq. 1 + Eq. 4, DATScore)",
               ENTROPY_MEAN: "entropy-normalised mean (w_t = H_t / Σ H)"}
ONE_VS_REST = "one-vs-rest"
ONE_VS_REST_CLIPPED = "one-vs-rest, negatives clipped to 0"
AVERAGINGS = (ONE_VS_REST, UNIFORM, ONE_VS_REST_CLIPPED)


def step_entropies(step_logprobs: np.ndarray) -> np.ndarray:
    """Eq. 4: w_t = −Σ_{i=1..v} P_t(z_i) log P_t(z_i), the entropy (nats) of the full output distribution at
    each target step; `step_logprobs` is (m steps, v vocabulary) of log-probabilities."""
    logp = np.asarray(step_logprobs, dtype=np.float64)
    p = np.exp(logp)
    # 0 · log 0 = 0: a token with probability 0 (log-prob −inf) contributes nothing.
    return -np.where(p > 0, p * logp, 0.0).sum(axis=-1)


def direction_score(logprobs: Sequence[float] | np.ndarray, entropies: Sequence[float] | np.ndarray | None = None,
                    term_weighting: str = UNIFORM) -> float:
    """Eq. 1: Score_{X→Y} = Σ_t w_t log P(y_t | X, y_<t), with one of four token aggregations:

    uniform: w_t = 1/m, the mean token log-probability that BARTScore's implementation computes;
    sum: w_t = 1 (the paper writes "all equal to 1" for BARTScore), so longer targets score lower;
    entropy: w_t = the step's entropy over the full vocabulary (Eq. 4), unnormalised as in Eq. 1 (DATScore);
    entropy-mean: w_t = H_t / Σ_s H_s, the entropy weights normalised to sum to 1 (a weighted mean).
    A target with no scored token has no score (NaN); so has entropy-mean when every entropy is 0.
    """
    lp = np.asarray(logprobs, dtype=np.float64)
    if term_weighting not in TERM_WEIGHTINGS:
        raise ValueError(f"term weighting must be one of {', '.join(TERM_WEIGHTINGS)} (got {term_weighting!r})")
    if lp.size == 0:
        return float("nan")
    if term_weighting == UNIFORM:
        return float(lp.mean())
    if term_weighting == SUM:
        return float(lp.sum())
    if entropies is None:
        raise ValueError("entropy term weighting needs the per-step entropies (Eq. 4)")
    w = np.asarray(entropies, dtype=np.float64)
    if w.shape != lp.shape:
        raise ValueError(f"got {lp.size} log-probabilities but {w.size} entropies")
    if term_weighting == ENTROPY:
        return float((w * lp).sum())
    total = float(w.sum())
    return float((w * lp).sum() / total) if total > 0 else float("nan")


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson r; NaN when either side is constant (r is undefined)."""
    dx, dy = x - x.mean(), y - y.mean()
    denominator = np.sqrt((dx * dx).sum() * (dy * dy).sum())
    return float((dx * dy).sum() / denominator) if denominator > 0 else float("nan")


def correlation_matrix(scores: np.ndarray) -> np.ndarray:
    """Pearson r between every two direction columns of `scores` (n segments × k directions)."""
    k = scores.shape[1]
    out = np.eye(k)
    for a in range(k):
        for b in range(a + 1, k):
            out[a, b] = out[b, a] = _pearson(scores[:, a], scores[:, b])
    return out


def complete_rows(scores: np.ndarray) -> np.ndarray:
    """Mask of segments whose every direction score is finite (the rows Eq. 3 is computed over)."""
    return np.isfinite(scores).all(axis=1)


def one_vs_rest_weights(scores: np.ndarray) -> np.ndarray:
    """Eq. 3: w_{X→Y} = Σ_{(X',Y') ≠ (X,Y)} Corr(Score_{X→Y}, Score_{X'→Y'}), unnormalised.

    `scores` is (n segments × k directions); the correlations are Pearson r over the segments whose every
    direction score is finite (stated rule: a segment with a missing score does not enter the weights). A
    constant direction has no correlation (r undefined) and contributes 0 to every sum (stated rule).
    Needs at least 2 such segments and 2 directions.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[1] < 2:
        raise ValueError("one-vs-rest weights need at least 2 directions")
    rows = scores[complete_rows(scores)]
    if rows.shape[0] < 2:
        raise ValueError(f"one-vs-rest weights need at least 2 segments with every direction scored "
                         f"(got {rows.shape[0]}): a correlation over one segment is undefined")
    corr = np.nan_to_num(correlation_matrix(rows), nan=0.0)
    return corr.sum(axis=1) - np.diag(corr)


def uniform_weights(k: int) -> np.ndarray:
    """The arithmetic average of the directions (BARTScore's F-score averaging): w = 1/k each."""
    return np.full(k, 1.0 / k)


def combine(scores: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Eq. 2: DATScore = Σ_{X≠Y} w_{X→Y} Score_{X→Y}, per segment (NaN where any direction is missing)."""
    scores = np.asarray(scores, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    if scores.shape[1] != weights.size:
        raise ValueError(f"got {scores.shape[1]} direction columns but {weights.size} weights")
    return scores @ weights


def clipped_weights(weights: np.ndarray) -> np.ndarray:
    """Eq. 3 weights with every negative weight set to 0 (a stated option, not the paper: Eq. 3 lets a direction
    that anti-correlates with the others count *against* DATScore, which the paper does not intend)."""
    return np.maximum(np.asarray(weights, dtype=np.float64), 0.0)


def direction_weights(scores: np.ndarray, averaging: str = ONE_VS_REST) -> np.ndarray:
    if averaging == ONE_VS_REST:
        return one_vs_rest_weights(scores)
    if averaging == ONE_VS_REST_CLIPPED:
        return clipped_weights(one_vs_rest_weights(scores))
    if averaging == UNIFORM:
        return uniform_weights(np.asarray(scores).shape[1])
    raise ValueError(f"averaging must be one of {', '.join(AVERAGINGS)} (got {averaging!r})")


def concordance(metric: Mapping[str, float], pairs: Iterable[tuple[str, str]]) -> tuple[int, int]:
    """(Concordant, Discordant) counts over human relative-ranking pairs (better_id, worse_id).

    A pair is concordant when the metric scores the better one strictly higher; a metric tie counts as
    Discordant, as in WMT (Bojar et al., 2017). A pair with a NaN metric score is skipped (not counted).
    """
    concordant = discordant = 0
    for better, worse in pairs:
        a, b = metric[better], metric[worse]
        if not (np.isfinite(a) and np.isfinite(b)):
            continue
        if a > b:
            concordant += 1
        else:
            discordant += 1
    return concordant, discordant


def kendall_tau_like(metric: Mapping[str, float], pairs: Iterable[tuple[str, str]]) -> float:
    """Eq. 5: τ = (|Concordant| − |Discordant|) / (|Concordant| + |Discordant|), metric ties Discordant."""
    concordant, discordant = concordance(metric, pairs)
    total = concordant + discordant
    return float("nan") if total == 0 else (concordant - discordant) / total


def pearson_abs(metric: Sequence[float] | np.ndarray, human: Sequence[float] | np.ndarray) -> float:
    """|Pearson r| between metric and direct-assessment scores (Tables 1, 3–5), over finite pairs."""
    x, y = np.asarray(metric, dtype=np.float64), np.asarray(human, dtype=np.float64)
    keep = np.isfinite(x) & np.isfinite(y)
    if keep.sum() < 2:
        return float("nan")
    return abs(_pearson(x[keep], y[keep]))
