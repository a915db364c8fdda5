"""Compare's readers moved to the seam below the studies (`fairness_core.reading.rows`, issue 42 §6): the names
stay here for scripts written against them (bench/, notebooks). New code imports `fairness_core.reading`."""

from fairness_core.reading.rows import *  # noqa: F403
from fairness_core.reading.rows import ReadError as CompareError  # noqa: F401
