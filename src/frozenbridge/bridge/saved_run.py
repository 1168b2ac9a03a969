"""A trained run that describes itself: `save_run(dir, ...)` writes the connector's weights, any LoRA adapter and a
config.json naming the encoder (name, revision, features, layer, grid), the language model (name, revision) and
the connector's shape, as every saved module is written (core.saved_module); `load_run(dir)` alone rebuilds the
model from them, with no params.yaml.

    run/config.json      what the run was trained on, how the connector is shaped (and how it asks for a caption),
                         the connector's weights digest
    run/connector.pt     the connector's state_dict
    run/lora/            the peft adapter (LoRA runs only), its base model named as params.yaml names it
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import torch

from frozenbridge.bridge.design import Design, rebuild
from frozenbridge.bridge.lora import load_lora, save_lora
from frozenbridge.bridge.model import VLM
from frozenbridge.core import saved_module
from frozenbridge.core.backbones.language import LanguageModel, load_language
from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.saved_module import write_module

log = logging.getLogger("frozenbridge.bridge")
CONFIG, WEIGHTS, LORA = "config.json", "connector.pt", "lora"
ENCODER_KEYS = ("name", "revision", "features", "layer", "grid", "width", "image_size")


def encoder_config(feature_meta: dict) -> dict:
    """The encoder's description from a feature cache's metadata (frozenbridge.core.feature_cache)."""
    return {"name": feature_meta["encoder"], **{k: feature_meta[k] for k in ENCODER_KEYS[1:]}}


def run_config(connector: Design, encoder: dict, lm: LanguageModel, lora: dict | None = None,
               captioning: dict | None = None) -> dict:
    config = {"encoder": encoder, "language": {"name": lm.name, "revision": lm.revision},
              "design": connector.design, "connector": connector.config(), "lora": lora}
    return config if captioning is None else {**config, "captioning": captioning}


def save_run(directory: Path, connector: Design, encoder: dict, lm: LanguageModel, peft_model=None,
             lora: dict | None = None, captioning: dict | None = None) -> None:
    """Write the run into `directory` (which exists; callers make it atomically). `encoder` is
    `encoder_config(feature metadata)`; `lora` ({rank, alpha}) describes `peft_model` when there is one;
    `captioning` ({prompt, picture: "after_prompt"}) is how a run that was not trained on the shapes study's
    "Image: <picture>\nCaption:" asks for a caption."""
    directory = Path(directory)
    if peft_model is not None:
        save_lora(peft_model, directory / LORA, lm.name)
    config = run_config(connector, encoder, lm, lora if peft_model is not None else None, captioning)
    write_module(directory, connector.state_dict(), config, weights=WEIGHTS)


def read_config(directory: Path) -> dict:
    return saved_module.read_config(directory, "train it first (`dvc repro`)", missing="no saved run here")


def load_connector(directory: Path, config: dict | None = None) -> Design:
    """The trained connector of a saved run, on the CPU."""
    config = config or read_config(directory)
    state = saved_module.read_weights(directory, "run `dvc repro` to train it", WEIGHTS, "no trained connector here")
    try:
        connector = rebuild(config.get("design", "mlp"), config["connector"])  # runs saved before designs: mlp
        connector.load_state_dict(state)
    except (RuntimeError, KeyError, TypeError) as err:
        raise FrozenbridgeError(f"{Path(directory) / WEIGHTS}: unreadable connector ({err}); retrain the run") from None
    return connector


@dataclass
class SavedRun:
    config: dict
    model: VLM

    def encoder(self):
        """The frozen encoder the run was trained on (for new pictures; cached features need none)."""
        from frozenbridge.core.backbones.vision import load_vision

        e = self.config["encoder"]
        return load_vision(e["name"], e["features"], e["layer"], e["image_size"]).to(self.model.device)


def load_run(directory: Path, device: torch.device | None = None, bf16: bool | None = None,
             lm: LanguageModel | None = None) -> SavedRun:
    """Rebuild a saved run: its language model (loaded by the name it was saved under, unless `lm` is given),
    its LoRA adapter injected when it has one, its connector; on `device` (default: CPU, or CUDA when available)
    in bf16 where the hardware has it unless `bf16` says (with `lm` given: the precision its weights are in)."""
    from frozenbridge.core.device import pick_device
    from frozenbridge.core.precision import prepare_frozen, use_bf16

    directory = Path(directory)
    config = read_config(directory)
    connector = load_connector(directory, config)
    if lm is None:
        device = device or pick_device("auto")
        bf16 = use_bf16("auto", device) if bf16 is None else bf16
        lm = load_language(config["language"]["name"], key=f"{directory / CONFIG}: language.name",
                           dtype=torch.bfloat16 if bf16 else torch.float32)
        prepare_frozen(lm.model, device, bf16)
    elif lm.name != config["language"]["name"]:
        raise FrozenbridgeError(f"{directory}: trained with language model {config['language']['name']!r}, "
                                f"not {lm.name!r}")
    if lm.revision != config["language"]["revision"]:
        log.warning("%s: trained on %s revision %s, loaded revision %s", directory, lm.name,
                    config["language"]["revision"], lm.revision)
    if config.get("lora"):
        load_lora(lm, directory / LORA)
    weights = next(lm.model.parameters())
    device = device or weights.device
    if bf16 is None:
        bf16 = weights.dtype == torch.bfloat16
    return SavedRun(config, VLM(lm, connector.to(device), device, bool(bf16)))
