"""Test builders: tiny random-weight backbones saved with save_pretrained: a CLIP, a SigLIP and a Qwen2-style LM with
a tokenizer (and, for the family tests, ViT, DINOv2 with and without registers, and LayerNorm LMs: GPT-2, OPT,
GPT-NeoX, Phi).

They load through exactly the code path a hub id or local directory takes, so the whole pipeline can be exercised
in seconds with no download: `python -m frozenbridge.testing.tiny_models DIR` writes DIR/{clip,siglip,qwen2}.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

SPECIALS = ["<|endoftext|>", "<|pad|>"]
# The words the tiny tokenizer is trained on: the shapes study's colors, kinds and numbers (a test keeps them equal
# to shapes.data.vocab), so the tiny models tokenize its captions and questions as a real tokenizer would.
CORPUS_WORDS = ("red", "green", "blue", "yellow", "purple", "orange", "circle", "square", "triangle",
                "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def _corpus() -> list[str]:
    words = list(CORPUS_WORDS)
    text = "Image: Caption: Question: Answer: How many shapes are there? What color is the leftmost shape? "
    text += " ".join(f"a an {w}, and the {w}?" for w in words)
    return [text] * 4


def build_tokenizer(path: Path, end_with_eos: bool = False):
    """A byte-level BPE over the shapes study's words; `end_with_eos` appends <|endoftext|> to every text, as
    CLIP's tokenizer does (its text tower reads its output at that token)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(_corpus(), trainer)
    if end_with_eos:
        tok.post_processor = processors.TemplateProcessing(
            single=f"$A {SPECIALS[0]}", special_tokens=[(SPECIALS[0], tok.token_to_id(SPECIALS[0]))])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=SPECIALS[0], pad_token=SPECIALS[1])
    fast.save_pretrained(path)
    return fast


def build_qwen2(path: Path, hidden: int = 64) -> None:
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tokenizer = build_tokenizer(path)
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=512, tie_word_embeddings=True,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    Qwen2ForCausalLM(config).save_pretrained(path)


def _layernorm_config(family: str, vocab: int, tokenizer):
    """A 2-layer, 32-wide config of a LayerNorm causal-LM family (GPT-2, OPT, GPT-NeoX/Pythia, Phi)."""
    import transformers

    ids = {"eos_token_id": tokenizer.eos_token_id, "bos_token_id": tokenizer.eos_token_id,
           "pad_token_id": tokenizer.pad_token_id}
    if family == "gpt2":
        return transformers.GPT2Config(vocab_size=vocab, n_embd=32, n_layer=2, n_head=2, n_positions=256, **ids)
    common = {"vocab_size": vocab, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
              "max_position_embeddings": 256, **ids}
    if family == "opt":
        return transformers.OPTConfig(ffn_dim=64, word_embed_proj_dim=32, **common)
    if family == "gpt_neox":
        return transformers.GPTNeoXConfig(intermediate_size=64, **common)
    if family == "phi":
        return transformers.PhiConfig(intermediate_size=64, **common)
    raise ValueError(f"unknown family {family!r}; expected one of {list(LAYERNORM_FAMILIES)}")


LAYERNORM_FAMILIES = ("gpt2", "opt", "gpt_neox", "phi")


def build_layernorm_lm(path: Path, family: str) -> None:
    """A tiny random causal LM of a LayerNorm family, with the tiny tokenizer (the tests train and decode with it)."""
    from transformers import AutoModelForCausalLM

    tokenizer = build_tokenizer(path)
    torch.manual_seed(0)
    AutoModelForCausalLM.from_config(_layernorm_config(family, len(tokenizer), tokenizer)).save_pretrained(path)


def _vision_cfg(image_size: int, patch: int) -> dict:
    return dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                image_size=image_size, patch_size=patch)


def _text_cfg(path: Path) -> dict:
    """A one-layer text tower with the tiny tokenizer, saved beside it (the retrieval study embeds captions)."""
    tokenizer = build_tokenizer(path, end_with_eos=True)
    return dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                vocab_size=len(tokenizer), max_position_embeddings=64, pad_token_id=tokenizer.pad_token_id,
                eos_token_id=tokenizer.eos_token_id)


def build_clip(path: Path, image_size: int = 32, patch: int = 8) -> None:
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel

    text = _text_cfg(path)
    torch.manual_seed(0)
    CLIPModel(CLIPConfig(vision_config=_vision_cfg(image_size, patch), text_config=text,
                         projection_dim=24)).save_pretrained(path)
    CLIPImageProcessor(size={"shortest_edge": image_size},
                       crop_size={"height": image_size, "width": image_size}).save_pretrained(path)


def build_siglip(path: Path, image_size: int = 32, patch: int = 8) -> None:
    from transformers import SiglipConfig, SiglipImageProcessor, SiglipModel

    text = _text_cfg(path)
    torch.manual_seed(0)
    SiglipModel(SiglipConfig(vision_config=_vision_cfg(image_size, patch), text_config=text)).save_pretrained(path)
    SiglipImageProcessor(size={"height": image_size, "width": image_size}).save_pretrained(path)


def build_vit(path: Path, image_size: int = 32, patch: int = 8) -> None:
    """A ViT (one class token in front of the patches, a pooler on it)."""
    from transformers import ViTConfig, ViTImageProcessor, ViTModel

    torch.manual_seed(0)
    ViTModel(ViTConfig(**_vision_cfg(image_size, patch))).save_pretrained(path)
    ViTImageProcessor(size={"height": image_size, "width": image_size}).save_pretrained(path)


def build_dinov2(path: Path, registers: int = 0, image_size: int = 32, patch: int = 8) -> None:
    """A DINOv2 (class token, and `registers` register tokens when > 0, in front of the patches). Its processor
    resizes the short side to 1.25x and center-crops to `image_size`, as DINOv2's does (256 -> 224)."""
    import transformers
    from transformers import BitImageProcessor

    cfg = {k: v for k, v in _vision_cfg(image_size, patch).items() if k != "intermediate_size"}
    torch.manual_seed(0)
    if registers:
        model = transformers.Dinov2WithRegistersModel(
            transformers.Dinov2WithRegistersConfig(num_register_tokens=registers, **cfg))
    else:
        model = transformers.Dinov2Model(transformers.Dinov2Config(**cfg))
    model.save_pretrained(path)
    BitImageProcessor(size={"shortest_edge": image_size * 5 // 4},
                      crop_size={"height": image_size, "width": image_size},
                      do_center_crop=True).save_pretrained(path)


VISION_FAMILIES = {"clip": build_clip, "siglip": build_siglip, "vit": build_vit, "dinov2": build_dinov2,
                   "dinov2_with_registers": lambda path: build_dinov2(path, registers=4)}


def build_all(root: Path) -> dict[str, Path]:
    paths = {name: Path(root) / name for name in ("clip", "siglip", "qwen2")}
    build_clip(paths["clip"])
    build_siglip(paths["siglip"])
    build_qwen2(paths["qwen2"])
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", type=Path, help="where to write clip/, siglip/ and qwen2/")
    args = ap.parse_args()
    for name, path in build_all(args.dir).items():
        print(f"{name}: {path}")


if __name__ == "__main__":
    main()
