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
import os
import sys
from collections.abc import Sequence
from typing import Any

from fairness_core.store.manifest import json_safe  # strict JSON for every --json (commands and tests use it)

EXECUTOR_CHOICES = ("local", "ray")  # = fairness_core.jobs.EXECUTORS (not imported: --help stays fast)

COMMAND_MODULES = (
    "fairness_core.commands.decoding",
    "fairness_core.commands.models",
    "fairness_core.commands.runs",
    "fairness_core.commands.metric_bias",
    "fairness_core.commands.cairo",
    "fairness_core.commands.adaptation",  # vbcm, templates, adapt
    "fairness_core.commands.datscore",
    "fairness_core.commands.metric_quality",
    "fairness_core.commands.mitigate",  # debiasing adapters: train, evaluate, export, import
    "fairness_core.commands.serve",  # a local OpenAI-compatible server for the --endpoint* flags
    "fairness_core.commands.compare",  # compare, sql, report
    "fairness_core.commands.audit",  # audit-scorer: is the judge itself biased? (issue 29)
    "fairness_core.commands.check",  # check: a fairness test suite in one file, for CI (issue 34)
    "fairness_core.commands.counterfactual",  # counterfactual: prompt variants from the user's prompts (issue 34)
    "fairness_core.commands.plan",  # plan: the units a question needs, from a stored pilot run (issue 33)
    "fairness_core.commands.slices",  # slices: the worst cells of a generation run, with FDR control (issue 46)
    "fairness_core.commands.stereotypes",  # stereotypes: CrowS-Pairs, StereoSet, BBQ by likelihood (issue 44)
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

    # SIGPIPE stays ignored: with its default action, a socket write to a peer that went away (an endpoint
    # server, a Ray node) would kill the process silently instead of raising an error the client retries.
    # `... | head` still ends quietly: a closed stdout is caught below.
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = int(args.handler(args) or 0)
        sys.stdout.flush()  # here, so a reader that left (`| head`) is caught below, not at interpreter exit
        return code
    except BrokenPipeError:
        if not _stdout_closed():
            raise
        return 1
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


def _stdout_closed() -> bool:
    """After a BrokenPipeError: is it stdout whose reader left (`| head`)? Then stdout is pointed at /dev/null,
    so the interpreter's final flush does not fail again. A broken socket elsewhere is not this."""
    import select

    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        broken = any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False
    if broken:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
    return broken


class UserFacingError(Exception):
    """Bad input or an unavailable resource: printed as one line, exit code 2, no traceback."""


def print_json(payload: Any) -> None:
    """The one writer of every command's `--json` output: strict JSON (NaN and ±inf are null)."""
    json.dump(json_safe(payload), sys.stdout, indent=2, ensure_ascii=False, allow_nan=False)
    sys.stdout.write("\n")


def open_store(args: argparse.Namespace) -> Any:
    from fairness_core.store import RunStore

    chosen = getattr(args, "store", None)
    if chosen is not None and not chosen.strip():  # `--store ''` is a mistake, not a request for the default
        raise UserFacingError("--store is empty; give a .duckdb file, or leave --store out for the default store")
    return RunStore(chosen)


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


ENDPOINT_WORD = "endpoint"  # in --model / --systems: the endpoint the --endpoint* flags name


def add_endpoint_arguments(parser: argparse.ArgumentParser) -> None:
    """--endpoint NAME (from endpoints.toml) or --endpoint-url/--endpoint-model/--endpoint-key-env."""
    group = parser.add_argument_group("OpenAI-compatible endpoint (docs/endpoints.md)")
    group.add_argument("--endpoint", metavar="NAME", help="an endpoint configured in endpoints.toml")
    group.add_argument("--endpoint-url", metavar="URL", help="base URL of an OpenAI-compatible server, e.g. "
                       "http://127.0.0.1:8000/v1")
    group.add_argument("--endpoint-model", metavar="NAME", help="the model name the server serves")
    group.add_argument("--endpoint-key-env", metavar="VAR",
                       help="NAME of the environment variable that holds the API key (never the key itself)")
    group.add_argument("--endpoint-in-flight", type=int, metavar="N",
                       help="concurrent requests (default 8; throughput only, results do not depend on it)")


def endpoint_source(args: argparse.Namespace) -> str | None:
    """The model-source string of the endpoint the flags name, or None (UserFacingError for bad flags)."""
    from fairness_core.models.endpoint import configured_endpoint, endpoint_from_flags

    name = getattr(args, "endpoint", None)
    url, model = getattr(args, "endpoint_url", None), getattr(args, "endpoint_model", None)
    key_env, in_flight = getattr(args, "endpoint_key_env", None), getattr(args, "endpoint_in_flight", None)
    try:
        if name:
            if url or model or key_env:
                raise ValueError("give either --endpoint NAME or --endpoint-url/--endpoint-model, not both")
            endpoint = configured_endpoint(name)
            if in_flight:
                from dataclasses import replace

                endpoint = replace(endpoint, max_in_flight=in_flight)
            return endpoint.source()
        endpoint = endpoint_from_flags(url, model, key_env, in_flight)
    except ValueError as error:
        raise UserFacingError(str(error)) from None
    return None if endpoint is None else endpoint.source()


def resolve_endpoint_word(model: str, args: argparse.Namespace) -> str:
    """`endpoint` -> the flags' endpoint; `endpoint:NAME` (no URL) -> the one configured as NAME; else `model`."""
    from fairness_core.models.endpoint import configured_endpoint

    text = model.strip()
    if text == ENDPOINT_WORD:
        source = endpoint_source(args)
        if source is None:
            raise UserFacingError("'endpoint' as a model needs --endpoint NAME or --endpoint-url and --endpoint-model")
        return source
    if text.startswith(ENDPOINT_WORD + ":") and "://" not in text:
        try:
            return configured_endpoint(text.split(":", 1)[1]).source()
        except ValueError as error:
            raise UserFacingError(str(error)) from None
    return model
