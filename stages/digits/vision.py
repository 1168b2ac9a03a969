"""Stage digits_vision: train the digit classifier, freeze it, cache every picture's vector once.

The classifier (784 -> digits.classifier.hidden, ReLU, -> 10) trains on the train split with Adam, seeded from
params.yaml `seed`; its test accuracy is the ceiling of the captions. Writes runs/digits/classifier/ (weights.pt,
config.json), data/digits/features/{train,test}.parquet (its last hidden layer, one vector a picture, in the
feature-cache format of the shapes study: encoder name, revision = weights digest, width) and
metrics/digits/classifier.json.
"""

import logging

import numpy as np
import torch

from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.feature_cache import encode_images
from frozenbridge.core.saved_module import save_module, weights_digest
from frozenbridge.core.seeds import seed_int
from frozenbridge.core.stage import require, run_cli, stage_parser
from frozenbridge.digits.data import mnist
from frozenbridge.digits.params import CLASSIFIER_STREAM, STUDY_STREAM, load_params
from frozenbridge.digits.paths import CLASSIFIER, FEATURES, METRICS, PICTURES, SPLITS
from frozenbridge.digits.training.classifier import Classifier, ClassifierEncoder, train_classifier

log = logging.getLogger("frozenbridge.digits")


def main() -> None:
    args = stage_parser(__doc__).parse_args()
    params = load_params(args.params)
    c = params.digits.classifier
    require(*(PICTURES / f"{s}.parquet" for s in SPLITS), stage="digits_data")
    train, test = (mnist.read(PICTURES / f"{s}.parquet") for s in SPLITS)
    x, y = torch.from_numpy(train.floats()), torch.from_numpy(train.labels)
    x_test, y_test = torch.from_numpy(test.floats()), torch.from_numpy(test.labels)
    seed = seed_int(params.seed, STUDY_STREAM, CLASSIFIER_STREAM)
    torch.manual_seed(seed)
    model = Classifier(c.hidden)
    history = train_classifier(model, x, y, c.epochs, c.batch_size, c.lr, seed, x_test, y_test)
    ceiling = history[-1]["test_accuracy"]
    log.info("digit classifier: test accuracy %.4f after %d epochs (the captions' ceiling)", ceiling, c.epochs)
    save_module(CLASSIFIER, model, {"hidden": list(c.hidden)})
    encoder = ClassifierEncoder(model, weights_digest(model))
    with atomic_path(FEATURES) as tmp:
        tmp.mkdir(parents=True)
        for name, digits in zip(SPLITS, (train, test)):
            pixels = digits.floats()
            batches = ((digits.ids[i:i + 1000], pixels[i:i + 1000]) for i in range(0, len(digits), 1000))
            encode_images(encoder, batches, len(digits), tmp / f"{name}.parquet", "float32", {"split": name},
                          f"vectors {name}")
    write_json(METRICS / "classifier.json", {
        "test_accuracy": ceiling, "parameters": sum(p.numel() for p in model.parameters()),
        "vector_width": model.width, "epochs": history, "chance": 0.1,
        "most_common_test_digit_share": round(float(np.bincount(test.labels).max() / len(test)), 6)})


if __name__ == "__main__":
    run_cli(main)
