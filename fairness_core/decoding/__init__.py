"""Decoding sweeps (Dhamala et al. 2022): request (shared by CLI and page), task (through the generic
generate-then-score task) and summary (measures with template-bootstrap intervals)."""
