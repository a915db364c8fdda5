"""The four model interfaces every page programs against (lm-evaluation-harness style).

Backends (Hugging Face transformers, lexicon scorers, tiny test models) implement these; pages and
metrics never touch a backend directly, so a new backend is one class, not a change everywhere.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np

CHAT_ROLES = ("system", "user", "assistant")


#: the largest top_k a decoding setting takes (larger than any vocabulary the lab loads)
MAX_TOP_K = 1_000_000


class ModelUnavailableError(RuntimeError):
    """A model could not be loaded; the message is one sentence naming the model and the reason."""


@dataclass(frozen=True)
class DecodingConfig:
    """One sampling configuration. `greedy` ignores the other knobs."""

    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    greedy: bool = False
    max_new_tokens: int = 30

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise ValueError("; ".join(problems))

    def problems(self) -> list[str]:
        found = []
        if not self.temperature > 0:
            found.append(f"temperature must be > 0 (got {self.temperature})")
        if self.top_k is not None and not 0 < self.top_k <= MAX_TOP_K:
            # above any vocabulary: it would mean "no top-k", and a 20-digit k overflows the sampler
            found.append(f"top_k must be an integer between 1 and {MAX_TOP_K:,} (got {self.top_k})")
        if self.top_p is not None and not 0 < self.top_p <= 1:
            found.append(f"top_p must be in (0, 1] (got {self.top_p})")
        if self.max_new_tokens <= 0:
            found.append(f"max_new_tokens must be positive (got {self.max_new_tokens})")
        return found

    def label(self) -> str:
        if self.greedy:
            return "greedy"
        parts = []
        if self.top_p is not None:
            parts.append(f"top_p={self.top_p:g}")
        if self.top_k is not None:
            parts.append(f"top_k={self.top_k}")
        if self.temperature != 1.0 or not parts:
            parts.append(f"temperature={self.temperature:g}")
        return ",".join(parts)


@dataclass(frozen=True)
class TokenScores:
    """Per-token log-probabilities of a target (continuation) sequence."""

    tokens: list[str]
    logprobs: np.ndarray  # shape (n_tokens,)
    entropies: np.ndarray | None = None  # entropy of each step's predictive distribution (nats)

    @property
    def total(self) -> float:
        return float(self.logprobs.sum())

    @property
    def mean(self) -> float:
        return float(self.logprobs.mean()) if len(self.logprobs) else float("nan")


@dataclass(frozen=True)
class TokenEmbeddings:
    """Contextual embeddings of one text's tokens at one layer (special tokens included, flagged)."""

    tokens: list[str]
    vectors: np.ndarray  # (n_tokens, hidden)
    special: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))


class ModelBase:
    """What every loaded model reports about itself (for manifests and the UI)."""

    #: stable identity: source + revision/file hash + dtype + quantization + device
    cache_key: tuple[str, ...] = ()
    name: str = ""
    device: str = "cpu"

    def describe(self) -> dict[str, str]:
        return {"name": self.name, "device": self.device, "key": "|".join(self.cache_key)}

    def cannot(self, what: str) -> str | None:
        """One sentence on why this model cannot do `what` (e.g. "loglikelihood", "top_k"), else None.

        Models loaded in this process can do everything their interface promises; a remote endpoint
        says what its server lacks (`models/endpoint.py`)."""
        return None


class CausalLM(ModelBase, ABC):
    #: True when `generate`, `chat` and `generate_rows` take `on_progress(done, total)`, called after every decoding
    #: step (it may raise to stop: how a job's Cancel reaches a long generation; the model layer knows no jobs)
    reports_steps: ClassVar[bool] = False
    #: True when `loglikelihood` takes `on_progress(pairs done, pairs)`, called after each of its batches (it may
    #: raise to stop), so a caller can hand it a whole corpus instead of cutting it into chunks
    reports_scoring_progress: ClassVar[bool] = False

    @abstractmethod
    def generate(
        self,
        prompts: Sequence[str],
        decoding: DecodingConfig | Sequence[DecodingConfig],
        n: int = 1,
        seed: int = 0,
    ) -> list[list[str]]:
        """`n` continuations for each prompt (a config per prompt, or one for all); reproducible by seed."""

    @abstractmethod
    def loglikelihood(self, contexts: Sequence[str], continuations: Sequence[str]) -> list[TokenScores]:
        """Log p(continuation token | context, earlier continuation tokens), per token."""

    def format_chat(self, messages: Sequence[Mapping[str, str]]) -> str:
        """A conversation as one plain prompt, for models without a chat template.

        Format: one line per message, "System: ...", "User: ...", "Assistant: ..." (role capitalised),
        then "Assistant:" so the continuation is the reply. Backends with a chat template override this.
        """
        lines = []
        for position, message in enumerate(messages):
            role, content = message.get("role"), message.get("content")
            if role not in CHAT_ROLES or not isinstance(content, str):
                raise ValueError(
                    f"message {position} must have a role in {', '.join(CHAT_ROLES)} and a text content "
                    f"(got role {role!r})"
                )
            lines.append(f"{role.capitalize()}: {content}")
        return "\n".join([*lines, "Assistant:"])

    def chat(
        self,
        conversations: Sequence[Sequence[Mapping[str, str]]],
        decoding: DecodingConfig | Sequence[DecodingConfig],
        n: int = 1,
        seed: int = 0,
    ) -> list[list[str]]:
        """`n` replies to each conversation (a list of {"role", "content"} messages); same seeding as generate."""
        return self.generate([self.format_chat(messages) for messages in conversations], decoding, n=n, seed=seed)

    def generate_rows(
        self,
        prompts: Sequence[str],
        configs: Sequence[DecodingConfig],
        seeds: Sequence[int],
        max_new_tokens: int,
        stop_at_sentence_end: bool = False,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> list[str]:
        """One continuation per row; a row's text depends only on its own (prompt, config, seed).

        This default calls `generate` once per row (and `on_progress(rows done, rows)` after each); backends
        that can sample rows with different settings in one batch override it. `stop_at_sentence_end` lets
        such a backend retire rows whose first sentence is complete.
        """
        texts = []
        for prompt, config, seed in zip(prompts, configs, seeds, strict=True):
            texts.append(self.generate([prompt], replace(config, max_new_tokens=max_new_tokens), n=1, seed=seed)[0][0])
            if on_progress is not None:
                on_progress(len(texts), len(prompts))
        return texts


class Seq2SeqLM(ModelBase, ABC):
    @abstractmethod
    def token_logprobs(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        with_entropy: bool = False,
        src_lang: str | None = None,
        tgt_lang: str | None = None,
    ) -> list[TokenScores]:
        """Log p(target token | source, earlier target tokens), per token; entropies on request.

        `src_lang`/`tgt_lang` are ISO 639-1 codes for multilingual models; a forced target-language
        token is not scored (it is given, not predicted).
        """

    def generate(
        self,
        sources: Sequence[str],
        src_lang: str | None = None,
        tgt_lang: str | None = None,
        decoding: DecodingConfig | None = None,
        n: int = 1,
        seed: int = 0,
    ) -> list[list[str]]:
        """`n` outputs per source (greedy by default), target language forced when given."""
        raise NotImplementedError(f"{self.name or type(self).__name__} does not implement generation")

    @abstractmethod
    def step_distributions(self, source: str, target: str) -> np.ndarray:
        """Full log-probability distribution at each target step: (n_target_tokens, vocab)."""


class Encoder(ModelBase, ABC):
    num_layers: int = 0

    @abstractmethod
    def token_embeddings(self, texts: Sequence[str], layer: int | None = None) -> list[TokenEmbeddings]:
        """Hidden states of each token at `layer` (0 = embeddings, None = last)."""

    def sentence_embeddings(self, texts: Sequence[str]) -> np.ndarray:
        """(n_texts, hidden): mean of the last layer over all tokens ([CLS]/[SEP] included, as
        sentence-transformers' mean pooling), L2-normalised. Cosine similarity is then a dot product."""
        rows = []
        for embedded in self.token_embeddings(texts, layer=None):
            mean = embedded.vectors.mean(axis=0)
            rows.append(mean / max(float(np.linalg.norm(mean)), 1e-12))
        return np.stack(rows) if rows else np.zeros((0, 0))


class TextClassifier(ModelBase, ABC):
    labels: ClassVar[list[str]] = []

    @abstractmethod
    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        """(n_texts, n_labels) probabilities, columns in `labels` order."""
