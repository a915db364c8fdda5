"""Language codes of multilingual seq2seq models, on a tiny M2M-100 with its own M2M100Tokenizer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fairness_core.models import DecodingConfig, ModelSpec, load_model
from fairness_core.models.languages import (
    M2M100,
    MBART50,
    NLLB,
    UnknownLanguageError,
    language_family,
    model_language_code,
)


@pytest.fixture(scope="module")
def m2m(tiny_m2m100: Path):
    return load_model(ModelSpec(str(tiny_m2m100), "seq2seq-lm"))


def test_iso_codes_map_to_each_family() -> None:
    assert model_language_code(M2M100, "fr") == "fr"
    assert model_language_code(NLLB, "fr") == "fra_Latn"
    assert model_language_code(MBART50, "fr") == "fr_XX"
    assert model_language_code(NLLB, "fra_Latn") == "fra_Latn"  # the family's own spelling passes
    with pytest.raises(UnknownLanguageError, match="NLLB-200 has no language 'klingon'"):
        model_language_code(NLLB, "klingon")


def test_family_comes_from_the_tokenizer_before_the_model_type() -> None:
    class NllbTokenizerFast:  # NLLB-200 checkpoints say model_type "m2m_100"
        pass

    assert language_family("m2m_100", NllbTokenizerFast()) == NLLB
    assert language_family("m2m_100", object()) == M2M100
    assert language_family("bart", object()) is None


def test_source_gets_its_language_prefix_and_target_scores_skip_the_forced_token(m2m) -> None:
    assert m2m.language_family == M2M100
    tokenizer = m2m.tokenizer
    encoded, tgt_id = m2m._encode(["The nurse said"], ["L'infirmière a dit"], "en", "fr")
    assert tokenizer.convert_ids_to_tokens(encoded["input_ids"][0].tolist())[0] == "__en__"
    labels = tokenizer.convert_ids_to_tokens(encoded["labels"][0].tolist())
    assert labels[0] == "__fr__" and labels[-1] == "</s>" and tgt_id == tokenizer.get_lang_id("fr")

    scores = m2m.token_logprobs(["The nurse said", "The doctor"], ["L'infirmière a dit", "Le médecin"],
                                with_entropy=True, src_lang="en", tgt_lang="fr")
    assert scores[0].tokens == labels[1:]  # every target token but the forced language token
    assert "__fr__" not in scores[1].tokens and scores[1].tokens[-1] == "</s>"
    assert scores[0].entropies is not None and scores[0].entropies.shape == scores[0].logprobs.shape
    # The same pair alone, and the log-probabilities really are the model's under the French prefix.
    alone = m2m.token_logprobs(["The nurse said"], ["L'infirmière a dit"], src_lang="en", tgt_lang="fr")[0]
    np.testing.assert_allclose(alone.logprobs, scores[0].logprobs, atol=1e-5)
    other_language = m2m.token_logprobs(["The nurse said"], ["L'infirmière a dit"], src_lang="en", tgt_lang="de")[0]
    assert other_language.tokens == alone.tokens and not np.allclose(other_language.logprobs, alone.logprobs)
    distributions = m2m.step_distributions("The nurse said", "L'infirmière a dit", src_lang="en", tgt_lang="fr")
    assert distributions.shape == (len(alone.tokens), m2m.model.config.vocab_size)


def test_generation_forces_the_target_language_first(m2m, monkeypatch) -> None:
    import fairness_core.models.sampling as sampling

    seen = {}
    real = sampling.sample_seq2seq_rows

    def spy(*args, **kwargs):
        seen.update(kwargs, input_ids=args[2])
        return real(*args, **kwargs)

    monkeypatch.setattr(sampling, "sample_seq2seq_rows", spy)
    outputs = m2m.generate(["The nurse said", "The doctor"], src_lang="en", tgt_lang="es",
                           decoding=DecodingConfig(greedy=True, max_new_tokens=6))
    assert seen["forced_bos_token_id"] == m2m.tokenizer.get_lang_id("es")
    assert m2m.tokenizer.convert_ids_to_tokens(seen["input_ids"][:, 0].tolist()) == ["__en__", "__en__"]
    assert len(outputs) == 2 and all(len(per_source) == 1 for per_source in outputs)
    assert not any("__" in text for per_source in outputs for text in per_source)  # language tokens never leak


def test_forced_token_is_the_first_decoder_input() -> None:
    import torch

    from fairness_core.models.sampling import sample_seq2seq_rows

    class Recorder(torch.nn.Module):
        """Stands in for a seq2seq model: records decoder inputs, always predicts token 5 then EOS."""

        def __init__(self) -> None:
            super().__init__()
            self.weight = torch.nn.Parameter(torch.zeros(1))
            self.config = type("C", (), {"decoder_start_token_id": 2})()
            self.generation_config = type("G", (), {"eos_token_id": 2})()
            self.decoder_inputs: list[list[list[int]]] = []

        def get_encoder(self):
            return lambda **_: None

        def forward(self, decoder_input_ids, **_):
            self.decoder_inputs.append(decoder_input_ids.tolist())
            logits = torch.full((decoder_input_ids.shape[0], 1, 10), -10.0)
            logits[:, :, 5 if len(self.decoder_inputs) == 1 else 2] = 10.0
            return type("O", (), {"logits": logits, "past_key_values": None})()

    class Tok:
        pad_token_id, eos_token_id, all_special_ids = 1, 2, [1, 2]

        def decode(self, ids, skip_special_tokens=True):
            return " ".join(map(str, ids))

    model = Recorder()
    texts = sample_seq2seq_rows(model, Tok(), torch.tensor([[7, 8]]), torch.ones(1, 2, dtype=torch.long),
                                [DecodingConfig(greedy=True)], [0], 4, forced_bos_token_id=9)
    assert model.decoder_inputs[0] == [[2, 9]]  # decoder start, then the target language
    assert texts == ["5"]


def test_seq2seq_sampling_depends_on_seed_source_and_sample_only(m2m) -> None:
    config = DecodingConfig(top_k=20, max_new_tokens=6)
    together = m2m.generate(["The nurse said", "The doctor", "A person"], "en", "fr", config, n=2, seed=3)
    alone = m2m.generate(["The doctor"], "en", "fr", config, n=2, seed=3)
    assert together[1] == alone[0]
    assert m2m.generate(["The nurse said", "The doctor", "A person"], "en", "fr", config, n=2, seed=3) == together


@pytest.mark.parametrize(("src", "tgt"), [("en", "xx"), ("zz", "fr")])
def test_unknown_language_codes_give_one_sentence(m2m, src: str, tgt: str) -> None:
    bad = tgt if tgt == "xx" else src
    with pytest.raises(UnknownLanguageError, match=rf"has no language '{bad}'") as raised:
        m2m.generate(["The nurse said"], src_lang=src, tgt_lang=tgt)
    assert "\n" not in str(raised.value)
    with pytest.raises(UnknownLanguageError, match=rf"has no language '{bad}'"):
        m2m.token_logprobs(["The nurse said"], ["Le médecin"], src_lang=src, tgt_lang=tgt)


def test_a_model_without_language_codes_refuses_them(tiny_bart: Path) -> None:
    bart = load_model(ModelSpec(str(tiny_bart), "seq2seq-lm"))
    with pytest.raises(UnknownLanguageError, match="has no language codes"):
        bart.generate(["The nurse said"], tgt_lang="fr")
    texts = bart.generate(["The nurse said"], decoding=DecodingConfig(greedy=True, max_new_tokens=4))
    assert len(texts) == 1 and isinstance(texts[0][0], str)
    assert bart.token_logprobs(["The nurse"], ["The doctor"])[0].tokens[0] == "<s>"  # unchanged without languages
