"""Paired examples for metric-bias: the data model, validation, importers and saved versions.

A pair is two candidates that differ only in identity words plus a neutral reference. Importers
turn user files into pairs and reject bad input with a message naming the file and the row, before
anything reaches the run store.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from fairness_core import config

#: Uploads larger than this are refused before parsing (the paper's largest file is ~60 kB).
MAX_FILE_BYTES = 10 * 1024 * 1024
FORMATS = ("metric-fairness", "pairs", "winobias", "crows-pairs", "demo")


class PairDataError(ValueError):
    """Bad paired data; the message names the file and, where it applies, the row."""


@dataclass(frozen=True)
class Pair:
    """One paired example ⟨(candidate1, reference), (candidate2, reference2 or reference)⟩."""

    item: str
    candidate1: str
    candidate2: str
    reference: str
    attribute: str
    #: 1 or 2 when we know which candidate carries the stereotype, else None
    stereotypical: int | None = None
    #: the released TSV sometimes gives the second row of a pair its own reference; we keep it
    reference2: str | None = None
    #: how the reference was made (WinoBias: "coreference"; CrowS-Pairs: drop/replace/abstract/none)
    rule: str = ""
    source: str = ""

    def reference_for(self, candidate: int) -> str:
        return self.reference2 if candidate == 2 and self.reference2 else self.reference


@dataclass(frozen=True)
class PairDataset:
    name: str
    pairs: tuple[Pair, ...]
    licence: str = "project-written"
    description: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    def content_hash(self) -> str:
        """SHA-256 of the pairs' canonical JSON: any edit to any text makes a new version."""
        payload = json.dumps([asdict(p) for p in self.pairs], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    @property
    def attributes(self) -> list[str]:
        return sorted({p.attribute for p in self.pairs})

    def __len__(self) -> int:
        return len(self.pairs)

    def to_records(self) -> list[dict]:
        return [asdict(p) for p in self.pairs]

    def with_references(self, references: dict[str, str]) -> PairDataset:
        """A new version in which the pairs named in `references` (item -> text) get new references."""
        def edit(pair: Pair) -> Pair:
            text = " ".join(str(references.get(pair.item, pair.reference) or "").split())
            if pair.item not in references or text == pair.reference:
                return pair  # untouched rows keep everything, including a second per-row reference
            rule = pair.rule if pair.rule.endswith("edited") else (f"{pair.rule}+edited" if pair.rule else "edited")
            return replace(pair, reference=text, reference2=None, rule=rule)  # one reference for both now

        changed = tuple(edit(p) for p in self.pairs)
        dataset = replace(self, pairs=changed)
        validate(dataset.pairs, self.name)
        return dataset


def merge(datasets: Sequence[PairDataset], name: str | None = None) -> PairDataset:
    """Several files (one attribute each, in the released format) as one dataset."""
    if len(datasets) == 1:
        return datasets[0]
    pairs = tuple(p for d in datasets for p in d.pairs)
    seen: set[str] = set()
    for p in pairs:
        if p.item in seen:
            raise PairDataError(f"pair id {p.item!r} occurs in more than one of the given files")
        seen.add(p.item)
    licences = sorted({d.licence for d in datasets})
    return PairDataset(name or "+".join(d.name for d in datasets), pairs, licence="; ".join(licences),
                       notes=tuple(n for d in datasets for n in d.notes))


def validate(pairs: Iterable[Pair], filename: str, rows: Sequence[str] | None = None) -> None:
    """Reject empty texts and identical candidates. `rows` gives each pair's row label for messages."""
    pairs = list(pairs)
    if not pairs:
        raise PairDataError(f"{filename}: no pairs found")
    for index, pair in enumerate(pairs):
        where = f"{filename}, {rows[index] if rows else f'pair {pair.item}'}"
        for label, text in (("candidate1", pair.candidate1), ("candidate2", pair.candidate2),
                            ("reference", pair.reference)):
            if not isinstance(text, str) or not text.strip():
                raise PairDataError(f"{where}: {label} is empty")
        if pair.candidate1.strip() == pair.candidate2.strip():
            raise PairDataError(f"{where}: the two candidates are identical, so there is no gap to measure")
        if pair.stereotypical not in (None, 1, 2):
            raise PairDataError(f"{where}: stereotypical must be 1, 2 or empty (got {pair.stereotypical!r})")


def _read_text(data: bytes | str | Path, filename: str) -> str:
    if isinstance(data, Path | str) and not isinstance(data, bytes):
        path = Path(data)
        try:
            size = path.stat().st_size
        except OSError as error:
            raise PairDataError(f"{filename}: cannot read the file ({error.strerror})") from error
        if size > MAX_FILE_BYTES:
            raise PairDataError(f"{filename}: file is {size / 1e6:.0f} MB; the limit is "
                                f"{MAX_FILE_BYTES / 1e6:.0f} MB for paired data")
        data = path.read_bytes()
    if len(data) > MAX_FILE_BYTES:
        raise PairDataError(f"{filename}: file is {len(data) / 1e6:.0f} MB; the limit is "
                            f"{MAX_FILE_BYTES / 1e6:.0f} MB for paired data")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise PairDataError(f"{filename}, line {line}: not UTF-8 text (byte 0x{data[error.start]:02x} "
                            f"at offset {error.start}); save the file as UTF-8") from error
    return text.removeprefix("\ufeff")


def _clean(cell: str | None) -> str:
    """Strip whitespace and CSV double quotes that wrap a cell but are not part of the text."""
    text = (cell or "").strip()
    while len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        text = text[1:-1].replace('""', '"').strip()
    return " ".join(text.split())


def read_metric_fairness(data: bytes | str | Path, filename: str | None = None,
                         attribute: str | None = None) -> PairDataset:
    """The paper's released `<attribute>.tsv`: header with `candidate`, `reference`, optional score
    columns; rows 2k and 2k+1 (after the header) are one pair; the attribute is the file stem.

    Quirks handled: a trailing tab on every line (an empty last column), CRLF endings and no final
    newline, cells wrapped in CSV double quotes, and pairs whose two rows carry different
    references (each candidate keeps its own reference; see `Pair.reference2`).
    """
    filename = filename or (Path(data).name if not isinstance(data, bytes) else "upload.tsv")
    attribute = attribute or Path(filename).stem
    text = _read_text(data, filename)
    records = list(csv.reader(io.StringIO(text, newline=""), delimiter="\t"))
    # csv gives [] for blank lines; a file may end with one or with whitespace-only lines
    numbered = [(number, row) for number, row in enumerate(records, start=1) if any(c.strip() for c in row)]
    if not numbered:
        raise PairDataError(f"{filename}: the file is empty")
    header = [_clean(c).lower() for c in numbered[0][1]]
    for needed in ("candidate", "reference"):
        if needed not in header:
            raise PairDataError(f"{filename}, line {numbered[0][0]}: missing column {needed!r} "
                                f"(header has: {', '.join(h for h in header if h) or 'nothing'})")
    c_col, r_col = header.index("candidate"), header.index("reference")
    body = numbered[1:]
    if len(body) % 2:
        raise PairDataError(f"{filename}, line {body[-1][0]}: odd number of data rows ({len(body)}); "
                            "rows must come in pairs (2k, 2k+1)")
    score_columns = [h for i, h in enumerate(header) if h and i not in (c_col, r_col)]
    pairs, labels, notes = [], [], []
    for k in range(0, len(body), 2):
        (line1, row1), (line2, row2) = body[k], body[k + 1]
        cells = []
        for line, row in ((line1, row1), (line2, row2)):
            if len(row) <= max(c_col, r_col):
                raise PairDataError(f"{filename}, line {line}: row has {len(row)} columns; "
                                    f"expected at least {max(c_col, r_col) + 1}")
            cells.append((_clean(row[c_col]), _clean(row[r_col])))
        (cand1, ref1), (cand2, ref2) = cells
        for line, cand, ref in ((line1, cand1, ref1), (line2, cand2, ref2)):
            if not cand:
                raise PairDataError(f"{filename}, line {line}: candidate is empty")
            if not ref:
                raise PairDataError(f"{filename}, line {line}: reference is empty")
        pairs.append(Pair(item=f"{attribute}-{k // 2:04d}", candidate1=cand1, candidate2=cand2, reference=ref1,
                          reference2=ref2 if ref2 != ref1 else None, attribute=attribute,
                          source=f"{filename} lines {line1}-{line2}"))
        labels.append(f"lines {line1}-{line2}")
    different = sum(p.reference2 is not None for p in pairs)
    if different:
        notes.append(f"{filename}: {different} pair(s) carry a different reference on each row; each candidate "
                     "is scored against its own row's reference")
    if score_columns:
        notes.append(f"{filename}: stored score columns ignored ({', '.join(score_columns)}); scores are recomputed")
    validate(pairs, filename, labels)
    return PairDataset(attribute, tuple(pairs), licence="user-supplied (Metric-Fairness release format)",
                       notes=tuple(notes))


_TRUE_STEREO = {"1": 1, "candidate1": 1, "cand1": 1, "2": 2, "candidate2": 2, "cand2": 2, "": None,
                "none": None, "nan": None}


def read_pairs_table(data: bytes | str | Path, filename: str | None = None) -> PairDataset:
    """CSV / TSV / JSONL with candidate1, candidate2, reference[, attribute, stereotypical]."""
    filename = filename or (Path(data).name if not isinstance(data, bytes) else "upload.csv")
    text = _read_text(data, filename)
    suffix = Path(filename).suffix.lower()
    rows: list[tuple[str, dict]] = []
    if suffix in (".jsonl", ".ndjson"):
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise PairDataError(f"{filename}, line {number}: not valid JSON ({error.msg})") from error
            if not isinstance(record, dict):
                raise PairDataError(f"{filename}, line {number}: expected a JSON object")
            rows.append((f"line {number}", {str(k).lower(): v for k, v in record.items()}))
    else:
        delimiter = "\t" if suffix in (".tsv", ".tab") else ","
        reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
        fields = [f.strip().lower() for f in (reader.fieldnames or []) if f]
        for needed in ("candidate1", "candidate2", "reference"):
            if needed not in fields:
                raise PairDataError(f"{filename}, line 1: missing column {needed!r} (header has: "
                                    f"{', '.join(fields) or 'nothing'})")
        for record in reader:
            clean = {str(k).strip().lower(): v for k, v in record.items() if k}
            if not any((v or "").strip() for v in clean.values() if isinstance(v, str)):
                continue
            rows.append((f"line {reader.line_num}", clean))
    if not rows:
        raise PairDataError(f"{filename}: no pairs found")
    pairs, labels = [], []
    stem = Path(filename).stem
    for index, (label, record) in enumerate(rows):
        for needed in ("candidate1", "candidate2", "reference"):
            if needed not in record:
                raise PairDataError(f"{filename}, {label}: missing column {needed!r}")
        raw_stereo = str(record.get("stereotypical") if record.get("stereotypical") is not None else "")
        key = raw_stereo.strip().lower().removesuffix(".0")
        if key not in _TRUE_STEREO:
            raise PairDataError(f"{filename}, {label}: stereotypical must be 1, 2 or empty (got {raw_stereo!r})")
        pairs.append(Pair(item=str(record.get("id") or f"{stem}-{index:04d}"),
                          candidate1=_clean(str(record.get("candidate1") or "")),
                          candidate2=_clean(str(record.get("candidate2") or "")),
                          reference=_clean(str(record.get("reference") or "")),
                          attribute=_clean(str(record.get("attribute") or "")) or stem,
                          stereotypical=_TRUE_STEREO[key], source=f"{filename} {label}"))
        labels.append(label)
    validate(pairs, filename, labels)
    return PairDataset(stem, tuple(pairs), licence="user-supplied")


def read_file(path: str | Path, fmt: str, data: bytes | None = None) -> PairDataset:
    """Dispatch one user file by format ("metric-fairness" or "pairs")."""
    name = Path(path).name
    source: bytes | Path = data if data is not None else Path(path)
    if fmt == "metric-fairness":
        return read_metric_fairness(source, name)
    if fmt == "pairs":
        return read_pairs_table(source, name)
    raise PairDataError(f"{name}: format {fmt!r} is not a file format; use metric-fairness or pairs")


# -- saved versions (content-hashed) -----------------------------------------------------------
def versions_dir(store_path: Path | None = None) -> Path:
    """Edited datasets live next to the run store, so a test's isolated store isolates them too."""
    return (store_path or config.store_path()).parent / "metric_bias_datasets"


def save_version(dataset: PairDataset, directory: Path | None = None) -> Path:
    """Write `<name>-<hash12>.jsonl` (idempotent: the same content gives the same file)."""
    directory = directory or versions_dir()
    directory.mkdir(parents=True, exist_ok=True)
    digest = dataset.content_hash()[:12]
    target = directory / f"{dataset.name}-{digest}.jsonl"
    if not target.exists():
        header = {"name": dataset.name, "licence": dataset.licence, "description": dataset.description,
                  "hash": dataset.content_hash()}
        lines = [json.dumps({"dataset": header}, ensure_ascii=False)]
        lines += [json.dumps(record, ensure_ascii=False) for record in dataset.to_records()]
        staging = target.with_suffix(".partial")
        staging.write_text("\n".join(lines) + "\n", encoding="utf-8")
        staging.replace(target)
    return target


def load_version(path: Path) -> PairDataset:
    """Read a saved version; any damage is one `PairDataError` sentence naming the file and line."""
    unreadable = f"{path.name} is not a readable saved dataset version"
    try:
        if path.stat().st_size > MAX_FILE_BYTES * 4:
            raise PairDataError(f"{unreadable} (larger than {MAX_FILE_BYTES * 4 // 2**20} MB); nothing was loaded")
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        reason = "not UTF-8 text" if isinstance(error, UnicodeDecodeError) else (error.strerror or str(error))
        raise PairDataError(f"{unreadable} ({reason}); nothing was loaded") from error
    line_number = 1
    try:
        if not lines:
            raise ValueError("the file is empty")
        header = json.loads(lines[0])["dataset"]
        name, digest = str(header["name"]), str(header["hash"])
        records = []
        for offset, line in enumerate(lines[1:]):
            line_number = offset + 2  # named in the message if this line is bad
            if line.strip():
                record = json.loads(line)
                if not isinstance(record, dict):
                    raise ValueError("a record is not a JSON object")
                unknown = sorted(set(record) - set(Pair.__dataclass_fields__))
                if unknown:
                    raise ValueError(f"unexpected field {unknown[0]!r}")
                for text_field in ("item", "candidate1", "candidate2", "reference", "attribute"):
                    if not isinstance(record.get(text_field), str):
                        raise ValueError(f"{text_field} must be text")
                records.append(Pair(**record))
        pairs = tuple(records)
        dataset = PairDataset(name, pairs, licence=str(header.get("licence", "")),
                              description=str(header.get("description", "")))
    except (ValueError, KeyError, TypeError) as error:
        reason = f"missing field {error}" if isinstance(error, KeyError) else str(error).splitlines()[0][:120]
        raise PairDataError(f"{unreadable} (line {line_number}: {reason}); nothing was loaded") from error
    validate(dataset.pairs, path.name)
    if dataset.content_hash() != digest:
        raise PairDataError(f"{path.name}: content does not match its recorded hash (file edited by hand?)")
    return dataset


def list_versions(directory: Path | None = None) -> list[Path]:
    directory = directory or versions_dir()
    return sorted(directory.glob("*.jsonl")) if directory.exists() else []
