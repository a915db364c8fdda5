"""Judges: load time and texts/s of the offline Jigsaw toxicity classifier (torch port) beside the profanity
classifier and VADER, measured side by side in one process; and why the port, not Keras 3.

  load      - first load in this process (torch already imported), then the in-process cache hit
  texts/s   - the judge audit's built-in texts (43 templates x 50 terms, twice: 4,300 texts), one call each
  threads   - the Jigsaw LSTM on one intra-op thread (what the model does) vs the process default
  keras     - the package's own model definition through Keras 3 on the torch backend, in a fresh process:
              import + build + load, and its batched predict on the same texts (the reference the test uses)
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def texts() -> list[str]:
    from fairness_core.audit import build_request

    design = build_request("vader", resamples=0).design
    return list(design.texts["text"]) * 2


def rate(function, data: list[str], repeats: int = 2) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        function(data)
        best = min(best, time.perf_counter() - started)
    return len(data) / best


def keras_reference(data: list[str]) -> tuple[float, float, float]:
    """(import s, build + load s, texts/s) of the package's model through Keras 3, in a fresh process."""
    code = textwrap.dedent("""
        import json, os, sys, time, types, importlib.util, warnings
        from pathlib import Path
        os.environ["KERAS_BACKEND"] = "torch"
        t0 = time.perf_counter()
        import keras
        t1 = time.perf_counter()
        folder = Path(next(iter(importlib.util.find_spec("toxic_classifier").submodule_search_locations)))
        source = (folder / "model.py").read_text().replace(
            "from tensorflow.keras.preprocessing.sequence import", "from keras.utils import").replace(
            "tensorflow.keras.", "keras.")
        module = types.ModuleType("reference"); module.__file__ = str(folder / "model.py")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(source, module.__file__, "exec"), module.__dict__)
            classifier = module.ToxicCommentClassifier()
        t2 = time.perf_counter()
        texts = json.loads(sys.stdin.read())
        padded = keras.utils.pad_sequences(classifier.tokenizer.texts_to_sequences(texts), maxlen=100)
        t3 = time.perf_counter()
        classifier.model.predict(padded, verbose=0, batch_size=128)
        t4 = time.perf_counter()
        print(json.dumps([t1 - t0, t2 - t1, len(texts) / (t4 - t3)]))
    """)
    import json

    done = subprocess.run([sys.executable, "-c", code], input=json.dumps(data), capture_output=True, text=True,
                          check=True, cwd=ROOT)
    return tuple(json.loads(done.stdout.strip().splitlines()[-1]))  # type: ignore[return-value]


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from fairness_core.models import cache, load_preset
    from fairness_core.models.threads import FIXED_ENV, model_threads, usable_cores

    data = texts()
    loads = {}
    for key in ("jigsaw-toxicity", "offensive-language", "vader"):
        started = time.perf_counter()
        load_preset(key)
        loads[key] = time.perf_counter() - started
    started = time.perf_counter()
    jigsaw = load_preset("jigsaw-toxicity")
    hit = time.perf_counter() - started
    profanity, vader = load_preset("offensive-language"), load_preset("vader")

    speeds = {"jigsaw-toxicity": rate(jigsaw.predict_proba, data),
              "offensive-language": rate(profanity.predict_proba, data), "vader": rate(vader.compound, data)}
    print(f"{len(data):,} texts (the audit's built-in set, twice); torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads by default")
    for key, seconds in loads.items():
        print(f"  load {key:20s} {seconds:7.2f} s   scoring {speeds[key]:9,.0f} texts/s")
    print(f"  in-process cache hit (jigsaw)  {hit * 1e3:7.3f} ms")
    print(f"  jigsaw / profanity speed: {speeds['jigsaw-toxicity'] / speeds['offensive-language']:.2f}x; "
          f"jigsaw / vader: {speeds['jigsaw-toxicity'] / speeds['vader']:.2f}x")

    network, tokenizer = jigsaw.network, jigsaw.tokenizer  # type: ignore[attr-defined]
    ids = torch.from_numpy(tokenizer.padded(data))
    for batch in (64, 128, 256, 1024):
        for label, threads in (("1 thread", 1), ("every core", usable_cores())):
            os.environ[FIXED_ENV] = str(threads)  # the model layer's thread policy takes a fixed count from here
            with torch.inference_mode(), model_threads():
                started = time.perf_counter()
                for start in range(0, len(ids), batch):
                    network(ids[start:start + batch])
                seconds = time.perf_counter() - started
            os.environ.pop(FIXED_ENV, None)
            print(f"  LSTM batch {batch:5d}, {label:15s} {len(ids) / seconds:9,.0f} texts/s")

    keras_import, keras_load, keras_rate = keras_reference(data[:1000])  # its rate on 1,000 texts
    cache.clear()
    started = time.perf_counter()
    load_preset("jigsaw-toxicity")
    port_load = time.perf_counter() - started
    print(f"  Keras 3 (torch backend): import keras {keras_import:.2f} s + build/load {keras_load:.2f} s, "
          f"{keras_rate:,.0f} texts/s; the torch port: load {port_load:.2f} s, "
          f"{speeds['jigsaw-toxicity']:,.0f} texts/s ({speeds['jigsaw-toxicity'] / keras_rate:.1f}x)")


if __name__ == "__main__":
    main()
