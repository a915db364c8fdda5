"""Tiny randomly initialised transformers checkpoints built on the fly (nothing is downloaded).

A byte-level BPE tokenizer is trained in ~0.1 s on a few sentences; models get a handful of
dimensions so they load and run in milliseconds. Weights are random: tests assert on shapes,
plumbing and invariants, never on what a real model would say.
"""

from __future__ import annotations

from pathlib import Path

CORPUS = [
    "The nurse said that she would help the patient.",
    "The doctor said that he would help the patient.",
    "The carpenter made a desk for the clerk because the clerk needed a desk.",
    "A person worked as a teacher and was known for kindness.",
    "The man was regarded as a hard worker; the woman was regarded as smart.",
    "Black, White and Asian people; Christian, Muslim and atheist people.",
]


def _bpe_tokenizer(wrap_with_bos_eos: bool = False, vocab_size: int = 300):
    """A trained byte-level BPE wrapped as a transformers fast tokenizer (transformers 5 no longer
    builds a working GPT-2/BART tokenizer from bare vocab.json + merges.txt)."""
    from tokenizers import ByteLevelBPETokenizer
    from tokenizers.processors import TemplateProcessing
    from transformers import PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(CORPUS * 5, vocab_size=vocab_size, min_frequency=1,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    if wrap_with_bos_eos:  # BART-style "<s> text </s>"
        bpe._tokenizer.post_processor = TemplateProcessing(
            single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
            special_tokens=[("<s>", bpe.token_to_id("<s>")), ("</s>", bpe.token_to_id("</s>"))],
        )
    return PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, bos_token="<s>", eos_token="</s>",
                                   unk_token="<unk>", pad_token="<pad>", mask_token="<mask>")


def build_tiny_gpt2(directory: Path, n_positions: int = 128, n_embd: int = 64, n_layer: int = 2) -> Path:
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = _bpe_tokenizer()
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=n_positions, n_embd=n_embd, n_layer=n_layer, n_head=2,
                        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                        pad_token_id=tokenizer.pad_token_id)
    GPT2LMHeadModel(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def build_tiny_bart(directory: Path) -> Path:
    from transformers import BartConfig, BartForConditionalGeneration

    tokenizer = _bpe_tokenizer(wrap_with_bos_eos=True)
    config = BartConfig(vocab_size=len(tokenizer), d_model=64, encoder_layers=1, decoder_layers=1,
                        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
                        decoder_ffn_dim=64, max_position_embeddings=128,
                        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
                        eos_token_id=tokenizer.eos_token_id, decoder_start_token_id=tokenizer.eos_token_id,
                        forced_bos_token_id=None)
    BartForConditionalGeneration(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def build_tiny_bert(directory: Path, num_labels: int | None = None, masked_lm: bool = False,
                    extra_words: tuple[str, ...] = ()) -> Path:
    """A tiny BERT encoder (or, with num_labels, a sequence classifier; with masked_lm, a masked LM) with a
    WordPiece vocab (of the corpus, and `extra_words`' words)."""
    from tokenizers.implementations import BertWordPieceTokenizer
    from transformers import (
        BertConfig,
        BertForMaskedLM,
        BertForSequenceClassification,
        BertModel,
        PreTrainedTokenizerFast,
    )

    directory.mkdir(parents=True, exist_ok=True)
    words = sorted({w.strip(".,;").lower() for line in (*CORPUS, *extra_words) for w in line.split()} - {""})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words, *"abcdefghijklmnopqrstuvwxyz"]
    (directory / "vocab.txt").write_text("\n".join(vocab) + "\n")
    wordpiece = BertWordPieceTokenizer(str(directory / "vocab.txt"), lowercase=True)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=wordpiece._tokenizer, unk_token="[UNK]", pad_token="[PAD]",
                                        cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
    config = BertConfig(vocab_size=len(vocab), hidden_size=64, num_hidden_layers=3, num_attention_heads=2,
                        intermediate_size=128, max_position_embeddings=128)
    if masked_lm:
        model = BertForMaskedLM(config)
    elif num_labels is None:
        model = BertModel(config)
    else:
        config.num_labels = num_labels
        config.id2label = {i: f"label_{i}" for i in range(num_labels)}
        config.label2id = {v: k for k, v in config.id2label.items()}
        model = BertForSequenceClassification(config)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


# A few sentences in the languages the seq2seq tests translate between (M2M-100 shares one vocabulary).
MULTILINGUAL_CORPUS = [
    *CORPUS,
    "L'infirmière a dit qu'elle aiderait le patient.",
    "Le médecin a dit qu'il aiderait le patient.",
    "La enfermera dijo que ayudaría al paciente.",
    "Die Krankenschwester sagte, dass sie dem Patienten helfen würde.",
]


def build_tiny_m2m100(directory: Path) -> Path:
    """A tiny random M2M100ForConditionalGeneration with its own M2M100Tokenizer.

    The tokenizer is the real `M2M100Tokenizer` class over a sentencepiece model trained here on a few
    sentences plus the matching vocab.json, so language tokens (`__fr__`), `src_lang`/`tgt_lang` and
    `get_lang_id` behave exactly as with facebook/m2m100_418M.
    """
    import io
    import json

    import sentencepiece
    from transformers import M2M100Config, M2M100ForConditionalGeneration, M2M100Tokenizer

    directory.mkdir(parents=True, exist_ok=True)
    model_bytes = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(MULTILINGUAL_CORPUS * 3), model_writer=model_bytes, vocab_size=180,
        model_type="bpe", character_coverage=1.0, minloglevel=2,
        # ids 0-3 are the fairseq specials in vocab.json; sentencepiece's own unk must exist, the rest not.
        unk_id=0, bos_id=-1, eos_id=-1, pad_id=-1,
    )
    spm_path = directory / "sentencepiece.bpe.model"
    spm_path.write_bytes(model_bytes.getvalue())
    processor = sentencepiece.SentencePieceProcessor(model_file=str(spm_path))
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for piece_id in range(processor.get_piece_size()):
        piece = processor.id_to_piece(piece_id)
        if piece not in vocab and not processor.is_unknown(piece_id):
            vocab[piece] = len(vocab)
    (directory / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
    tokenizer = M2M100Tokenizer(vocab_file=str(directory / "vocab.json"), spm_file=str(spm_path),
                                src_lang="en", tgt_lang="fr")
    # Language tokens and the 8 "madeup words" sit after vocab.json, as in the released checkpoints.
    vocab_size = tokenizer.vocab_size + len(tokenizer.lang_code_to_id) + tokenizer.num_madeup_words
    config = M2M100Config(vocab_size=vocab_size, d_model=32, encoder_layers=1, decoder_layers=1,
                          encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
                          decoder_ffn_dim=64, max_position_embeddings=128, pad_token_id=tokenizer.pad_token_id,
                          bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                          decoder_start_token_id=tokenizer.eos_token_id)
    M2M100ForConditionalGeneration(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def build_tiny_llama(directory: Path, chat_template: bool = False) -> Path:
    """A tiny random LlamaForCausalLM (SmolLM2's architecture: rotary positions, grouped key/value heads, RMSNorm,
    tied embeddings), with an optional ChatML template like SmolLM2-Instruct's."""
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = _bpe_tokenizer()
    if chat_template:
        tokenizer.chat_template = ("{% for m in messages %}<s>{{ m['role'] }}\n{{ m['content'] }}</s>\n{% endfor %}"
                                   "{% if add_generation_prompt %}<s>assistant\n{% endif %}")
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         tie_word_embeddings=True, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    LlamaForCausalLM(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
