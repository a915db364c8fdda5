"""Metric bias pipeline (Sun et al. 2022): `request` (data + metrics from plain values, shared by the
CLI and the page), `task` (stored jobs that score pairs), `summary` (gaps, bias tables, agreement)."""
