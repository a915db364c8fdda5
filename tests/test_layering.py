"""The layering of docs/FOUNDATION.md, checked on the source: every import of every module, parsed with `ast`.

Layers, lowest first (a module may import its own layer and the layers below, never above):

  base       fairness_core.{config, device, store, jobs, models, nltk_wordnet}
  plug-ins   fairness_core.{metrics, scorers, generation, bias, data, translation}
  services   fairness_core.{reading, compare, planning, slices}   (statistics services over stored runs: `reading`
             reads a stored run's rows and holds its own settings — thresholds, resamples, seed, design — and the
             others read runs through it only: compare lines runs up, planning plans from pilots, slices ranks cells)
  studies    fairness_core.{metric_bias, decoding, cairo, adaptation, datscore, audit, metric_quality, mitigation,
             stereotypes}   (page pipeline packages; a study may use a service, never the other way round)
  suites     fairness_core.check   (runs studies and judges their numbers)
  interface  fairness_core.{cli, commands, __main__}
  app        ui/, app_pages/, app.py   (the only code that may import streamlit)

Inside the base layer, `store` is the bottom (config only), `jobs` sits on `store`, and `models` may use `jobs`
(`checkpoint`: cancel and progress inside a long generation) but `jobs` never imports `models`. Imports inside
functions count (a lazy import is still a dependency), and so do `importlib.import_module` calls with a literal
name. `check` is run on a synthetic tree too, so a violation is known to be caught.

Two rules of issue 42 §6 ("one seam"), both checked on the source and on synthetic trees:
- no service imports a study (the layering above: a service sits below the studies), and among the services only
  `reading` is imported: compare, planning and slices do not import each other (`SERVICE_ALLOWED`);
- a study's face does not re-export a service: a study's `__init__.py` imports nothing from a service package
  (pages and commands import the service's own face, e.g. `fairness_core.planning`).

Three more rules (issue 19, "one door per study"):
- Page scripts (`app_pages/`), their ui helpers (`ui/<page>_charts.py`, `ui/<page>_view.py`, `ui/live_cards.py`)
  and CLI commands (`fairness_core/commands/`) import from the project only each study's public face
  (`fairness_core.<study>`, its `__init__.py`, or `fairness_core.<study>.options`), `ui`, the
  `fairness_core.store` face (run browsing) and the `fairness_core.jobs` face (progress types); commands also the
  CLI helpers (`fairness_core.cli`). `app.py` and the `models` command describe the machine, so they may also
  import the `fairness_core.models` and `fairness_core.device` faces; the `serve` command serves a model, so it
  may import the `fairness_core.models` face. No module imports a `_private` name from
  another package.
- `models` imports nothing from `jobs`: cancellation reaches the sampler as its per-step callback.
- No import cycles, between files (the modules of fairness_core and ui) or between fairness_core packages. An
  edge is what a statement needs: `from a.b import c` is an edge to the module `a.b.c` when that file exists,
  else to `a.b`; a parent package that Python runs first is not an edge of its own.

`import_counts` (printed by `scripts/import_report.py`) counts what pages and commands import, by target.
"""

from __future__ import annotations

import ast
import functools
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

BASE = ("config", "device", "store", "jobs", "models", "nltk_wordnet")
PLUGINS = ("metrics", "scorers", "generation", "bias", "data", "translation")
SERVICES = ("reading", "compare", "planning", "slices")
STUDIES = ("metric_bias", "decoding", "cairo", "adaptation", "datscore", "audit", "metric_quality", "mitigation",
           "stereotypes")
SUITES = ("check",)
PAGES = (*SERVICES, *STUDIES, *SUITES)  # every package a page or command reaches through its face
INTERFACE = ("cli", "commands", "__main__")
LAYERS = {**dict.fromkeys(BASE, 0), **dict.fromkeys(PLUGINS, 1), **dict.fromkeys(SERVICES, 2),
          **dict.fromkeys(STUDIES, 3), **dict.fromkeys(SUITES, 4), **dict.fromkeys(INTERFACE, 5)}
LAYER_NAMES = ("a base", "a plug-in", "a service", "a study", "a suite", "an interface")
#: Finer rules inside the base layer: what each of these may import from fairness_core (besides itself).
BASE_ALLOWED = {
    "config": set(),
    "device": {"config"},
    "store": {"config"},
    "jobs": {"config", "store"},
    "models": {"config", "device", "store"},
    "nltk_wordnet": {"config"},
}
#: Finer rules inside the services: what each may import from the other services. Reading a run and its settings
#: has one home (`reading`), so two services never compute "the same" number two ways (issue 42 §6).
SERVICE_ALLOWED = {"reading": set(), "compare": {"reading"}, "planning": {"reading"}, "slices": {"reading"}}
#: What page scripts and CLI commands may import from the project: the study faces, the store and jobs faces.
STUDY_FACES = frozenset({f"fairness_core.{study}" for study in PAGES}
                        | {f"fairness_core.{study}.options" for study in PAGES})
DOORS = STUDY_FACES | {"fairness_core.store", "fairness_core.jobs"}
#: Extra doors, by importing module (a package's entry covers its modules): commands use the CLI helpers, and
#: two modules describe the machine.
EXTRA_DOORS = {
    "fairness_core.commands": frozenset({"fairness_core.cli"}),
    "fairness_core.commands.models": frozenset({"fairness_core.models", "fairness_core.device"}),
    "fairness_core.commands.serve": frozenset({"fairness_core.models"}),  # serves a model: the model layer's face
    "app": frozenset({"fairness_core.models", "fairness_core.device"}),
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


@dataclass(frozen=True)
class Statement:
    module: str  # the importing module
    source: str  # `import source` / `from source import names`, relative imports resolved
    names: tuple[str, ...] | None  # the names of a from-import; None for `import source`
    line: int


def statements_of(root: Path, path: Path) -> tuple[Statement, ...]:
    """Every import statement of `path`: top-level, inside functions, under TYPE_CHECKING, relative, importlib."""
    return _statements(root, path, path.stat().st_mtime_ns)


@functools.cache
def _statements(root: Path, path: Path, _mtime_ns: int) -> tuple[Statement, ...]:  # parsed once per version
    return tuple(_parse_statements(root, path))


def _parse_statements(root: Path, path: Path) -> Iterator[Statement]:
    name = module_name(root, path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Statement(name, alias.name, None, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            yield Statement(name, source, tuple(alias.name for alias in node.names), node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            yield Statement(name, node.args[0].value, None, node.lineno)


def imports_of(root: Path, path: Path) -> Iterator[Import]:
    """Every module `path` imports (a from-import as its source and as source.name: either may be a module)."""
    for statement in statements_of(root, path):
        yield Import(statement.module, statement.source, statement.line)
        for alias in statement.names or ():  # `from fairness_core import generation` imports a package too
            yield Import(statement.module, f"{statement.source}.{alias}", statement.line)


@functools.cache
def face_values(root: Path, package: str) -> frozenset[str]:
    """Names a package's `__init__.py` binds to values (functions, classes, constants; not its own submodules):
    `from fairness_core.adaptation import vbcm` takes the function the face exports, not the module vbcm.py."""
    init = root.joinpath(*package.split("."), "__init__.py")
    if not init.exists():
        return frozenset()
    names: set[str] = set()
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and not node.level and node.module != package:
            names |= {alias.asname or alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            names |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {target.id for target in targets if isinstance(target, ast.Name)}
    return frozenset(names)


def needed_modules(statement: Statement, known: set[str], root: Path | None = None) -> Iterator[str]:
    """The project modules a statement needs (see the module docstring); nothing for third-party imports."""
    if statement.names is None:
        parts = statement.source.split(".")
        found = next((".".join(parts[:n]) for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in known), None)
        if found is not None:
            yield found
        return
    values = face_values(root, statement.source) if root is not None else frozenset()
    for alias in statement.names:
        dotted = f"{statement.source}.{alias}"
        if dotted in known and alias not in values:
            yield dotted
        elif statement.source in known:
            yield statement.source


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
        return f"{LAYER_NAMES[source_layer]} module imports {LAYER_NAMES[target_layer]} module"
    if source in BASE_ALLOWED and target not in BASE_ALLOWED[source]:
        allowed = ", ".join(sorted(BASE_ALLOWED[source])) or "nothing"
        return f"{source} may import only {allowed} from fairness_core"
    if source in SERVICE_ALLOWED and target in SERVICE_ALLOWED and target not in SERVICE_ALLOWED[source]:
        allowed = ", ".join(sorted(SERVICE_ALLOWED[source])) or "no other service"
        return f"the {source} service may import only {allowed} of the services"
    return None


def face_problems(root: Path) -> list[str]:
    """A study's face (`fairness_core/<study>/__init__.py`) that imports from a service package: the face would
    re-export the service, and studies and services would depend on each other both ways (issue 42 §6)."""
    known = {module_name(root, path) for path in modules(root)}
    problems = []
    for study in STUDIES:
        init = root / "fairness_core" / study / "__init__.py"
        if not init.exists():
            continue
        for statement in statements_of(root, init):
            targets = set(needed_modules(statement, known, root)) | {statement.source}
            services = sorted({part_of(t) for t in targets if t.startswith("fairness_core.")} & set(SERVICES))
            problems += [f"{init.relative_to(root)}:{statement.line}: the face of {study} re-exports the {service} "
                         "service (import it from its own face)" for service in services]
    return sorted(set(problems))


def keeps_a_door(module: str) -> bool:
    """The modules that import the project through its faces only: page scripts, CLI commands, app.py, and the
    page-specific ui helpers (`ui/<page>_charts.py`, `ui/<page>_view.py`, `ui/live_cards.py`), so that moving a
    page's code into ui/ cannot open a side door. `ui.common` and `ui.jobs` are the app's plumbing (store choice,
    model picker, background jobs) and may use the base layer."""
    return (module == "app" or module.startswith(("app_pages.", "fairness_core.commands."))
            or module == "ui.live_cards" or (module.startswith("ui.") and module.endswith(("_charts", "_view"))))


def through_a_door(module: str, target: str) -> bool:
    if target == "ui" or target.startswith("ui."):
        return True
    if target in DOORS or target.rpartition(".")[0] == module.rpartition(".")[0]:  # a face, or a sibling module
        return True
    prefixes = [".".join(module.split(".")[:n]) for n in range(len(module.split(".")), 0, -1)]
    return any(target in EXTRA_DOORS.get(prefix, ()) for prefix in prefixes)


def door_problems(root: Path) -> list[str]:
    """Page and command imports that go past the study faces; `_private` names imported across packages."""
    known = {module_name(root, path) for path in modules(root)}
    problems = []
    for path in modules(root):
        where = path.relative_to(root)
        for statement in statements_of(root, path):
            source_unit, target_unit = part_of(statement.module), part_of(statement.source)
            for alias in statement.names or ():
                if alias.startswith("_") and not alias.startswith("__") and target_unit not in (None, source_unit):
                    problems.append(f"{where}:{statement.line}: {statement.module} imports the private name "
                                    f"{alias} from {statement.source}")
            if keeps_a_door(statement.module):
                problems += [f"{where}:{statement.line}: {statement.module} imports {target} (pages and commands "
                             "import only study faces, ui, store, jobs)"
                             for target in needed_modules(statement, known, root)
                             if not through_a_door(statement.module, target)]
    return sorted(set(problems))


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the project modules it needs (fairness_core and ui; page scripts are never imported)."""
    paths = [path for path in modules(root) if part_of(module_name(root, path)) not in ("app_pages", "app")]
    graph: dict[str, set[str]] = {module_name(root, path): set() for path in paths}
    for path in paths:
        for statement in statements_of(root, path):
            graph[statement.module] |= set(needed_modules(statement, set(graph), root)) - {statement.module}
    return graph


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """fairness_core package -> the fairness_core packages its modules import."""
    units: dict[str, set[str]] = {}
    for module, targets in graph.items():
        unit = part_of(module)
        if module.startswith("fairness_core.") and unit is not None:
            units.setdefault(unit, set()).update(
                part_of(t) for t in targets if t.startswith("fairness_core.") and part_of(t) not in (None, unit))
    return {unit: {t for t in targets if t is not None} for unit, targets in units.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one member (Tarjan), each sorted, as a sorted list."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def import_counts(root: Path) -> dict[str, Counter[str]]:
    """For each page script, command and app.py: how many import statements need each project module, keyed
    "<module> (door)" for a face it may use and "<module> (past the door)" otherwise."""
    known = {module_name(root, path) for path in modules(root)}
    counts: dict[str, Counter[str]] = {}
    for path in modules(root):
        name = module_name(root, path)
        if not keeps_a_door(name):
            continue
        counter = counts.setdefault(str(path.relative_to(root)), Counter())
        for statement in statements_of(root, path):
            for target in dict.fromkeys(needed_modules(statement, known, root)):
                counter[f"{target} ({'door' if through_a_door(name, target) else 'past the door'})"] += 1
    return counts


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
    ("fairness_core/models/sampling.py", "def f():\n    from fairness_core.jobs.context import checkpoint\n",
     "models may import only config, device, store"),  # the layering before issue 19
    ("fairness_core/generation/task.py", "from fairness_core import decoding\n",
     "a plug-in module imports a study module"),
    ("fairness_core/metrics/ngram.py", "from fairness_core.metric_bias.task import run\n",
     "a plug-in module imports a study module"),
    ("fairness_core/cairo/task.py", "from fairness_core.commands import runs\n",
     "a study module imports an interface module"),
    ("fairness_core/jobs/runner.py", "import streamlit as st\n", "never imports streamlit"),
    ("fairness_core/metric_bias/summary.py", "import plotly.express as px\n", "never imports plotly"),
    ("fairness_core/store/catalog.py", "from ui.common import get_store\n", "never imports the app"),
    ("fairness_core/cli.py", "import importlib\nimportlib.import_module('ui.jobs')\n", "never imports the app"),
    ("ui/common.py", "from app_pages import runs\n", "never imported"),
    ("fairness_core/newthing/__init__.py", "from fairness_core.store import RunStore\n", "newthing is in no layer"),
    # issue 42 §6: no service imports a study (Compare's report read CAIRO's deviations from the study), and the
    # services meet only in `reading` (the planner read runs through Compare's readers)
    ("fairness_core/compare/report.py", "def f():\n    from fairness_core.cairo import DEVIATIONS\n",
     "a service module imports a study module"),
    ("fairness_core/reading/rows.py", "from fairness_core.decoding.summary import summarize\n",
     "a service module imports a study module"),
    ("fairness_core/planning/runs.py", "from fairness_core.compare.align import match_arms\n",
     "the planning service may import only reading of the services"),
    ("fairness_core/slices/run.py", "from fairness_core.compare import unit_sums\n",
     "the slices service may import only reading of the services"),
    ("fairness_core/reading/rows.py", "def f():\n    from fairness_core.planning import plan_run\n",
     "the reading service may import only no other service of the services"),
    ("fairness_core/planning/runs.py", "import fairness_core.check\n", "a service module imports a suite module"),
    ("fairness_core/audit/task.py", "from fairness_core.check import run_check\n",
     "a study module imports a suite module"),
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
                                      "from fairness_core.store.manifest import file_fingerprint\n",
        "fairness_core/generation/task.py": "from fairness_core.models import load_model\nfrom ..jobs import Task\n",
        "fairness_core/cairo/task.py": "from fairness_core.generation import run_generation\n",
        "fairness_core/commands/cairo.py": "from fairness_core.cairo import task\n",
        "ui/jobs.py": "import streamlit as st\nfrom fairness_core.jobs import Progress\n",
        "app_pages/cairo.py": "from ui import common\nfrom fairness_core.cairo import summary\n",
    })
    assert check(tmp_path) == []


def test_no_study_face_re_exports_a_service() -> None:
    assert face_problems(REPO_ROOT) == []


FACE_VIOLATIONS = [
    # the faces as they were before issue 42 §6: decoding, metric_bias and audit re-exported the planner
    ("fairness_core/decoding/__init__.py", "from fairness_core.planning import Plan, PlanError, plan_run\n",
     "the face of decoding re-exports the planning service"),
    ("fairness_core/audit/__init__.py", "from ..planning import Plan\n", "the face of audit re-exports the planning"),
    ("fairness_core/metric_bias/__init__.py", "import fairness_core.compare\n",
     "the face of metric_bias re-exports the compare service"),
    ("fairness_core/cairo/__init__.py", "from fairness_core.reading.rows import read_run\n",
     "the face of cairo re-exports the reading service"),
]


@pytest.mark.parametrize(("relative", "source", "phrase"), FACE_VIOLATIONS, ids=[v[0] for v in FACE_VIOLATIONS])
def test_a_study_face_re_exporting_a_service_is_reported(tmp_path: Path, relative: str, source: str,
                                                         phrase: str) -> None:
    write_tree(tmp_path, {"fairness_core/__init__.py": "", "fairness_core/planning/__init__.py": "",
                          "fairness_core/compare/__init__.py": "", "fairness_core/reading/__init__.py": "",
                          "fairness_core/reading/rows.py": "", relative: source})
    (problem,) = face_problems(tmp_path)
    assert problem.startswith(relative) and phrase in problem, problem


def test_a_study_face_of_its_own_modules_and_lower_layers_is_not_reported(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "fairness_core/__init__.py": "", "fairness_core/planning/__init__.py": "",
        "fairness_core/decoding/__init__.py": "from fairness_core.decoding.task import run\nfrom ..bias import x\n"
                                              "from fairness_core.store import RunStore\n",
        "fairness_core/decoding/task.py": "from fairness_core.planning import plan_run\n",  # a module may use it
    })
    assert face_problems(tmp_path) == []
    assert check(tmp_path) == []  # a study's module using a service is the layering's direction


def test_pages_and_commands_import_only_study_faces_and_nothing_is_imported_privately() -> None:
    assert door_problems(REPO_ROOT) == []


def test_no_two_files_import_each_other_through_any_path() -> None:
    assert cycles(import_graph(REPO_ROOT)) == []


def test_no_two_core_packages_import_each_other() -> None:
    assert cycles(package_graph(import_graph(REPO_ROOT))) == []


DOOR_VIOLATIONS = [
    # (file, its source, the phrase the report must contain)
    ("app_pages/decoding.py", "from fairness_core.decoding.task import run_decoding\n",
     "imports fairness_core.decoding.task"),
    ("app_pages/decoding.py", "def f():\n    from fairness_core.generation.grid import GRID_PRESETS\n",
     "imports fairness_core.generation.grid"),
    ("app_pages/decoding.py", "from fairness_core.models import presets\n", "imports fairness_core.models.presets"),
    ("app_pages/decoding.py", "from fairness_core.models import DecodingConfig\n", "imports fairness_core.models "),
    ("fairness_core/commands/cairo.py", "from fairness_core.cairo import search\n",
     "imports fairness_core.cairo.search"),
    ("fairness_core/commands/cairo.py", "from fairness_core.device import describe_device\n",
     "imports fairness_core.device"),
    ("app.py", "from fairness_core.decoding.task import prewarm\n", "imports fairness_core.decoding.task"),
    ("ui/common.py", "from fairness_core.models.presets import _BY_KEY\n", "private name _BY_KEY"),
    ("fairness_core/metrics/matching.py", "def f():\n    from ..models.presets import _BY_KEY\n",
     "private name _BY_KEY"),
    ("ui/decoding_charts.py", "from fairness_core.generation.grid import GRID_PRESETS\n",
     "imports fairness_core.generation.grid"),
    ("ui/decoding_view.py", "from fairness_core.decoding.task import run_decoding\n",
     "imports fairness_core.decoding.task"),
]


@pytest.mark.parametrize(("relative", "source", "phrase"), DOOR_VIOLATIONS,
                         ids=[f"{v[0]}: {v[1].strip()}" for v in DOOR_VIOLATIONS])
def test_a_page_or_command_past_the_door_is_reported(tmp_path: Path, relative: str, source: str, phrase: str) -> None:
    write_tree(tmp_path, {"fairness_core/__init__.py": "", "fairness_core/decoding/__init__.py": "",
                          "fairness_core/decoding/task.py": "", "fairness_core/generation/grid.py": "",
                          "fairness_core/generation/__init__.py": "", "fairness_core/models/__init__.py": "",
                          "fairness_core/models/presets.py": "", "fairness_core/cairo/__init__.py": "",
                          "fairness_core/cairo/search.py": "", "fairness_core/device.py": "", relative: source})
    (problem,) = door_problems(tmp_path)
    assert problem.startswith(relative) and phrase in problem, problem


def test_faces_and_helpers_are_doors(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "fairness_core/__init__.py": "", "fairness_core/decoding/__init__.py": "from .task import run_decoding\n",
        "fairness_core/decoding/task.py": "", "fairness_core/decoding/options.py": "",
        "fairness_core/models/__init__.py": "", "fairness_core/device.py": "", "fairness_core/cli.py": "",
        "fairness_core/store/__init__.py": "", "fairness_core/jobs/__init__.py": "",
        "app_pages/decoding.py": "from fairness_core.decoding import run_decoding\nfrom fairness_core.decoding import "
                                 "options\nfrom fairness_core.jobs import Progress\nfrom fairness_core.store import "
                                 "RunStore\nfrom ui import common\nimport pandas as pd\n",
        "fairness_core/commands/decoding.py": "def f():\n    from fairness_core.decoding import run_decoding\n"
                                              "from fairness_core.cli import print_json\n",
        "fairness_core/commands/models.py": "from fairness_core.models import PRESETS\nfrom fairness_core.device "
                                            "import describe_device\n",
        "app.py": "from fairness_core.device import describe_device\nfrom ui import common\n",
        # a face exporting a function named like its module: the page takes the function, through the door
        "fairness_core/adaptation/__init__.py": "from fairness_core.adaptation.vbcm import vbcm\n",
        "fairness_core/adaptation/vbcm.py": "def vbcm(): ...\n",
        "app_pages/template_adaptation.py": "from fairness_core.adaptation import vbcm\n",
    })
    assert door_problems(tmp_path) == []


def test_a_two_file_circle_is_found_even_through_a_function_level_import(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "fairness_core/__init__.py": "", "fairness_core/store/__init__.py": "",
        "fairness_core/store/store.py": "def export():\n    from fairness_core.store.export import export_run\n",
        "fairness_core/store/export.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                         "    from fairness_core.store.store import RunStore\n",
        "fairness_core/store/catalog.py": "from fairness_core.store import store\n",  # into the circle, not part of it
    })
    assert cycles(import_graph(tmp_path)) == [["fairness_core.store.export", "fairness_core.store.store"]]


def test_a_longer_circle_and_a_package_circle_are_found(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "fairness_core/__init__.py": "", "fairness_core/jobs/__init__.py": "from .runner import run_task\n",
        "fairness_core/jobs/runner.py": "from fairness_core.jobs.context import checkpoint\n",
        "fairness_core/jobs/context.py": "from fairness_core.jobs import run_task\n",  # via the face: a circle
        "fairness_core/translation/__init__.py": "", "fairness_core/metrics/__init__.py": "",
        "fairness_core/translation/backbones.py": "def f():\n    from fairness_core.metrics.model_based import x\n",
        "fairness_core/metrics/model_based.py": "", "fairness_core/metrics/datscore.py":
            "from fairness_core.translation import backbones\n",
    })
    graph = import_graph(tmp_path)
    assert cycles(graph) == [["fairness_core.jobs", "fairness_core.jobs.context", "fairness_core.jobs.runner"]]
    assert cycles(package_graph(graph)) == [["metrics", "translation"]]


def test_import_counts_name_doors_and_what_goes_past_them(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "fairness_core/__init__.py": "", "fairness_core/cairo/__init__.py": "", "fairness_core/cairo/search.py": "",
        "ui/__init__.py": "", "ui/common.py": "",
        "app_pages/cairo.py": "from fairness_core.cairo import search, run\nfrom fairness_core.cairo import x\n"
                              "from ui import common\n",
    })
    assert import_counts(tmp_path) == {"app_pages/cairo.py": Counter({
        "fairness_core.cairo (door)": 2, "fairness_core.cairo.search (past the door)": 1, "ui.common (door)": 1})}
