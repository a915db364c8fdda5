"""The offline model served over HTTP for the endpoint backend's tests and demos (`python -m fairness_core serve`).

Apart from `models.endpoint` (the client) because it needs the presets and the GGUF conversion, which the client
never does.
"""

from __future__ import annotations

from pathlib import Path

from fairness_core import config as lab_config
from fairness_core.models.endpoint import sampling_folder


def offline_serving_folder() -> Path:
    """SmolLM2-135M-Instruct (the offline preset, dequantised once) as a sampling folder in the lab's cache."""
    from fairness_core.models.loading import gguf_converted_dir
    from fairness_core.models.presets import get_preset

    converted = gguf_converted_dir(get_preset("smollm2-135m-instruct").spec().resolved())
    return sampling_folder(converted, lab_config.cache_dir() / "served" / "smollm2-135m-instruct")
