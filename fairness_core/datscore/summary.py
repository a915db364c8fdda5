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
