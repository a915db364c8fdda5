"""NLG Fairness Lab compute core: models, metrics, bias statistics, run store and jobs.

The core never imports Streamlit; every computation is callable from Python and the CLI.
"""

import os as _os

__version__ = "0.1.0"

#: oneDNN (and ideep inside torch) keep every compiled fp32 kernel for each matrix shape they meet, 1,024 of each
#: by default. Live batches of changing sizes met hundreds of shapes: a served app held +160 MiB after thirty
#: sessions left, and 30 generation calls of mixed sizes +87 MiB in one process; with 32 each, +11 MiB at the same
#: speed (13.2 s vs 12.9 s for the last 6 calls; docs/classroom.md). Read when the libraries start, so set
#: before torch loads; a value already in the environment wins.
PRIMITIVE_CACHE_CAPACITY = "32"
for _name in ("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "LRU_CACHE_CAPACITY"):
    _os.environ.setdefault(_name, PRIMITIVE_CACHE_CAPACITY)
