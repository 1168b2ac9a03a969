"""The connector: k x k merge shapes and ordering, padding of odd grids, prefix tokens, parameter count."""

from __future__ import annotations

import pytest
import torch

from frozenbridge.bridge.connector import MergedPatchMLP, merge_patches
from frozenbridge.core.errors import FrozenbridgeError


def grid_tensor(rows: int, cols: int, width: int = 1) -> torch.Tensor:
    """Patch (r, c) holds the value 10*r + c in every channel, so positions can be read back."""
    vals = torch.tensor([[10.0 * r + c for c in range(cols)] for r in range(rows)])
    return vals.reshape(1, rows * cols, 1).expand(1, rows * cols, width).clone()


def test_merge_2x2_orders_blocks_and_patches_row_major():
    out = merge_patches(grid_tensor(4, 4), (4, 4), 2)
    assert out.shape == (1, 4, 4)
    assert out[0].tolist() == [[0, 1, 10, 11], [2, 3, 12, 13], [20, 21, 30, 31], [22, 23, 32, 33]]


def test_merge_keeps_channels_together():
    x = torch.arange(2 * 2 * 3, dtype=torch.float32).reshape(1, 4, 3)  # 2x2 grid, 3 channels
    assert merge_patches(x, (2, 2), 2)[0, 0].tolist() == x[0].reshape(-1).tolist()


def test_odd_grid_is_zero_padded_bottom_right():
    x = grid_tensor(7, 7) + 1  # +1 so real patches are never 0
    out = merge_patches(x, (7, 7), 2)
    assert out.shape == (1, 16, 4)
    assert out[0, 3].tolist() == [7, 0, 17, 0]  # last block of the first block row: column 6 and padding
    assert out[0, 15].tolist() == [67, 0, 0, 0]  # bottom-right corner: one real patch
    assert (out != 0).sum() == 49  # every patch kept exactly once


def test_merge_1_is_identity():
    x = torch.randn(2, 9, 5)
    assert torch.equal(merge_patches(x, (3, 3), 1), x)


def test_connector_shapes_and_count():
    c = MergedPatchMLP([14, 14, 112], out_dim=576, merge=2)
    out = c(torch.randn(3, 196, 112))
    assert out.shape == (3, 49, 576) and c.n_out == 49
    assert c.n_params == (448 * 576 + 576) + (576 * 576 + 576)
    assert "590,976 trainable parameters" in c.describe()


def test_prefix_connector_for_pooled_vectors():
    c = MergedPatchMLP([768], out_dim=64, prefix_tokens=3, hidden=32)
    assert c(torch.randn(2, 1, 768)).shape == (2, 3, 64) and c.n_out == 3


def test_merge_larger_than_grid_is_refused():
    with pytest.raises(FrozenbridgeError, match="connector.merge = 8"):
        MergedPatchMLP([4, 4, 32], out_dim=16, merge=8)


def test_column_order_reads_blocks_left_to_right():
    out = merge_patches(grid_tensor(4, 4), (4, 4), 2, order="columns")
    # block (0,0), then the block below it, then the next column of blocks
    assert out[0].tolist() == [[0, 1, 10, 11], [20, 21, 30, 31], [2, 3, 12, 13], [22, 23, 32, 33]]
    assert merge_patches(grid_tensor(2, 3), (2, 3), 1, order="columns")[0, :, 0].tolist() == [0, 10, 1, 11, 2, 12]


def test_connector_options_positions_norm_and_initial_scale():
    torch.manual_seed(0)
    plain = MergedPatchMLP([4, 4, 8], out_dim=16, merge=2)
    torch.manual_seed(0)
    scaled = MergedPatchMLP([4, 4, 8], out_dim=16, merge=2, init_scale=0.1)
    assert torch.allclose(scaled.mlp[2].weight, 0.1 * plain.mlp[2].weight)
    x = torch.randn(2, 16, 8)
    assert torch.allclose(scaled(x) - scaled.mlp[2].bias, 0.1 * (plain(x) - plain.mlp[2].bias), atol=1e-6)
    c = MergedPatchMLP([4, 4, 8], out_dim=16, merge=2, positions=True, norm=True)
    assert c.positions.shape == (4, 16) and c.n_params == plain.n_params + 4 * 16 + 2 * 32
    with torch.no_grad():
        c.positions[2] += 1.0  # a learned vector per token, added to that token only
    base = c.mlp(c.norm(merge_patches(x, (4, 4), 2)))
    assert torch.allclose(c(x) - base, c.positions.expand(2, 4, 16))
