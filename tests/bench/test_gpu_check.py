"""bench/gpu_check.py in its tiny CPU mode, so the GPU check cannot rot between GPU sessions: every component and
mode runs through the project's own loader and sampler, and the table and JSON come out. No timing is asserted."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bench import gpu_check


def test_the_tiny_check_measures_every_component_in_every_mode(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    results = gpu_check.main(["--tiny", "--json", str(tmp_path / "results.json")])
    assert [(r.component, r.mode) for r in results] == [
        (component, mode) for component in ("sampler", "bertscore") for mode in gpu_check.MODES]
    assert all(r.status == "ok" for r in results), [r.status for r in results]
    for row in results:
        assert row.tokens > 0 and row.tokens_per_s > 0 and row.footprint_mb > 0
        assert row.ratios["tokens_per_s"] > 0
    by_mode = {(r.component, r.mode): r for r in results}
    for component in ("sampler", "bertscore"):
        assert by_mode[(component, "fp32")].ratios["footprint_mb"] == 1.0
        assert by_mode[(component, "bf16")].ratios["footprint_mb"] == pytest.approx(0.5, abs=0.01)  # 2 bytes of 4
        # quantized: smaller than bf16 (8-bit and 4-bit weights; norms, embeddings and the head stay in bf16)
        assert by_mode[(component, "8bit")].footprint_mb < by_mode[(component, "bf16")].footprint_mb
        assert by_mode[(component, "4bit")].footprint_mb < by_mode[(component, "8bit")].footprint_mb
    assert by_mode[("bertscore", "fp32")].pairs_per_s > 0
    printed = capsys.readouterr().out
    assert "sampler    tiny-llama     4bit" in printed and "environment:" in printed
    written = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert written["environment"]["device"] == "cpu" and len(written["results"]) == 8


def test_a_mode_without_bitsandbytes_is_skipped_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "bitsandbytes", None)  # import bitsandbytes now raises ImportError
    assert gpu_check.mode_problem("fp32") is None and gpu_check.mode_problem("bf16") is None
    assert "bitsandbytes is not installed" in gpu_check.mode_problem("4bit")
    assert "docs/gpu.md" in gpu_check.mode_problem("8bit")


def test_the_real_architectures_have_their_published_sizes() -> None:
    """Built from config alone on the meta device (no memory, no download): the parameter counts of SmolLM2-135M,
    Llama-3.2-1B, all-MiniLM-L6-v2 and roberta-large."""
    import torch
    import transformers

    expected = {"smollm2-135m": 134.5e6, "llama-1b": 1235.8e6, "minilm-l6": 22.7e6, "roberta-large": 355.4e6}
    for architecture in gpu_check.real_architectures():
        config = getattr(transformers, architecture.config_class)(**architecture.config)
        auto = transformers.AutoModelForCausalLM if architecture.kind == "causal-lm" else transformers.AutoModel
        with torch.device("meta"):
            model = auto.from_config(config)
        count = sum(p.numel() for p in model.parameters())
        assert count == pytest.approx(expected[architecture.name], rel=0.01), (architecture.name, count)


def test_a_trimmed_bitsandbytes_imports_from_its_folder_with_one_cuda_library(tmp_path: Path) -> None:
    """docs/gpu.md: a GPU machine with no network and no bitsandbytes gets its Python files, its dist-info and the
    one CUDA library its torch asks for (~4.3 MiB for CUDA 13.0 instead of the wheel's 125 MB)."""
    import subprocess

    written = gpu_check.pack_bitsandbytes(tmp_path / "bnb", "130")
    assert written["cuda_library"] == "libbitsandbytes_cuda130.so" and written["bytes"] < 6 * 2**20
    libraries = sorted(p.name for p in (tmp_path / "bnb" / "bitsandbytes").glob("*.so"))
    assert libraries == ["libbitsandbytes_cpu.so", "libbitsandbytes_cuda130.so"]
    probe = ("import bitsandbytes, importlib.metadata as m; "
             "from transformers.utils.import_utils import is_bitsandbytes_available as ok; "
             "print(bitsandbytes.__file__, m.version('bitsandbytes'), ok())")
    answer = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True,
                            env={"PYTHONPATH": str(tmp_path / "bnb"), "PATH": "/usr/bin:/bin"})
    where, version, seen = answer.stdout.split()[-3:]
    assert where.startswith(str(tmp_path / "bnb")) and version == written["version"] and seen == "True"
    with pytest.raises(SystemExit, match="ships no CUDA 99 library; it has 118, 121"):
        gpu_check.pack_bitsandbytes(tmp_path / "other", "99")
