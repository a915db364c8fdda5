"""Benchmarks that print ratios measured side by side in one process (absolute times are noisy here)."""
