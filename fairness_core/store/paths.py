"""Which store files the app may open: the configured default, or a `.duckdb` file inside the store root.

The sidebar lets a local user switch stores; a visitor of a served app must not be able to make the server
create, read or probe files elsewhere. `resolve_store_choice` turns typed text into a path or raises
`StorePathError` with one sentence. The CLI does not use it: its user is the machine's own user.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from fairness_core import config
from fairness_core.store.store import StoreError

#: most file systems refuse longer names; checked before touching the disk
MAX_NAME_CHARS = 255
MAX_PATH_CHARS = 1024
STORE_SUFFIX = ".duckdb"
_ADDRESS = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")  # md:x, s3://…, http://…


class StorePathError(StoreError):
    """A store path the app refuses to open (outside the root, not a .duckdb file, malformed)."""


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def resolve_store_choice(text: str, root: Path | None = None, default: Path | None = None) -> Path:
    """The store file `text` names, confined to `root` (relative names are taken inside it).

    An empty text or the configured default store (`FAIRNESS_LAB_STORE`, chosen by whoever runs the server)
    is always allowed. Everything else must be a `.duckdb` file name inside `root`, following symlinks.
    """
    root = (root or config.store_root()).expanduser().resolve()
    default = (default or config.store_path()).expanduser()
    typed = text.strip()
    if not typed:
        return default
    if "\x00" in typed or any(ord(char) < 32 for char in typed):
        raise StorePathError("the store path contains control characters; type a plain file name")
    if len(typed) > MAX_PATH_CHARS:
        raise StorePathError(f"the store path is {len(typed)} characters long; at most {MAX_PATH_CHARS} are allowed")
    if _ADDRESS.match(typed) and not typed.startswith(("~", "/")):
        raise StorePathError(f"{typed[:80]!r} is an address, not a file path; the run store must be a local "
                             f"{STORE_SUFFIX} file inside {root}")
    candidate = Path(typed).expanduser()
    longest = max((len(part) for part in candidate.parts), default=0)
    if longest > MAX_NAME_CHARS:
        raise StorePathError(f"a name in the store path is {longest} characters long; at most {MAX_NAME_CHARS} "
                             "are allowed")
    if not candidate.is_absolute():
        candidate = root / candidate
    resolved = Path(os.path.realpath(candidate))
    if resolved == Path(os.path.realpath(default)):
        return default
    if not _inside(resolved, root):
        raise StorePathError(f"{typed[:120]} is outside the store folder {root}; choose a {STORE_SUFFIX} file "
                             f"inside it (the server's {config.STORE_ROOT_ENV} sets the folder)")
    if resolved.is_dir():
        raise StorePathError(f"{typed[:120]} is a folder; give a file name inside it, e.g. "
                             f"{Path(typed[:120]) / ('runs' + STORE_SUFFIX)}")
    if resolved.suffix != STORE_SUFFIX:
        raise StorePathError(f"{resolved.name[:120]} is not a run store: its name must end in {STORE_SUFFIX}")
    return resolved
