"""Debiasing-adapter training vs full fine-tuning of the same backbone, side by side in one process.

Both sides take the same steps of the same objective (Eq. 4 debias + Eq. 5 distillation, `cpu` preset batches,
Adam, gradient clipping): the adapter side trains only the bottleneck adapters of `mitigation.training.Trainer`
(backbone frozen, the teacher is the backbone with its adapters switched off); the full side trains every weight of
a copy of the backbone against a frozen second copy (the teacher). Rounds alternate sides so background load hits
both alike; each side's best round is kept. Also printed: the trainable share of parameters, and each side's peak
resident memory for training (models, gradients, optimiser state, activations), sampled in a child process of its own.

    .venv/bin/python -m bench.adapter_training [--metric bertscore|bartscore|both] [--steps 6] [--repeats 2]

The machine is shared: read the ratio, and the absolute numbers with the load average printed beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from typing import Any

PAPER = ("Sun et al. 2022 report no training speed; Table 7 trains BERTScore-base adapters for 150K steps of 32 on "
         "an RTX 3090")


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min) / {five:.1f} (5 min) on {os.cpu_count()} cores"


def _job(metric: str) -> dict[str, Any]:
    from fairness_core.mitigation import build_train_request
    from fairness_core.mitigation.task import job_request, training_data

    request = build_train_request(metric, preset_key="cpu")
    return job_request(request, training_data("gender"))


class FullFineTune:
    """The same step as `Trainer.train_step`, with every backbone weight trainable and a frozen teacher copy."""

    def __init__(self, job: dict[str, Any], trainer: Any) -> None:
        import torch

        from fairness_core.mitigation.objectives import objective_for
        from fairness_core.models.loading import load_hf

        self.trainer = trainer  # for the data order only
        student, tokenizer = load_hf(trainer.spec)
        teacher, _ = load_hf(trainer.spec)
        student.eval()
        teacher.eval()
        for parameter in teacher.parameters():
            parameter.requires_grad_(False)
        self.parameters = list(student.parameters())
        for parameter in self.parameters:
            parameter.requires_grad_(True)
        layer = trainer.objective.layer if hasattr(trainer.objective, "layer") else None
        self.student = objective_for(job["family"], student, tokenizer, layer=layer)
        self.teacher = objective_for(job["family"], teacher, tokenizer, layer=layer)
        self.optimizer = torch.optim.Adam(self.parameters, lr=float(job["train"]["lr"]))

    def train_step(self) -> None:
        import torch

        triples, pairs = self.trainer.batch()
        n = len(triples)
        with torch.no_grad():
            teacher = self.teacher.scores([h for _, h in pairs], [p for p, _ in pairs])
        scores = self.student.scores([t.c1 for t in triples] + [t.c2 for t in triples] + [h for _, h in pairs],
                                     [t.r for t in triples] * 2 + [p for p, _ in pairs])
        loss = ((scores[:n] - scores[n : 2 * n]) ** 2).mean() + ((scores[2 * n :] - teacher) ** 2).mean()
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.parameters, 1.0)
        self.optimizer.step()


def _sides(metric: str) -> tuple[Any, Any, dict[str, Any]]:
    from fairness_core.mitigation.training import Trainer

    job = _job(metric)
    adapter = Trainer(job)
    full = FullFineTune(job, Trainer(job))
    return adapter, full, job


def _rss_now_mib() -> float:
    """This process's resident memory now (VmRSS), MiB."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def memory_child(metric: str, side: str, steps: int) -> None:
    """Peak resident memory of one side above the process before its models load (its own process): the models
    (the full side also loads a frozen teacher copy), gradients, Adam's state and activations. Sampled every 5 ms."""
    import gc
    import threading

    import torch

    from fairness_core.mitigation.data import training_data
    from fairness_core.mitigation.training import Trainer

    torch.set_num_threads(1)
    job = _job(metric)
    training_data(job["attribute"])  # the training set is loaded (and cached) before the baseline is read
    gc.collect()
    baseline = _rss_now_mib()
    peak = [baseline]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.005):
            peak[0] = max(peak[0], _rss_now_mib())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    trainer = Trainer(job) if side == "adapter" else FullFineTune(job, Trainer(job))
    for _ in range(steps):
        trainer.train_step()
    done.set()
    sampler.join()
    print(json.dumps({"baseline_mib": baseline, "peak_mib": max(peak[0], _rss_now_mib())}))


def _memory(metric: str, side: str, steps: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-m", "bench.adapter_training", "--memory-child", metric, side,
                          "--steps", str(steps)], capture_output=True, text=True, check=True,
                         env=os.environ | {"OMP_NUM_THREADS": "1"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def compare(metric: str, steps: int, repeats: int) -> None:
    import torch

    torch.set_num_threads(1)  # both sides alike; one thread is what training takes on a busy machine
    adapter, full, job = _sides(metric)
    total = sum(p.numel() for p in adapter.model.parameters())
    trainable = sum(p.numel() for p in adapter.parameters)
    print(f"{metric} on {job['backbone']['label']} ({job['family']} paradigm), batch {job['train']['debias_batch']} "
          f"triples + {job['train']['kd_batch']} pairs, {steps} steps per round, best of {repeats}; {_load()}",
          flush=True)
    best = {"adapter": float("inf"), "full fine-tuning": float("inf")}
    for side in (adapter, full):  # one warm-up step each (first-call allocations, kernel choice)
        side.train_step()
    for _ in range(repeats):
        for name, side in (("adapter", adapter), ("full fine-tuning", full)):
            started = time.perf_counter()
            for _ in range(steps):
                side.train_step()
            best[name] = min(best[name], time.perf_counter() - started)
    rates = {name: steps / seconds for name, seconds in best.items()}
    memory = {name: _memory(metric, "adapter" if name == "adapter" else "full", max(2, steps // 2))
              for name in best}
    for name in best:
        share = trainable / total if name == "adapter" else 1.0
        used = memory[name]["peak_mib"] - memory[name]["baseline_mib"]
        print(f"  {name:<17} {rates[name]:6.3f} steps/s ({best[name] / steps:6.2f} s a step)   trainable "
              f"{share:8.4%} of {total:,} parameters   peak memory {used:6.0f} MiB (models, gradients, optimiser, "
              "activations)")
    print(f"  speed ratio adapter / full fine-tuning: {rates['adapter'] / rates['full fine-tuning']:.2f}x steps/s; "
          f"{_load()}", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--metric", default="bertscore", choices=("bertscore", "bartscore", "both"))
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--memory-child", nargs=2, metavar=("METRIC", "SIDE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        memory_child(args.memory_child[0], args.memory_child[1], args.steps)
        return
    for metric in ("bertscore", "bartscore") if args.metric == "both" else (args.metric,):
        compare(metric, args.steps if metric == "bertscore" else max(1, args.steps // 3), args.repeats)
    print(PAPER)


if __name__ == "__main__":
    main()
