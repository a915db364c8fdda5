"""Where things live on disk. Every path can be overridden by an environment variable."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

STORE_ENV = "FAIRNESS_LAB_STORE"
STORE_ROOT_ENV = "FAIRNESS_LAB_STORE_ROOT"
STORE_TIMEOUT_ENV = "FAIRNESS_LAB_STORE_TIMEOUT"
SERVED_ENV = "FAIRNESS_LAB_SERVED"
CACHE_ENV = "FAIRNESS_LAB_CACHE"
ENDPOINTS_ENV = "FAIRNESS_LAB_ENDPOINTS"
HONEST_LEXICON_ENV = "FAIRNESS_LAB_HONEST_LEXICON"
MAX_MODELS_ENV = "FAIRNESS_LAB_MAX_MODELS"
PUBLIC_URL_ENV = "FAIRNESS_LAB_PUBLIC_URL"
DEFAULT_MAX_MODELS = 8


def store_path() -> Path:
    """The DuckDB run store: `$FAIRNESS_LAB_STORE`, else `data/runs.duckdb` in the repository."""
    configured = os.environ.get(STORE_ENV)
    return Path(configured).expanduser() if configured else REPO_ROOT / "data" / "runs.duckdb"


def store_root() -> Path:
    """The only folder whose stores the app's sidebar may open: `$FAIRNESS_LAB_STORE_ROOT`, else `data/`."""
    configured = os.environ.get(STORE_ROOT_ENV)
    return Path(configured).expanduser() if configured else REPO_ROOT / "data"


def store_lock_timeout_s() -> float:
    """How long a store operation waits for another process's lock: `$FAIRNESS_LAB_STORE_TIMEOUT`, else 60 s."""
    configured = os.environ.get(STORE_TIMEOUT_ENV, "").strip()
    try:
        seconds = float(configured) if configured else 60.0
    except ValueError:
        seconds = 60.0
    return seconds if seconds >= 0 and seconds == seconds else 60.0


def served() -> bool:
    """True when the app is served for others (`FAIRNESS_LAB_SERVED=1`): visitors cannot pick a store file."""
    return os.environ.get(SERVED_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def public_url() -> str:
    """The address students and colleagues reach the app at (`$FAIRNESS_LAB_PUBLIC_URL`, e.g.
    `http://lab.school.example:8501`), for the presenter view's share link; "" when not set."""
    return os.environ.get(PUBLIC_URL_ENV, "").strip()


def endpoints_path() -> Path:
    """The configured OpenAI-compatible endpoints: `$FAIRNESS_LAB_ENDPOINTS`, else `endpoints.toml` in the
    repository (docs/endpoints.md). Written by whoever runs the app or the CLI, never by a visitor."""
    configured = os.environ.get(ENDPOINTS_ENV)
    return Path(configured).expanduser() if configured else REPO_ROOT / "endpoints.toml"


def honest_lexicon_path() -> Path | None:
    """The HurtLex file the server's owner chose for the honest scorer: `$FAIRNESS_LAB_HONEST_LEXICON`, else None.

    In a served app this is the only lexicon: a visitor cannot name a server file (docs/SECURITY.md)."""
    configured = os.environ.get(HONEST_LEXICON_ENV, "").strip()
    return Path(configured).expanduser() if configured else None
def max_models() -> int:
    """How many models a process keeps loaded (least recently used let go first): `$FAIRNESS_LAB_MAX_MODELS`
    (a whole number >= 1), else 8."""
    text = os.environ.get(MAX_MODELS_ENV, "").strip()
    try:
        value = int(text) if text else DEFAULT_MAX_MODELS
    except ValueError:
        return DEFAULT_MAX_MODELS
    return value if value >= 1 else DEFAULT_MAX_MODELS


def cache_dir() -> Path:
    """Derived artefacts we can rebuild (converted GGUF checkpoints, file hashes)."""
    configured = os.environ.get(CACHE_ENV)
    base = Path(configured).expanduser() if configured else Path.home() / ".cache" / "fairness-lab"
    base.mkdir(parents=True, exist_ok=True)
    return base


def project_data_dir() -> Path:
    """Small data the project writes itself (demo sets, templates)."""
    return REPO_ROOT / "data"


def nltk_data_dir() -> Path:
    """NLTK resources installed by the set-up script (WordNet for METEOR)."""
    return REPO_ROOT / ".nltk_data"


def ensure_nltk_path() -> None:
    """Make NLTK find the WordNet the set-up installed, without the user exporting NLTK_DATA."""
    target = str(nltk_data_dir())
    current = os.environ.get("NLTK_DATA", "")
    if target not in current.split(os.pathsep):
        os.environ["NLTK_DATA"] = os.pathsep.join(p for p in (target, current) if p)
    try:
        import nltk.data
    except ImportError:
        return
    if target not in nltk.data.path:
        nltk.data.path.insert(0, target)
