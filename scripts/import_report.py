"""What pages, CLI commands and app.py import from the project, counted by target (issue 19's measure).

    .venv/bin/python scripts/import_report.py              # this checkout
    .venv/bin/python scripts/import_report.py --root DIR   # another checkout (e.g. before a change), same rules

For each page script, command and app.py: its line count, then its imports (one per statement and project module
it needs) that reach the project through a door (a study's face `fairness_core.<study>` / `.options`, `ui`, the
`store` and `jobs` faces, the CLI helpers for commands) and those that go past one; then the totals by target
package. The counting and the doors are those of tests/test_layering.py, which fails on any import past a door.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tests.test_layering import LAYERS, import_counts, import_graph, part_of  # noqa: E402


def package_of(target: str) -> str:
    """`fairness_core.decoding.task` -> `fairness_core.decoding`; `ui.common` -> `ui`."""
    parts = target.split(".")
    return ".".join(parts[:2]) if parts[0] == "fairness_core" else parts[0]


LAYER_NAMES = ("base", "plug-ins", "studies", "interface")


def layer_of(module: str) -> str:
    unit = part_of(module)
    if unit in ("ui", "app_pages", "app"):
        return unit
    return LAYER_NAMES[LAYERS[unit]] if unit in LAYERS else str(unit)


def layer_matrix(root: Path) -> str:
    """Module-to-module imports (fairness_core and ui) between different packages, by (importing, imported) layer."""
    pairs: Counter[tuple[str, str]] = Counter()
    for module, targets in import_graph(root).items():
        for target in targets:
            if part_of(target) != part_of(module):
                pairs[layer_of(module), layer_of(target)] += 1
    return "\n".join(f"  {a:<10} -> {b:<10} {n:>4}" for (a, b), n in sorted(pairs.items()))


def report(root: Path) -> str:
    counts = import_counts(root)
    lines = [f"{'file':<40} {'lines':>5} {'door':>5} {'past':>5}  past the door, by package"]
    by_package: Counter[str] = Counter()
    totals = Counter()
    for name in sorted(counts):
        counter = counts[name]
        through = sum(n for key, n in counter.items() if key.endswith("(door)"))
        past = Counter()
        for key, n in counter.items():
            target, _, kind = key.rpartition(" (")
            by_package[f"{package_of(target)} ({kind}"] += n
            if kind == "past the door)":
                past[package_of(target)] += n
        length = len((root / name).read_text(encoding="utf-8").splitlines())
        totals.update(lines_=length, door=through, past=sum(past.values()))
        detail = ", ".join(f"{package} {n}" for package, n in sorted(past.items())) or "-"
        lines.append(f"{name:<40} {length:>5} {through:>5} {sum(past.values()):>5}  {detail}")
    lines.append(f"{'total':<40} {totals['lines_']:>5} {totals['door']:>5} {totals['past']:>5}")
    lines.append("")
    lines.append("imports by target package (one per statement and module it needs):")
    lines += [f"  {key:<45} {n:>4}" for key, n in sorted(by_package.items())]
    lines += ["", "module imports across packages, by layer (fairness_core and ui):", layer_matrix(root)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=REPO_ROOT, help="the checkout to measure (default: this one)")
    args = parser.parse_args(argv)
    print(report(args.root.resolve()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
