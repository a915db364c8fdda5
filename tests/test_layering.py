"""The layering of docs/FOUNDATION.md, checked on the source: every import of every module, parsed with `ast`.

Layers, lowest first (a module may import its own layer and the layers below, never above):

  base       fairness_core.{config, device, store, jobs, models}
  plug-ins   fairness_core.{metrics, scorers, generation, bias, data}
  pages      fairness_core.{metric_bias, decoding, cairo, adaptation, datscore, compare}   (page pipeline packages;
             compare reads runs of every kind: alignment, paired differences, SQL console, report)
  interface  fairness_core.{cli, commands, __main__}
  app        ui/, app_pages/, app.py   (the only code that may import streamlit)

Inside the base layer, `store` is the bottom (config only), `jobs` sits on `store`, and `models` may use `jobs`
(`checkpoint`: cancel and progress inside a long generation) but `jobs` never imports `models`. Imports inside
functions count (a lazy import is still a dependency), and so do `importlib.import_module` calls with a literal
name. `check` is run on a synthetic tree too, so a violation is known to be caught.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

BASE = ("config", "device", "store", "jobs", "models")
PLUGINS = ("metrics", "scorers", "generation", "bias", "data", "translation")
PAGES = ("metric_bias", "decoding", "cairo", "adaptation", "datscore", "compare")
INTERFACE = ("cli", "commands", "__main__")
LAYERS = {**dict.fromkeys(BASE, 0), **dict.fromkeys(PLUGINS, 1), **dict.fromkeys(PAGES, 2),
          **dict.fromkeys(INTERFACE, 3)}
#: Finer rules inside the base layer: what each of these may import from fairness_core (besides itself).
BASE_ALLOWED = {
    "config": set(),
    "device": {"config"},
    "store": {"config"},
    "jobs": {"config", "store"},
    "models": {"config", "device", "store", "jobs"},
}
#: Third-party packages only the app layer may import.
APP_ONLY = ("streamlit", "plotly", "altair")


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted (e.g. fairness_core.models.hf)
    target: str  # the imported module, dotted
    line: int


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(root: Path, path: Path) -> Iterator[Import]:
    """Every module `path` imports: top-level, inside functions, under TYPE_CHECKING, relative, importlib."""
    name = module_name(root, path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(name, alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            yield Import(name, source, node.lineno)
            for alias in node.names:  # `from fairness_core import generation` imports a package too
                yield Import(name, f"{source}.{alias.name}", node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            yield Import(name, node.args[0].value, node.lineno)


def part_of(dotted: str) -> str | None:
    """The layer unit a module belongs to: a fairness_core subpackage/top module, 'ui', 'app_pages', 'app'."""
    parts = dotted.split(".")
    if parts[0] == "fairness_core":
        return parts[1] if len(parts) > 1 else "fairness_core"
    if parts[0] in ("ui", "app_pages", "app"):
        return parts[0]
    return None


def modules(root: Path) -> list[Path]:
    found = sorted((root / "fairness_core").rglob("*.py"))
    for folder in ("ui", "app_pages"):
        found += sorted((root / folder).rglob("*.py"))
    if (root / "app.py").exists():
        found.append(root / "app.py")
    return found


def check(root: Path) -> list[str]:
    """Every import that breaks the layering, as 'file:line: module imports target (rule)'."""
    problems = []
    for path in modules(root):
        for imp in imports_of(root, path):
            rule = violated(imp)
            if rule:
                unit = part_of(imp.target)
                target = imp.target.split(".")[0] if unit is None else (
                    f"fairness_core.{unit}" if imp.target.startswith("fairness_core.") else unit)
                problems.append(f"{path.relative_to(root)}:{imp.line}: {imp.module} imports {target} ({rule})")
    return sorted(set(problems))  # `from a import b` is checked as a and a.b: one report per line and target


def violated(imp: Import) -> str | None:
    source, target = part_of(imp.module), part_of(imp.target)
    top = imp.target.split(".")[0]
    in_core = imp.module.split(".")[0] == "fairness_core"
    if target == "app_pages":
        return "page scripts are run by Streamlit, never imported"
    if in_core and target in ("ui", "app"):
        return "fairness_core never imports the app"
    if in_core and top in APP_ONLY:
        return f"fairness_core never imports {top}: rendering lives in ui/"
    if not in_core or target is None or target == "fairness_core" or source == target:
        return None
    source_layer, target_layer = LAYERS.get(source), LAYERS.get(target)
    if source_layer is None or target_layer is None:
        return f"{source if source_layer is None else target} is in no layer: add it to tests/test_layering.py"
    if target_layer > source_layer:
        names = ("a base", "a plug-in", "a page", "an interface")
        return f"{names[source_layer]} module imports {names[target_layer]} module"
    if source in BASE_ALLOWED and target not in BASE_ALLOWED[source]:
        allowed = ", ".join(sorted(BASE_ALLOWED[source])) or "nothing"
        return f"{source} may import only {allowed} from fairness_core"
    return None


def test_the_repository_keeps_its_layering() -> None:
    assert check(REPO_ROOT) == []


def test_every_core_package_is_in_a_layer() -> None:
    core = REPO_ROOT / "fairness_core"
    units = {path.name for path in core.iterdir() if path.is_dir() and (path / "__init__.py").exists()}
    units |= {path.stem for path in core.glob("*.py") if path.stem != "__init__"}
    assert units <= set(LAYERS), sorted(units - set(LAYERS))


def write_tree(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


VIOLATIONS = [
    # (file, its source, the phrase the report must contain)
    ("fairness_core/models/hf.py", "def f():\n    from fairness_core.generation.sampling import sample_rows\n",
     "a base module imports a plug-in module"),  # the layering as of commit 411b933
    ("fairness_core/models/hf.py", "from ..metrics import METRICS\n", "a base module imports a plug-in module"),
    ("fairness_core/models/hf.py", "import fairness_core.data\n", "a base module imports a plug-in module"),
    ("fairness_core/jobs/runner.py", "from fairness_core.models import load_model\n",
     "jobs may import only config, store"),
    ("fairness_core/store/store.py", "from fairness_core.jobs import run_task\n", "store may import only config"),
    ("fairness_core/generation/task.py", "from fairness_core import decoding\n",
     "a plug-in module imports a page module"),
    ("fairness_core/metrics/ngram.py", "from fairness_core.metric_bias.task import run\n",
     "a plug-in module imports a page module"),
    ("fairness_core/cairo/task.py", "from fairness_core.commands import runs\n",
     "a page module imports an interface module"),
    ("fairness_core/jobs/runner.py", "import streamlit as st\n", "never imports streamlit"),
    ("fairness_core/metric_bias/summary.py", "import plotly.express as px\n", "never imports plotly"),
    ("fairness_core/store/catalog.py", "from ui.common import get_store\n", "never imports the app"),
    ("fairness_core/cli.py", "import importlib\nimportlib.import_module('ui.jobs')\n", "never imports the app"),
    ("ui/common.py", "from app_pages import runs\n", "never imported"),
    ("fairness_core/newthing/__init__.py", "from fairness_core.store import RunStore\n", "newthing is in no layer"),
]


@pytest.mark.parametrize(("relative", "source", "phrase"), VIOLATIONS, ids=[f"{v[0]}: {v[1].strip()}"
                                                                            for v in VIOLATIONS])
def test_a_violation_is_reported(tmp_path: Path, relative: str, source: str, phrase: str) -> None:
    write_tree(tmp_path, {"fairness_core/__init__.py": "", relative: source})
    (problem,) = check(tmp_path)
    assert problem.startswith(relative) and phrase in problem, problem


def test_allowed_imports_are_not_reported(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "fairness_core/__init__.py": "",
        "fairness_core/models/hf.py": "from fairness_core.models.sampling import sample_rows\n"
                                      "from fairness_core.store.manifest import file_fingerprint\n"
                                      "from fairness_core.jobs.context import checkpoint\n",
        "fairness_core/generation/task.py": "from fairness_core.models import load_model\nfrom ..jobs import Task\n",
        "fairness_core/cairo/task.py": "from fairness_core.generation import run_generation\n",
        "fairness_core/commands/cairo.py": "from fairness_core.cairo import task\n",
        "ui/jobs.py": "import streamlit as st\nfrom fairness_core.jobs import Progress\n",
        "app_pages/cairo.py": "from ui import common\nfrom fairness_core.cairo import summary\n",
    })
    assert check(tmp_path) == []
