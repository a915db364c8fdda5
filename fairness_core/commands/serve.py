"""`serve`: an OpenAI-compatible server for the offline SmolLM2 on this machine (docs/endpoints.md).

    python -m fairness_core serve [--port 8000] [--continuous-batching]

Runs `transformers serve` (transformers[serving]) on the dequantised SmolLM2-135M-Instruct folder with a
generation config that samples, on 127.0.0.1, offline, and prints the --endpoint-url / --endpoint-model
to give the other commands. It runs until interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from fairness_core.cli import UserFacingError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("serve", help="serve the offline SmolLM2 through an OpenAI-compatible API "
                                                 "(transformers serve) for the --endpoint* flags")
    parser.add_argument("--host", default="127.0.0.1", help="listen address (default: this machine only)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--continuous-batching", action="store_true",
                        help="let the server batch concurrent requests (transformers serve --continuous-batching)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from fairness_core.models import ModelUnavailableError, offline_serving_folder

    if not 0 < args.port < 65536:
        raise UserFacingError(f"--port must be between 1 and 65535 (got {args.port})")
    try:
        folder = offline_serving_folder()
    except ModelUnavailableError as error:
        raise UserFacingError(str(error)) from None
    executable = Path(sys.executable).parent / "transformers"
    if not executable.exists():
        raise UserFacingError("transformers serve is not installed here (pip install 'transformers[serving]')")
    hub_cache = folder.parent / "hf-cache"  # its /v1/models lists this (empty) cache instead of failing on none
    hub_cache.mkdir(exist_ok=True)
    command = [str(executable), "serve", str(folder), "--host", args.host, "--port", str(args.port)]
    if args.continuous_batching:
        command.append("--continuous-batching")
    print(f"serving SmolLM2-135M-Instruct: --endpoint-url http://{args.host}:{args.port}/v1 "
          f"--endpoint-model {folder}", file=sys.stderr, flush=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(hub_cache)}
    try:
        return subprocess.call(command, env=env)
    except KeyboardInterrupt:
        return 0
