"""DATScore (data-augmented translation score) and its offline LM variant, DATScore-LM.

The arithmetic and backbones live in `fairness_core.translation` (`directions`, `weights` with Eq. 1-5,
`backbones`), shared with the metric plug-ins. Here: `request` (inputs), `task` (stored pipeline),
`summary` / `metaeval` (tables, CIs, ablations), `synthetic` (the offline demo set).
Importing the package imports nothing heavy.
"""
