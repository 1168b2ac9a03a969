"""The capacity check: does merging 2 x 2 patches cost accuracy, or only tokens? Stage 1 trained three ways per
replicate, from scratch: merged (the params' connector), unmerged (every patch a token) and unmerged with its
hidden layer widened until the connector has the merged one's parameter count, so tokens and connector size are
separated. Exact captions of seen-pair test pictures after stage 1, the final loss and seconds a step, per replicate.
"""

from __future__ import annotations

import statistics

from frozenbridge.bridge.connector import MergedPatchMLP
from frozenbridge.shapes.sweeps.converge import apply_overrides, run_one


def connector_params(feature_shape: list[int], width: int, merge: int, hidden: int | None, positions: bool) -> int:
    return MergedPatchMLP(feature_shape, width, merge=merge, hidden=hidden, positions=positions).n_params


def matched_hidden(feature_shape: list[int], width: int, merge: int, positions: bool) -> int:
    """The hidden width of an unmerged connector whose parameter count is closest to the merged one's."""
    target = connector_params(feature_shape, width, merge, None, positions)
    one, two = (connector_params(feature_shape, width, 1, h, positions) for h in (1, 2))
    return max(1, round((target - one) / (two - one)) + 1)  # the count is linear in the hidden width


def settings(raw: dict, feature_shape: list[int], width: int) -> dict:
    """name -> (validated params) for the three connectors."""
    mlp = {"connector.design": "mlp"}  # the MLP's capacity, whatever design params.yaml names
    base = apply_overrides(raw, mlp)
    c = base.shapes.connector.mlp
    wide = matched_hidden(feature_shape, width, c.merge, c.positions)
    return {f"{c.merge}x{c.merge} merged": base,
            "unmerged": apply_overrides(raw, {**mlp, "connector.mlp.merge": 1}),
            "unmerged, size-matched": apply_overrides(raw, {**mlp, "connector.mlp.merge": 1,
                                                            "connector.mlp.hidden": wide})}


def capacity(raw: dict, data, test, lm, device, bf16) -> dict:
    """Every setting, every replicate: stage 1 from scratch for shapes.train.stage1_steps, then exact
    captions."""
    out: dict = {}
    shape = data.meta["output_shape"]
    for name, params in settings(raw, shape, lm.width).items():
        c = params.shapes.connector.mlp
        runs = []
        for rep in params.replicates:
            r = run_one(params, rep, data, test, lm, device, bf16, params.shapes.train.stage1_steps,
                        params.shapes.train.stage1_steps, params.shapes.evaluate.items, stop=False)
            runs.append({"replicate": rep, "exact": r["curve"][-1][1], "final_loss": r["final_loss"],
                         "step_seconds": r["step_seconds"]})
        connector = MergedPatchMLP(shape, lm.width, merge=c.merge, hidden=c.hidden, positions=c.positions)
        out[name] = {"tokens": connector.n_out, "connector_params": connector.n_params, "runs": runs,
                     **{k: statistics.median(r[k] for r in runs) for k in ("exact", "final_loss", "step_seconds")}}
    return out
