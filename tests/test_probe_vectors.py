"""The probes read the right vectors: after the connector, a shape's vector is the mean of exactly the image tokens
whose merged blocks hold the shape's cells, whatever the merge, the token order or a grid the merge does not divide,
with the learned positions included. Checked on the real MergedPatchMLP: every cell's feature is a one-hot of its own
index, so the connector's input (captured at its first layer) says which cells each token merged."""

from __future__ import annotations

import pytest
import torch

from frozenbridge.bridge.connector import MergedPatchMLP
from frozenbridge.shapes.evaluation.probes import cells_under, place_vectors, tokens_under


def cells_of_each_token(connector: MergedPatchMLP, rows: int, cols: int) -> list[set[int]]:
    seen = {}

    def capture(module, inputs, output) -> None:  # returns None: the output is left as it is
        seen["x"] = inputs[0].detach()
    hook = connector.mlp[0].register_forward_hook(capture)
    connector(torch.eye(rows * cols).unsqueeze(0))  # cell i's feature: one-hot at channel i
    hook.remove()
    merged = seen["x"][0].reshape(connector.n_out, -1, rows * cols)  # (tokens, k*k cells, one-hot)
    return [set(torch.nonzero(block.sum(0)).flatten().tolist()) for block in merged]


@pytest.mark.parametrize("rows, cols, k, order", [(4, 4, 2, "rows"), (4, 4, 2, "columns"), (5, 5, 2, "columns"),
                                                  (6, 6, 3, "rows"), (7, 7, 2, "columns"), (4, 4, 1, "columns")])
def test_tokens_under_a_shape_are_the_tokens_that_merged_its_cells(rows, cols, k, order):
    connector = MergedPatchMLP([rows, cols, rows * cols], 8, merge=k, order=order, positions=True)
    merged = cells_of_each_token(connector, rows, cols)
    assert sorted(c for cells in merged for c in cells) == list(range(rows * cols))  # every cell in one token
    size = 16 * rows
    for shape in ({"cx": 20.0, "cy": 44.0, "size": 30.0}, {"cx": 8.0 * cols, "cy": 8.0 * rows, "size": 40.0},
                  {"cx": 16.0 * cols - 5, "cy": 3.0, "size": 4.0}):
        cells = cells_under(shape, (rows, cols), size)
        expected = sorted(t for t, held in enumerate(merged) if held & set(cells))
        assert sorted(tokens_under(cells, (rows, cols), k, order)) == expected  # a mean: order is free


def test_a_shape_vector_after_the_connector_is_the_mean_of_its_tokens_positions_included():
    rows = cols = 4
    connector = MergedPatchMLP([rows, cols, 3], 5, merge=2, order="columns", positions=True)
    with torch.no_grad():
        connector.positions.copy_(torch.arange(20.0).reshape(4, 5))  # distinct learned positions per token
    feats = torch.randn(2, rows * cols, 3, generator=torch.Generator().manual_seed(0))
    shape = {"cx": 24.0, "cy": 40.0, "size": 30.0}  # centred in cell (row 2, col 1): block (1, 0) = token 1 by columns
    vec = place_vectors(feats, [[shape], [shape]], (rows, cols), 64, connector)
    with torch.no_grad():
        tokens = connector(feats)
    assert tokens_under(cells_under(shape, (rows, cols), 64), (rows, cols), 2, "columns") == [1]
    assert torch.allclose(torch.from_numpy(vec), tokens[:, 1], atol=1e-6)
    assert not torch.allclose(torch.from_numpy(vec), tokens[:, 1] - connector.positions[1], atol=1e-3)
