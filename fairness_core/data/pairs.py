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
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from fairness_core import config
from fairness_core.data.quoting import quoted, typed_text_problem

#: The one rule every importer follows for problems with single rows (files, WinoBias, CrowS-Pairs):
#: each kept or skipped row is counted in a note on the dataset; only a file that cannot be read at
#: all (or has no usable row) is an error.
ROW_RULES = ("a pair whose two candidates are identical is kept (its gap is 0, as in the paper's race.tsv); "
             "a row with an empty candidate or reference, a row that cannot be parsed, or a row without its "
             "partner is skipped; a repeated pair id is refused with its line numbers (ids are the unit every "
             "aggregate counts)")

#: Uploads larger than this are refused before parsing (the paper's largest file is ~60 kB).
MAX_FILE_BYTES = 10 * 1024 * 1024
#: a reference typed into the editor is a sentence or a short paragraph, never a file's worth of text
MAX_REFERENCE_CHARS = 5_000
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
    #: scores stored with the data (the released TSVs carry 29 metrics): (column, score1, score2); NaN = missing
    stored: tuple[tuple[str, float, float], ...] = ()

    def __post_init__(self) -> None:
        if self.stored and not isinstance(self.stored[0], tuple):  # from JSON: lists of lists
            object.__setattr__(self, "stored", tuple((str(n), float(a), float(b)) for n, a, b in self.stored))

    def record(self) -> dict:
        """The pair as a JSON-able dict; `stored` only when there are stored scores (keeps old hashes)."""
        out = asdict(self)
        if not self.stored:
            del out["stored"]
        return out

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
        payload = json.dumps([p.record() for p in self.pairs], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    @property
    def attributes(self) -> list[str]:
        return sorted({p.attribute for p in self.pairs})

    def __len__(self) -> int:
        return len(self.pairs)

    def to_records(self) -> list[dict]:
        return [p.record() for p in self.pairs]

    @property
    def stored_columns(self) -> list[str]:
        """Names of the score columns stored with the data, in file order."""
        return list(dict.fromkeys(name for p in self.pairs for name, _, _ in p.stored))

    def with_references(self, references: dict[str, str]) -> PairDataset:
        """A new version in which the pairs named in `references` (item -> text) get new references. A typed
        reference with control characters or over MAX_REFERENCE_CHARS is one sentence naming its pair."""
        def edit(pair: Pair) -> Pair:
            text = " ".join(str(references.get(pair.item, pair.reference) or "").split())
            if pair.item not in references or text == pair.reference:
                return pair  # untouched rows keep everything, including a second per-row reference
            problem = typed_text_problem(text, f"the reference of pair {pair.item!r}", MAX_REFERENCE_CHARS)
            if problem:
                raise PairDataError(problem)
            rule = pair.rule if pair.rule.endswith("edited") else (f"{pair.rule}+edited" if pair.rule else "edited")
            return replace(pair, reference=text, reference2=None, rule=rule)  # one reference for both now

        changed = tuple(edit(p) for p in self.pairs)
        # stored scores were computed against the old references, so an edited pair loses them
        changed = tuple(p if p.reference == old.reference else replace(p, stored=())
                        for p, old in zip(changed, self.pairs, strict=True))
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
    """Reject empty texts, bad stereotypical marks and repeated pair ids in data the project builds
    (importers of user files skip or keep odd rows by their stated rules before this runs).
    Identical candidates are allowed: such a pair is data with gap 0, as in the paper's race.tsv."""
    pairs = list(pairs)
    if not pairs:
        raise PairDataError(f"{filename}: no pairs found")
    for index, pair in enumerate(pairs):
        where = f"{filename}, {rows[index] if rows else f'pair {pair.item}'}"
        for label, text in (("candidate1", pair.candidate1), ("candidate2", pair.candidate2),
                            ("reference", pair.reference)):
            if not isinstance(text, str) or not text.strip():
                raise PairDataError(f"{where}: {label} is empty")
        if pair.stereotypical not in (None, 1, 2):
            raise PairDataError(f"{where}: stereotypical must be 1, 2 or empty (got {pair.stereotypical!r})")
    check_unique_ids(pairs, filename, rows)


def check_unique_ids(pairs: Sequence[Pair], filename: str, rows: Sequence[str] | None = None) -> None:
    """Pair ids are the unit every aggregate counts: a repeated id is refused with its rows."""
    where: dict[str, list[str]] = {}
    for index, pair in enumerate(pairs):
        where.setdefault(pair.item, []).append(rows[index] if rows else f"pair {index + 1}")
    repeated = {item: places for item, places in where.items() if len(places) > 1}
    if repeated:
        item, places = next(iter(repeated.items()))
        more = f" (and {len(repeated) - 1} more repeated id(s))" if len(repeated) > 1 else ""
        raise PairDataError(f"{filename}: pair id {item!r} occurs more than once ({', '.join(places)}){more}; "
                            "ids must be unique within a dataset")


def identical_note(pairs: Sequence[Pair], filename: str, rows: Sequence[str]) -> list[str]:
    same = [rows[i] for i, p in enumerate(pairs) if p.candidate1.strip() == p.candidate2.strip()]
    if not same:
        return []
    return [f"{filename}: {len(same)} pair(s) have identical candidates ({', '.join(same[:5])}"
            f"{', …' if len(same) > 5 else ''}); kept with gap 0, as in the paper"]


def _number(cell: str | None) -> float | None:
    """A score cell as a float; None when the cell is not a number (empty cells are NaN)."""
    text = (cell or "").strip()
    if not text:
        return math.nan
    try:
        return float(text)
    except ValueError:
        return None


def _read_text(data: bytes | Path, filename: str) -> str:
    """The file's text: `data` is the content (bytes, e.g. an upload) or a `Path` to read; a str is neither
    guessed as a path nor as content (issue 23: an upload holding a path must never read that file)."""
    if isinstance(data, str):
        raise TypeError("pass the content as bytes or the file as a pathlib.Path, not a str")
    if isinstance(data, Path):
        path = data
        try:
            if path.is_dir():
                raise PairDataError(f"{path}: is a folder, not a file")
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                raise PairDataError(f"{filename}: file is {size / 1e6:.0f} MB; the limit is "
                                    f"{MAX_FILE_BYTES / 1e6:.0f} MB for paired data")
            data = path.read_bytes()
        except OSError as error:
            # the path as given, not the bare name: "mem: cannot read the file" did not say which file
            raise PairDataError(f"{path}: cannot read the file ({error.strerror or type(error).__name__})") from None
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


def read_metric_fairness(data: bytes | Path, filename: str | None = None,
                         attribute: str | None = None) -> PairDataset:
    """The paper's released `<attribute>.tsv`: header with `candidate`, `reference` and score columns;
    rows 2k and 2k+1 (after the header) are one pair; the attribute is the file stem.

    Quirks handled: a trailing tab on every line (an empty last column), CRLF endings and no final
    newline, cells wrapped in CSV double quotes, and pairs whose two rows carry different references
    (each candidate keeps its own reference; see `Pair.reference2`). Every other column with a header
    and only numbers (empty cells allowed) is a stored score column, kept per pair in `Pair.stored`.

    Rules for odd rows (each counted in a note; only an unreadable file is an error): a pair with an
    identical candidate on both rows is kept (gap 0, as in the paper); a pair with an empty candidate
    or reference, or a row with too few columns, is skipped; an unpaired last row is skipped; a
    non-number in a score column makes that column not a score column.
    """
    filename = filename or (Path(data).name if not isinstance(data, bytes) else "upload.tsv")
    attribute = attribute or Path(filename).stem
    text = _read_text(data, filename)
    csv.field_size_limit(MAX_FILE_BYTES)
    records = list(csv.reader(io.StringIO(text, newline=""), delimiter="\t"))
    # csv gives [] for blank lines; a file may end with one or with whitespace-only lines
    numbered = [(number, row) for number, row in enumerate(records, start=1) if any(c.strip() for c in row)]
    if not numbered:
        raise PairDataError(f"{filename}: the file is empty")
    raw_header = [_clean(c) for c in numbered[0][1]]
    header = [h.lower() for h in raw_header]
    for needed in ("candidate", "reference"):
        if needed not in header:
            found = quoted(", ".join(h for h in header if h)) if any(header) else "nothing"
            raise PairDataError(f"{filename}, line {numbered[0][0]}: missing column {needed!r} (header has: {found})")
    c_col, r_col = header.index("candidate"), header.index("reference")
    body = numbered[1:]
    notes: list[str] = []
    if len(body) % 2:
        notes.append(f"{filename}: line {body[-1][0]} has no partner row (odd number of data rows, "
                     f"{len(body)}); skipped")
        body = body[:-1]
    score_cols = [i for i, h in enumerate(raw_header) if h and i not in (c_col, r_col)]
    numeric: dict[int, bool] = dict.fromkeys(score_cols, True)
    for _, row in body:
        for i in score_cols:
            if numeric[i] and i < len(row) and _number(row[i]) is None:
                numeric[i] = False
    score_cols = [i for i in score_cols if numeric[i]]
    not_numeric = [raw_header[i] for i, ok in numeric.items() if not ok]
    if not_numeric:
        notes.append(f"{filename}: column(s) {', '.join(not_numeric)} hold text, so they are not score columns")
    pairs, labels, skipped = [], [], []
    missing_scores = 0
    for k in range(0, len(body), 2):
        (line1, row1), (line2, row2) = body[k], body[k + 1]
        label = f"lines {line1}-{line2}"
        short = [line for line, row in ((line1, row1), (line2, row2)) if len(row) <= max(c_col, r_col)]
        if short:
            skipped.append(f"line {short[0]} has too few columns")
            continue
        (cand1, ref1), (cand2, ref2) = ((_clean(r[c_col]), _clean(r[r_col])) for r in (row1, row2))
        empty = [f"line {line}: {name} is empty" for line, cand, ref in ((line1, cand1, ref1), (line2, cand2, ref2))
                 for name, value in (("candidate", cand), ("reference", ref)) if not value]
        if empty:
            skipped.append(empty[0])
            continue
        stored = []
        for i in score_cols:
            a = _number(row1[i]) if i < len(row1) else math.nan
            b = _number(row2[i]) if i < len(row2) else math.nan
            missing_scores += int(not math.isfinite(a)) + int(not math.isfinite(b))
            stored.append((raw_header[i], a, b))
        pairs.append(Pair(item=f"{attribute}-{k // 2:04d}", candidate1=cand1, candidate2=cand2, reference=ref1,
                          reference2=ref2 if ref2 != ref1 else None, attribute=attribute,
                          source=f"{filename} {label}", stored=tuple(stored)))
        labels.append(label)
    if skipped:
        notes.append(f"{filename}: {len(skipped)} pair(s) skipped ({'; '.join(skipped[:3])}"
                     f"{'; …' if len(skipped) > 3 else ''})")
    if not pairs:
        raise PairDataError(f"{filename}: no usable pairs (every pair had an empty or missing cell)")
    notes += identical_note(pairs, filename, labels)
    different = sum(p.reference2 is not None for p in pairs)
    if different:
        notes.append(f"{filename}: {different} pair(s) carry a different reference on each row; each candidate "
                     "is scored against its own row's reference")
    if score_cols:
        notes.append(f"{filename}: {len(score_cols)} stored score column(s) available as metrics "
                     f"({', '.join(raw_header[i] for i in score_cols)})"
                     + (f"; {missing_scores} empty score cell(s) are missing values" if missing_scores else ""))
    validate(pairs, filename, labels)
    return PairDataset(attribute, tuple(pairs), licence="user-supplied (Metric-Fairness release format)",
                       notes=tuple(notes))


_TRUE_STEREO = {"1": 1, "candidate1": 1, "cand1": 1, "2": 2, "candidate2": 2, "cand2": 2, "": None,
                "none": None, "nan": None}
_TABLE_COLUMNS = ("id", "candidate1", "candidate2", "reference", "attribute", "stereotypical")


def _score_column_pairs(fields: Sequence[str]) -> list[tuple[str, str, str]]:
    """(name, column of candidate 1, column of candidate 2) for every `<name>_1` with a `<name>_2`."""
    found = []
    for column in fields:
        if column.endswith("_1") and column not in _TABLE_COLUMNS and column[:-2] + "_2" in fields:
            found.append((column[:-2], column, column[:-2] + "_2"))
    return found


def read_pairs_table(data: bytes | Path, filename: str | None = None) -> PairDataset:
    """CSV / TSV / JSONL with candidate1, candidate2, reference[, id, attribute, stereotypical] and
    optional stored scores as numeric column pairs `<metric>_1`, `<metric>_2`.

    Rules for odd rows (each counted in a note): a row with an empty candidate or reference, or a
    JSONL line that is not a JSON object, is skipped; identical candidates are kept (gap 0); an
    unknown stereotypical mark is read as unknown. A repeated id is refused with its line numbers.
    """
    filename = filename or (Path(data).name if not isinstance(data, bytes) else "upload.csv")
    text = _read_text(data, filename)
    suffix = Path(filename).suffix.lower()
    rows: list[tuple[str, dict]] = []
    skipped: list[str] = []
    if suffix in (".jsonl", ".ndjson"):
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                skipped.append(f"line {number} is not valid JSON ({error.msg})")
                continue
            if not isinstance(record, dict):
                skipped.append(f"line {number} is not a JSON object")
                continue
            rows.append((f"line {number}", {str(k).strip().lower(): v for k, v in record.items()}))
        fields = list(dict.fromkeys(k for _, r in rows for k in r))
    else:
        delimiter = "\t" if suffix in (".tsv", ".tab") else ","
        csv.field_size_limit(MAX_FILE_BYTES)
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        header = next(reader, [])
        fields = [f.strip().lower() for f in header]
        repeated = sorted({f for f in fields if f and fields.count(f) > 1})
        if repeated:
            raise PairDataError(f"{filename}, line 1: column {repeated[0]!r} appears more than once in the header")
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue
            rows.append((f"line {reader.line_num}", {f: (row[i] if i < len(row) else "")
                                                      for i, f in enumerate(fields) if f}))
    for needed in ("candidate1", "candidate2", "reference"):
        if needed not in fields:
            raise PairDataError(f"{filename}, line 1: missing column {needed!r} (header has: "
                                f"{quoted(', '.join(f for f in fields if f)) if any(fields) else 'nothing'})")
    if not rows:
        raise PairDataError(f"{filename}: no pairs found")
    score_pairs = _score_column_pairs(fields)
    not_numeric = {name for name, one, two in score_pairs for _, r in rows
                   if any(_number(None if r.get(c) is None else str(r.get(c))) is None for c in (one, two))}
    score_pairs = [s for s in score_pairs if s[0] not in not_numeric]
    pairs, labels = [], []
    unknown_stereo = []
    stem = Path(filename).stem
    given_ids = {str(record.get("id")).strip() for _, record in rows if record.get("id")}

    def generated_id(index: int) -> str:
        """`<stem>-0007`, or with a suffix when the file itself uses that id for another row."""
        candidate, extra = f"{stem}-{index:04d}", 0
        while candidate in given_ids:
            extra += 1
            candidate = f"{stem}-{index:04d}-{extra}"
        return candidate

    for index, (label, record) in enumerate(rows):
        texts = {name: _clean(str(record.get(name) if record.get(name) is not None else ""))
                 for name in ("candidate1", "candidate2", "reference")}
        empty = [name for name, value in texts.items() if not value]
        if empty:
            skipped.append(f"{label}: {empty[0]} is empty")
            continue
        raw_stereo = str(record.get("stereotypical") if record.get("stereotypical") is not None else "")
        key = raw_stereo.strip().lower().removesuffix(".0")
        if key not in _TRUE_STEREO:
            unknown_stereo.append(label)
        stored = tuple((name, _cell_number(record.get(one)), _cell_number(record.get(two)))
                       for name, one, two in score_pairs)
        pairs.append(Pair(item=str(record.get("id") or generated_id(index)).strip(),
                          candidate1=texts["candidate1"], candidate2=texts["candidate2"],
                          reference=texts["reference"],
                          attribute=_clean(str(record.get("attribute") or "")) or stem,
                          stereotypical=_TRUE_STEREO.get(key), source=f"{filename} {label}", stored=stored))
        labels.append(label)
    notes: list[str] = []
    if skipped:
        notes.append(f"{filename}: {len(skipped)} row(s) skipped ({'; '.join(skipped[:3])}"
                     f"{'; …' if len(skipped) > 3 else ''})")
    if not pairs:
        raise PairDataError(f"{filename}: no usable pairs (every row had an empty cell or was not readable)")
    check_unique_ids(pairs, filename, labels)
    if unknown_stereo:
        notes.append(f"{filename}: stereotypical is not 1, 2 or empty on {len(unknown_stereo)} row(s) "
                     f"({', '.join(unknown_stereo[:3])}); read as unknown")
    notes += identical_note(pairs, filename, labels)
    if score_pairs:
        notes.append(f"{filename}: {len(score_pairs)} stored score column pair(s) available as metrics "
                     f"({', '.join(name for name, _, _ in score_pairs)})")
    if not_numeric:
        notes.append(f"{filename}: column pair(s) {', '.join(sorted(not_numeric))} hold text, so they are not "
                     "score columns")
    validate(pairs, filename, labels)
    return PairDataset(stem, tuple(pairs), licence="user-supplied", notes=tuple(notes))


def _cell_number(value: object) -> float:
    if value is None:
        return math.nan
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    number = _number(str(value))
    return math.nan if number is None else number


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
                  "hash": dataset.content_hash(), "notes": list(dataset.notes)}
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
        notes = header.get("notes", [])
        if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
            raise ValueError("notes must be a list of text")
        dataset = PairDataset(name, pairs, licence=str(header.get("licence", "")),
                              description=str(header.get("description", "")), notes=tuple(notes))
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
