"""Test builders: tiny GGUF files, written with the gguf package's GGUFWriter the way llama.cpp's converter
(convert_hf_to_gguf.py) writes a Hugging Face checkpoint, so transformers' GGUF reader reads them back exactly.

`write_gguf(model_dir, out)` turns a save_pretrained Qwen2 or Llama directory with a byte-level BPE tokenizer (the
tiny models of frozenbridge.testing.tiny_models) into one .gguf: the hyperparameters as `<arch>.*` metadata, the
tokenizer as `tokenizer.ggml.*` (model "gpt2": tokens, token types, merges, eos/pad ids), the tensors under GGUF's
names (blk.N.attn_q.weight, ...; the name map is gguf's own, the one transformers inverts), in F32 or Q8_0. A Llama's
q/k projections are permuted as llama.cpp permutes them (transformers' reader undoes it). `tiny_gguf(root, arch)`
builds the source model and its GGUF; `write_unsupported_gguf(out, arch)` writes a valid GGUF whose architecture
transformers cannot read (for the refusal test; it holds one tensor and no model).

    python -m frozenbridge.testing.tiny_gguf DIR [--arch qwen2|llama] [--qtype F32|Q8_0]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

ARCHS = ("qwen2", "llama")
QTYPES = ("F32", "Q8_0")


def build_llama(path: Path, hidden: int = 64) -> None:
    """A tiny random Llama (untied lm_head, so the GGUF carries output.weight) with the tiny tokenizer."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from frozenbridge.testing.tiny_language import build_tokenizer

    tokenizer = build_tokenizer(path)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=512, tie_word_embeddings=False, rms_norm_eps=1e-5,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(path)


def _permute(weights: np.ndarray, n_head: int, n_head_kv: int | None) -> np.ndarray:
    """llama.cpp's LlamaModel.permute: HF's rotate-half q/k rows into GGUF's interleaved rope order."""
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return (weights.reshape(n_head, 2, weights.shape[0] // n_head // 2, *weights.shape[1:])
            .swapaxes(1, 2).reshape(weights.shape))


def _rope_theta(config) -> float:
    params = getattr(config, "rope_parameters", None) or {}
    return float(params.get("rope_theta", getattr(config, "rope_theta", 10000.0)))


def _add_tokenizer(writer, model_dir: Path, config) -> None:
    """The byte-level BPE of tokenizer.json as llama.cpp writes a "gpt2" tokenizer."""
    import gguf

    spec = json.loads((Path(model_dir) / "tokenizer.json").read_text())
    vocab = spec["model"]["vocab"]
    added = {t["content"]: t for t in spec.get("added_tokens", [])}
    for content, token in added.items():
        vocab.setdefault(content, token["id"])
    tokens = [None] * (max(vocab.values()) + 1)
    for token, index in vocab.items():
        tokens[index] = token
    if any(t is None for t in tokens):
        raise ValueError(f"{model_dir}: the vocabulary has holes; cannot write it as a GGUF token list")
    types = [int(gguf.TokenType.CONTROL) if t in added and added[t].get("special") else int(gguf.TokenType.NORMAL)
             for t in tokens]
    merges = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    if config.eos_token_id is not None:
        writer.add_eos_token_id(int(config.eos_token_id))
    if config.pad_token_id is not None:
        writer.add_pad_token_id(int(config.pad_token_id))


def write_gguf(model_dir: Path, out: Path, qtype: str = "F32") -> Path:
    """`model_dir` (a save_pretrained Qwen2 or Llama with tokenizer.json) as one GGUF file `out`, its 2-D weights
    in `qtype` (F32, or Q8_0: transformers dequantizes those on load), the 1-D ones (norms, biases) in F32."""
    import gguf
    from transformers import AutoModelForCausalLM

    if qtype not in QTYPES:
        raise ValueError(f"qtype {qtype!r}; expected one of {list(QTYPES)}")
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    config = model.config
    arch = config.model_type
    if arch not in ARCHS:
        raise ValueError(f"{model_dir}: model_type {arch!r}; this writer knows {list(ARCHS)}")
    n_head, n_kv = config.num_attention_heads, config.num_key_value_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // n_head

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(out, arch)
    writer.add_name(f"tiny-{arch}")
    writer.add_file_type(int(gguf.LlamaFileType.ALL_F32 if qtype == "F32" else gguf.LlamaFileType.MOSTLY_Q8_0))
    writer.add_context_length(config.max_position_embeddings)
    writer.add_embedding_length(config.hidden_size)
    writer.add_block_count(config.num_hidden_layers)
    writer.add_feed_forward_length(config.intermediate_size)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_kv)
    writer.add_rope_dimension_count(head_dim)
    writer.add_rope_freq_base(_rope_theta(config))
    writer.add_layer_norm_rms_eps(config.rms_norm_eps)
    writer.add_vocab_size(config.vocab_size)
    _add_tokenizer(writer, model_dir, config)

    arch_enum = {name: enum for enum, name in gguf.MODEL_ARCH_NAMES.items()}[arch]
    names = gguf.get_tensor_name_map(arch_enum, config.num_hidden_layers)
    tied = bool(getattr(config, "tie_word_embeddings", False))
    for hf_name, tensor in model.state_dict().items():
        if tied and hf_name == "lm_head.weight":
            continue  # llama.cpp writes output.weight only when it is not the embedding table
        base, suffix = hf_name.rsplit(".", 1)
        name = names.get_name(base)
        if name is None:
            raise ValueError(f"{model_dir}: no GGUF name for tensor {hf_name}")
        data = tensor.detach().float().numpy()
        if arch == "llama" and base.endswith("self_attn.q_proj"):
            data = _permute(data, n_head, n_head)
        elif arch == "llama" and base.endswith("self_attn.k_proj"):
            data = _permute(data, n_head, n_kv)
        data = np.ascontiguousarray(data, dtype=np.float32)
        if qtype == "Q8_0" and data.ndim == 2 and data.shape[-1] % 32 == 0:
            q8 = gguf.GGMLQuantizationType.Q8_0
            writer.add_tensor(f"{name}.{suffix}", gguf.quants.quantize(data, q8), raw_dtype=q8)
        else:
            writer.add_tensor(f"{name}.{suffix}", data)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out


def tiny_gguf(root: Path, arch: str = "qwen2", qtype: str = "F32") -> tuple[Path, Path]:
    """(the source model's directory, its GGUF): root/<arch>/ and root/<arch>-<qtype>.gguf."""
    from frozenbridge.testing.tiny_language import build_qwen2

    root = Path(root)
    source = root / arch
    if not (source / "config.json").is_file():
        (build_qwen2 if arch == "qwen2" else build_llama)(source)
    return source, write_gguf(source, root / f"{arch}-{qtype}.gguf", qtype)


def write_unsupported_gguf(out: Path, arch: str = "rwkv6") -> Path:
    """A well-formed GGUF whose general.architecture is `arch` (rwkv6: a real llama.cpp architecture transformers'
    GGUF reader lacks), with one small tensor; nothing could build a model from it."""
    import gguf

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(out, arch)
    writer.add_name(f"tiny-{arch}")
    writer.add_block_count(1)
    writer.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m frozenbridge.testing.tiny_gguf", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", type=Path, help="where to write <arch>/ and <arch>-<qtype>.gguf")
    ap.add_argument("--arch", choices=ARCHS, default="qwen2", help="the architecture of the tiny model (default qwen2)")
    ap.add_argument("--qtype", choices=QTYPES, default="F32",
                    help="how its weights are stored in the GGUF (default F32)")
    args = ap.parse_args()
    source, path = tiny_gguf(args.dir, args.arch, args.qtype)
    print(f"source: {source}\ngguf: {path}")


if __name__ == "__main__":
    main()
