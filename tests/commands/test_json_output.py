"""`--json` output of every command is strict JSON: NaN and ±inf are written as null (JSON has neither), by
one writer, `fairness_core.cli.print_json`, that every command module uses."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairness_core.cli import COMMAND_MODULES, json_safe, print_json

REPO_ROOT = Path(__file__).resolve().parents[2]


def strict_loads(text: str):
    """json.loads that refuses NaN / Infinity (Python's json accepts them by default)."""
    def refuse(constant: str):
        raise ValueError(f"not JSON: {constant}")
    return json.loads(text, parse_constant=refuse)


def test_json_safe_turns_every_non_finite_number_into_null() -> None:
    payload = {"nan": float("nan"), "inf": float("inf"), "-inf": -math.inf, "np": np.float32("nan"),
               "np64": np.float64(0.5), "int": np.int64(3), "bool": np.bool_(True), "array": np.array([1.0, np.nan]),
               "pd": pd.NA, "nested": [{"x": (float("nan"), 2)}], 7: "int key"}
    assert json_safe(payload) == {"nan": None, "inf": None, "-inf": None, "np": None, "np64": 0.5, "int": 3,
                                  "bool": True, "array": [1.0, None], "pd": None, "nested": [{"x": [None, 2]}],
                                  "7": "int key"}


def test_print_json_writes_null_for_nan(capsys: pytest.CaptureFixture[str]) -> None:
    print_json({"r": float("nan"), "ci": [np.float64("-inf"), 1.5], "frame": pd.DataFrame(
        {"a": [1.0, np.nan]}).to_dict(orient="records")})
    assert strict_loads(capsys.readouterr().out) == {"r": None, "ci": [None, 1.5], "frame": [{"a": 1.0},
                                                                                           {"a": None}]}


def command_sources() -> list[Path]:
    return [REPO_ROOT / (name.replace(".", "/") + ".py") for name in COMMAND_MODULES]


def test_every_command_module_writes_json_only_through_print_json() -> None:
    """No command prints JSON by itself (json.dump/json.dumps), and every command with a --json flag imports
    the shared writer: a NaN anywhere in any command's payload is therefore written as null."""
    sources = [*command_sources(), REPO_ROOT / "fairness_core" / "cli.py"]
    assert len(sources) == len(COMMAND_MODULES) + 1 and all(p.exists() for p in sources)
    for path in sources:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == "print_json":
                continue
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    isinstance(node.func.value, ast.Name) and node.func.value.id == "json" and \
                    node.func.attr in ("dump", "dumps"):
                inside = [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "print_json"
                          and f.lineno <= node.lineno <= (f.end_lineno or f.lineno)]
                assert inside, f"{path.name}:{node.lineno} writes JSON without print_json"
        text = path.read_text(encoding="utf-8")
        if '"--json"' in text and path.name != "cli.py":
            assert "print_json" in text, f"{path.name} has --json but does not use print_json"

