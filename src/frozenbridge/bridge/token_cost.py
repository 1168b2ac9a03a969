"""What an image token costs the language model: every position, picture or word, keeps its keys and values in
the KV cache while the model writes, 2 (K, V) x layers x key/value heads x head width x bytes per number."""

from __future__ import annotations


def kv_bytes_per_position(config, bytes_per_number: int = 2) -> int:
    """KV-cache bytes one position takes, from a transformers config (bf16/fp16: 2 bytes a number)."""
    heads = getattr(config, "num_attention_heads", None) or config.n_head
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    hidden = getattr(config, "hidden_size", None) or config.n_embd
    head_dim = getattr(config, "head_dim", None) or hidden // heads
    layers = getattr(config, "num_hidden_layers", None) or config.n_layer
    return 2 * layers * kv_heads * head_dim * bytes_per_number


def picture_cost(config, grid: tuple[int, int], merge: int, image_size: int, scales: tuple[int, ...] = (1, 2)) -> dict:
    """The KV cache of one picture, unmerged and merged k x k, at the picture's size and at larger sides (the
    patch grid grows with the side)."""
    per = kv_bytes_per_position(config)
    rows = []
    for s in scales:
        r, c = grid[0] * s, grid[1] * s
        merged = -(-r // merge) * -(-c // merge)
        rows.append({"side_px": image_size * s, "patches": r * c, "patches_kv_bytes": r * c * per,
                     "merged": merged, "merged_kv_bytes": merged * per})
    return {"kv_bytes_per_position": per, "layers": getattr(config, "num_hidden_layers", None),
            "pictures": rows}
