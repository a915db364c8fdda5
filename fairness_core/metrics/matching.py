"""Matching metrics over any `Encoder`: BERTScore (greedy cosine matching) and MoverScore (EMD).

Each *distinct* sentence is encoded once (pairs share their reference, and the two candidates of a
pair share most tokens). BERTScore follows Zhang et al. (2020) as the `bert_score` library computes
it (Eq. 1-3 of Sun et al. 2022's Appendix B restate them): [CLS]/[SEP]-type special tokens stay in
the similarity matrix (they can be matched) but get zero weight as matching sources; idf weights,
when asked for, come from the references of the whole corpus (`prepare`), never from a shard.

For a transformers encoder the sentences are tokenised once, in one call, with bert_score's tokenizer
options (a leading space for byte-level BPE tokenizers such as RoBERTa's and GPT-2's), and encoded by
`HFEncoder.hidden_states` (for BERT-family encoders on CPU a padding-free packed fp32 forward,
models/packed_encoder.py: the same states, faster); any other `Encoder` goes through `token_embeddings`.
"""

from __future__ import annotations

import functools
import math
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fairness_core.jobs.context import checkpoint
from fairness_core.metrics.base import MetricOptions, check_parallel
from fairness_core.metrics.model_based import ModelMetric
from fairness_core.metrics.registry import register_metric

if TYPE_CHECKING:
    from fairness_core.models.interfaces import Encoder


@dataclass(frozen=True)
class Encoded:
    tokens: list[str]
    unit: np.ndarray  # L2-normalised token vectors (n_tokens, hidden)
    special: np.ndarray  # bool (n_tokens,)


#: Sentences per padded forward pass where the packed forward does not apply (GPU, other architectures):
#: sorted by length, so padding stays small; big batches use a GPU or CPU cores well.
PADDED_BATCH_SIZE = 256
#: bert_score adds a leading space for these byte-level BPE tokenizers (RoBERTa, GPT-2 and their kin)
_PREFIX_SPACE_TOKENIZERS = ("GPT2Tokenizer", "RobertaTokenizer", "BartTokenizer", "LongformerTokenizer")


def needs_prefix_space(tokenizer: Any) -> bool:
    """True for RoBERTa/GPT-2 style tokenizers, which bert_score calls with add_prefix_space=True."""
    names = {cls.__name__.removesuffix("Fast") for cls in type(tokenizer).__mro__}
    return any(name in names for name in _PREFIX_SPACE_TOKENIZERS)


def _hf_parts(encoder: Encoder) -> tuple[Any, Any] | None:
    """(hidden_states, tokenizer) of a transformers encoder that takes token ids directly, else None."""
    hidden_states, tokenizer = getattr(encoder, "hidden_states", None), getattr(encoder, "tokenizer", None)
    if not callable(hidden_states) or tokenizer is None or not callable(tokenizer):
        return None
    return hidden_states, tokenizer


def _hf_ids(tokenizer: Any, texts: Sequence[str]) -> list[list[int]]:
    prefix = " " if needs_prefix_space(tokenizer) and not getattr(tokenizer, "add_prefix_space", False) else ""
    return tokenizer([prefix + t for t in texts], truncation=True)["input_ids"]


def tokenize(encoder: Encoder, texts: Sequence[str]) -> dict[str, list[str]]:
    """Tokens (special ones included) of each distinct stripped text, as `encode_distinct` sees them."""
    distinct = sorted({t.strip() for t in texts})
    parts = _hf_parts(encoder)
    if parts is None:
        return {text: list(e.tokens) for text, e in zip(distinct, encode_distinct(encoder, distinct, None).values(),
                                                         strict=True)}
    tokenizer = parts[1]
    return {text: tokenizer.convert_ids_to_tokens(ids) for text, ids in zip(distinct, _hf_ids(tokenizer, distinct),
                                                                             strict=True)}


def _encode_hf(encoder: Encoder, texts: list[str], layer: int) -> list[Encoded]:
    hidden_states, tokenizer = _hf_parts(encoder)  # type: ignore[misc]
    ids = _hf_ids(tokenizer, texts)
    special_ids = set(tokenizer.all_special_ids)
    # Encoding is the first half of a shard's work: progress, and a stop on Cancel, between batches.
    states = hidden_states(ids, layer, on_batch=lambda done, total: checkpoint(done, 2 * total),
                           batch_size=PADDED_BATCH_SIZE)
    out = []
    for row, vectors in zip(ids, states, strict=True):
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        out.append(Encoded(tokenizer.convert_ids_to_tokens(row), vectors / np.maximum(norms, 1e-12),
                           np.array([t in special_ids for t in row], dtype=bool)))
    return out


def encode_distinct(encoder: Encoder, texts: Sequence[str], layer: int | None) -> dict[str, Encoded]:
    """Embed each distinct text once (stripped, as bert_score does) with L2-normalised token vectors."""
    distinct = sorted({t.strip() for t in texts}, key=len)
    if not distinct:
        return {}
    if _hf_parts(encoder) is not None:
        chosen = int(getattr(encoder, "num_layers", 0)) if layer is None else layer
        return dict(zip(distinct, _encode_hf(encoder, distinct, chosen), strict=True))
    embedded = encoder.token_embeddings(distinct, layer=layer)
    out = {}
    for text, emb in zip(distinct, embedded, strict=True):
        vectors = np.asarray(emb.vectors, dtype=np.float64)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        special = emb.special if len(emb.special) == len(emb.tokens) else np.zeros(len(emb.tokens), dtype=bool)
        out[text] = Encoded(list(emb.tokens), vectors / np.where(norms == 0, 1, norms), special)
    return out


def idf_weights(documents: Sequence[Sequence[str]]) -> dict[str, float]:
    """bert_score's / moverscore's idf: log((M + 1) / (df + 1)) over the token types of M documents;
    the key "" holds the weight of a token no document has, log(M + 1)."""
    counts: Counter[str] = Counter()
    for tokens in documents:
        counts.update(set(tokens))
    m = len(documents)
    return {token: math.log((m + 1) / (count + 1)) for token, count in counts.items()} | {"": math.log(m + 1)}


@functools.lru_cache(maxsize=1)
def _bert_score_layers() -> dict[str, int]:
    """bert_score's `model2layers` table, read from its source without importing it (the import pulls in
    pandas, matplotlib and transformers: ~9 s cold); {} without bert_score installed."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec("bert_score")
    if spec is None or not spec.submodule_search_locations:
        return {}
    source = Path(next(iter(spec.submodule_search_locations))) / "utils.py"
    try:
        tree = ast.parse(source.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "model2layers" for t in node.targets):
            try:
                table = ast.literal_eval(node.value)
            except ValueError:
                return {}
            return {str(k): int(v) for k, v in table.items()}
    return {}


def default_layer(model_id: str, hub_id: str | None = None) -> int | None:
    """bert_score's tuned layer for a model it knows (its `model2layers` table); None = unknown (last layer)."""
    table = _bert_score_layers()
    for name in (hub_id, model_id, Path(model_id).name):
        if name and name in table:
            return table[name]
    return None


class EncoderMetric(ModelMetric):
    """BERTScore and MoverScore: an encoder named by the `model` option, a layer (None = default)."""

    family = "matching"
    task = "encoder"
    default_model = "all-minilm-l6-v2"

    @property
    def encoder(self) -> Encoder:
        return self.model

    def _hub_id(self) -> str | None:
        from fairness_core.models.presets import find_preset

        preset = find_preset(self.model_id)
        return getattr(preset, "hub_id", None) if preset is not None else None

    @property
    def layer(self) -> int:
        chosen = getattr(self.options, "layer", None)
        return int(self.encoder.num_layers) if chosen is None else chosen

    def layer_count(self) -> int:
        """Hidden layers of the encoder, from its config when it is not loaded yet (no weights read)."""
        if self._model is None:
            try:
                from transformers import AutoConfig

                spec = self.model_spec().resolved()
                count = getattr(AutoConfig.from_pretrained(spec.source), "num_hidden_layers", None)
                if isinstance(count, int) and count > 0:
                    return count
            except Exception:  # no readable config: load the model and ask it
                pass
        return int(self.encoder.num_layers)

    def validate(self) -> None:
        from fairness_core.metrics.base import MetricOptionError

        super().validate()  # the adapter, if one is named
        chosen = getattr(self.options, "layer", None)
        if chosen is not None:
            count = self.layer_count()
            if chosen > count:
                raise MetricOptionError(f"{self.name}: the encoder {self.model_id} has layers 0..{count} "
                                        f"(0 = embeddings), so layer {chosen} does not exist")


# -- BERTScore ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class BERTScoreOptions(MetricOptions):
    model: str | None = None
    #: hidden layer (0 = embeddings); None = bert_score's tuned layer for a known model, else the last
    layer: int | None = None
    idf: bool = False
    #: bert_score baseline name (e.g. roberta-large). A linear map of every score, so it cannot change
    #: a min-max or z-score bias; only raw gaps change.
    baseline: str | None = None
    #: a debiasing adapter's id (models/adapters.py; `mitigate train`); None = the plain backbone
    adapter: str | None = None

    def problems(self) -> list[str]:
        if self.layer is not None and self.layer < 0:
            return [f"layer must be 0 or more (got {self.layer})"]
        return []


@register_metric
class BERTScore(EncoderMetric):
    """BERTScore P, R, F (Zhang et al. 2020, Eq. 1-3; Sun et al. 2022 §3.1)."""

    name = "bertscore"
    label = "BERTScore"
    version = "2"
    outputs = ("F", "P", "R")
    Options = BERTScoreOptions
    options: BERTScoreOptions
    description = "greedy cosine matching of contextual token embeddings (equals bert_score within 1e-4)"

    def __init__(self, options: BERTScoreOptions | None = None, *, model: Encoder | None = None) -> None:
        super().__init__(options, model=model)
        if self.options.baseline:
            _baseline_path(self.options.baseline)  # an unknown baseline is an option error, before any run

    @property
    def layer(self) -> int:
        if self.options.layer is not None:
            return self.options.layer
        tuned = default_layer(self.model_id, self._hub_id())
        return int(self.encoder.num_layers) if tuned is None else tuned

    def validate(self) -> None:
        super().validate()
        if self.options.baseline:
            from fairness_core.metrics.base import MetricOptionError

            layer = self.layer if self.options.layer is None else self.options.layer
            try:
                _load_baseline(self.options.baseline, layer, self.options.idf)
            except ValueError as error:
                raise MetricOptionError(f"bertscore: {error}; choose a --layer the baseline has or another "
                                        "baseline") from error

    def signature(self) -> dict[str, Any]:
        signature = super().signature()
        if self.options.layer is None:
            tuned = default_layer(self.model_id, self._hub_id())
            signature["default_layer"] = "last" if tuned is None else tuned
        return signature

    def prepare(self, candidates: Sequence[str], references: Sequence[str],
                sources: Sequence[str] | None = None) -> dict[str, Any] | None:
        """idf over the corpus's references (each of the 2N rows counts, as bert_score's idf_sents)."""
        if not self.options.idf:
            return None
        tokens = tokenize(self.encoder, references)
        return {"idf_ref": idf_weights([tokens[r.strip()] for r in references])}

    def score(self, candidates: Sequence[str], references: Sequence[str], sources: Sequence[str] | None = None,
              state: dict[str, Any] | None = None) -> dict[str, np.ndarray]:
        check_parallel(candidates, references)
        if self.options.idf and state is None:
            state = self.prepare(candidates, references)  # this call is the whole corpus
        weights = state["idf_ref"] if state else None
        encoded = encode_distinct(self.encoder, list(candidates) + list(references), self.layer)
        p, r, f = (np.zeros(len(candidates)) for _ in range(3))
        # candidates that share a reference are matched against it in one product (REALSumm: 24 per document)
        by_reference: dict[str, list[int]] = {}
        for i, ref in enumerate(references):
            by_reference.setdefault(ref.strip(), []).append(i)
        done = 0
        for ref, rows in by_reference.items():
            checkpoint(len(candidates) + done, 2 * len(candidates))
            matched = greedy_match_many([encoded[candidates[i].strip()] for i in rows], encoded[ref], weights)
            for i, values in zip(rows, matched, strict=True):
                p[i], r[i], f[i] = values
            done += len(rows)
        if self.options.baseline:
            bp, br, bf = _load_baseline(self.options.baseline, self.layer, self.options.idf)
            p, r, f = (p - bp) / (1 - bp), (r - br) / (1 - br), (f - bf) / (1 - bf)
        return {"F": f, "P": p, "R": r}

    def alignment(self, candidate: str, reference: str) -> list[dict[str, Any]]:
        """For each candidate token: the reference token it matches and the cosine (paper Fig. 3)."""
        encoded = encode_distinct(self.encoder, [candidate, reference], self.layer)
        cand, ref = encoded[candidate.strip()], encoded[reference.strip()]
        sim = cand.unit @ ref.unit.T
        best = sim.argmax(axis=1)
        return [{"token": token, "matches": ref.tokens[j], "cosine": float(sim[i, j]), "special": bool(cand.special[i])}
                for i, (token, j) in enumerate(zip(cand.tokens, best, strict=True))]


def _token_weights(doc: Encoded, idf: dict[str, float] | None) -> np.ndarray:
    weights = np.ones(len(doc.tokens)) if idf is None else np.array([idf.get(t, idf[""]) for t in doc.tokens])
    weights[doc.special] = 0.0
    return weights


def greedy_match(cand: Encoded, ref: Encoded, idf: dict[str, float] | None = None) -> tuple[float, float, float]:
    """BERTScore P, R, F of one candidate against one reference (Zhang et al. 2020, Eq. 1-3)."""
    if not (~cand.special).any() or not (~ref.special).any():
        return 0.0, 0.0, 0.0  # an empty sentence (only special tokens), as bert_score does
    sim = cand.unit @ ref.unit.T
    wc, wr = _token_weights(cand, idf), _token_weights(ref, idf)
    precision = float((sim.max(axis=1) * wc).sum() / wc.sum()) if wc.sum() > 0 else 0.0
    recall = float((sim.max(axis=0) * wr).sum() / wr.sum()) if wr.sum() > 0 else 0.0
    f = 2 * precision * recall / (precision + recall) if precision + recall != 0 else 0.0
    return precision, recall, f


def greedy_match_many(cands: Sequence[Encoded], ref: Encoded, idf: dict[str, float] | None = None
                      ) -> list[tuple[float, float, float]]:
    """`greedy_match` of several candidates against one reference, with one similarity product for all of them
    (the same numbers within float rounding: the rows of one product instead of several)."""
    usable = [k for k, cand in enumerate(cands) if (~cand.special).any()]
    out: list[tuple[float, float, float]] = [(0.0, 0.0, 0.0)] * len(cands)
    if len(usable) <= 1 or not (~ref.special).any():
        return [greedy_match(cand, ref, idf) for cand in cands]
    sizes = [len(cands[k].tokens) for k in usable]
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    sim = np.concatenate([cands[k].unit for k in usable]) @ ref.unit.T  # (all candidate tokens, reference tokens)
    row_best = sim.max(axis=1)
    column_best = np.maximum.reduceat(sim, starts, axis=0)  # per candidate: best match of each reference token
    wr = _token_weights(ref, idf)
    for position, k in enumerate(usable):
        wc = _token_weights(cands[k], idf)
        best = row_best[starts[position] : starts[position] + sizes[position]]
        precision = float((best * wc).sum() / wc.sum()) if wc.sum() > 0 else 0.0
        recall = float((column_best[position] * wr).sum() / wr.sum()) if wr.sum() > 0 else 0.0
        f = 2 * precision * recall / (precision + recall) if precision + recall != 0 else 0.0
        out[k] = (precision, recall, f)
    return out


def _baseline_path(name: str) -> Path:
    import importlib.util

    from fairness_core.metrics.base import MetricOptionError

    spec = importlib.util.find_spec("bert_score")
    if spec is None or not spec.submodule_search_locations:
        raise MetricOptionError("baseline rescaling needs the bert-score package for its baseline files")
    folder = Path(next(iter(spec.submodule_search_locations))) / "rescale_baseline" / "en"
    path = folder / f"{Path(name).name}.tsv"
    if not path.exists():
        raise MetricOptionError(f"no BERTScore baseline for {name!r}; baselines ship for: "
                                f"{', '.join(sorted(p.stem for p in folder.glob('*.tsv'))[:8])}, …")
    return path


def _load_baseline(name: str, layer: int, idf: bool) -> tuple[float, float, float]:
    """bert_score's shipped baseline for `name` (a hub id such as roberta-large) at `layer`."""
    import pandas as pd

    table = pd.read_csv(_baseline_path(name))
    if "LAYER" in table.columns:
        row = table[table["LAYER"] == layer]
    else:
        row = table.iloc[[layer]] if 0 <= layer < len(table) else table.iloc[[]]
    if row.empty:
        raise ValueError(f"the {name} baseline has no layer {layer}")
    values = row.iloc[0]
    return float(values["P"]), float(values["R"]), float(values["F"])


# -- MoverScore ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class MoverScoreBigramOptions(MetricOptions):
    model: str | None = None
    layer: int | None = None  # None = last
    n_gram: int = 2
    adapter: str | None = None  # a debiasing adapter's id; None = the plain backbone

    def problems(self) -> list[str]:
        if self.n_gram < 1:
            return [f"n_gram must be 1 or more (got {self.n_gram})"]
        if self.layer is not None and self.layer < 0:
            return [f"layer must be 0 or more (got {self.layer})"]
        return []


def _corpus_idf(metric: EncoderMetric, candidates: Sequence[str], references: Sequence[str]) -> dict[str, Any]:
    """idf of candidates and of references, each over the corpus's 2N rows (as the released code)."""
    tokens = tokenize(metric.encoder, list(candidates) + list(references))
    return {"idf_hyp": idf_weights([tokens[c.strip()] for c in candidates]),
            "idf_ref": idf_weights([tokens[r.strip()] for r in references])}


def _emd(wc: np.ndarray, xc: np.ndarray, wr: np.ndarray, xr: np.ndarray) -> tuple[float, np.ndarray]:
    """Earth mover's distance (exact, POT) between two weighted point sets, Euclidean ground cost."""
    import ot

    wc = wc / wc.sum() if wc.sum() > 0 else np.full(len(wc), 1 / len(wc))
    wr = wr / wr.sum() if wr.sum() > 0 else np.full(len(wr), 1 / len(wr))
    cost = np.sqrt(np.maximum(((xc[:, None, :] - xr[None, :, :]) ** 2).sum(-1), 0.0))
    plan = ot.emd(wc, wr, cost)
    return float((plan * cost).sum()), plan


@register_metric
class MoverScoreBigram(EncoderMetric):
    """MoverScore as Zhao et al. (2019) define it: 1 − EMD between idf-weighted n-gram embeddings (n=2).

    Not what the released `moverscore_v2` computes (see `MoverScore`): here bigrams really are
    bigrams, every non-special token keeps its idf weight, and the score is 1 − EMD.
    """

    name = "moverscore-bigram"
    label = "MoverScore (bigram, 1−EMD)"
    version = "2"
    Options = MoverScoreBigramOptions
    options: MoverScoreBigramOptions
    description = "the paper definition: idf-weighted bigram embeddings, score 1 − EMD"

    def prepare(self, candidates: Sequence[str], references: Sequence[str],
                sources: Sequence[str] | None = None) -> dict[str, Any] | None:
        return _corpus_idf(self, candidates, references)

    def score(self, candidates: Sequence[str], references: Sequence[str], sources: Sequence[str] | None = None,
              state: dict[str, Any] | None = None) -> dict[str, np.ndarray]:
        check_parallel(candidates, references)
        state = state or self.prepare(candidates, references)
        encoded = encode_distinct(self.encoder, list(candidates) + list(references), self.layer)
        values = []
        for i, (c, r) in enumerate(zip(candidates, references, strict=True)):
            if i % 16 == 0:
                checkpoint(len(candidates) + i, 2 * len(candidates))
            values.append(self._pair(encoded[c.strip()], encoded[r.strip()], state["idf_hyp"], state["idf_ref"])[0])
        return {"score": np.asarray(values, dtype=float)}

    def _ngrams(self, doc: Encoded, idf: dict[str, float], n: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
        keep = ~doc.special
        vectors, tokens = doc.unit[keep], [t for t, s in zip(doc.tokens, doc.special, strict=True) if not s]
        weights = np.array([idf.get(t, idf[""]) for t in tokens])
        if weights.sum() == 0:
            weights = np.ones(len(tokens))  # every token in every sentence: fall back to uniform
        n = max(1, min(n, len(tokens)))
        grams, gram_weights, labels = [], [], []
        for start in range(len(tokens) - n + 1):
            w = weights[start : start + n]
            total = w.sum()
            grams.append((vectors[start : start + n] * w[:, None]).sum(0) / (total if total > 0 else 1))
            gram_weights.append(total)
            labels.append(" ".join(tokens[start : start + n]))
        return np.asarray(grams), np.asarray(gram_weights, dtype=float), labels

    def _pair(self, cand: Encoded, ref: Encoded, idf_c: dict[str, float], idf_r: dict[str, float],
              n: int | None = None) -> tuple[float, np.ndarray, list[str], list[str]]:
        n = self.options.n_gram if n is None else n
        if not (~cand.special).any() or not (~ref.special).any():
            return 0.0, np.zeros((0, 0)), [], []
        xc, wc, lc = self._ngrams(cand, idf_c, n)
        xr, wr, lr = self._ngrams(ref, idf_r, n)
        distance, plan = _emd(wc, xc, wr, xr)
        return 1.0 - distance, plan, lc, lr

    def alignment(self, candidate: str, reference: str) -> list[dict[str, Any]]:
        """Unigram transport plan: where each candidate token's mass goes in the reference (Fig. 3)."""
        encoded = encode_distinct(self.encoder, [candidate, reference], self.layer)
        cand, ref = encoded[candidate.strip()], encoded[reference.strip()]
        uniform: dict[str, float] = {"": 1.0}
        _, plan, lc, lr = self._pair(cand, ref, uniform, uniform, n=1)
        return _plan_rows(plan, lc, lr)


def _plan_rows(plan: np.ndarray, lc: list[str], lr: list[str]) -> list[dict[str, Any]]:
    rows = []
    for i, token in enumerate(lc):
        j = int(plan[i].argmax())
        rows.append({"token": token, "matches": lr[j], "mass": float(plan[i, j] / max(plan[i].sum(), 1e-12)),
                     "special": False})
    return rows


@dataclass(frozen=True)
class MoverScoreOptions(MetricOptions):
    model: str | None = None
    layer: int | None = None  # None = last, as moverscore_v2
    adapter: str | None = None  # a debiasing adapter's id; None = the plain backbone

    def problems(self) -> list[str]:
        if self.layer is not None and self.layer < 0:
            return [f"layer must be 0 or more (got {self.layer})"]
        return []


def zero_weight_token(token: str) -> bool:
    """moverscore_v2 zeroes the weight of subword pieces ('##…') and punctuation tokens."""
    return "##" in token or token in set(string.punctuation)


@register_metric
class MoverScore(EncoderMetric):
    """MoverScore as the released `moverscore_v2` (used by Sun et al. 2022) computes it.

    Unigrams (the code ignores its n_gram=2 argument), idf from the corpus's candidates and from its
    references (special tokens occur in every sentence, so their idf is 0), subword pieces and
    punctuation weighted 0, L2-normalised last-layer vectors, Euclidean cost, score 1 / (1 + EMD).
    """

    name = "moverscore"
    label = "MoverScore (released v2)"
    version = "2"
    Options = MoverScoreOptions
    options: MoverScoreOptions
    description = "the released moverscore_v2: unigram, subwords/punctuation weight 0, score 1/(1+EMD)"

    def prepare(self, candidates: Sequence[str], references: Sequence[str],
                sources: Sequence[str] | None = None) -> dict[str, Any] | None:
        return _corpus_idf(self, candidates, references)

    def _weights(self, doc: Encoded, idf: dict[str, float]) -> np.ndarray:
        weights = np.array([0.0 if zero_weight_token(t) else idf.get(t, idf[""]) for t in doc.tokens])
        weights[doc.special] = 0.0  # with corpus idf they are 0 anyway: every sentence has them
        return weights

    def _pair(self, cand: Encoded, ref: Encoded, idf_c: dict[str, float],
              idf_r: dict[str, float]) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        wc, wr = self._weights(cand, idf_c), self._weights(ref, idf_r)
        keep_c, keep_r = wc > 0, wr > 0
        if not keep_c.any() or not keep_r.any():
            # no mass to move: the released code's flow is all zeros, so EMD = 0 and the score is 1
            return 1.0, np.zeros((0, 0)), keep_c, keep_r
        distance, plan = _emd(wc[keep_c], cand.unit[keep_c], wr[keep_r], ref.unit[keep_r])
        return 1.0 / (1.0 + distance), plan, keep_c, keep_r

    def score(self, candidates: Sequence[str], references: Sequence[str], sources: Sequence[str] | None = None,
              state: dict[str, Any] | None = None) -> dict[str, np.ndarray]:
        check_parallel(candidates, references)
        state = state or self.prepare(candidates, references)
        encoded = encode_distinct(self.encoder, list(candidates) + list(references), self.layer)
        values = []
        for i, (c, r) in enumerate(zip(candidates, references, strict=True)):
            if i % 16 == 0:
                checkpoint(len(candidates) + i, 2 * len(candidates))
            values.append(self._pair(encoded[c.strip()], encoded[r.strip()], state["idf_hyp"], state["idf_ref"])[0])
        return {"score": np.asarray(values, dtype=float)}

    def alignment(self, candidate: str, reference: str) -> list[dict[str, Any]]:
        """Transport plan with uniform weights: where each weighted candidate token's mass goes."""
        encoded = encode_distinct(self.encoder, [candidate, reference], self.layer)
        cand, ref = encoded[candidate.strip()], encoded[reference.strip()]
        uniform: dict[str, float] = {"": 1.0}
        _, plan, keep_c, keep_r = self._pair(cand, ref, uniform, uniform)
        if plan.size == 0:
            return []
        lc = [t for t, k in zip(cand.tokens, keep_c, strict=True) if k]
        lr = [t for t, k in zip(ref.tokens, keep_r, strict=True) if k]
        return _plan_rows(plan, lc, lr)
