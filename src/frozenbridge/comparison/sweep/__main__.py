"""Each connector design at a grid of settings, stage 1 on one replicate, with its learning curve; then each
design's own best, picked by the rule the plan declared before any run.

    python -m frozenbridge.comparison.sweep --list            # the plan's settings and which are kept
    python -m frozenbridge.comparison.sweep                   # train every setting not yet kept, then pick and draw
    python -m frozenbridge.comparison.sweep --design cross_attention resampler
    python -m frozenbridge.comparison.sweep --pick            # pick and draw from the kept rows, train nothing

The plan (results/connectors/sweep/plan.yaml; comparison/sweep/plan.py says its keys) names for each design the
settings to try (keys under params.yaml's shapes:, over params.yaml), the cap, the curve's spacing, when a flat curve
stops a run early, and the picking rule; `--rule` may only repeat that rule. A run is the pipeline's stage 1 of the
replicate (comparison/sweep/train.py). Each run is kept in results/connectors/sweep/<design>/<setting>.json as soon
as it ends, so the sweep can be stopped and started again: it goes on at the next setting with no row. Once a
design's grid is run, a pick at the grid's edge adds the settings one step past it (comparison/sweep/extend.py, up to
the plan's `extend` rounds), and the sweep runs them too. Needs the shapes features (`dvc repro shapes_encode`).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.comparison.sweep.plan import DEFAULT_PATH, load_plan
from frozenbridge.comparison.sweep.sweep import FIGURE, grid, kept_row, run_sweep, write_picks

OUT = DEFAULT_PATH.parent


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m frozenbridge.comparison.sweep", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plan", type=Path, default=DEFAULT_PATH, help=f"the declared plan (default {DEFAULT_PATH})")
    ap.add_argument("--out", type=Path, default=None, help="where rows, picks and the figure go (default: the plan's "
                                                           "folder)")
    ap.add_argument("--design", nargs="+", metavar="DESIGN", help="sweep these designs of the plan only")
    ap.add_argument("--replicate", type=int, default=0, help="the replicate whose stage 1 each run is (default 0)")
    ap.add_argument("--list", action="store_true", help="print the settings and which are kept; train nothing")
    ap.add_argument("--pick", action="store_true", help="pick and draw from the kept rows; train nothing")
    ap.add_argument("--rule", help="the picking rule; refused unless it is the plan's own")
    ap.add_argument("--params", type=Path, default=Path("params.yaml"), help="the params the settings apply over")
    ap.add_argument("--data", type=Path, default=Path("data/shapes"), help="the shapes pictures and features")
    return ap


def inputs(params_file: Path, data_dir: Path):
    """The training split and the frozen language model, loaded once for every run."""
    import torch

    from frozenbridge.bench.rows import machine_info
    from frozenbridge.shapes.params import load_params
    from frozenbridge.shapes.training.split_data import load_split
    from frozenbridge.shapes.training.start import setup
    from frozenbridge.comparison.sweep.train import Inputs

    base = load_params(params_file)
    data = load_split("train", data_dir / "pictures", data_dir / "features", base.vision)
    device, bf16, lm = setup(base)
    torch.manual_seed(0)
    return Inputs(data, lm, device, bf16, machine_info(device, "sweep", "python -m frozenbridge.comparison.sweep"))


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        plan = load_plan(args.plan)
        out = args.out or args.plan.parent
        designs = tuple(args.design or plan.designs)
        for design in designs:
            plan.grid(design)  # a design the plan does not sweep: one line
        if args.rule is not None and args.rule != plan.rule:
            raise FrozenbridgeError(f"{plan.source}: picking by rule {args.rule!r} is refused; the plan declares "
                                    f"{plan.rule!r}")
        if args.list:
            for design in designs:
                for setting in grid(plan, out, design):
                    state = "kept" if kept_row(out, design, setting, plan) else "to run"
                    print(f"{design:<16} {state:<7} {setting.name}")
            return
        if not args.pick:
            from frozenbridge.core.config import read_params_file
            from frozenbridge.comparison.sweep.train import run_setting, setting_params

            raw = read_params_file(args.params)
            for design in designs:  # every setting checked like params.yaml before the first run
                for setting in plan.grid(design):
                    setting_params(raw, design, setting)
            shared = inputs(args.params, args.data)
            run_sweep(plan, designs, out, lambda d, s: run_setting(raw, d, s, plan, shared, args.replicate))
        picked = write_picks(plan, out, args.rule)
        from frozenbridge.comparison.sweep.figure import draw_curves

        draw_curves(plan, out, picked, out / FIGURE)
        for design, choice in picked["picked"].items():
            print(f"{design}: {choice['setting']}: {choice['reason']}" + (f" ({choice['edge']})" if choice["edge"]
                                                                          else ""))
        for design, n in picked["runs_missing"].items():
            print(f"{design}: {n} setting(s) not yet run; not picked")
    except FrozenbridgeError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("stopped; every run that ended is kept, the next call goes on from there", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
