"""Each study's public face (its `__init__.py`): what it lists exists, and importing it stays light.

Pages import their study's face at the top of the script and the CLI imports it in its handlers, so a face that
pulled in torch or transformers would make every page render and every command start seconds slower. The
layering test checks *who* may import a face; this one checks what a face costs.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
STUDIES = ("metric_bias", "decoding", "cairo", "adaptation", "datscore", "audit", "metric_quality", "mitigation",
           "check")
HEAVY = ("torch", "transformers", "sentence_transformers", "spacy", "ray")


def loaded(imports: list[str], watched: list[str], cwd: Path) -> list[str]:
    """In a fresh interpreter: import `imports`, then say which of `watched` are in sys.modules."""
    code = "".join(f"import {name}\n" for name in ["sys", *imports])
    code += f"print(repr([m for m in {watched!r} if m in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=True)
    return ast.literal_eval(done.stdout)


@pytest.mark.parametrize("study", STUDIES)
def test_every_name_a_face_lists_is_there(study: str) -> None:
    face = importlib.import_module(f"fairness_core.{study}")
    assert face.__all__ and [name for name in face.__all__ if not hasattr(face, name)] == []


def test_importing_every_face_loads_no_model_library() -> None:
    assert loaded([f"fairness_core.{study}" for study in STUDIES], list(HEAVY), REPO_ROOT) == []


def test_the_probe_sees_what_a_module_imports(tmp_path: Path) -> None:
    """The probe is real: a module importing a library not otherwise loaded is seen, and one that does not is not."""
    (tmp_path / "light.py").write_text("X = 1\n", encoding="utf-8")
    (tmp_path / "heavier.py").write_text("import fractions\n", encoding="utf-8")
    assert loaded(["light"], ["fractions"], tmp_path) == []
    assert loaded(["heavier"], ["fractions"], tmp_path) == ["fractions"]
