"""Training debiasing adapters (Sun et al. 2022 §3.2) as a stored job: shards of steps, a checkpoint after each.

One step: B_d counterfactual triples and B_k knowledge-distillation pairs (`TrainingData`), in the order of a
seeded permutation per epoch of each set;

    L = mean_i (M(c1_i, r_i; θA) − M(c2_i, r_i; θA))²          (Eq. 4, debias)
      + mean_j (M(p_j, h_j; θLM) − M(p_j, h_j; θA))²          (Eq. 5, knowledge distillation; unweighted sum)

where M is the metric (`objectives`), θA the frozen backbone with adapters and θLM the backbone alone (the
adapters switched off: the teacher). Adam on the adapter parameters only, gradient norm clipped at 1 (the released
training code's setting), dropout off (the backbone runs in eval mode: M is then a function, so the teacher and
the student agree exactly at step 0 and a resumed run repeats an uninterrupted one).

Resume: after each shard the work unit writes a checkpoint (adapter weights, Adam's state, the step, both data
positions, torch's and numpy's generator states) atomically under the cache directory, before the runner stores
the shard's rows. A shard starts from the checkpoint of the step it starts at, so a process killed anywhere (even
between writing a checkpoint and storing the rows) resumes from the last stored shard and repeats the same steps.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fairness_core import config
from fairness_core.jobs.context import checkpoint as job_checkpoint

KIND = "mitigation-train"
TRAINER_VERSION = "1"
GRAD_CLIP = 1.0


class CheckpointMissingError(RuntimeError):
    """A shard must start from a checkpoint that is not on this machine (deleted cache); one sentence."""


def request_key(request: dict[str, Any]) -> str:
    """A short stable hash of a training request (names its checkpoints and its adapter)."""
    from fairness_core.store.manifest import canonical_json

    return hashlib.sha256(canonical_json(request).encode("utf-8")).hexdigest()[:16]


def checkpoint_dir(request: dict[str, Any]) -> Path:
    return config.cache_dir() / "mitigation" / "checkpoints" / request_key(request)


def checkpoint_path(request: dict[str, Any], step: int) -> Path:
    return checkpoint_dir(request) / f"step-{step:07d}.pt"


@dataclass(frozen=True)
class Hyper:
    """The hyper-parameters a request carries (`request["train"]`)."""

    steps: int
    debias_batch: int
    kd_batch: int
    lr: float
    seed: int
    shard_steps: int

    @classmethod
    def of(cls, request: dict[str, Any]) -> Hyper:
        train = request["train"]
        return cls(int(train["steps"]), int(train["debias_batch"]), int(train["kd_batch"]), float(train["lr"]),
                   int(train["seed"]), int(train["shard_steps"]))


class Trainer:
    """The model with adapters, the objective, the optimiser and the data of one training request."""

    def __init__(self, request: dict[str, Any]) -> None:
        import torch

        from fairness_core.metrics.registry import metric_from_signature
        from fairness_core.mitigation.objectives import objective_for
        from fairness_core.models.adapters import AdapterConfig, attach
        from fairness_core.models.loading import load_hf

        self.request = request
        self.hyper = Hyper.of(request)
        self.data = _training_data(request)
        metric = metric_from_signature(request["metric"])
        self.spec = metric.model_spec()
        self.model, self.tokenizer = load_hf(self.spec)  # a copy of its own: the cached backbone stays plain
        self.model.eval()  # dropout off (module docstring)
        for parameter in self.model.parameters():
            parameter.requires_grad_(False)
        adapter = request["adapter"]
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.hyper.seed)
            self.adapters = attach(self.model, AdapterConfig(int(adapter["reduction_factor"]),
                                                             str(adapter["activation"])))
        self.parameters = [p for a in self.adapters for p in a.parameters()]
        for parameter in self.parameters:
            parameter.requires_grad_(True)
        layer = _matching_layer(request["metric"], metric) if request["family"] == "matching" else None
        self.objective = objective_for(request["family"], self.model, self.tokenizer, layer=layer,
                                       prompt=getattr(metric, "prompt", None))
        self.optimizer = torch.optim.Adam(self.parameters, lr=self.hyper.lr)
        self.step = 0
        self.cursor = {"debias": 0, "kd": 0}

    # -- data order ------------------------------------------------------------------------------------
    def _take(self, part: str, size: int, count: int) -> list[int]:
        """`count` indices of a set of `size` from the cursor on: epoch e reads permutation(seed, part, e)."""
        import numpy as np

        position = self.cursor[part]
        out = []
        while len(out) < count:
            epoch, offset = divmod(position, size)
            seed = int(hashlib.sha256(f"{self.hyper.seed}:{part}:{epoch}".encode()).hexdigest()[:8], 16)
            order = np.random.default_rng(seed).permutation(size)
            take = order[offset : offset + (count - len(out))]
            out += [int(i) for i in take]
            position += len(take)
        self.cursor[part] = position
        return out

    def batch(self) -> tuple[list[Any], list[tuple[str, str]]]:
        triples = [self.data.triples[i] for i in self._take("debias", len(self.data.triples), self.hyper.debias_batch)]
        pairs = [self.data.kd_pairs[i] for i in self._take("kd", len(self.data.kd_pairs), self.hyper.kd_batch)]
        return triples, pairs

    # -- one step --------------------------------------------------------------------------------------
    def train_step(self) -> dict[str, float]:
        """One optimiser step (Eq. 4 + Eq. 5); returns the step's losses."""
        import torch

        from fairness_core.models.adapters import disabled

        triples, pairs = self.batch()
        n = len(triples)
        with torch.no_grad(), disabled(self.model):
            teacher = self.objective.scores([h for _, h in pairs], [p for p, _ in pairs])
        scores = self.objective.scores([t.c1 for t in triples] + [t.c2 for t in triples] + [h for _, h in pairs],
                                       [t.r for t in triples] * 2 + [p for p, _ in pairs])
        loss_debias = ((scores[:n] - scores[n : 2 * n]) ** 2).mean()
        loss_kd = ((scores[2 * n :] - teacher) ** 2).mean()
        loss = loss_debias + loss_kd
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.parameters, GRAD_CLIP)
        self.optimizer.step()
        self.step += 1
        return {"loss_debias": loss_debias.item(), "loss_kd": loss_kd.item(), "loss": loss.item()}

    # -- checkpoints -----------------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        import numpy as np
        import torch

        from fairness_core.models.adapters import state_dict

        return {"adapters": state_dict(self.adapters), "optimizer": self.optimizer.state_dict(), "step": self.step,
                "cursor": dict(self.cursor), "torch_rng": torch.get_rng_state(),
                "numpy_rng": _numpy_state(np.random.get_state()), "trainer_version": TRAINER_VERSION}

    def load(self, state: dict[str, Any]) -> None:
        import numpy as np
        import torch

        from fairness_core.models.adapters import load_state

        load_state(self.adapters, state["adapters"], "the checkpoint")
        self.optimizer.load_state_dict(state["optimizer"])
        self.step = int(state["step"])
        self.cursor = {key: int(value) for key, value in state["cursor"].items()}
        torch.set_rng_state(state["torch_rng"])
        numpy_rng = json.loads(state["numpy_rng"])
        np.random.set_state((numpy_rng[0], np.array(numpy_rng[1], dtype=np.uint32), *numpy_rng[2:]))

    def save_checkpoint(self) -> Path:
        import torch

        path = checkpoint_path(self.request, self.step)
        path.parent.mkdir(parents=True, exist_ok=True)
        staging = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.partial")
        torch.save(self.state(), staging)
        os.replace(staging, path)  # atomic: a kill leaves the old checkpoint or the new one, never half of one
        return path

    def resume_from(self, step: int) -> None:
        """Load the checkpoint written at `step` (CheckpointMissingError when it is not there)."""
        path = checkpoint_path(self.request, step)
        state = read_checkpoint(path)
        if state is None:
            raise CheckpointMissingError(f"the checkpoint of step {step} ({path}) is missing, so this training run "
                                         "cannot resume; remove the run (`runs delete`) and train again")
        self.load(state)


def _numpy_state(state: tuple[Any, ...]) -> str:
    name, keys, position, has_gauss, cached = state
    return json.dumps([name, [int(k) for k in keys], int(position), int(has_gauss), float(cached)])


def _matching_layer(signature: dict[str, Any], metric: Any) -> int:
    """The BERTScore layer the metric reads, from its signature (no model load: a trainer holds its own copy)."""
    chosen = signature.get("options", {}).get("layer")
    if chosen is None:
        chosen = signature.get("default_layer", "last")
    return metric.layer_count() if chosen in (None, "last") else int(chosen)


def read_checkpoint(path: Path) -> dict[str, Any] | None:
    import torch

    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except (OSError, RuntimeError, EOFError, ValueError):
        return None


def _training_data(request: dict[str, Any]) -> Any:
    from fairness_core.mitigation.data import TrainingDataError, training_data

    data = training_data(request["attribute"])
    if data.content_hash() != request["data"]["sha256"]:
        raise TrainingDataError(f"the training data built here (sha256 {data.content_hash()[:12]}) is not the data "
                                f"this run was started with ({request['data']['sha256'][:12]}): the packages that "
                                "ship it changed; start a new run")
    return data


_trainers: dict[str, Trainer] = {}
_trainers_lock = threading.Lock()


def trainer_at(request: dict[str, Any], step: int) -> Trainer:
    """The request's trainer at `step`: the one this process holds when it is there (shards run one after another),
    a fresh one for step 0, else one loaded from the checkpoint of `step`. One trainer per process (it holds a
    model copy)."""
    key = request_key(request)
    with _trainers_lock:
        trainer = _trainers.get(key)
        if trainer is not None and trainer.step == step:
            return trainer
        _trainers.clear()
        trainer = Trainer(request)
        if step:
            trainer.resume_from(step)
        _trainers[key] = trainer
        return trainer


def forget_trainers() -> None:
    with _trainers_lock:
        _trainers.clear()


def work(request: dict[str, Any], shard: dict[str, Any]) -> list[dict[str, Any]]:
    """Steps [start, stop) of a training run (the job's work unit): resume at `start`, train, checkpoint.

    Cancel is checked between steps (`jobs.checkpoint`); a cancelled shard stores nothing and the next run starts
    it again from the checkpoint at `start`."""
    from fairness_core.models.threads import model_threads

    start, stop = int(shard["start"]), int(shard["stop"])
    # The model layer's thread policy, decided once for the shard and for this thread only: every free core on a
    # quiet machine, one when other work keeps the cores busy (OMP_NUM_THREADS, when set, is kept).
    with model_threads():
        rows = _train_steps(request, start, stop)
    _drop_old_checkpoints(request, keep_from=start)
    return rows


def _train_steps(request: dict[str, Any], start: int, stop: int) -> list[dict[str, Any]]:
    rows = []
    try:
        trainer = trainer_at(request, start)
        for step in range(start, stop):
            job_checkpoint(step - start, stop - start)  # progress inside the shard; raises once cancelled
            began = time.monotonic()
            losses = trainer.train_step()
            for name, value in losses.items():
                rows.append({"item": f"step-{step + 1:07d}", "grp": "train", "variant": str(step + 1),
                             "metric": name, "value": value, "text": "",
                             "attrs": {"seconds": round(time.monotonic() - began, 4)}})
        trainer.save_checkpoint()
    except BaseException:
        forget_trainers()  # its state is past `start` now: the next attempt reloads the checkpoint
        raise
    return rows


def _drop_old_checkpoints(request: dict[str, Any], keep_from: int) -> None:
    """Checkpoints before `keep_from` are no longer needed once a later one exists (the shard starting at
    `keep_from` may still be repeated, so its checkpoint stays)."""
    folder = checkpoint_dir(request)
    for path in folder.glob("step-*.pt"):
        try:
            step = int(path.stem.split("-")[1])
        except (IndexError, ValueError):
            continue
        if step < keep_from:
            path.unlink(missing_ok=True)
