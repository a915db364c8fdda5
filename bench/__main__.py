"""`python -m bench`: run every benchmark module in this folder, one after another."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

for module in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda m: m.name):
    if module.name.startswith("_"):
        continue
    print(f"\n=== bench.{module.name} ===", flush=True)
    importlib.import_module(f"bench.{module.name}").main()
