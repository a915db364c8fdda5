"""Build and validate DATScore inputs from plain values — the one place the CLI and the page read files.

Every problem is a `RequestError` with one sentence naming the file, the line and the field. Odd but
readable rows follow stated rules instead of failing (an empty direction score is a missing score; see
`DirectionScores.notes`). Nothing is computed or written before a file has been read in full.

Files:
* segments (the `score` pipeline): CSV with columns src, ref, hypo and optionally segment_id (default: the
  row number) and score (a direct-assessment label, kept for the meta-evaluation);
* direction scores: CSV `segment_id,direction,score` (direction labels are opaque strings);
* human relative ranking: CSV `better_id,worse_id` (optionally `group`, the unit the bootstrap resamples);
* human direct assessment: CSV `segment_id,score`.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairness_core.data.quoting import quoted

MAX_TRANSLATION_TOKENS = 256


class RequestError(ValueError):
    """A bad DATScore input; the message is one sentence for the user."""


def _read_csv(name: str, content: bytes | str | None, required: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
    """(line number, row) pairs of a CSV with the `required` columns; one-sentence errors."""
    if content is None:
        try:
            content = Path(name).read_bytes()
        except OSError as error:
            raise RequestError(f"{name}: cannot be read ({error.strerror or error}).") from None
    if isinstance(content, bytes):
        try:
            content = content.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise RequestError(f"{name}: is not UTF-8 text (is it a CSV file?).") from None
    csv.field_size_limit(max(csv.field_size_limit(), len(content) + 1))  # a long segment is data
    try:
        reader = csv.DictReader(io.StringIO(content))
        header = [h.strip() for h in (reader.fieldnames or [])]
        rows = []
        for row in reader:
            cleaned = {(k or "").strip(): (v if isinstance(v, str) else "") for k, v in row.items()}
            rows.append((reader.line_num, cleaned))
    except csv.Error as error:
        raise RequestError(f"{name}: is not a readable CSV ({error}).") from None
    if not header:
        raise RequestError(f"{name}: is empty; it needs a header line with the columns {', '.join(required)}.")
    missing = [c for c in required if c not in header]
    if missing:
        raise RequestError(f"{name}: missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                           f"(the header has {quoted(', '.join(header))}; needed: {', '.join(required)}).")
    if not rows:
        raise RequestError(f"{name}: has a header but no rows.")
    return rows


def _number(name: str, line: int, column: str, text: str, allow_empty: bool = False) -> float:
    value = (text or "").strip()
    if value == "" or value.lower() in ("nan", "na", "n/a"):
        if allow_empty:
            return float("nan")
        raise RequestError(f"{name} line {line}: field '{column}' is empty; it needs a number.")
    try:
        number = float(value)
    except ValueError:
        raise RequestError(f"{name} line {line}: field '{column}' is not a number ({value!r}).") from None
    if math.isinf(number):
        raise RequestError(f"{name} line {line}: field '{column}' is infinite ({value!r}).")
    return number


def _text(name: str, line: int, column: str, row: dict[str, str]) -> str:
    value = (row.get(column) or "").strip()
    if not value:
        raise RequestError(f"{name} line {line}: field '{column}' is empty.")
    return value


@dataclass(frozen=True)
class DirectionScores:
    """Direction scores of segments: `matrix[i, j]` = score of segment `segments[i]` in `directions[j]`
    (NaN = not given or empty)."""

    segments: tuple[str, ...]
    directions: tuple[str, ...]
    matrix: Any  # np.ndarray (n_segments, n_directions)
    notes: tuple[str, ...] = field(default_factory=tuple)


def read_direction_scores(name: str, content: bytes | str | None = None) -> DirectionScores:
    """A `segment_id,direction,score` CSV. Rules: an empty/NaN score is a missing score; a segment without
    every direction scored gets no DATScore and stays out of the Eq. 3 weights (counted in `notes`); a
    repeated (segment, direction) is an error; at least 2 directions and 2 fully scored segments."""
    import numpy as np

    rows = _read_csv(name, content, ("segment_id", "direction", "score"))
    seen: dict[tuple[str, str], int] = {}
    segments: dict[str, None] = {}
    directions: dict[str, None] = {}
    values = []
    for line, row in rows:
        segment, direction = _text(name, line, "segment_id", row), _text(name, line, "direction", row)
        if (segment, direction) in seen:
            raise RequestError(f"{name} line {line}: segment '{segment}' already has a score for direction "
                               f"'{direction}' (line {seen[segment, direction]}).")
        seen[segment, direction] = line
        segments.setdefault(segment)
        directions.setdefault(direction)
        values.append((segment, direction, _number(name, line, "score", row.get("score", ""), allow_empty=True)))
    seg_index = {s: i for i, s in enumerate(segments)}
    dir_index = {d: j for j, d in enumerate(directions)}
    matrix = np.full((len(segments), len(directions)), np.nan)
    for segment, direction, value in values:
        matrix[seg_index[segment], dir_index[direction]] = value
    if len(directions) < 2:
        raise RequestError(f"{name}: has only one direction ({next(iter(directions))!r}); one-vs-rest weights "
                           "(Eq. 3) need at least 2.")
    if len(segments) < 2:
        raise RequestError(f"{name}: has only one segment ({next(iter(segments))!r}); the Eq. 3 weights are "
                           "correlations over segments and need at least 2.")
    complete = np.isfinite(matrix).all(axis=1)
    if complete.sum() < 2:
        raise RequestError(f"{name}: only {int(complete.sum())} segment(s) have a score for every direction; the "
                           "Eq. 3 weights need at least 2.")
    notes = []
    if (~complete).any():
        notes.append(f"{int((~complete).sum())} segment(s) lack a score for some direction (missing or empty): "
                     "they get no DATScore (null) and do not enter the weights.")
    return DirectionScores(tuple(segments), tuple(directions), matrix, tuple(notes))


def read_relative_ranking(name: str, known: Sequence[str], content: bytes | str | None = None,
                          source: str = "the direction scores") -> list[tuple[str, str, str]]:
    """(better_id, worse_id, group) triples; ids must be known segments. `group` (optional column) is the
    unit the bootstrap resamples; without it each pair is its own unit."""
    rows = _read_csv(name, content, ("better_id", "worse_id"))
    ids = set(known)
    pairs = []
    for line, row in rows:
        better, worse = _text(name, line, "better_id", row), _text(name, line, "worse_id", row)
        for column, value in (("better_id", better), ("worse_id", worse)):
            if value not in ids:
                raise RequestError(f"{name} line {line}: field '{column}' names segment '{value}', which is not "
                                   f"in {source}.")
        if better == worse:
            raise RequestError(f"{name} line {line}: better_id and worse_id are the same segment '{better}'.")
        group = (row.get("group") or "").strip() or f"pair{line}"
        pairs.append((better, worse, group))
    return pairs


def read_direct_assessment(name: str, known: Sequence[str], content: bytes | str | None = None,
                           source: str = "the direction scores") -> dict[str, float]:
    """segment_id -> human score; ids must be known segments; a repeated id is an error."""
    rows = _read_csv(name, content, ("segment_id", "score"))
    ids = set(known)
    out: dict[str, float] = {}
    for line, row in rows:
        segment = _text(name, line, "segment_id", row)
        if segment not in ids:
            raise RequestError(f"{name} line {line}: field 'segment_id' names segment '{segment}', which is not in "
                               f"{source}.")
        if segment in out:
            raise RequestError(f"{name} line {line}: segment '{segment}' has a second score.")
        out[segment] = _number(name, line, "score", row.get("score", ""))
    return out


@dataclass(frozen=True)
class Segment:
    segment_id: str
    src: str
    ref: str
    hypo: str
    human: float | None = None  # direct assessment, when the file has a score column
    group: str | None = None  # source segment (several hypotheses of one source share it)


@dataclass(frozen=True)
class SegmentSet:
    name: str
    segments: tuple[Segment, ...]
    synthetic: bool = False
    #: known relative ranking (better_id, worse_id, group), e.g. the synthetic degradation order
    ranking: tuple[tuple[str, str, str], ...] = ()

    def content_hash(self) -> str:
        payload = json.dumps([[s.segment_id, s.src, s.ref, s.hypo] for s in self.segments], ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def subset(self, n_groups: int) -> SegmentSet:
        """The first `n_groups` source groups (all their hypotheses and rankings): a stated subsample."""
        groups = list(dict.fromkeys(s.group or s.segment_id for s in self.segments))[:n_groups]
        keep = set(groups)
        segments = tuple(s for s in self.segments if (s.group or s.segment_id) in keep)
        ranking = tuple(r for r in self.ranking if r[2] in keep)
        return SegmentSet(f"{self.name} (first {len(groups)} sources)", segments, self.synthetic, ranking)


def read_segments(name: str, content: bytes | str | None = None) -> SegmentSet:
    """Segments to score: columns src, ref, hypo (+ optional segment_id, score, group)."""
    rows = _read_csv(name, content, ("src", "ref", "hypo"))
    segments = []
    seen: dict[str, int] = {}
    for position, (line, row) in enumerate(rows, start=1):
        segment_id = (row.get("segment_id") or "").strip() or str(position)
        if segment_id in seen:
            raise RequestError(f"{name} line {line}: segment_id '{segment_id}' repeats line {seen[segment_id]}.")
        seen[segment_id] = line
        human = None
        if "score" in row and (row.get("score") or "").strip():
            human = _number(name, line, "score", row["score"])
        segments.append(Segment(segment_id, _text(name, line, "src", row), _text(name, line, "ref", row),
                                _text(name, line, "hypo", row), human, (row.get("group") or "").strip() or None))
    if len(segments) < 2:
        raise RequestError(f"{name}: has only one segment; DATScore's Eq. 3 weights are correlations over "
                           "segments and need at least 2.")
    return SegmentSet(Path(name).name, tuple(segments))


def check_languages(src_lang: str, tgt_lang: str) -> tuple[str, str]:
    from fairness_core.translation.directions import augmentation_languages

    src, tgt = src_lang.strip().lower(), tgt_lang.strip().lower()
    for flag, code in (("source", src), ("target", tgt)):
        if not code.isalpha() or not 2 <= len(code) <= 3:
            raise RequestError(f"the {flag} language must be an ISO 639-1 code such as 'fr' or 'en' (got "
                               f"{quoted(code)}).")
    try:
        augmentation_languages(src, tgt)
    except ValueError as error:
        raise RequestError(f"{error}.") from None
    return src, tgt


@dataclass(frozen=True)
class ScoreRequest:
    """One DATScore pipeline run: segments, languages, backbone and the translation length."""

    segments: SegmentSet
    src_lang: str
    tgt_lang: str
    model: str
    max_new_tokens: int = 64

    def __post_init__(self) -> None:
        if not 1 <= self.max_new_tokens <= MAX_TRANSLATION_TOKENS:
            raise RequestError(f"max_new_tokens must be between 1 and {MAX_TRANSLATION_TOKENS} "
                               f"(got {self.max_new_tokens}).")
        check_languages(self.src_lang, self.tgt_lang)
        if not self.model.strip():
            raise RequestError("no model given: name a preset, a hub id or a local directory.")


def preset_unavailable(model: str) -> str | None:
    """One sentence when `model` is a shipped preset that cannot run here (missing package, no network), else
    None: the page disables Score and says why before anything starts."""
    from fairness_core.models.presets import availability, find_preset

    preset = find_preset(model)
    if preset is None:
        return None
    found = availability(preset)
    return None if found.usable else f"{preset.label} is unavailable here: {found.reason}."


def endpoint_problem(model: str) -> str | None:
    """For an OpenAI-compatible endpoint as the backbone: one sentence on why DATScore cannot use it (it
    returns no prompt log-probs, or cannot be reached), else None; None for any other model (asks nothing)."""
    from fairness_core.models.endpoint import is_endpoint

    if not is_endpoint(model):
        return None
    from fairness_core.models.interfaces import ModelUnavailableError
    from fairness_core.translation.backbones import load_backbone

    try:
        load_backbone(model)  # connects once per process (the model cache) and checks prompt log-probs
    except ModelUnavailableError as error:
        return str(error)
    return None


def backbone_name(backbone: Mapping[str, Any]) -> str | None:
    """The backbone as people name it: the model source, or "<served model> @ <host>" for an endpoint."""
    model = backbone.get("model") or {}
    if model.get("api") == "openai-compatible":
        return f"{model.get('model')} @ {model.get('host')}"
    return model.get("source")
