"""`python -m fairness_core ...`: every computation, headless.

Subcommands live in `fairness_core.commands.<name>` modules, each exposing
`register(subparsers)` that adds its parser and sets `handler=` to a function taking the parsed
args and returning an exit code. Adding a page's computation = adding a module to COMMAND_MODULES.
Command modules keep heavy imports (torch, transformers) inside their handlers so `--help` is fast.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

EXECUTOR_CHOICES = ("local", "ray")  # = fairness_core.jobs.EXECUTORS (not imported: --help stays fast)

COMMAND_MODULES = (
    "fairness_core.commands.decoding",
    "fairness_core.commands.models",
    "fairness_core.commands.runs",
    "fairness_core.commands.metric_bias",
    "fairness_core.commands.cairo",
    "fairness_core.commands.adaptation",  # vbcm, templates, adapt
    "fairness_core.commands.datscore",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m fairness_core",
        description="NLG Fairness Lab compute core: bias in text generation and in its metrics.",
    )
    parser.add_argument("--store", help="DuckDB run store (default: $FAIRNESS_LAB_STORE or data/runs.duckdb)")
    parser.add_argument("--executor", choices=EXECUTOR_CHOICES, default="local",
                        help="where batches run: this process (local), or Ray tasks on the cluster in "
                             "$RAY_ADDRESS or else on a local Ray instance (ray). Results do not depend on it.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in COMMAND_MODULES:
        if importlib.util.find_spec(module_name) is None:  # a page's commands land with the page
            continue
        importlib.import_module(module_name).register(subparsers)
    for subparser in subparsers.choices.values():  # also accepted after the subcommand
        subparser.add_argument("--executor", choices=EXECUTOR_CHOICES, default=argparse.SUPPRESS,
                               help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from fairness_core.jobs.ray_executor import RayUnavailableError

    # `... | head` should end quietly, not with a BrokenPipeError (signals belong to the main thread only)
    if hasattr(signal, "SIGPIPE") and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except (UserFacingError, RayUnavailableError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # a store that cannot be used is bad input too, not a crash
        from fairness_core.store import StoreError

        if not isinstance(error, StoreError):
            raise
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; finished batches are kept in the store and the next run resumes", file=sys.stderr)
        return 130


class UserFacingError(Exception):
    """Bad input or an unavailable resource: printed as one line, exit code 2, no traceback."""


def json_safe(value: Any) -> Any:
    """`value` with every NaN / ±inf float (Python, numpy or pandas) as None, numpy scalars and arrays as Python
    numbers and lists, tuples as lists: what strict JSON can hold (it has no NaN or Infinity)."""
    import math

    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {(k if isinstance(k, str) else str(k)): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_safe(v) for v in value]
    import numpy as np

    if isinstance(value, np.ndarray):
        return [json_safe(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return json_safe(value.item())
    try:
        import pandas as pd

        if value is pd.NA or value is pd.NaT:
            return None
    except ImportError:  # pandas is a dependency; kept optional here so the CLI core stays light
        pass
    return str(value)


def print_json(payload: Any) -> None:
    """The one writer of every command's `--json` output: strict JSON (NaN and ±inf are null)."""
    json.dump(json_safe(payload), sys.stdout, indent=2, ensure_ascii=False, allow_nan=False)
    sys.stdout.write("\n")


def open_store(args: argparse.Namespace) -> Any:
    from fairness_core.store import RunStore

    return RunStore(getattr(args, "store", None))


def progress_printer(label: str) -> Any:
    """A job progress callback drawing a tqdm bar on stderr (stdout stays clean for --json)."""
    from tqdm import tqdm

    bar: dict[str, Any] = {}

    def on_progress(progress: Any) -> None:
        if "bar" not in bar:
            bar["bar"] = tqdm(total=progress.total, desc=label, unit="batch", file=sys.stderr,
                              initial=progress.done, dynamic_ncols=True)
        current = bar["bar"]
        current.update(progress.done - current.n)
        if progress.done >= progress.total:
            current.close()

    return on_progress


def executor_from(args: argparse.Namespace) -> Any:
    """The executor chosen with --executor (says on stderr when it is not the local one)."""
    from fairness_core.jobs import get_executor

    executor = get_executor(getattr(args, "executor", "local"))
    if executor.name != "local":
        print(f"executor: {executor.describe()}", file=sys.stderr)
    return executor


def add_store_argument(parser: argparse.ArgumentParser) -> None:
    """Let `--store` also be given after the subcommand."""
    parser.add_argument("--store", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
