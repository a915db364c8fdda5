"""The reference for tests/models/test_jigsaw.py, run in its own process (Keras must pick its backend before it
is first imported): the toxic-comment-classifier package's *own* `model.py`, with its three `tensorflow.keras`
imports pointed at Keras 3 (torch backend) and nothing else changed, loads its weights and tokenizer.

    python tests/models/jigsaw_keras_reference.py < texts.json > outputs.json

Prints {"ids": [[token ids] per text], "batched": [[6 probabilities] per text], "classify": [{label: p} for the
first 5 texts through the package's own `classify`]}.
"""

import json
import os
import sys
import types
from pathlib import Path

os.environ["KERAS_BACKEND"] = "torch"
import importlib.util
import warnings

import keras

folder = Path(next(iter(importlib.util.find_spec("toxic_classifier").submodule_search_locations)))
source = (folder / "model.py").read_text()
source = source.replace("from tensorflow.keras.preprocessing.sequence import", "from keras.utils import")
source = source.replace("tensorflow.keras.", "keras.")
module = types.ModuleType("toxic_classifier_model_on_keras3")
module.__file__ = str(folder / "model.py")  # the package finds its weights next to this file
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # "skipping variable loading for optimizer": the optimizer is not used
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    classifier = module.ToxicCommentClassifier()

texts = json.load(sys.stdin)
ids = classifier.tokenizer.texts_to_sequences(texts)
padded = keras.utils.pad_sequences(ids, maxlen=module.MAXLEN)
batched = classifier.model.predict(padded, verbose=0, batch_size=64)
json.dump({"ids": ids, "batched": batched.tolist(), "classify": [classifier.classify(t) for t in texts[:5]]},
          sys.stdout)
