"""NLG Fairness Lab compute core: models, metrics, bias statistics, run store and jobs.

The core never imports Streamlit; every computation is callable from Python and the CLI.
"""

__version__ = "0.1.0"
