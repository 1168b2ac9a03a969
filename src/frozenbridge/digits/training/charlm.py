"""The language side: a causal character-level transformer that has only ever read the ten digit sentences.

It always has `prefix` slots in front of its text. In its own training a learned null vector fills them; later the
adapter does. Pretraining with the slots present keeps the text at the positions it learned: inserting picture
tokens into a model trained without them would shift every character onto positions it never saw.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F
from tqdm import tqdm

from frozenbridge.core.seeds import generator
from frozenbridge.digits.data.sentences import LENGTH, VOCAB


class CharLM(nn.Module):
    def __init__(self, width: int, layers: int, heads: int, prefix: int, length: int = LENGTH,
                 vocab: int = len(VOCAB)):
        super().__init__()
        self.prefix, self.width = prefix, width
        self.embed = nn.Embedding(vocab, width)
        self.positions = nn.Parameter(torch.randn(1, prefix + length, width) * 0.02)
        self.null = nn.Parameter(torch.zeros(1, prefix, width))
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0, batch_first=True, norm_first=True)
        self.stack = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.out = nn.Linear(width, vocab)

    def forward(self, tokens: torch.Tensor, prefix: torch.Tensor | None = None) -> torch.Tensor:
        """Logits at the text positions: (batch, text length, vocab). `prefix` (batch, slots, width) fills the
        slots; None fills them with the learned null."""
        front = self.null.expand(len(tokens), -1, -1) if prefix is None else prefix
        h = torch.cat([front, self.embed(tokens)], dim=1)
        h = h + self.positions[:, :h.shape[1]]
        mask = nn.Transformer.generate_square_subsequent_mask(h.shape[1])
        return self.out(self.stack(h, mask=mask, is_causal=True))[:, self.prefix:]

    def extend(self, h: torch.Tensor, cache: list | None) -> tuple[torch.Tensor, list]:
        """The stack over new positions `h` (batch, m, width; embedded, positions added) that follow the positions
        `cache` holds (None: there are none), and the cache grown by them: each layer's keys and values, so a greedy
        step computes one position instead of the whole sequence again. The same arithmetic as the stack's own
        (pre-norm attention then the ReLU feed-forward), causal within `h`."""
        cache = cache or [None] * len(self.stack.layers)
        grown = []
        for layer, past in zip(self.stack.layers, cache):
            attn = layer.self_attn
            q, k, v = F.linear(layer.norm1(h), attn.in_proj_weight, attn.in_proj_bias).chunk(3, dim=-1)
            n, m, width = h.shape
            q, k, v = (t.view(n, m, attn.num_heads, width // attn.num_heads).transpose(1, 2) for t in (q, k, v))
            if past is not None:
                k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
            mixed = F.scaled_dot_product_attention(q, k, v, is_causal=past is None)
            h = h + attn.out_proj(mixed.transpose(1, 2).reshape(n, m, width))
            h = h + layer.linear2(layer.activation(layer.linear1(layer.norm2(h))))
            grown.append((k, v))
        return h, grown


def build(config: dict) -> CharLM:
    return CharLM(config["width"], config["layers"], config["heads"], config["prefix"])


def sentence_loss(model: CharLM, sentences: torch.Tensor, prefix: torch.Tensor | None = None) -> torch.Tensor:
    """Next-character cross-entropy over each whole sentence (the slots themselves are never predicted)."""
    logits = model(sentences[:, :-1], prefix)
    return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), sentences[:, 1:].reshape(-1))


def train_language(model: CharLM, sentences: torch.Tensor, steps: int, batch_size: int, lr: float,
                   seed: int) -> list[float]:
    """Adam on batches of the sentences drawn at random; the loss of every step."""
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    draws = generator(seed)
    losses = []
    model.train()
    for _ in tqdm(range(steps), desc="character LM", unit="step", mininterval=1.0):
        batch = sentences[torch.randint(0, len(sentences), (batch_size,), generator=draws)]
        loss = sentence_loss(model, batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.zero_grad(set_to_none=True)  # frozen from here on: no stale gradient either
    model.requires_grad_(False).eval()
    return losses
