"""Design 3, gated cross-attention: no image tokens in the sequence; before every `every`-th decoder layer of the
frozen language model a thin block lets the text attend to its own picture's patch vectors, its output scaled by
tanh(gate) with the gate at 0 (Flamingo, Llama 3.2 Vision), so a fresh model is exactly the text model.

    patches (B, rows*cols, width) -> Linear to `heads * head_dim` + a learned position per patch  = media
    before layer i (i = 0, every, 2*every, ...):
        h <- h + tanh(gate_i) * CrossAttention_i(LayerNorm(h), media)      (queries from the text)

The blocks are attention only (no feed-forward) and thin (2 heads of 32 at the defaults), so that a block every 4th
layer of the embedded 30-layer model stays near the MLP connector's trainable parameters; `every: 6` is the smaller
size (Flamingo's ablation: fewer blocks cost a few points). Knobs (shapes.connector.cross_attention): the gates'
start (`gate_init`) and their own learning rate (`gate_lr`), the blocks' width (`heads`, `head_dim`), and
`feed_forward`: after the attention a feed-forward as in Flamingo, four times the block's width, under a gate of
its own: h <- h + tanh(ff_gate_i) * FeedForward_i(LayerNorm(h)). `inside` gives each gate's tanh, block by block.
The blocks sit on the language model through forward pre-hooks (`attach`), which LoRA adapters, KV-cached
generation and saved runs leave in place; the picture of each batch row is set for the duration of a forward
(`reading`). A row with no picture (the no-picture control) skips
every block. Only one picture a row: a two-picture item needs a sequence design.
"""

from __future__ import annotations

import contextlib

import torch
from torch import nn

from frozenbridge.core.errors import FrozenbridgeError


class GatedBlock(nn.Module):
    def __init__(self, dim: int, media_dim: int, heads: int, head_dim: int, gate_init: float = 0.0,
                 feed_forward: bool = False):
        super().__init__()
        inner = heads * head_dim
        self.heads, self.head_dim = heads, head_dim
        self.norm = nn.LayerNorm(dim)
        self.query = nn.Linear(dim, inner, bias=False)
        self.key_value = nn.Linear(media_dim, 2 * inner, bias=False)
        self.out = nn.Linear(inner, dim, bias=False)
        self.gate = nn.Parameter(torch.full((), float(gate_init)))
        self.feed_forward = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, 4 * inner), nn.GELU(),
                                          nn.Linear(4 * inner, dim)) if feed_forward else None
        self.ff_gate = nn.Parameter(torch.full((), float(gate_init))) if feed_forward else None

    def forward(self, hidden: torch.Tensor, media: torch.Tensor, has_media: torch.Tensor) -> torch.Tensor:
        """hidden (B, L, dim), media (B, M, media_dim), has_media (B,) -> hidden plus the gated update, in hidden's
        dtype (so a zero gate returns `hidden` exactly)."""
        b, length, _ = hidden.shape
        split = (b, -1, self.heads, self.head_dim)
        q = self.query(self.norm(hidden.to(self.query.weight.dtype))).reshape(split).transpose(1, 2)
        k, v = (t.reshape(split).transpose(1, 2) for t in self.key_value(media).chunk(2, dim=-1))
        attended = nn.functional.scaled_dot_product_attention(q, k.to(q.dtype), v.to(q.dtype))
        update = self.out(attended.transpose(1, 2).reshape(b, length, -1))
        keep = has_media[:, None, None].to(update.dtype)
        hidden = hidden + (torch.tanh(self.gate) * update * keep).to(hidden.dtype)
        if self.feed_forward is None:
            return hidden
        more = self.feed_forward(hidden.to(self.query.weight.dtype))
        return hidden + (torch.tanh(self.ff_gate) * more * keep.to(more.dtype)).to(hidden.dtype)


class CrossAttention(nn.Module):
    design = "cross_attention"
    n_out = 0  # image tokens in the sequence: none
    reads_inside = True
    grid_tokens = (1, "rows")  # forward gives the vectors the blocks attend to: one per patch, row by row

    def __init__(self, feature_shape: list[int], out_dim: int, layers: int, every: int = 4, heads: int = 2,
                 head_dim: int = 32, gate_init: float = 0.0, gate_lr: float | None = None,
                 feed_forward: bool = False):
        super().__init__()
        if len(feature_shape) != 3:
            raise ValueError("cross-attention reads a grid of patch vectors (vision.features: patches)")
        if not 1 <= every <= layers:
            raise FrozenbridgeError(f"params.yaml: shapes.connector.cross_attention.every = {every} is not allowed for "
                                    f"a language model of {layers} layers; expected 1..{layers}")
        rows, cols, width = feature_shape
        inner = heads * head_dim
        self.feature_shape, self.out_dim, self.layers, self.every = list(feature_shape), out_dim, layers, every
        self.heads, self.head_dim = heads, head_dim
        self.gate_init, self.gate_lr, self.with_feed_forward = gate_init, gate_lr, feed_forward
        self.media_in = nn.Linear(width, inner)
        self.media_positions = nn.Parameter(torch.zeros(rows * cols, inner))
        self.blocks = nn.ModuleList(GatedBlock(out_dim, inner, heads, head_dim, gate_init, feed_forward)
                                    for _ in self.places())
        self._media: tuple[torch.Tensor, torch.Tensor] | None = None
        self._hooks: list = []

    @classmethod
    def from_params(cls, k, feature_shape: list[int], width: int, layers: int | None = None, centroids=None):
        return cls(feature_shape, width, layers=layers, every=k.every, heads=k.heads, head_dim=k.head_dim,
                   gate_init=k.gate_init, gate_lr=k.gate_lr, feed_forward=k.feed_forward)

    def places(self) -> list[int]:
        """The decoder layers a block goes before."""
        return list(range(0, self.layers, self.every))

    def config(self) -> dict:
        return {"feature_shape": self.feature_shape, "out_dim": self.out_dim, "layers": self.layers,
                "every": self.every, "heads": self.heads, "head_dim": self.head_dim, "gate_init": self.gate_init,
                "gate_lr": self.gate_lr, "feed_forward": self.with_feed_forward}

    @property
    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def gates(self) -> list[nn.Parameter]:
        return [g for block in self.blocks for g in (block.gate, block.ff_gate) if g is not None]

    def param_groups(self, lr: float) -> list[dict]:
        """One group at the run's `lr`, or the gates in a group of their own at `gate_lr`."""
        if self.gate_lr is None:
            return [{"params": list(self.parameters()), "lr": lr}]
        gates = {id(g) for g in self.gates()}
        return [{"params": [p for p in self.parameters() if id(p) not in gates], "lr": lr},
                {"params": self.gates(), "lr": self.gate_lr}]

    @torch.no_grad()
    def inside(self, feats: torch.Tensor) -> dict:
        """Each block's tanh(gate), in the order of the layers they go before (and the feed-forwards' gates)."""
        out = {"gates": [round(float(torch.tanh(block.gate)), 4) for block in self.blocks]}
        if self.with_feed_forward:
            out["ff_gates"] = [round(float(torch.tanh(block.ff_gate)), 4) for block in self.blocks]
        return out

    def attach(self, decoder_layers: nn.ModuleList) -> None:
        """Put each block before its decoder layer (forward pre-hooks); a second call moves them."""
        if len(decoder_layers) != self.layers:
            raise FrozenbridgeError(f"cross-attention was built for {self.layers} decoder layers, the language model "
                                    f"has {len(decoder_layers)}")
        self.detach()
        for block, place in zip(self.blocks, self.places()):
            self._hooks.append(decoder_layers[place].register_forward_pre_hook(self._hook(block), with_kwargs=True))

    def detach(self) -> None:
        for hook in self._hooks:
            hook.remove()
        self._hooks = []

    def _hook(self, block: GatedBlock):
        def before_layer(module, args, kwargs):
            if self._media is None:
                return None
            media, has_media = self._media
            if args:
                return (block(args[0], media, has_media), *args[1:]), kwargs
            return args, {**kwargs, "hidden_states": block(kwargs["hidden_states"], media, has_media)}
        return before_layer

    def media(self, feats: torch.Tensor) -> torch.Tensor:
        """(B, rows*cols, width) patch vectors -> (B, rows*cols, heads*head_dim): what every block attends to."""
        return self.media_in(feats) + self.media_positions

    @contextlib.contextmanager
    def reading(self, feats: torch.Tensor, has_media: torch.Tensor):
        """Within the block, every forward of the language model attends to these pictures, one a batch row
        (`has_media` False: that row has none, and its feats row is ignored)."""
        self._media = (self.media(feats), has_media)
        try:
            yield
        finally:
            self._media = None

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        return self.media(feats)

    def describe(self) -> str:
        rows, cols, _ = self.feature_shape
        ff = ", each with a gated feed-forward" if self.with_feed_forward else ""
        return (f"gated cross-attention ({rows}x{cols} patches; {len(self.blocks)} blocks of {self.heads} heads of "
                f"{self.head_dim}{ff}, before every {self.every}th of {self.layers} layers, gates from "
                f"{self.gate_init}; no image tokens): {self.n_params:,} trainable parameters")


DESIGN = CrossAttention
