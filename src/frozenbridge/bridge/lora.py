"""LoRA on the frozen language model through peft: attach a fresh adapter, save it under the model's params name,
load a saved one, and read or restore its weights for checkpoints."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from frozenbridge.core.backbones.language import LanguageModel


def attach_lora(lm: LanguageModel, rank: int, alpha: int, seed: int):
    """A rank-`rank` adapter on every linear layer of `lm.model`, injected in place (initialised from `seed`);
    returns the peft model, whose adapter weights are the only trainable parameters of the language model."""
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(seed)
    config = LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=0.0, target_modules="all-linear")
    peft_model = get_peft_model(lm.model, config)
    lm.model.eval()
    return peft_model


def trainable(lm: LanguageModel) -> list[torch.nn.Parameter]:
    return [p for p in lm.model.parameters() if p.requires_grad]


def save_lora(peft_model, directory: Path, base_name: str) -> None:
    """The adapter in peft's format; adapter_config.json names the base model by `base_name` (the name params.yaml
    gives it), not by the path it was loaded from on this machine, and lists its target modules sorted (peft writes
    them in a Python set's order, which changes with each process's string hashing), so the saved run is the same
    file everywhere and on every rerun."""
    for config in peft_model.peft_config.values():
        config.base_model_name_or_path = base_name
    peft_model.save_pretrained(directory)
    for path in Path(directory).rglob("adapter_config.json"):
        saved = json.loads(path.read_text())
        if isinstance(saved.get("target_modules"), list):
            saved["target_modules"] = sorted(saved["target_modules"])
            path.write_text(json.dumps(saved, indent=2, sort_keys=True))


def load_lora(lm: LanguageModel, directory: Path) -> bool:
    """Inject the adapter saved in `directory` into `lm.model`, if there is one."""
    if not Path(directory).is_dir():
        return False
    from peft import PeftModel

    PeftModel.from_pretrained(lm.model, directory)
    lm.model.eval()
    return True


def lora_state(peft_model) -> dict | None:
    from peft import get_peft_model_state_dict

    return None if peft_model is None else get_peft_model_state_dict(peft_model)


def set_lora_state(peft_model, state: dict) -> None:
    from peft import set_peft_model_state_dict

    set_peft_model_state_dict(peft_model, state)
