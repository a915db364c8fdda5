"""DATScore (data-augmented translation score) and its offline LM variant, DATScore-LM.

Modules: `directions` (the 8 directions, languages), `weights` (Eq. 1-5 arithmetic), `backbones` (seq2seq and
LM variant), `request` (inputs), `task` (stored pipeline), `summary` / `metaeval` (tables, CIs, ablations),
`synthetic` (the offline demo set). Importing the package imports nothing heavy.
"""
