"""Bias statistics: paired gaps, group disparities, VBCM, bootstrap confidence intervals."""

from fairness_core.bias.bootstrap import Estimate, bootstrap_mean

__all__ = ["Estimate", "bootstrap_mean"]
