"""Decoding configurations and grids, systems, the generate-then-score task, text helpers, diversity."""
