"""Bottleneck debiasing adapters (Sun et al. 2022 §3.2, Eq. 3) inside a frozen transformers backbone, and their
files: safetensors in the cache directory, addressed by id, exported and imported as one file.

    Adapter(h, r) = W_u · g(W_d · h) + r                                          (Eq. 3)

Placement is Pfeiffer et al.'s (2021) configuration, as AdapterHub's `PfeifferConfig` places it (the paper's
implementation): one adapter per layer, after the feed-forward sub-layer, nothing after attention.

- Post-LN encoders (BERT, RoBERTa, MiniLM, ELECTRA, RemBERT, DistilBERT; BART's layers): with x the sub-layer's
  input and f its feed-forward output, the layer normally returns LN(f + x). Pfeiffer: h = LN(f + x) (the original
  LayerNorm applied before the adapter), r = f (residual taken before that LayerNorm), output LN(Adapter(h, r) + x)
  (the original LayerNorm again). With z = f + x that is LN(z + W_u g(W_d LN(z))): a hook on the LayerNorm that
  closes the feed-forward sub-layer computes it from z alone.
- Pre-LN decoders (GPT-2, Llama/SmolLM2, Mistral, Qwen, …) have no LayerNorm there: h = f + x, r = f, output
  Adapter(h, r) + x = y + W_u g(W_d y) with y the block's output, a hook on each decoder block.

The up-projection starts at zero, so a freshly attached adapter leaves every output exactly as the backbone's
(AdapterHub's default initialises it with small random values instead; zero is the "mam_adapter" choice and makes
"starts equal to the backbone" exact). The backbone itself is never changed: an adapted model is a separate copy
(`load_adapted`), so the process-wide cache keeps serving the plain backbone to everyone else.

An adapter file holds the weights and, in the safetensors header, a JSON manifest: the backbone it was trained
for (source name, identity hash, architecture, hidden size, layers), the adapter configuration (reduction factor,
activation, placement, sites), and whatever the trainer adds (training run, data hash, hyper-parameters, losses).
Its id is chosen by whoever writes it (the trainer: metric, backbone, attribute and the training run's hash).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fairness_core import config

if TYPE_CHECKING:
    from fairness_core.models.interfaces import ModelBase
    from fairness_core.models.spec import ModelSpec

FORMAT = "fairness-lab-adapter/1"
ACTIVATIONS = ("relu", "gelu", "tanh", "swish")
#: an adapter id names a file: lower-case letters, digits, '.', '_' and '-', at most 120 characters
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,119}$")
#: the largest adapter file accepted by `import_adapter` (a BERT-large adapter at reduction 2 is ~75 MB)
MAX_IMPORT_BYTES = 200 * 2**20
#: post-LN encoders: the LayerNorm closing each layer's feed-forward sub-layer
_POST_LN_SITES = {
    "bert": r"(^|\.)layer\.\d+\.output\.LayerNorm$",
    "roberta": r"(^|\.)layer\.\d+\.output\.LayerNorm$",
    "xlm-roberta": r"(^|\.)layer\.\d+\.output\.LayerNorm$",
    "camembert": r"(^|\.)layer\.\d+\.output\.LayerNorm$",
    "electra": r"(^|\.)layer\.\d+\.output\.LayerNorm$",
    "rembert": r"(^|\.)layer\.\d+\.output\.LayerNorm$",
    "distilbert": r"(^|\.)layer\.\d+\.output_layer_norm$",
    "bart": r"(^|\.)layers\.\d+\.final_layer_norm$",  # BART is post-LN (mBART, M2M-100 and NLLB are not)
}
#: pre-LN decoder-only models: the adapter follows each decoder block
_PRE_LN_DECODERS = ("gpt2", "llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "phi3", "olmo", "olmo2",
                    "smollm3", "granite", "gpt_neox")


class AdapterError(ValueError):
    """An adapter that does not exist, cannot be read, or does not fit the backbone; one sentence."""


@dataclass(frozen=True)
class AdapterConfig:
    """Pfeiffer configuration: the bottleneck is hidden size / reduction_factor, g is `activation`."""

    reduction_factor: int = 16
    activation: str = "relu"

    def problems(self) -> list[str]:
        if not isinstance(self.reduction_factor, int) or self.reduction_factor < 1:
            return [f"the reduction factor must be a whole number of at least 1 (got {self.reduction_factor!r})"]
        if self.activation not in ACTIVATIONS:
            return [f"unknown adapter activation {self.activation!r}; choose from {', '.join(ACTIVATIONS)}"]
        return []

    def manifest(self) -> dict[str, Any]:
        return asdict(self) | {"architecture": "bottleneck (Eq. 3)", "placement": "Pfeiffer: after each layer's "
                               "feed-forward sub-layer", "init": "up-projection zero (starts equal to the backbone)"}


def _bottleneck_module() -> type:
    import torch

    class BottleneckAdapter(torch.nn.Module):
        """Adapter(h, r) = W_u · g(W_d · h) + r (Eq. 3), W_u initialised to zero."""

        def __init__(self, hidden: int, bottleneck: int, activation: str) -> None:
            super().__init__()
            self.down = torch.nn.Linear(hidden, bottleneck)
            self.up = torch.nn.Linear(bottleneck, hidden)
            torch.nn.init.zeros_(self.up.weight)
            torch.nn.init.zeros_(self.up.bias)
            self.activation = activation
            self.enabled = True

        def delta(self, h: Any) -> Any:
            """W_u · g(W_d · h): what the adapter adds to its residual."""
            import torch.nn.functional as F

            inner = self.down(h)
            inner = {"relu": F.relu, "gelu": F.gelu, "tanh": torch.tanh, "swish": F.silu}[self.activation](inner)
            return self.up(inner)

        def forward(self, h: Any, r: Any) -> Any:
            return self.delta(h) + r

    return BottleneckAdapter


_MODULE_CLASS: list[type] = []


def bottleneck_adapter(hidden: int, bottleneck: int, activation: str = "relu") -> Any:
    """A `BottleneckAdapter` torch module (torch is imported on first use, not with this module)."""
    if not _MODULE_CLASS:
        _MODULE_CLASS.append(_bottleneck_module())
    return _MODULE_CLASS[0](hidden, bottleneck, activation)


def placement(model: Any) -> tuple[str, list[str]]:
    """("post-ln" | "pre-ln", names of the modules an adapter follows) for a transformers model."""
    import torch

    model_type = getattr(getattr(model, "config", None), "model_type", None)
    names = [name for name, _ in model.named_modules()]
    if model_type in _POST_LN_SITES:
        pattern = re.compile(_POST_LN_SITES[model_type])
        sites = [name for name in names if pattern.search(name) and ".debias_adapter" not in name]
        if sites:
            return "post-ln", sites
    if model_type in _PRE_LN_DECODERS:
        count = getattr(model.config, "num_hidden_layers", None)
        for name, module in model.named_modules():
            if isinstance(module, torch.nn.ModuleList) and len(module) == count and name.rsplit(".", 1)[-1] in (
                    "layers", "h", "layer"):
                return "pre-ln", [f"{name}.{i}" for i in range(count)]
    raise AdapterError(f"a {model_type or type(model).__name__} model cannot take debiasing adapters here: its "
                       "feed-forward placement is known for BERT-family encoders, BART and pre-LN decoders "
                       "(GPT-2, Llama, Mistral, Qwen, …) only")


def _post_ln_hook(module: Any, args: tuple[Any, ...], output: Any) -> Any:
    """LN(z) -> LN(Adapter(LN(z), z)): the Pfeiffer output adapter seen from the closing LayerNorm."""
    adapter = module.debias_adapter
    if not adapter.enabled:
        return None
    import torch.nn.functional as F

    z = args[0]
    return F.layer_norm(adapter(output, z), module.normalized_shape, module.weight, module.bias, module.eps)


def _pre_ln_hook(module: Any, args: tuple[Any, ...], output: Any) -> Any:
    """y -> Adapter(y, y) = y + W_u g(W_d y) for a pre-LN block (its output y = feed-forward output + residual)."""
    adapter = module.debias_adapter
    if not adapter.enabled:
        return None
    if isinstance(output, tuple):
        return (adapter(output[0], output[0]), *output[1:])
    return adapter(output, output)


def attach(model: Any, adapter_config: AdapterConfig) -> list[Any]:
    """Insert one zero-initialised adapter per layer into `model` (in place); returns them in site order.

    Each adapter becomes the child `debias_adapter` of the module it follows (so `model.to(...)` moves it and
    `model.parameters()` includes it) and a forward hook applies it."""
    problems = adapter_config.problems()
    if problems:
        raise AdapterError(problems[0])
    kind, sites = placement(model)
    expected_kind, expected_sites = layout(model.config)
    if (kind, len(sites)) != (expected_kind, expected_sites):
        raise AdapterError(f"found {len(sites)} {kind} adapter sites in a {model.config.model_type} model, expected "
                           f"{expected_sites} {expected_kind}")
    modules = dict(model.named_modules())
    hidden = int(model.config.hidden_size)
    bottleneck = max(1, hidden // adapter_config.reduction_factor)
    reference = next(model.parameters())
    adapters = []
    for name in sites:
        site = modules[name]
        if hasattr(site, "debias_adapter"):
            raise AdapterError("this model already carries debiasing adapters")
        adapter = bottleneck_adapter(hidden, bottleneck, adapter_config.activation).to(
            device=reference.device, dtype=reference.dtype)
        site.add_module("debias_adapter", adapter)
        site.register_forward_hook(_post_ln_hook if kind == "post-ln" else _pre_ln_hook)
        adapters.append(adapter)
    return adapters


def adapters_of(model: Any) -> list[Any]:
    """The adapters `attach` put into `model`, in site order ([] when it has none)."""
    try:
        _, sites = placement(model)
    except AdapterError:
        return []
    modules = dict(model.named_modules())
    return [modules[name].debias_adapter for name in sites if hasattr(modules[name], "debias_adapter")]


@contextmanager
def disabled(model: Any) -> Iterator[None]:
    """The backbone's own outputs while inside (a teacher pass for knowledge distillation, Eq. 5)."""
    adapters = adapters_of(model)
    previous = [a.enabled for a in adapters]
    for adapter in adapters:
        adapter.enabled = False
    try:
        yield
    finally:
        for adapter, flag in zip(adapters, previous, strict=True):
            adapter.enabled = flag


def state_dict(adapters: list[Any]) -> dict[str, Any]:
    """{"adapters.<i>.<down|up>.<weight|bias>": tensor}: what an adapter file holds (contiguous CPU copies)."""
    out = {}
    for index, adapter in enumerate(adapters):
        for key, value in adapter.state_dict().items():
            out[f"adapters.{index}.{key}"] = value.detach().to("cpu").contiguous().clone()
    return out


def load_state(adapters: list[Any], weights: dict[str, Any], adapter_id: str = "the adapter") -> None:
    """Copy adapter-file weights into attached adapters, checking every name and shape."""
    expected = state_dict(adapters)
    if set(expected) != set(weights):
        raise AdapterError(f"{adapter_id} has {len(weights)} tensors but this backbone's adapters need "
                           f"{len(expected)}: it was made for another architecture")
    import torch

    with torch.no_grad():
        for index, adapter in enumerate(adapters):
            for key, target in adapter.state_dict().items():
                value = weights[f"adapters.{index}.{key}"]
                if tuple(value.shape) != tuple(target.shape):
                    raise AdapterError(f"{adapter_id}: tensor adapters.{index}.{key} has shape {tuple(value.shape)}"
                                       f", this backbone needs {tuple(target.shape)}")
                target.copy_(value.to(target.dtype))


# -- files --------------------------------------------------------------------------------------------
def adapters_dir() -> Path:
    folder = config.cache_dir() / "adapters"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def check_id(adapter_id: str) -> str:
    text = str(adapter_id).strip()
    if not ID_PATTERN.match(text):
        raise AdapterError(f"{adapter_id!r} is not an adapter id (lower-case letters, digits, '.', '_' and '-'; "
                           "`python -m fairness_core models --json` lists the adapters here)")
    return text


def adapter_path(adapter_id: str) -> Path:
    return adapters_dir() / f"{check_id(adapter_id)}.safetensors"


@dataclass(frozen=True)
class AdapterInfo:
    """What an adapter file says about itself (read from its header, weights not loaded)."""

    adapter_id: str
    manifest: dict[str, Any]
    sha256: str
    size_bytes: int

    @property
    def backbone(self) -> dict[str, Any]:
        return dict(self.manifest.get("backbone", {}))

    @property
    def config(self) -> AdapterConfig:
        settings = self.manifest.get("adapter", {})
        return AdapterConfig(int(settings.get("reduction_factor", 16)), str(settings.get("activation", "relu")))

    def describe(self) -> dict[str, Any]:
        """The adapter's part of a metric signature / run manifest, and one row of `models --json`."""
        trained = self.manifest.get("trained", {})
        return {"id": self.adapter_id, "sha256": self.sha256, "backbone": self.backbone,
                "adapter": self.manifest.get("adapter", {}), "parameters": self.manifest.get("parameters"),
                "trained_for": trained.get("metric"), "attribute": trained.get("attribute"),
                "run_id": trained.get("run_id"), "steps": trained.get("steps")}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _header(data: bytes, where: str) -> dict[str, Any]:
    """The safetensors header's metadata of `data`, checked to be one of our adapter files."""
    if len(data) < 8:
        raise AdapterError(f"{where} is not a safetensors file (only {len(data)} bytes)")
    length = int.from_bytes(data[:8], "little")
    if length <= 0 or 8 + length > len(data):
        raise AdapterError(f"{where} is not a safetensors file (its header length does not fit the file)")
    try:
        header = json.loads(data[8 : 8 + length].decode("utf-8"))
        metadata = header.get("__metadata__") or {}
        manifest = json.loads(metadata.get("manifest", "null"))
    except (UnicodeDecodeError, ValueError, AttributeError):
        raise AdapterError(f"{where} is not a safetensors file (its header is not JSON)") from None
    if metadata.get("format") != FORMAT or not isinstance(manifest, dict):
        raise AdapterError(f"{where} is a safetensors file but not a debiasing adapter of this lab (no "
                           f"{FORMAT!r} manifest in its header)")
    return manifest


def read_adapter(adapter_id: str) -> AdapterInfo:
    """The adapter `adapter_id` from the cache directory (header and hash only)."""
    path = adapter_path(adapter_id)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        known = [info.adapter_id for info in list_adapters()]
        hint = f"; adapters here: {', '.join(known[:5])}{', …' if len(known) > 5 else ''}" if known else \
            "; none is stored here yet (train one with `mitigate train`, or import a file)"
        raise AdapterError(f"no adapter {adapter_id!r} in {adapters_dir()}{hint}") from None
    except OSError as error:
        raise AdapterError(f"adapter {adapter_id!r} cannot be read ({error.strerror or error})") from None
    manifest = _header(data, f"adapter {adapter_id!r}")
    return AdapterInfo(adapter_id, manifest, _sha256(data), len(data))


def list_adapters() -> list[AdapterInfo]:
    """Every readable adapter in the cache directory, by id (unreadable files are left out)."""
    found = []
    for path in sorted(adapters_dir().glob("*.safetensors")):
        if not ID_PATTERN.match(path.stem):
            continue
        try:
            found.append(read_adapter(path.stem))
        except AdapterError:
            continue
    return found


def load_weights(adapter_id: str) -> dict[str, Any]:
    from safetensors.torch import load

    return load(adapter_path(adapter_id).read_bytes())


def save_adapter(adapter_id: str, weights: dict[str, Any], manifest: dict[str, Any]) -> AdapterInfo:
    """Write an adapter file atomically (a crash never leaves a half-written adapter under its id)."""
    from safetensors.torch import save

    data = save(weights, metadata={"format": FORMAT, "manifest": json.dumps(manifest, sort_keys=True)})
    return _write(check_id(adapter_id), data, manifest)


def _write(adapter_id: str, data: bytes, manifest: dict[str, Any]) -> AdapterInfo:
    path = adapter_path(adapter_id)
    staging = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.partial")
    staging.write_bytes(data)
    os.replace(staging, path)
    return AdapterInfo(adapter_id, manifest, _sha256(data), len(data))


def export_adapter(adapter_id: str) -> bytes:
    """The adapter as one file's bytes (weights + manifest): what a teacher hands to a class."""
    read_adapter(adapter_id)  # one sentence when it does not exist
    return adapter_path(adapter_id).read_bytes()


def import_adapter(data: bytes, name: str = "upload") -> AdapterInfo:
    """Store an exported adapter file (bytes, never a path) under the id its manifest carries.

    Refused in one sentence: not our adapter format, tensors that do not match the manifest's configuration,
    or an adapter with the same id but other weights already here. Importing the same file twice is a no-op.
    """
    if len(data) > MAX_IMPORT_BYTES:
        raise AdapterError(f"{name} is {len(data) / 2**20:.0f} MB; an adapter file is at most "
                           f"{MAX_IMPORT_BYTES // 2**20} MB")
    manifest = _header(data, name)
    adapter_id = manifest.get("id")
    if not isinstance(adapter_id, str) or not ID_PATTERN.match(adapter_id):
        raise AdapterError(f"{name}: its manifest has no valid adapter id")
    try:
        from safetensors.torch import load

        weights = load(data)
    except Exception as error:  # a truncated or altered file
        raise AdapterError(f"{name}: its tensors cannot be read ({type(error).__name__})") from None
    _check_shapes(weights, manifest, name)
    existing = adapter_path(adapter_id)
    if existing.exists():
        if _sha256(existing.read_bytes()) == _sha256(data):
            return read_adapter(adapter_id)
        raise AdapterError(f"{name}: an adapter with id {adapter_id!r} but other weights is already here; "
                           "remove it first if you mean to replace it")
    return _write(adapter_id, data, manifest)


def _check_shapes(weights: dict[str, Any], manifest: dict[str, Any], name: str) -> None:
    backbone = manifest.get("backbone", {})
    settings = manifest.get("adapter", {})
    try:
        hidden, layers = int(backbone["hidden_size"]), int(backbone["sites"])
        bottleneck = max(1, hidden // int(settings["reduction_factor"]))
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        raise AdapterError(f"{name}: its manifest lacks the backbone's hidden size, sites or the reduction "
                           "factor") from None
    expected = {}
    for index in range(layers):
        expected |= {f"adapters.{index}.down.weight": (bottleneck, hidden),
                     f"adapters.{index}.down.bias": (bottleneck,),
                     f"adapters.{index}.up.weight": (hidden, bottleneck), f"adapters.{index}.up.bias": (hidden,)}
    got = {key: tuple(value.shape) for key, value in weights.items()}
    if got != expected:
        raise AdapterError(f"{name}: its tensors do not match its manifest ({len(got)} tensors; {layers} sites of "
                           f"hidden size {hidden} and bottleneck {bottleneck} need {len(expected)})")


# -- backbones ----------------------------------------------------------------------------------------
def checkpoint_folder(spec: ModelSpec) -> str:
    """The folder with the backbone's config and safetensors weights (a GGUF file's converted copy, made once)."""
    resolved = spec.resolved()
    if resolved.gguf_file:
        from fairness_core.models.loading import gguf_converted_dir

        return str(gguf_converted_dir(resolved))
    return resolved.source


def layout(model_config: Any) -> tuple[str, int]:
    """("post-ln" | "pre-ln", number of adapters) for a model config, without loading weights."""
    model_type = getattr(model_config, "model_type", None)
    if model_type == "bart":
        return "post-ln", int(model_config.encoder_layers) + int(model_config.decoder_layers)
    if model_type in _POST_LN_SITES:
        return "post-ln", int(model_config.num_hidden_layers)
    if model_type in _PRE_LN_DECODERS:
        return "pre-ln", int(model_config.num_hidden_layers)
    raise AdapterError(f"a {model_type or 'model of unknown type'} model cannot take debiasing adapters here: its "
                       "feed-forward placement is known for BERT-family encoders, BART and pre-LN decoders "
                       "(GPT-2, Llama, Mistral, Qwen, …) only")


def backbone_manifest(spec: ModelSpec, model_config: Any, label: str | None = None) -> dict[str, Any]:
    """What an adapter records about the backbone it was trained in (identity hash, architecture); reads the
    config only."""
    kind, sites = layout(model_config)
    record = spec.to_manifest()
    return {"label": label or record.get("source"), "source": record.get("source"),
            "identity": record.get("identity"), "task": spec.task, "model_type": model_config.model_type,
            "hidden_size": int(model_config.hidden_size), "sites": sites, "placement": kind}


def parameter_counts(model_config: Any, adapter_config: AdapterConfig) -> dict[str, int]:
    """Adapter parameters from the layout alone: per site 2·h·b + b + h (b = h // reduction factor)."""
    _, sites = layout(model_config)
    hidden = int(model_config.hidden_size)
    bottleneck = max(1, hidden // adapter_config.reduction_factor)
    return {"adapter": sites * (2 * hidden * bottleneck + bottleneck + hidden), "sites": sites,
            "bottleneck": bottleneck}


def check_backbone(info: AdapterInfo, spec: ModelSpec, label: str | None = None) -> None:
    """One sentence when `info` was trained for another backbone than `spec` names (compared by identity)."""
    backbone = info.backbone
    wanted = spec.to_manifest()
    name = label or spec.display_name
    trained_in = backbone.get("label") or backbone.get("source")
    if backbone.get("task") not in (None, spec.task):
        raise AdapterError(f"adapter {info.adapter_id!r} was trained in the {backbone.get('task')} backbone "
                           f"{trained_in}, not in the {spec.task} model {name}")
    if backbone.get("identity") != wanted.get("identity"):
        raise AdapterError(f"adapter {info.adapter_id!r} was trained in the backbone {trained_in} "
                           f"({backbone.get('identity')}), not in {name} ({wanted.get('identity')})")


def load_adapted(spec: ModelSpec, adapter_id: str) -> ModelBase:
    """The backend for `spec` with adapter `adapter_id` attached: a separate copy of the backbone (loaded once per
    process and adapter version, through the model cache), never the shared plain backbone."""
    from fairness_core.models.hf import BACKENDS
    from fairness_core.models.loading import load_hf
    from fairness_core.models.memo import cached

    info = read_adapter(adapter_id)
    check_backbone(info, spec)

    def build() -> ModelBase:
        model, tokenizer = load_hf(spec)
        adapters = attach(model, info.config)
        load_state(adapters, load_weights(adapter_id), repr(adapter_id))
        model.eval()
        backend = BACKENDS[spec.task](spec, model, tokenizer)
        backend.name = f"{backend.name} + adapter {adapter_id}"
        backend.cache_key = ("adapter", adapter_id, info.sha256, *backend.cache_key)
        return backend

    return cached(("adapter", adapter_id, info.sha256, *spec.cache_key()), build)
