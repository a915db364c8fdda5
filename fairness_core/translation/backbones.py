"""The model behind DATScore: it translates (the augmented texts Trans1, Trans2) and scores X→Y (Eq. 1).

Two backbones, one interface (`translate`, `score`):

* `Seq2SeqBackbone` — the paper's: any multilingual seq2seq from the hub (facebook/m2m100_418M and 1.2B, NLLB,
  mBART-50) through `Seq2SeqLM.generate` / `Seq2SeqLM.token_logprobs`, with each text's ISO 639-1 language
  mapped to the model family's codes by `fairness_core.models` (M2M-100 "fr", NLLB "fra_Latn", mBART "fr_XX").
  Score_{X→Y} reads X in its language and scores Y's tokens after the forced target-language token.
* `CausalLMBackbone` — the **LM variant** (no translation model ships offline here): a causal LM translates
  with a chat prompt and scores X→Y as log P(Y | translation prompt containing X), token by token, with the
  entropy of its full next-token distribution at each step (Eq. 4). Results from it are called
  "DATScore-LM" / "BARTScore-LM", never DATScore (`Backbone.metric_label`).

Both return `TokenScores` with per-token log-probabilities *and* entropies, so uniform (BARTScore) and
entropy (Eq. 4) term weighting come from one forward pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from fairness_core.models.interfaces import CausalLM, DecodingConfig, Seq2SeqLM, TokenScores

SEQ2SEQ, LM_VARIANT = "seq2seq", "lm"

LANGUAGE_NAMES = {
    "en": "English", "es": "Spanish", "fr": "French", "de": "German", "it": "Italian", "pt": "Portuguese",
    "nl": "Dutch", "cs": "Czech", "fi": "Finnish", "lv": "Latvian", "et": "Estonian", "ru": "Russian",
    "tr": "Turkish", "zh": "Chinese", "ja": "Japanese", "pl": "Polish", "ro": "Romanian", "sv": "Swedish",
}

#: The LM variant's translation prompt (user message of a chat); the reply is the translation.
TRANSLATION_PROMPT = ("Translate the following {src_name} text into {tgt_name}. Reply with the {tgt_name} "
                      "translation only.\n\n{src_name}: {text}")


def language_name(code: str) -> str:
    return LANGUAGE_NAMES.get(code.lower(), code)


def clean_reply(reply: str, tgt_lang: str) -> str:
    """The translation in an LM's reply: its first non-empty line, minus a leading "Spanish:"-style label (the
    prompt ends with "French: <text>", so small models often answer "English: <translation>")."""
    lines = [line.strip() for line in reply.splitlines() if line.strip()]
    text = lines[0] if lines else ""
    for label in (language_name(tgt_lang), tgt_lang, "Translation"):
        if text.lower().startswith(label.lower() + ":"):
            text = text[len(label) + 1 :].strip()
            break
    return text.strip('"').strip()


@dataclass(frozen=True)
class ScoreRequest:
    """Score the tokens of `target` (in `tgt_lang`) given `source` (in `src_lang`): one direction, one segment."""

    source: str
    target: str
    src_lang: str
    tgt_lang: str


class Backbone(Protocol):
    kind: str

    @property
    def metric_label(self) -> str: ...

    def translate(self, texts: Sequence[str], src_lang: str, tgt_lang: str, max_new_tokens: int,
                  on_progress: Callable[[int, int], None] | None = None) -> list[str]: ...

    def score(self, requests: Sequence[ScoreRequest],
              on_progress: Callable[[int, int], None] | None = None) -> list[TokenScores]: ...


def readable_tokens(tokenizer: Any, pieces: Sequence[str]) -> list[str]:
    """Each sub-word piece as a reader sees it ("Ġtrain" -> " train", "▁le" -> " le"): the tokenizer's own
    convert_tokens_to_string, one piece at a time, so positions still line up with the log-probs."""
    try:
        return [tokenizer.convert_tokens_to_string([piece]) for piece in pieces]
    except Exception:  # a tokenizer without that method: the raw pieces are still correct, only less readable
        return list(pieces)


class Seq2SeqBackbone:
    """The paper's backbone: a multilingual seq2seq (M2M-100, NLLB, mBART-50) with language codes."""

    kind = SEQ2SEQ

    def __init__(self, model: Seq2SeqLM) -> None:
        self.model = model

    @property
    def metric_label(self) -> str:
        return "DATScore"

    def translate(self, texts: Sequence[str], src_lang: str, tgt_lang: str, max_new_tokens: int,
                  on_progress: Callable[[int, int], None] | None = None) -> list[str]:
        """Greedy translation with the target language forced first (the augmented texts Trans1/Trans2)."""
        if not texts:
            return []
        outputs = self.model.generate(list(texts), src_lang=src_lang, tgt_lang=tgt_lang,
                                      decoding=DecodingConfig(greedy=True, max_new_tokens=max_new_tokens))
        return [o[0].strip() for o in outputs]

    def score(self, requests: Sequence[ScoreRequest],
              on_progress: Callable[[int, int], None] | None = None) -> list[TokenScores]:
        """Per-token log-probs and entropies; requests sharing a language pair go to the model together, where
        they are cut into length-sorted batches (the tokenizer holds one language pair per call).
        `on_progress(done, total)` after each language pair."""
        results: list[TokenScores | None] = [None] * len(requests)
        groups: dict[tuple[str, str], list[int]] = {}
        for index, request in enumerate(requests):
            groups.setdefault((request.src_lang, request.tgt_lang), []).append(index)
        for (src_lang, tgt_lang), indices in groups.items():
            scored = self.model.token_logprobs([requests[i].source for i in indices],
                                               [requests[i].target for i in indices], with_entropy=True,
                                               src_lang=src_lang, tgt_lang=tgt_lang)
            tokenizer = getattr(self.model, "tokenizer", None)
            for index, item in zip(indices, scored, strict=True):
                if tokenizer is not None:
                    item = replace(item, tokens=readable_tokens(tokenizer, item.tokens))
                results[index] = item
            if on_progress is not None:
                on_progress(sum(r is not None for r in results), len(requests))
        return [r for r in results if r is not None]


class CausalLMBackbone:
    """The LM variant: a causal LM translates through a chat prompt and scores log P(Y | prompt with X)."""

    kind = LM_VARIANT

    def __init__(self, model: CausalLM, template: str = TRANSLATION_PROMPT) -> None:
        self.model = model
        self.template = template

    @property
    def metric_label(self) -> str:
        return "DATScore-LM"

    def messages(self, text: str, src_lang: str, tgt_lang: str) -> list[dict[str, str]]:
        return [{"role": "user", "content": self.template.format(
            src_name=language_name(src_lang), tgt_name=language_name(tgt_lang), text=" ".join(text.split()))}]

    def prompt(self, text: str, src_lang: str, tgt_lang: str) -> str:
        """The translation prompt with X, formatted by the model's chat template (plain format without one)."""
        return self.model.format_chat(self.messages(text, src_lang, tgt_lang))

    def translate(self, texts: Sequence[str], src_lang: str, tgt_lang: str, max_new_tokens: int,
                  on_progress: Callable[[int, int], None] | None = None) -> list[str]:
        """Greedy chat reply; the translation is its first non-empty line, without a "<Language>:" label.
        `on_progress` reaches the model's decoding steps where the backend reports them (a job passes
        `checkpoint`, so Cancel acts within a step)."""
        if not texts:
            return []
        steps = {"on_progress": on_progress} if on_progress and getattr(self.model, "reports_steps", False) else {}
        replies = self.model.chat([self.messages(t, src_lang, tgt_lang) for t in texts],
                                  DecodingConfig(greedy=True, max_new_tokens=max_new_tokens), **steps)
        return [clean_reply(reply[0], tgt_lang) for reply in replies]

    def _templated(self) -> bool:
        return bool(getattr(self.model, "has_chat_template", False))

    def _pair_ids(self, request: ScoreRequest) -> tuple[list[int], list[int]]:
        tokenizer = self.model.tokenizer  # type: ignore[attr-defined]
        context = self.prompt(request.source, request.src_lang, request.tgt_lang)
        templated = self._templated()
        context_ids = tokenizer(context, add_special_tokens=not templated)["input_ids"]
        target_text = request.target if templated else " " + request.target
        target_ids = tokenizer(target_text, add_special_tokens=False)["input_ids"]
        if tokenizer.eos_token_id is not None:  # the reply ends, as a seq2seq target ends with </s>
            target_ids = [*target_ids, tokenizer.eos_token_id]
        return context_ids, target_ids

    def score(self, requests: Sequence[ScoreRequest],
              on_progress: Callable[[int, int], None] | None = None) -> list[TokenScores]:
        """log P(y_t | prompt(X), y_<t) and the entropy of the full next-token distribution at each step, for all
        requests together (every direction of every segment) through the model layer's scoring path
        (`models.lm_scoring.continuation_scores`: the prompt template and a prompt shared by several targets run
        once, the vocabulary only at the scored positions, length-bucketed batches). `on_progress(done, total)`
        after each batch (a job passes `checkpoint`, so Cancel acts within a batch)."""
        from fairness_core.models.lm_scoring import continuation_scores

        if not hasattr(self.model, "model") or not hasattr(self.model, "tokenizer"):
            raise TypeError("the LM variant needs a transformers causal LM (per-step distributions for Eq. 4)")
        hf_model, tokenizer = self.model.model, self.model.tokenizer  # type: ignore[attr-defined]
        pairs = [self._pair_ids(r) for r in requests]
        scored = continuation_scores(hf_model, pairs, with_entropy=True, on_progress=on_progress)
        return [TokenScores(tokens=readable_tokens(tokenizer, tokenizer.convert_ids_to_tokens(target_ids)),
                            logprobs=scores.logprobs, entropies=scores.entropies)
                for (_, target_ids), scores in zip(pairs, scored, strict=True)]


class EndpointBackbone(CausalLMBackbone):
    """The LM variant through an OpenAI-compatible endpoint (`fairness_core.models.endpoint`).

    It translates through the server's chat route (its chat template) and scores X→Y from the server's prompt
    log-probs of " Y" after the translation prompt in the plain "User: ... / Assistant:" format (the server's
    chat template cannot be applied to a completion prompt from here), without an end-of-reply token. A server
    returns at most its top k log-probs per token, never the whole distribution, so the Eq. 4 entropies are
    approximated from below (`entropy_lower_bound`); endpoints without prompt log-probs are refused.
    """

    TOP_LOGPROBS = 20  # vLLM's default --max-logprobs

    def __init__(self, model: CausalLM, top_logprobs: int = TOP_LOGPROBS) -> None:
        super().__init__(model)
        self.top_logprobs = int(top_logprobs)
        if model.cannot("loglikelihood"):  # type: ignore[attr-defined]
            from fairness_core.models.interfaces import ModelUnavailableError

            raise ModelUnavailableError(f"DATScore needs per-token prompt log-probs and the endpoint {model.name} "
                                        "returns none (neither vLLM's prompt_logprobs nor echo + logprobs)")

    def prompt(self, text: str, src_lang: str, tgt_lang: str) -> str:
        return CausalLM.format_chat(self.model, self.messages(text, src_lang, tgt_lang))

    def score(self, requests: Sequence[ScoreRequest],
              on_progress: Callable[[int, int], None] | None = None) -> list[TokenScores]:
        """Per-token log-probs of " Y" after the prompt with X, with a lower bound of each step's entropy
        (one request to the server per text: `on_progress` is not called)."""
        contexts = [self.prompt(r.source, r.src_lang, r.tgt_lang) for r in requests]
        return self.model.loglikelihood(contexts, [" " + r.target for r in requests],  # type: ignore[call-arg]
                                        top_logprobs=self.top_logprobs)


#: What the manifest and the report say about entropies from an endpoint (Eq. 4 approximated).
ENDPOINT_ENTROPY = (f"approximate: a lower bound of each step's entropy (Eq. 4) from the endpoint's top "
                    f"{EndpointBackbone.TOP_LOGPROBS} log-probs")
#: The plain prompt format an endpoint scores with (no chat template can be applied to a completion).
ENDPOINT_SCORING_FORMAT = "User: <translation prompt>\nAssistant: <Y> (plain format; no end-of-reply token)"


def backbone_task(model_id: str) -> str:
    """'seq2seq-lm' or 'causal-lm' for a preset, local directory, hub id or endpoint (offline checks only)."""
    from fairness_core.models.endpoint import is_endpoint
    from fairness_core.models.presets import lm_task

    if is_endpoint(model_id):
        return "causal-lm"

    return lm_task(model_id)


def model_spec(model_id: str) -> Any:
    from fairness_core.models import resolve_model

    return resolve_model(model_id, backbone_task(model_id))


def load_backbone(model_id: str) -> Seq2SeqBackbone | CausalLMBackbone:
    """The backbone for a preset key, hub id or local directory (model loaded once per process)."""
    from fairness_core.models import load_model

    model = load_model(model_spec(model_id))
    return backbone_for(model)


def backbone_for(model: Any) -> Seq2SeqBackbone | CausalLMBackbone:
    if isinstance(model, Seq2SeqLM):
        return Seq2SeqBackbone(model)
    if getattr(model, "remote", False):  # an OpenAI-compatible endpoint: no weights here, log-probs over HTTP
        return EndpointBackbone(model)
    if isinstance(model, CausalLM):
        return CausalLMBackbone(model)
    raise TypeError(f"DATScore needs a seq2seq or a causal language model (got {type(model).__name__})")


def metric_label_for(kind: str) -> str:
    """'DATScore' for the paper's seq2seq backbone, 'DATScore-LM' for the LM variant (never unqualified)."""
    return "DATScore" if kind == SEQ2SEQ else "DATScore-LM"
