"""Model cache: SmolLM2 first load (GGUF dequantisation) vs later loads, as ratios from one run.

  first  - GGUF -> dequantise -> write the safetensors cache -> load   (a brand-new machine)
  warm   - load from the safetensors cache, in-process cache cleared  (every later process)
  cached - the in-process cache hit                                    (every Streamlit rerun)
"""

from __future__ import annotations

import os
import tempfile
import time


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory() as empty_cache:
        os.environ["FAIRNESS_LAB_CACHE"] = empty_cache  # force the one-off conversion
        import torch  # noqa: F401  - import cost excluded from every timing below

        from fairness_core.models import cache, load_preset

        started = time.perf_counter()
        model = load_preset("smollm2-135m-instruct")
        first = time.perf_counter() - started

        cache.clear()
        started = time.perf_counter()
        warm_model = load_preset("smollm2-135m-instruct")
        warm = time.perf_counter() - started

        started = time.perf_counter()
        assert load_preset("smollm2-135m-instruct") is warm_model
        cached = time.perf_counter() - started
        del model

    print(f"first load from GGUF (convert + load): {first:8.2f} s")
    print(f"second load from safetensors cache:   {warm:8.2f} s   -> {first / warm:6.1f}x faster")
    print(f"in-process cache hit:                  {cached * 1e3:8.3f} ms  -> {first / cached:,.0f}x faster")


if __name__ == "__main__":
    main()
