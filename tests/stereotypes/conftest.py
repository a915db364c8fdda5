"""The stereotype tests' tiny model: a GPT-2 with room for a BBQ prompt (its byte-level vocabulary of 300 makes
~300 tokens of one, past the shared tiny GPT-2's 128 positions)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_gpt2_long(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.tiny_models import build_tiny_gpt2

    return build_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2-long"), n_positions=1024)
