"""Tiny random-weight language models for the tests, saved with save_pretrained: a word-level tokenizer trained on
the shapes study's words, a Qwen2-style LM, and one LM of each family in LM_FAMILIES (LayerNorm GPT-2, OPT,
GPT-NeoX, Phi; ALiBi BLOOM, multi-query GPTBigCode, sinusoidal XGLM, parallel-attention Falcon, soft-capped
sliding-window Gemma2, query/key-normed Qwen3)."""

from __future__ import annotations

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
