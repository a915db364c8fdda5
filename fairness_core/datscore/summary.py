"""Tables the page and the CLI show: Eq. 3 weights, Eq. 2 scores, correlations between directions, the
CLI's `--direction-scores` payload and the per-segment view.

Weights are corpus state: computed once over every fully scored segment of the corpus (recorded with the
result), never inside a bootstrap resample.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from fairness_core.datscore.request import DirectionScores
from fairness_core.translation import weights as W


@dataclass(frozen=True)
class CorpusScores:
    """DATScore of a corpus under one (term weighting, averaging) choice."""

    segments: tuple[str, ...]
    directions: tuple[str, ...]
    matrix: np.ndarray  # (n, k) direction scores
    weights: np.ndarray  # (k,) Eq. 3 (or uniform)
    scores: np.ndarray  # (n,) Eq. 2
    averaging: str
    n_weight_segments: int

    def weights_dict(self) -> dict[str, float]:
        return {d: float(w) for d, w in zip(self.directions, self.weights, strict=True)}

    def scores_dict(self) -> dict[str, float]:
        return dict(zip(self.segments, (float(s) for s in self.scores), strict=True))

    def correlation_table(self) -> pd.DataFrame:
        rows = self.matrix[W.complete_rows(self.matrix)]
        return pd.DataFrame(W.correlation_matrix(rows), index=list(self.directions), columns=list(self.directions))


def corpus_scores(segments: Sequence[str], directions: Sequence[str], matrix: np.ndarray,
                  averaging: str = W.ONE_VS_REST) -> CorpusScores:
    """Eq. 3 weights over the corpus, then Eq. 2 per segment."""
    matrix = np.asarray(matrix, dtype=np.float64)
    weights = W.direction_weights(matrix, averaging)
    return CorpusScores(tuple(segments), tuple(directions), matrix, weights, W.combine(matrix, weights), averaging,
                        int(W.complete_rows(matrix).sum()))


def _json_number(value: float) -> float | None:
    return None if not math.isfinite(value) else float(value)


def cli_payload(direction_scores: DirectionScores, relative_ranking: Sequence[tuple[str, str, str]] | None = None,
                direct_assessment: Mapping[str, float] | None = None) -> dict[str, Any]:
    """The exact `datscore --direction-scores` output: {"weights", "scores", "kendall_tau_like" (with RR),
    "pearson_abs" (with DA)}; Eq. 3 weights unnormalised, Eq. 2 scores (null for an incomplete segment)."""
    result = corpus_scores(direction_scores.segments, direction_scores.directions, direction_scores.matrix)
    scores = result.scores_dict()
    payload: dict[str, Any] = {"weights": result.weights_dict(),
                               "scores": {k: _json_number(v) for k, v in scores.items()}}
    if relative_ranking is not None:
        payload["kendall_tau_like"] = _json_number(W.kendall_tau_like(scores, [(b, w) for b, w, _ in relative_ranking]))
    if direct_assessment is not None:
        ids = list(direct_assessment)
        payload["pearson_abs"] = _json_number(W.pearson_abs([scores[i] for i in ids],
                                                            [direct_assessment[i] for i in ids]))
    return payload


def weights_table(result: CorpusScores) -> pd.DataFrame:
    """direction, Eq. 3 weight, weight share (for reading only; Eq. 2 uses the unnormalised weights)."""
    total = float(np.sum(result.weights))
    return pd.DataFrame({"direction": list(result.directions), "weight": result.weights,
                         "share": result.weights / total if total else np.nan})


def segment_view(frame: pd.DataFrame, segment_id: str, result: CorpusScores) -> pd.DataFrame:
    """One segment: direction, its score, its corpus weight, weighted contribution (Eq. 2 term)."""
    i = result.segments.index(segment_id)
    return pd.DataFrame({"direction": list(result.directions), "score": result.matrix[i],
                         "weight": result.weights, "contribution": result.matrix[i] * result.weights})


def token_frame(scores: pd.DataFrame, segment_id: str, direction: str) -> pd.DataFrame:
    """The hypothesis tokens of one scored direction of one segment: position, token, log-prob and the step's
    entropy (Eq. 4); empty when that direction kept no tokens."""
    detail = scores[(scores["segment_id"] == segment_id) & (scores["direction"] == direction)]
    attrs = detail["attrs"].iloc[0] if len(detail) else {}
    if not attrs.get("tokens"):
        return pd.DataFrame(columns=["position", "token", "logprob", "entropy"])
    return pd.DataFrame({"position": range(len(attrs["tokens"])), "token": attrs["tokens"],
                         "logprob": attrs["logprobs"], "entropy": attrs["entropies"]})


#: what one direction score is, per token aggregation (Eq. 1 with the term weights of `W.TERM_LABELS`)
_DIRECTION_SCORE = {
    W.SUM: "the sum of its log-probabilities over the target's tokens",
    W.ENTROPY: "the sum over the target's tokens of log-probability times the step's entropy (Eq. 4's weight)",
    W.UNIFORM: "the mean log-probability per target token",
    W.ENTROPY_MEAN: "the entropy-weighted mean log-probability per target token",
}
#: aggregations whose direction score is a sum over tokens (it grows with length); the others are per-token means
_SUMMED = (W.SUM, W.ENTROPY)


@dataclass(frozen=True)
class SegmentSummary:
    """What one segment's Eq. 2 number is made of, so a reader can put a scale on it."""

    score: float  # Eq. 2: Σ_d w_d · score_d
    term_weighting: str
    weight_sum: float  # Σ_d w_d (Eq. 3 weights are not normalised)
    mean_direction: float  # score / weight_sum: the weighted mean direction score, on the directions' own scale
    per_token: float  # Σ_d w_d score_d / Σ_d w_d n_d (n_d = 1 where the aggregation already averages over tokens)
    tokens: tuple[int, int] | None  # fewest and most target tokens a direction scored (None when not recorded)
    lowest: tuple[str, float]  # (direction, score) of the direction that scored lowest
    highest: tuple[str, float]
    rank: int  # 1 = the highest DATScore among the corpus's scored segments (0 when this one has none)
    n_ranked: int
    n_directions: int

    @property
    def summed(self) -> bool:
        return self.term_weighting in _SUMMED

    def sentence(self) -> str:
        """The headline in words: what the number adds up, per token, and where it sits among the directions."""
        tokens = f", over {self.tokens[0]}–{self.tokens[1]} tokens here" if self.tokens and self.summed else ""
        made_of = (f"Eq. 2 adds the {self.n_directions} direction scores, each times its Eq. 3 weight (the weights "
                   f"sum to {self.weight_sum:.2f}); a direction score is "
                   f"{_DIRECTION_SCORE.get(self.term_weighting, self.term_weighting)}{tokens}.")
        if math.isfinite(self.per_token):
            per = (f" Divided by the weighted token count that is {self.per_token:.3f} per token."
                   if self.summed else "")
        else:
            per = " The weights sum to 0 or less, so there is no per-token figure."
        where = (f" The weighted mean direction (score ÷ weight sum) is {self.mean_direction:.3f}, between the lowest "
                 f"direction {self.lowest[0]} ({self.lowest[1]:.3f}) and the highest {self.highest[0]} "
                 f"({self.highest[1]:.3f})." if math.isfinite(self.mean_direction) else "")
        return made_of + per + where


def segment_summary(scores: pd.DataFrame, segment_id: str, result: CorpusScores, term_weighting: str) -> SegmentSummary:
    """The segment's Eq. 2 score with its scale: weight sum, per-token figure, range over directions, corpus rank."""
    i = result.segments.index(segment_id)
    row, weights = result.matrix[i], result.weights
    counts = np.full(len(result.directions), np.nan)
    if "n_tokens" in scores.columns:
        mine = scores[scores["segment_id"] == segment_id].drop_duplicates("direction").set_index("direction")
        counts = mine["n_tokens"].reindex(list(result.directions)).to_numpy(dtype=np.float64)
    recorded = bool(np.isfinite(counts).all())
    summed = term_weighting in _SUMMED
    # Σ_d w_d n_d: the weighted number of tokens the score adds up (n_d = 1 for an aggregation that averages)
    denominator = math.nan if summed and not recorded else float(np.sum(weights * (counts if summed else 1.0)))
    weight_sum = float(np.sum(weights))
    score = float(result.scores[i])
    finite = np.isfinite(row)
    lowest = int(np.argmin(np.where(finite, row, np.inf)))
    highest = int(np.argmax(np.where(finite, row, -np.inf)))
    ranked = result.scores[np.isfinite(result.scores)]
    return SegmentSummary(
        score=score, term_weighting=term_weighting, weight_sum=weight_sum,
        mean_direction=score / weight_sum if weight_sum > 0 else math.nan,
        per_token=score / denominator if denominator > 0 else math.nan,
        tokens=(int(counts.min()), int(counts.max())) if recorded else None,
        lowest=(result.directions[lowest], float(row[lowest])),
        highest=(result.directions[highest], float(row[highest])),
        rank=int(np.sum(ranked > score)) + 1 if math.isfinite(score) else 0, n_ranked=int(ranked.size),
        n_directions=len(result.directions))
