"""The embedded demo set for the Metric bias page: templates × occupations × pronouns.

Written by the project (data/metric_bias/demo_templates.json, CC0) so the page shows real numbers on
first open without any download. candidate1 uses the male pronouns and candidate2 the female ones;
`stereotypical` is the candidate whose pronoun matches the occupation's stereotype.
"""

from __future__ import annotations

import json
from pathlib import Path

from fairness_core import config
from fairness_core.data.pairs import Pair, PairDataset, validate

TEMPLATES_PATH = config.project_data_dir() / "metric_bias" / "demo_templates.json"


def build(path: Path = TEMPLATES_PATH) -> PairDataset:
    spec = json.loads(path.read_text(encoding="utf-8"))
    male, female = spec["pronouns"]["male"], spec["pronouns"]["female"]
    pairs = []
    for t_index, template in enumerate(spec["templates"]):
        for group, occupations in spec["occupations"].items():
            for occupation in occupations:
                def fill(text: str, pronouns: dict[str, str], occupation: str = occupation) -> str:
                    return text.format(occupation=occupation, **pronouns)

                cand1, cand2 = fill(template["candidate"], male), fill(template["candidate"], female)
                pairs.append(Pair(
                    item=f"demo-t{t_index}-{occupation.replace(' ', '_')}",
                    candidate1=cand1, candidate2=cand2, reference=fill(template["reference"], male),
                    attribute="gender", stereotypical=1 if group.startswith("male") else 2,
                    rule="template", source=f"template {t_index} × {occupation}"))
    validate(pairs, path.name)
    return PairDataset("demo-gender", tuple(pairs), licence=spec["licence"], description=spec["about"])
