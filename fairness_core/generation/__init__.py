"""Decoding configurations, batched sweeps, diversity."""
