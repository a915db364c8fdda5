"""GPU check: the sampler and BERTScore in fp32, bf16, bitsandbytes 8-bit and 4-bit, side by side in one process.

Randomly initialised models of real architectures (speed and memory do not depend on weight values), built from
configs written here, so nothing is downloaded: SmolLM2-135M and a Llama-3.2-1B-shaped model for the sampler
(`fairness_core.models.sampling.sample_rows_detailed`, the decode loop every sweep uses), all-MiniLM-L6-v2 and
roberta-large shapes for BERTScore (`fairness_core.metrics.matching.BERTScore`; roberta-large is bert_score's
default English model). Each checkpoint is saved once and loaded through the project's own loader
(`fairness_core.models.loading.load_hf`, the BitsAndBytesConfig of the app included) in each mode. Printed per
(component, architecture, mode): throughput (sampled tokens/s; BERTScore pairs/s and encoded tokens/s), the model's
footprint, the peak CUDA memory of the timed call, and both as ratios to fp32 measured in the same process.

    python -m bench.gpu_check                      # on a GPU: the real architectures, all four modes
    python -m bench.gpu_check --json results.json  # the same, also written as JSON
    python -m bench.gpu_check --tiny               # tiny configs on the CPU (what the test suite runs)

Without a GPU the default run falls back to --tiny and says so. A mode whose package is missing (bitsandbytes)
is reported as skipped with the reason, never faked. Carrying the check to a GPU machine with no network:
docs/gpu.md.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

MODES = ("fp32", "bf16", "8bit", "4bit")
#: (dtype, quantization) of a ModelSpec per mode; quantized modes keep bf16 for what they do not quantize (GPU)
MODE_SPECS = {"fp32": ("fp32", "none"), "bf16": ("bf16", "none"), "8bit": ("bf16", "8bit"), "4bit": ("bf16", "4bit")}

TEXT = ("the nurse said that she would help the patient because the doctor was late and the carpenter made a "
        "desk for the clerk who needed one while a teacher was known for kindness and a farmer worked in the "
        "fields near the river where people from many countries met every morning to talk about work")
WORDS = tuple(TEXT.split())


@dataclass(frozen=True)
class Architecture:
    """A model shape: the transformers config class and its arguments (real sizes, or tiny ones for tests)."""

    name: str
    kind: str  # "causal-lm" (the sampler) | "encoder" (BERTScore)
    config_class: str
    config: dict[str, Any]
    note: str


def real_architectures() -> list[Architecture]:
    """The shapes of SmolLM2-135M, Llama-3.2-1B (RoPE scaling left out: it changes no cost), all-MiniLM-L6-v2 and
    roberta-large, from their published configs."""
    return [
        Architecture("smollm2-135m", "causal-lm", "LlamaConfig", dict(
            vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
            num_key_value_heads=3, max_position_embeddings=8192, rope_theta=100000.0, rms_norm_eps=1e-5,
            tie_word_embeddings=True), "SmolLM2-135M shape (135M parameters)"),
        Architecture("llama-1b", "causal-lm", "LlamaConfig", dict(
            vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
            num_key_value_heads=8, max_position_embeddings=131072, rope_theta=500000.0, rms_norm_eps=1e-5,
            tie_word_embeddings=True), "Llama-3.2-1B shape (1.2B parameters)"),
        Architecture("minilm-l6", "encoder", "BertConfig", dict(
            vocab_size=30522, hidden_size=384, intermediate_size=1536, num_hidden_layers=6, num_attention_heads=12,
            max_position_embeddings=512), "all-MiniLM-L6-v2 shape (22M parameters, the shipped BERTScore model)"),
        Architecture("roberta-large", "encoder", "RobertaConfig", dict(
            vocab_size=50265, hidden_size=1024, intermediate_size=4096, num_hidden_layers=24, num_attention_heads=16,
            max_position_embeddings=514, type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2),
            "roberta-large shape (355M parameters, bert_score's default English model)"),
    ]


def tiny_architectures() -> list[Architecture]:
    """The same four config classes at a few dozen dimensions: the whole check runs on a CPU in seconds."""
    return [
        Architecture("tiny-llama", "causal-lm", "LlamaConfig", dict(
            vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=256, tie_word_embeddings=True), "tiny Llama"),
        Architecture("tiny-bert", "encoder", "BertConfig", dict(
            vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            max_position_embeddings=256), "tiny BERT"),
    ]


@dataclass
class Settings:
    device: str
    rows: int = 64  # sampled continuations, all in one batch
    prompt_words: int = 24
    new_tokens: int = 64
    pairs: int = 1024  # BERTScore candidate-reference pairs
    sentence_words: int = 20
    modes: tuple[str, ...] = MODES
    seed: int = 0


@dataclass
class Measurement:
    component: str  # sampler | bertscore
    architecture: str
    mode: str
    status: str = "ok"  # ok | skipped: reason | failed: reason
    seconds: float = float("nan")
    tokens: int = 0  # sampled tokens (sampler) or encoded tokens (bertscore)
    tokens_per_s: float = float("nan")
    pairs_per_s: float = float("nan")
    encode_tokens_per_s: float = float("nan")  # BERTScore's encoder alone
    footprint_mb: float = float("nan")  # model.get_memory_footprint()
    peak_mb: float = float("nan")  # peak CUDA memory during the timed call (NaN on a CPU)
    ratios: dict[str, float] = field(default_factory=dict)  # to fp32 of the same component and architecture


# ----------------------------------------------------------------------------------------------- checkpoints
def _tokenizer(kind: str, vocab_size: int) -> Any:
    """A byte-level BPE (causal LM, RoBERTa-style <s>…</s>) or WordPiece-like tokenizer trained here in well under
    a second; its vocabulary fits inside the model's (the model's own size sets the cost of the output layer)."""
    from tokenizers import ByteLevelBPETokenizer
    from tokenizers.processors import TemplateProcessing
    from transformers import PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator([TEXT] * 20, vocab_size=min(vocab_size, 1000), min_frequency=1,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    if kind == "encoder":  # BERTScore drops the special tokens at both ends, as with [CLS] ... [SEP]
        bpe._tokenizer.post_processor = TemplateProcessing(
            single="<s> $A </s>", special_tokens=[("<s>", bpe.token_to_id("<s>")), ("</s>", bpe.token_to_id("</s>"))])
    return PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, bos_token="<s>", eos_token="</s>",
                                   unk_token="<unk>", pad_token="<pad>", mask_token="<mask>", padding_side="left")


def build_checkpoint(architecture: Architecture, folder: Path, device: str) -> Path:
    """Save a randomly initialised model of `architecture` (bf16 on a GPU, fp32 on a CPU) and its tokenizer."""
    import torch
    import transformers

    tokenizer = _tokenizer(architecture.kind, architecture.config["vocab_size"])
    specials = {"pad_token_id": tokenizer.pad_token_id, "bos_token_id": tokenizer.bos_token_id,
                "eos_token_id": tokenizer.eos_token_id}
    config = getattr(transformers, architecture.config_class)(**(specials | architecture.config))
    auto = transformers.AutoModelForCausalLM if architecture.kind == "causal-lm" else transformers.AutoModel
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    torch.manual_seed(0)
    with torch.device(device):  # random init on the GPU: seconds for 1B parameters instead of a minute
        model = auto.from_config(config, dtype=dtype)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    del model
    if device == "cuda":
        torch.cuda.empty_cache()
    return folder


def _load(folder: Path, task: str, mode: str, device: str) -> tuple[Any, Any]:
    from fairness_core.models.loading import load_hf
    from fairness_core.models.spec import ModelSpec

    dtype, quantization = MODE_SPECS[mode]
    return load_hf(ModelSpec(source=str(folder), task=task, dtype=dtype, quantization=quantization, device=device))


def mode_problem(mode: str) -> str | None:
    """Why a mode cannot run here (one sentence), else None."""
    if MODE_SPECS[mode][1] == "none":
        return None
    try:
        import bitsandbytes  # noqa: F401
    except ImportError as error:
        return f"bitsandbytes is not installed ({error}); docs/gpu.md says how to carry it"
    return None


def pack_bitsandbytes(target: Path, cuda: str) -> dict[str, Any]:
    """A trimmed copy of the installed bitsandbytes for a machine with no network and no bitsandbytes: its Python
    files, its dist-info (transformers reads the version from it), the CPU library and the one CUDA library
    `libbitsandbytes_cuda<cuda>.so` (bitsandbytes picks it from torch.version.cuda, e.g. "130" for 13.0). Put
    `target` on PYTHONPATH there. Returns what was written (files, bytes)."""
    import importlib.metadata
    import shutil

    import bitsandbytes

    source = Path(bitsandbytes.__file__).parent
    library = source / f"libbitsandbytes_cuda{cuda}.so"
    if not library.exists():
        shipped = sorted(p.name[len("libbitsandbytes_cuda"):-3] for p in source.glob("libbitsandbytes_cuda*.so"))
        raise SystemExit(f"bitsandbytes {bitsandbytes.__version__} ships no CUDA {cuda} library; it has "
                         f"{', '.join(shipped)} (digits of torch.version.cuda on the GPU machine, e.g. 130 for 13.0)")
    package = target / "bitsandbytes"
    if package.exists():
        shutil.rmtree(package)
    shutil.copytree(source, package, ignore=shutil.ignore_patterns("__pycache__", "libbitsandbytes_*"))
    for name in (library.name, "libbitsandbytes_cpu.so"):
        if (source / name).exists():
            shutil.copy2(source / name, package / name)
    distribution = importlib.metadata.distribution("bitsandbytes")
    info = Path(str(distribution.locate_file(""))) / f"bitsandbytes-{distribution.version}.dist-info"
    if info.is_dir():
        shutil.copytree(info, target / info.name, dirs_exist_ok=True)
    files = [p for p in target.rglob("*") if p.is_file()]
    return {"target": str(target), "version": bitsandbytes.__version__, "cuda_library": library.name,
            "files": len(files), "bytes": sum(p.stat().st_size for p in files)}


# ----------------------------------------------------------------------------------------------- timing
class _Clock:
    def __init__(self, device: str) -> None:
        import torch

        self.torch = torch
        self.cuda = device == "cuda"

    def reset(self) -> None:
        if self.cuda:
            self.torch.cuda.synchronize()
            self.torch.cuda.reset_peak_memory_stats()

    def now(self) -> float:
        if self.cuda:
            self.torch.cuda.synchronize()
        return time.perf_counter()

    def peak_mb(self) -> float:
        return self.torch.cuda.max_memory_allocated() / 2**20 if self.cuda else float("nan")


def _sentences(count: int, words: int, seed: int) -> list[str]:
    import random

    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "." for _ in range(count)]


def measure_sampler(folder: Path, architecture: Architecture, mode: str, settings: Settings) -> Measurement:
    """`rows` continuations of `new_tokens` tokens (top-p 0.9, temperature 1, a seed per row) in one batch."""
    from fairness_core.models.interfaces import DecodingConfig
    from fairness_core.models.sampling import sample_rows_detailed

    out = Measurement("sampler", architecture.name, mode)
    model, tokenizer = _load(folder, "causal-lm", mode, settings.device)
    out.footprint_mb = model.get_memory_footprint() / 2**20
    prompts = _sentences(settings.rows, settings.prompt_words, settings.seed)
    configs = [DecodingConfig(top_p=0.9, temperature=1.0)] * len(prompts)
    seeds = list(range(len(prompts)))
    sample_rows_detailed(model, tokenizer, prompts[:2], configs[:2], seeds[:2], 2)  # warm-up: kernels, allocator
    clock = _Clock(settings.device)
    clock.reset()
    started = clock.now()
    rows = sample_rows_detailed(model, tokenizer, prompts, configs, seeds, settings.new_tokens,
                                batch_size=len(prompts))
    out.seconds = clock.now() - started
    out.peak_mb = clock.peak_mb()
    out.tokens = sum(len(row.token_ids) for row in rows)
    out.tokens_per_s = out.tokens / out.seconds
    _free(model)
    return out


def measure_bertscore(folder: Path, architecture: Architecture, mode: str, settings: Settings) -> Measurement:
    """BERTScore P/R/F of `pairs` candidate-reference pairs at the last layer; the encoder alone timed too."""
    from fairness_core.metrics.matching import BERTScore, BERTScoreOptions
    from fairness_core.models.hf import HFEncoder
    from fairness_core.models.spec import ModelSpec

    out = Measurement("bertscore", architecture.name, mode)
    model, tokenizer = _load(folder, "encoder", mode, settings.device)
    out.footprint_mb = model.get_memory_footprint() / 2**20
    dtype, quantization = MODE_SPECS[mode]
    encoder = HFEncoder(ModelSpec(source=str(folder), task="encoder", dtype=dtype, quantization=quantization,
                                  device=settings.device), model, tokenizer)
    metric = BERTScore(BERTScoreOptions(layer=encoder.num_layers), model=encoder)
    candidates = _sentences(settings.pairs, settings.sentence_words, settings.seed)
    references = _sentences(settings.pairs, settings.sentence_words, settings.seed + 1)
    metric.score(candidates[:4], references[:4])  # warm-up
    ids = tokenizer(candidates + references, truncation=True)["input_ids"]
    clock = _Clock(settings.device)
    clock.reset()
    started = clock.now()
    encoder.hidden_states(ids, encoder.num_layers)
    encode_s = clock.now() - started
    started = clock.now()
    scores = metric.score(candidates, references)
    out.seconds = clock.now() - started
    out.peak_mb = clock.peak_mb()
    if len(scores["F"]) != settings.pairs:
        raise RuntimeError(f"BERTScore gave {len(scores['F'])} scores for {settings.pairs} pairs")
    out.tokens = sum(len(row) for row in ids)
    out.tokens_per_s = out.tokens / out.seconds
    out.pairs_per_s = settings.pairs / out.seconds
    out.encode_tokens_per_s = out.tokens / encode_s
    _free(model)
    return out


def _free(model: Any) -> None:
    import gc

    import torch

    del model
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


# ----------------------------------------------------------------------------------------------- the check
def run_check(architectures: Sequence[Architecture], settings: Settings, workdir: Path,
              on_row: Callable[[Measurement], None] | None = None) -> list[Measurement]:
    """Every (architecture, mode) measured in this process; ratios to fp32 filled in at the end."""
    results: list[Measurement] = []
    for architecture in architectures:
        folder = build_checkpoint(architecture, workdir / architecture.name, settings.device)
        measure = measure_sampler if architecture.kind == "causal-lm" else measure_bertscore
        component = "sampler" if architecture.kind == "causal-lm" else "bertscore"
        for mode in settings.modes:
            problem = mode_problem(mode)
            if problem is not None:
                row = Measurement(component, architecture.name, mode, status=f"skipped: {problem}")
            else:
                try:
                    row = measure(folder, architecture, mode, settings)
                except Exception as error:  # a mode that fails here is a finding: said, and the others go on
                    text = str(error).splitlines()[0] if str(error) else type(error).__name__
                    row = Measurement(component, architecture.name, mode, status=f"failed: {text[:200]}")
            results.append(row)
            if on_row is not None:
                on_row(row)
    add_ratios(results)
    return results


def add_ratios(results: list[Measurement]) -> None:
    """Throughput and memory of each row over the fp32 row of the same component and architecture."""
    baseline = {(r.component, r.architecture): r for r in results if r.mode == "fp32" and r.status == "ok"}
    for row in results:
        base = baseline.get((row.component, row.architecture))
        if base is None or row.status != "ok":
            continue
        for name in ("tokens_per_s", "pairs_per_s", "encode_tokens_per_s", "footprint_mb", "peak_mb"):
            ours, theirs = getattr(row, name), getattr(base, name)
            if theirs == theirs and theirs > 0 and ours == ours:  # both finite numbers
                row.ratios[name] = ours / theirs


def table(results: Sequence[Measurement]) -> str:
    """The printed table: one line per (component, architecture, mode)."""
    header = (f"{'component':<10} {'architecture':<14} {'mode':<5} {'tokens/s':>10} {'x fp32':>7} {'pairs/s':>9} "
              f"{'encode tok/s':>12} {'footprint MB':>12} {'x fp32':>7} {'peak MB':>9} {'x fp32':>7}  status")
    lines = [header, "-" * len(header)]

    def number(value: float, digits: int = 1) -> str:
        return "-" if value != value else f"{value:,.{digits}f}"

    for r in results:
        lines.append(
            f"{r.component:<10} {r.architecture:<14} {r.mode:<5} {number(r.tokens_per_s):>10} "
            f"{number(r.ratios.get('tokens_per_s', float('nan')), 2):>7} {number(r.pairs_per_s):>9} "
            f"{number(r.encode_tokens_per_s):>12} {number(r.footprint_mb):>12} "
            f"{number(r.ratios.get('footprint_mb', float('nan')), 2):>7} {number(r.peak_mb):>9} "
            f"{number(r.ratios.get('peak_mb', float('nan')), 2):>7}  {r.status}")
    return "\n".join(lines)


def environment() -> dict[str, Any]:
    """What the numbers were measured with."""
    import platform

    import torch
    import transformers

    info: dict[str, Any] = {"python": platform.python_version(), "torch": torch.__version__,
                            "torch_cuda": torch.version.cuda, "transformers": transformers.__version__,
                            "device": "cpu"}
    if torch.cuda.is_available():
        info["device"] = torch.cuda.get_device_name(0)
    try:
        import bitsandbytes

        info["bitsandbytes"] = bitsandbytes.__version__
    except ImportError:
        info["bitsandbytes"] = None
    return info


def main(argv: list[str] | None = None) -> list[Measurement]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="tiny configs on the CPU (seconds; what the tests run)")
    parser.add_argument("--modes", default=",".join(MODES), help=f"comma-separated subset of {','.join(MODES)}")
    parser.add_argument("--only", default="", help="comma-separated architecture names (default: all)")
    parser.add_argument("--rows", type=int, help="sampled rows in the batch (default 64; tiny 4)")
    parser.add_argument("--new-tokens", type=int, help="new tokens per row (default 64; tiny 4)")
    parser.add_argument("--pairs", type=int, help="BERTScore pairs (default 1024; tiny 6)")
    parser.add_argument("--json", metavar="FILE", help="also write the results and the environment as JSON")
    parser.add_argument("--workdir", metavar="DIR", help="where the random checkpoints go (default: a temp folder)")
    parser.add_argument("--pack-bitsandbytes", metavar="DIR",
                        help="only write a trimmed bitsandbytes for a GPU machine without it into DIR, and stop")
    parser.add_argument("--cuda", default="130", help="with --pack-bitsandbytes: the GPU machine's torch.version.cuda "
                                                       "without the dot (default 130, i.e. CUDA 13.0)")
    args = parser.parse_args(argv)
    if args.pack_bitsandbytes:
        written = pack_bitsandbytes(Path(args.pack_bitsandbytes), args.cuda.replace(".", ""))
        print(f"wrote bitsandbytes {written['version']} ({written['cuda_library']}): {written['files']} files, "
              f"{written['bytes'] / 2**20:.1f} MiB in {written['target']}; on the GPU machine put it on PYTHONPATH")
        return []

    import warnings

    import torch
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # one "Loading weights" bar per load would bury the table
    # bitsandbytes' 8-bit matmul warns on every call that it casts bf16 inputs to fp16 (the LLM.int8 kernels' type)
    warnings.filterwarnings("ignore", message="MatMul8bitLt: inputs will be cast")
    tiny = args.tiny or not torch.cuda.is_available()
    if not args.tiny and tiny:
        print("no CUDA device here: running the tiny CPU check instead (docs/gpu.md: how to run it on a GPU)")
    modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        parser.error(f"unknown mode {unknown[0]!r}; choose from {', '.join(MODES)}")
    architectures = tiny_architectures() if tiny else real_architectures()
    if args.only:
        wanted = {name.strip() for name in args.only.split(",")}
        architectures = [a for a in architectures if a.name in wanted]
    settings = Settings(device="cpu" if tiny else "cuda", modes=modes)
    if tiny:
        settings.rows, settings.new_tokens, settings.pairs, settings.prompt_words, settings.sentence_words = \
            4, 4, 6, 6, 6
    for name in ("rows", "new_tokens", "pairs"):
        if getattr(args, name) is not None:
            setattr(settings, name, getattr(args, name))
    info = environment()
    print(f"environment: {json.dumps(info)}")
    for architecture in architectures:
        print(f"  {architecture.name}: {architecture.note}")
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as scratch:
        workdir = Path(args.workdir) if args.workdir else Path(scratch)
        results = run_check(architectures, settings, workdir,
                            on_row=lambda r: print(f"  measured {r.component} {r.architecture} {r.mode}: {r.status}",
                                                   flush=True))
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps({"environment": info, "settings": asdict(settings),
                                               "results": [asdict(r) for r in results]}, indent=1, default=str),
                                   encoding="utf-8")
    return results


if __name__ == "__main__":
    main()
