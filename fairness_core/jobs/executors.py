"""Choosing where shards run: the executors by name. On its own so that the runner (which defines the local
executor and the types every executor uses) and the Ray executor (which uses those types) never import each
other."""

from __future__ import annotations

from typing import Any

from fairness_core.jobs.runner import Executor, LocalExecutor

EXECUTORS = ("local", "ray")


def get_executor(name: str = "local", **options: Any) -> Executor:
    """The executor called `name` ("local" or "ray"); `options` go to its constructor.

    "ray" joins the cluster in `RAY_ADDRESS` or starts a local Ray instance, on first use.
    """
    if name == "local":
        return LocalExecutor(**options)
    if name == "ray":
        from fairness_core.jobs.ray_executor import RayExecutor

        return RayExecutor(**options)
    raise ValueError(f"unknown executor {name!r}: choose one of {', '.join(EXECUTORS)}")
