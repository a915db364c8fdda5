"""Model specifications: what to load and how, and the identity that keys the model cache."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from fairness_core import config
from fairness_core.store.manifest import file_fingerprint

TASKS = ("causal-lm", "seq2seq-lm", "encoder", "classifier", "masked-lm")
DTYPES = ("auto", "fp32", "fp16", "bf16")
QUANTIZATIONS = ("none", "8bit", "4bit")
DEVICES = ("auto", "cpu", "cuda")


@dataclass(frozen=True)
class ModelSpec:
    """A request for a model. `source` is a hub id, a local directory, or a GGUF file / its folder."""

    source: str
    task: str
    dtype: str = "auto"
    quantization: str = "none"
    device: str = "auto"
    revision: str | None = None
    gguf_file: str | None = None

    def __post_init__(self) -> None:
        for value, allowed, field_name in (
            (self.task, TASKS, "task"),
            (self.dtype, DTYPES, "dtype"),
            (self.quantization, QUANTIZATIONS, "quantization"),
            (self.device, DEVICES, "device"),
        ):
            if value not in allowed:
                raise ValueError(f"model {field_name} must be one of {', '.join(allowed)} (got {value!r})")
        if self.is_endpoint:
            from fairness_core.models.endpoint import Endpoint

            if self.task != "causal-lm":
                raise ValueError(f"an OpenAI-compatible endpoint is a causal LM, not a model for {self.task}")
            if self.quantization != "none":
                raise ValueError("an endpoint's quantization is the server's business: give quantization none")
            Endpoint.parse(self.source)  # ValueError, one sentence
            return
        if self.source.endswith(".gguf") and self.gguf_file is None:
            path = Path(self.source)
            object.__setattr__(self, "source", str(path.parent))
            object.__setattr__(self, "gguf_file", path.name)

    @property
    def display_name(self) -> str:
        if self.is_endpoint:
            from fairness_core.models.endpoint import Endpoint

            return Endpoint.parse(self.source).label()
        return self.gguf_file or self.source

    @property
    def is_local(self) -> bool:
        return not self.is_endpoint and Path(self.source).expanduser().exists()

    @property
    def is_endpoint(self) -> bool:
        """An OpenAI-compatible HTTP endpoint (`models/endpoint.py`), not weights loaded here."""
        return self.source.startswith("endpoint:")

    def resolved(self) -> ModelSpec:
        """Concrete device and dtype for this machine (CUDA when present; fp32 on CPU)."""
        if self.is_endpoint:
            return self  # the server decides both
        device = self.device
        if device == "auto":
            device = "cuda" if cuda_available() else "cpu"
        dtype = self.dtype
        if dtype == "auto":
            dtype = "fp32" if device == "cpu" else ("bf16" if cuda_bf16_supported() else "fp16")
        return replace(self, device=device, dtype=dtype)

    def identity(self) -> str:
        """Revision for hub ids, content hash for local files: changes whenever weights may. For an
        endpoint: a hash of what it reports (host, model as served, capabilities)."""
        if self.is_endpoint:
            record = json.dumps(self.to_manifest(), sort_keys=True)
            return "endpoint:" + hashlib.sha256(record.encode()).hexdigest()[:16]
        if self.gguf_file:
            return "sha256:" + cached_file_hash(Path(self.source).expanduser() / self.gguf_file)
        if self.is_local:
            from fairness_core.models.interfaces import ModelUnavailableError

            directory = Path(self.source).expanduser()
            if not directory.is_dir():  # a file that is not a .gguf (e.g. /etc/passwd): one sentence, no traceback
                raise ModelUnavailableError(f"{self.source} is a file, not a model folder (a folder with "
                                            "config.json) or a .gguf file")
            try:
                return "dir:" + directory_fingerprint(directory)
            except OSError as error:
                raise ModelUnavailableError(f"{self.source} cannot be read "
                                            f"({error.strerror or type(error).__name__})") from None
        return "rev:" + (self.revision or hub_cached_revision(self.source) or "main")

    def cache_key(self) -> tuple[str, ...]:
        if self.is_endpoint:  # no request needed: the source string names the server and the model
            return (self.task, "endpoint", self.source)
        spec = self.resolved()
        return (
            spec.task, spec.source, spec.gguf_file or "", spec.identity(), spec.dtype, spec.quantization, spec.device
        )

    def to_manifest(self) -> dict[str, str | None]:
        """What a run manifest records about the model (identity included, machine paths not). For an
        endpoint: host, path, the model id as the server reports it and its capabilities (never the key,
        nor the name of the variable holding it)."""
        if self.is_endpoint:
            from fairness_core.models.endpoint import endpoint_client

            return endpoint_client(self.source, self.cache_key()).manifest()  # the client load_model returns
        spec = self.resolved()
        record = asdict(spec)
        record["identity"] = spec.identity()
        if spec.is_local:
            record["source"] = Path(spec.source).name  # the hash identifies it; paths differ per machine
        return record


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def cuda_bf16_supported() -> bool:
    import torch

    return torch.cuda.is_available() and torch.cuda.is_bf16_supported()


def directory_fingerprint(directory: Path) -> str:
    """Hash of config files' bytes and weight files' names and sizes (cheap, stable for a checkpoint)."""
    digest = hashlib.sha256()
    for path in sorted(directory.iterdir()):
        if not path.is_file():
            continue
        if path.suffix in (".json", ".txt", ".model"):
            digest.update(path.name.encode() + path.read_bytes())
        else:
            digest.update(f"{path.name}:{path.stat().st_size}".encode())
    return digest.hexdigest()[:16]


def cached_file_hash(path: Path) -> str:
    """SHA-256 of a big file, memoised on disk by (path, size, mtime): hashing 100 MB costs ~0.3 s."""
    stat = path.stat()
    memo_path = config.cache_dir() / "file-hashes.json"
    key = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    try:
        memo = json.loads(memo_path.read_text())
    except (OSError, ValueError):
        memo = {}
    if key not in memo:
        memo[key] = file_fingerprint(path)
        tmp = memo_path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(memo))
        tmp.replace(memo_path)
    return memo[key][:16]


def hub_cached_revision(repo_id: str) -> str | None:
    """The commit of the locally cached snapshot of a hub model, if any (no network)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    found = try_to_load_from_cache(repo_id, "config.json")
    if isinstance(found, str) and "/snapshots/" in found:
        return found.split("/snapshots/")[1].split("/")[0][:12]
    return None
