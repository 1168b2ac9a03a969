"""Test builders: tiny random-weight backbones saved with save_pretrained: a CLIP, a SigLIP and a Qwen2-style LM with
a tokenizer (and, for the family tests, ViT, DINOv2 with and without registers, the feature-map models ResNet,
RegNet, ConvNeXt (V1, V2), MobileNetV2 and EfficientNet, the token models Swin and LeViT whose stages downsample,
and the LMs of LM_FAMILIES: LayerNorm GPT-2, OPT, GPT-NeoX, Phi; ALiBi BLOOM, multi-query GPTBigCode, sinusoidal
XGLM, parallel-attention Falcon, soft-capped sliding-window Gemma2, query/key-normed Qwen3).

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


def _family_config(family: str, vocab: int, tokenizer):
    """A 2-layer, 32-wide config of a causal-LM family: LayerNorm (GPT-2, OPT, GPT-NeoX/Pythia, Phi) or one whose
    positions or attention differ from Qwen2's RoPE + GQA (see LM_FAMILIES)."""
    import transformers

    ids = {"eos_token_id": tokenizer.eos_token_id, "bos_token_id": tokenizer.eos_token_id,
           "pad_token_id": tokenizer.pad_token_id}
    if family == "gpt2":
        return transformers.GPT2Config(vocab_size=vocab, n_embd=32, n_layer=2, n_head=2, n_positions=256, **ids)
    if family == "gpt_bigcode":  # multi-query attention (one key/value head), learned absolute positions
        return transformers.GPTBigCodeConfig(vocab_size=vocab, n_embd=32, n_layer=2, n_head=4, n_positions=256,
                                             multi_query=True, **ids)
    if family == "bloom":  # ALiBi: no position embeddings, a per-head linear bias computed from the 2D mask
        return transformers.BloomConfig(vocab_size=vocab, hidden_size=32, n_layer=2, n_head=2, **ids)
    if family == "xglm":  # fixed sinusoidal positions (offset 2), embeddings scaled by sqrt(d_model)
        return transformers.XGLMConfig(vocab_size=vocab, d_model=32, num_layers=2, attention_heads=2, ffn_dim=64,
                                       max_position_embeddings=256, scale_embedding=True,
                                       decoder_start_token_id=tokenizer.eos_token_id, **ids)
    common = {"vocab_size": vocab, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
              "max_position_embeddings": 256, **ids}
    if family == "opt":
        return transformers.OPTConfig(ffn_dim=64, word_embed_proj_dim=32, **common)
    if family == "gpt_neox":
        return transformers.GPTNeoXConfig(intermediate_size=64, **common)
    if family == "phi":
        return transformers.PhiConfig(intermediate_size=64, **common)
    if family == "falcon":  # parallel attention and MLP off one LayerNorm, multi-query, rotary
        return transformers.FalconConfig(multi_query=True, parallel_attn=True, **{**common, "num_attention_heads": 4})
    if family == "gemma2":  # embeddings scaled by sqrt(hidden), soft-capped attention and final logits, sliding
        # window on every other layer (8 positions: shorter than a question row, so it binds)
        return transformers.Gemma2Config(intermediate_size=64, num_key_value_heads=1, head_dim=16,
                                         query_pre_attn_scalar=16, sliding_window=8, final_logit_softcapping=5.0,
                                         attn_logit_softcapping=5.0, **common)
    if family == "qwen3":  # RMSNorm on each head's queries and keys before RoPE
        return transformers.Qwen3Config(intermediate_size=64, num_key_value_heads=1, head_dim=16,
                                        tie_word_embeddings=True, **common)
    raise ValueError(f"unknown family {family!r}; expected one of {list(LM_FAMILIES)}")


LAYERNORM_FAMILIES = ("gpt2", "opt", "gpt_neox", "phi")
# causal-LM families the family tests build besides Qwen2 (tiny_models["qwen2"]): the LayerNorm ones, then ALiBi
# (BLOOM), multi-query with learned positions (GPTBigCode), sinusoidal positions with scaled embeddings (XGLM),
# parallel attention with multi-query and rotary (Falcon), scaled embeddings with soft-capping and a sliding window
# (Gemma2), and query/key norms (Qwen3)
LM_FAMILIES = (*LAYERNORM_FAMILIES, "bloom", "gpt_bigcode", "xglm", "falcon", "gemma2", "qwen3")


def build_family_lm(path: Path, family: str) -> None:
    """A tiny random causal LM of one of LM_FAMILIES, with the tiny tokenizer (the tests train and decode with it)."""
    from transformers import AutoModelForCausalLM

    tokenizer = build_tokenizer(path)
    torch.manual_seed(0)
    AutoModelForCausalLM.from_config(_family_config(family, len(tokenizer), tokenizer)).save_pretrained(path)


build_layernorm_lm = build_family_lm  # the name the LayerNorm family tests first used


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


def _map_processor(size: tuple[int, int]):
    """ConvNeXt's processor at a square `size` (what ResNet, RegNet and ConvNeXt checkpoints ship: it resizes the
    short side to size / 0.875 and center-crops), else one that resizes to `size` = (height, width) exactly."""
    from transformers import ConvNextImageProcessor, ViTImageProcessor

    height, width = size
    if height == width:
        return ConvNextImageProcessor(size={"shortest_edge": height})
    return ViTImageProcessor(size={"height": height, "width": width})


def build_resnet(path: Path, size: tuple[int, int] = (32, 32)) -> None:
    """A two-stage ResNet of basic blocks (8 -> 16 -> 32 channels, stride 8: 32 px make a 4 x 4 map; a (32, 24)
    `size` a 4 x 3 one). Its pooler_output is an average pool, (batch, 32, 1, 1)."""
    from transformers import ResNetConfig, ResNetModel

    torch.manual_seed(0)
    ResNetModel(ResNetConfig(embedding_size=8, hidden_sizes=[16, 32], depths=[1, 1],
                             layer_type="basic")).save_pretrained(path)
    _map_processor(size).save_pretrained(path)


def build_regnet(path: Path, size: tuple[int, int] = (32, 32)) -> None:
    """A two-stage RegNet-Y (8 -> 16 -> 32 channels, stride 8, average-pooled like ResNet)."""
    from transformers import RegNetConfig, RegNetModel

    torch.manual_seed(0)
    RegNetModel(RegNetConfig(embedding_size=8, hidden_sizes=[16, 32], depths=[1, 1],
                             groups_width=8)).save_pretrained(path)
    _map_processor(size).save_pretrained(path)


def build_convnext(path: Path, v2: bool = False, size: tuple[int, int] = (32, 32)) -> None:
    """A two-stage ConvNeXt (V2 with `v2`): a 4 x 4 patch stem, 16 -> 32 channels, stride 8; its pooler_output is
    the layer-normed mean of the last map, (batch, 32)."""
    import transformers

    config, model = ((transformers.ConvNextV2Config, transformers.ConvNextV2Model) if v2 else
                     (transformers.ConvNextConfig, transformers.ConvNextModel))
    torch.manual_seed(0)
    model(config(num_stages=2, hidden_sizes=[16, 32], depths=[1, 1])).save_pretrained(path)
    _map_processor(size).save_pretrained(path)


def build_mobilenet_v2(path: Path, image_size: int = 64) -> None:
    """A MobileNetV2 at depth multiplier 0.35 (a 448-channel head, stride 32: 64 px make a 2 x 2 map; 16 hidden
    states, one a block) with its own processor."""
    from transformers import MobileNetV2Config, MobileNetV2ImageProcessor, MobileNetV2Model

    torch.manual_seed(0)
    MobileNetV2Model(MobileNetV2Config(depth_multiplier=0.35, finegrained_output=False,
                                       image_size=image_size)).save_pretrained(path)
    MobileNetV2ImageProcessor(size={"shortest_edge": image_size},
                              crop_size={"height": image_size, "width": image_size}).save_pretrained(path)


def build_efficientnet(path: Path, image_size: int = 64) -> None:
    """Transformers' EfficientNet (B0's stages at width 0.1, one block each: a 128-channel head, stride 32: 64 px
    make a 2 x 2 map; 8 hidden states, the stem's and one a block) with its own processor."""
    from transformers import EfficientNetConfig, EfficientNetImageProcessor, EfficientNetModel

    torch.manual_seed(0)
    EfficientNetModel(EfficientNetConfig(image_size=image_size, width_coefficient=0.1, depth_coefficient=0.1,
                                         hidden_dim=128)).save_pretrained(path)
    EfficientNetImageProcessor(size={"height": image_size, "width": image_size}).save_pretrained(path)


def build_swin(path: Path, size: tuple[int, int] = (32, 32)) -> None:
    """A three-stage Swin (patch 4, 16 -> 32 -> 64 wide, window 2): token sequences whose stages halve the grid,
    so 32 px make 8 x 8, 4 x 4, then 2 x 2 tokens (not the picture over the patch size); a (32, 24) `size` makes
    8 x 6 and 4 x 3 stages. It returns each stage reshaped to a (batch, width, H, W) map too."""
    from transformers import SwinConfig, SwinModel, ViTImageProcessor

    torch.manual_seed(0)
    SwinModel(SwinConfig(image_size=max(size), patch_size=4, embed_dim=16, depths=[1, 1, 1], num_heads=[1, 2, 4],
                         window_size=2)).save_pretrained(path)
    ViTImageProcessor(size={"height": size[0], "width": size[1]}).save_pretrained(path)


def build_levit(path: Path, image_size: int = 128) -> None:
    """A three-stage LeViT (16 -> 32 -> 48 wide): token sequences with no class token and no reshaped maps whose
    stages subsample 2x, so 128 px make 8 x 8 tokens (the picture over its patch size 16), then 4 x 4 and 2 x 2
    (squares only); average-pooled."""
    from transformers import LevitConfig, LevitImageProcessor, LevitModel

    torch.manual_seed(0)
    LevitModel(LevitConfig(image_size=image_size, hidden_sizes=[16, 32, 48], num_attention_heads=[1, 2, 3],
                           depths=[1, 1, 1], key_dim=[8, 8, 8], down_ops=[["Subsample", 8, 1, 4, 2, 2],
                                                                          ["Subsample", 8, 2, 4, 2, 2]])
               ).save_pretrained(path)
    LevitImageProcessor(size={"shortest_edge": image_size * 8 // 7},
                        crop_size={"height": image_size, "width": image_size}).save_pretrained(path)


VISION_FAMILIES = {"clip": build_clip, "siglip": build_siglip, "vit": build_vit, "dinov2": build_dinov2,
                   "dinov2_with_registers": lambda path: build_dinov2(path, registers=4),
                   # feature-map models: (batch, width, H, W) hidden states, read as an H x W grid
                   "resnet": build_resnet, "regnet": build_regnet, "convnext": build_convnext,
                   "convnextv2": lambda path: build_convnext(path, v2=True), "mobilenet_v2": build_mobilenet_v2,
                   "efficientnet": build_efficientnet,
                   # token sequences downsampled past the patch grid: Swin's come with their own reshaped maps
                   "swin": build_swin, "levit": build_levit}


def build_all(root: Path) -> dict[str, Path]:
    paths = {name: Path(root) / name for name in ("clip", "siglip", "qwen2")}
    build_clip(paths["clip"])
    build_siglip(paths["siglip"])
    build_qwen2(paths["qwen2"])
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m frozenbridge.testing.tiny_models", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", type=Path, help="where to write clip/, siglip/ and qwen2/")
    args = ap.parse_args()
    for name, path in build_all(args.dir).items():
        print(f"{name}: {path}")


if __name__ == "__main__":
    main()
