"""First estimates against real times, for every kind of job a page starts (issue 35 §3).

Each job kind runs through the page's own path: its study states the work (`<study>.…_work`, the `Work` the page
shows before Run), `ui.jobs.estimate` turns it into the figure on the page (the documented cost at the machine's
slowdown for that kind of work now), `ui.jobs.start` runs it in the background as the page does, and the bench
reads the progress line every second as the page's progress bar would. Each kind runs in a fresh store (nothing
read back) at a size that takes tens of seconds here, not the page's default size: the estimate is per unit, so
the ratio carries over.

Printed per kind: the first estimate, the real time, their ratio (the goal: within 1.5x either way), the
slowdown the estimate used and the one-thread probe's, the 1-minute load average before and after,
and how much the time left the page showed climbed: the largest rise of (time so far + time left) between two
readings, beside how the machine's slowdown changed from the job's start to its end — a climb no larger than the
load's change is the goal. Timing assertions belong here, not in tests (the project never times tests).

    .venv/bin/python -m bench.job_estimates [--kinds sweep,audit-jigsaw,…] [--busy 2] [--trace]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

KINDS = ("sweep", "audit-jigsaw", "audit-vader", "metric-quality", "mitigation-train", "mitigation-evaluate")


@dataclass
class Prepared:
    work: Any  # fairness_core.jobs.estimates.Work
    run: Callable[[Callable, Any], Any]  # (on_progress, cancel) -> result, as the page starts it


def _store() -> Any:
    from fairness_core.store import RunStore

    return RunStore(Path(tempfile.mkdtemp(prefix="bench-job-estimates-")) / "runs.duckdb")


def _sweep() -> Prepared:
    from fairness_core import decoding as dec
    from fairness_core.jobs import get_executor
    from ui import jobs

    templates, families = dec.default_templates()
    prompts = dec.regard_prompts(templates[:1], families)  # 11 groups
    store = _store()
    request = dec.build_request("smollm2-135m-instruct", prompts, "top_p=0.5,0.9", samples=2, max_new_tokens=20,
                                seed=1)
    plan = dec.plan_decoding(request, store)
    executor = get_executor("local")
    return Prepared(dec.sweep_work(plan.plan.n_to_generate, 20),
                    lambda on_progress, cancel: dec.run_decoding(plan, store, on_progress, cancel, executor=executor,
                                                                 threads=jobs.threads_now()))


def _audit(judge: str) -> Callable[[], Prepared]:
    def prepare() -> Prepared:
        from fairness_core import audit

        request = audit.build_request(scorer=judge)  # the page's default: the built-in set, 1,000 resamples
        store = _store()
        return Prepared(audit.audit_work(request),
                        lambda on_progress, cancel: audit.run_audit(request, store, on_progress, cancel))
    return prepare


def _realsumm(documents: int) -> Any:
    from fairness_core import metric_quality as mq

    judgments = mq.load_judgments("realsumm")
    kept = judgments.frame[judgments.frame["item_id"].isin(judgments.items[:documents])].reset_index(drop=True)
    return replace(judgments, frame=kept, name=f"REALSumm, first {documents} documents")


def _metric_quality() -> Prepared:
    from fairness_core import metric_quality as mq

    judgments = _realsumm(20)
    options = {"bertscore": {"model": "all-minilm-l6-v2"}}
    request = mq.build_request(judgments, mq.build_metrics(list(mq.DEFAULT_METRICS), options=options), (), "pooled",
                               1000)
    store = _store()
    return Prepared(mq.quality_work(request),
                    lambda on_progress, cancel: mq.run_quality(request, store, on_progress, cancel,
                                                               skip_unavailable=True))


_ADAPTER: dict[str, str] = {}


def _training_request(steps: int) -> Any:
    from fairness_core import mitigation as mit

    return mit.build_train_request("bertscore", "all-minilm-l6-v2", "gender", "cpu", steps, 0)


def _mitigation_train() -> Prepared:
    from fairness_core import mitigation as mit

    request = _training_request(12)
    store = _store()

    def run(on_progress: Callable, cancel: Any) -> Any:
        outcome = mit.train(request, store, on_progress, cancel)
        if outcome.adapter_id:
            _ADAPTER["id"] = outcome.adapter_id
        return outcome
    return Prepared(mit.training_work(request), run)


def _mitigation_evaluate() -> Prepared:
    from fairness_core import mitigation as mit

    if "id" not in _ADAPTER:  # an adapter to compare: a short training, not timed here
        outcome = mit.train(_training_request(4), _store())
        _ADAPTER["id"] = outcome.adapter_id
    request = mit.build_evaluation("bertscore", "all-minilm-l6-v2", _ADAPTER["id"], None, "winobias", ["type1-dev"],
                                   None, "gender", 1000)
    request = replace(request, judgments=_realsumm(20))  # the page's quality axis, on 20 documents
    store = _store()
    return Prepared(mit.evaluation_work(request),
                    lambda on_progress, cancel: mit.run_evaluation(request, store, cancel, on_progress=on_progress))


PREPARE: dict[str, Callable[[], Prepared]] = {
    "sweep": _sweep, "audit-jigsaw": _audit("jigsaw-toxicity"), "audit-vader": _audit("vader"),
    "metric-quality": _metric_quality, "mitigation-train": _mitigation_train,
    "mitigation-evaluate": _mitigation_evaluate,
}


def run_kind(kind: str, every: float, max_seconds: float, trace: bool = False) -> dict[str, Any]:
    """One job of `kind` as its page runs it: the first estimate, the real time, and the readings of time left."""
    from fairness_core.jobs.load import load_average_slowdown, share_slowdown
    from ui import jobs

    prepared = PREPARE[kind]()
    share_now = jobs.SHARE_LOAD.slowdown()  # the server's gauge (main)
    first = jobs.estimate(prepared.work)
    load_before = os.getloadavg()[0]
    key = jobs.key_for(f"bench-{kind}", {"at": time.time()})
    started = time.monotonic()
    job = jobs.start(key, prepared.run, label=kind, estimate_of=prepared.work, session="bench")
    # the time left as the page's progress line reads it, every second; the machine is not probed meanwhile (a
    # probe in this process takes Python's lock from a one-thread job, which no page does every second)
    readings: list[tuple[float, float]] = []  # (seconds so far, time left shown)
    while not job.ended.wait(every):
        left = jobs.eta_s(job)
        if left is not None and job.begun:
            readings.append((time.monotonic() - started, left))
        if time.monotonic() - started > max_seconds:
            job.cancel.cancel()
    real = time.monotonic() - started
    load_change = max(load_average_slowdown(), share_slowdown()) / max(load_average_slowdown(load_before),
                                                                         share_now)
    if job.error is not None:
        raise job.error
    climb = 1.0
    for i, (at_i, left_i) in enumerate(readings):
        for at_j, left_j in readings[i + 1:]:
            if at_i + left_i > 0:
                climb = max(climb, (at_j + left_j) / (at_i + left_i))
    if trace:
        print(f"  {kind}: (seconds so far, time left shown) " + ", ".join(
            f"({at:.0f}, {left:.0f})" for at, left in readings[:: max(1, len(readings) // 12)]), flush=True)
    return {"kind": kind, "units": prepared.work.units, "unit": prepared.work.unit, "scaling": prepared.work.scaling,
            "first": first, "real": real, "ratio": first / real, "share": share_now,
            "load_before": load_before, "load_after": os.getloadavg()[0], "climb": climb, "load_change": load_change,
            "cancelled": job.cancel.cancelled, "reference_s": prepared.work.reference_s}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated, of: {', '.join(KINDS)}")
    parser.add_argument("--every", type=float, default=1.0, help="seconds between readings of the time left")
    parser.add_argument("--max-seconds", type=float, default=600, help="cancel a job that runs longer")
    parser.add_argument("--trace", action="store_true", help="print the time left shown over each job")
    parser.add_argument("--busy", type=int, default=0,
                        help="processes spinning on the CPU throughout (a load of our own, beside anyone else's)")
    args = parser.parse_args(argv)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in PREPARE]
    if unknown:
        parser.error(f"unknown kind(s) {', '.join(unknown)}; choose from {', '.join(KINDS)}")

    from fairness_core.jobs.load import LoadGauge, share_slowdown
    from fairness_core.models import load_preset
    from ui import jobs

    load_preset("smollm2-135m-instruct")  # the pages have their models loaded before anyone presses Run
    busy = [subprocess.Popen([sys.executable, "-c", "while True:\n    pass\n"]) for _ in range(args.busy)]
    try:
        _bench(args, kinds, jobs, LoadGauge, share_slowdown)
    finally:
        for process in busy:
            process.kill()
            process.wait()


def _bench(args: argparse.Namespace, kinds: list[str], jobs: Any, LoadGauge: Any, share_slowdown: Any) -> None:
    # the gauges of a server that has been up a minute: three probes each in their window (their median counts)
    jobs.SHARE_LOAD = LoadGauge(probe=share_slowdown, max_age_s=0, background=False)
    for _ in range(3):
        jobs.SHARE_LOAD.slowdown()
        time.sleep(5)
    jobs.SHARE_LOAD.max_age_s, jobs.SHARE_LOAD.background = 20.0, True
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} before the bench", flush=True)
    print(f"{'kind':20} {'units':>8} {'scaling':8} {'estimate':>9} {'real':>8} {'est/real':>8} {'used':>6} "
          f"{'share':>6} {'load':>10} {'ETA climb':>9} {'load change':>11}", flush=True)
    results = []
    for kind in kinds:
        found = run_kind(kind, args.every, args.max_seconds, args.trace)
        results.append(found)
        print(f"{kind:20} {found['units']:>8,.0f} {found['scaling']:8} {found['first']:>8.1f}s {found['real']:>7.1f}s "
              f"{found['ratio']:>8.2f} {found['first'] / found['reference_s']:>5.1f}x {found['share']:>5.1f}x "
              f"{found['load_before']:>4.1f}→{found['load_after']:<4.1f} {found['climb']:>8.2f}x "
              f"{found['load_change']:>10.2f}x" + ("  (cancelled: real time is longer)" if found["cancelled"] else ""),
              flush=True)
    within = [r for r in results if 1 / 1.5 <= r["ratio"] <= 1.5]
    print(f"summary: {len(within)} of {len(results)} first estimates within 1.5x of the real time; ratios "
          + ", ".join(f"{r['kind']} {r['ratio']:.2f}" for r in results), flush=True)
    print("quiet seconds implied (real over the slowdown the estimate used): "
          + ", ".join(f"{r['kind']} {r['real'] * r['reference_s'] / r['first']:.1f} s "
                      f"(documented {r['reference_s']:.1f} s)" for r in results if r["first"] > 0), flush=True)


if __name__ == "__main__":
    main()
