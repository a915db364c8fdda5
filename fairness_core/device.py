"""What this machine computes on, found without importing torch (which costs ~3.5 s)."""

from __future__ import annotations

import functools
import os
import platform
import shutil
import subprocess
from typing import Any


@functools.lru_cache(maxsize=1)
def describe_device() -> dict[str, Any]:
    """{'kind': 'cuda'|'cpu', 'name', 'memory_gb', 'summary'} for the sidebar and `models --json`."""
    gpus = _nvidia_gpus()
    if gpus:
        name, memory_gb = gpus[0]
        return {
            "kind": "cuda",
            "name": name,
            "memory_gb": memory_gb,
            "count": len(gpus),
            "summary": f"GPU: {name} ({memory_gb:.0f} GiB)" + (f" ×{len(gpus)}" if len(gpus) > 1 else ""),
        }
    memory_gb = _total_memory_gb()
    cores = os.cpu_count() or 1
    name = _cpu_name()
    return {
        "kind": "cpu",
        "name": name,
        "memory_gb": memory_gb,
        "cores": cores,
        "summary": f"CPU: {name}, {cores} cores, {memory_gb:.0f} GiB RAM (no GPU: models run in fp32 on CPU)",
    }


def _nvidia_gpus() -> list[tuple[str, float]]:
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=5, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    gpus = []
    for line in out.strip().splitlines():
        name, _, memory = line.rpartition(",")
        try:
            gpus.append((name.strip(), float(memory) / 1024))
        except ValueError:
            continue
    return gpus


def _total_memory_gb() -> float:
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return 0.0


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
