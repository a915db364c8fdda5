"""CLI subcommands, one module each (see fairness_core.cli)."""
