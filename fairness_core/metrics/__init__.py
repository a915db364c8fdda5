"""Text-generation metrics as plug-ins: `METRICS` (name -> class), `metric_from_request(name, **options)`.

Importing this package registers the built-in metrics (their modules import nothing heavy).
"""

from fairness_core.metrics import datscore, generation, learned, matching, ngram  # noqa: F401  (registers them)
from fairness_core.metrics.base import Metric, MetricOptionError, MetricOptions, state_hash
from fairness_core.metrics.registry import METRICS, metric_from_request, metric_names, metric_options, register_metric

__all__ = ["METRICS", "Metric", "MetricOptionError", "MetricOptions", "metric_from_request", "metric_names",
           "metric_options",
           "register_metric", "state_hash"]
