"""Translation scoring shared by the DATScore page and the DATScore-LM / BARTScore-LM metric plug-ins.

`directions` (the 8 directions centred on the hypothesis, augmentation languages), `weights` (Eq. 1-5
arithmetic of the DATScore paper), `backbones` (multilingual seq2seq and the offline LM variant). It sits in
the plug-in layer so that `fairness_core.metrics` can use it without importing a page package.
"""
