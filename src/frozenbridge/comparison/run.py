"""The four ways to connect a picture, side by side under the same frozen backbones, on paired replicates.

    python -m frozenbridge.comparison                        # each design at its own best (the sweep's picks)
    python -m frozenbridge.comparison --only mlp resampler-49 --replicates 0 1
    python -m frozenbridge.comparison --view equal-settings  # each design at the MLP's settings
    python -m frozenbridge.comparison --view equal-steps     # each design and the MLP, the same stage-1 steps
    python -m frozenbridge.comparison --list                 # the settings, which are kept, which wait and why

comparison/settings.py says what each view's settings are. Each setting is one `dvc exp run` a replicate in this
workspace (`-S replicates=[r]`, and the setting's keys under shapes:): stage 1 (captions) and caption_qa, with all
controls on seen and held-out pairs, up to the stages whose metrics are kept (scores and controls, probes, text; the
figures and other studies are not run). Every design of a replicate sees the same pictures in the same order, since
the seeds depend on the replicate alone. Each replicate is kept under <view's folder>/<setting>/replicates/<r>/ as
soon as it ends (design.json: parameters, image tokens, minutes, the machine and its benchmark step before and
after), and the workspace goes back to the commit's own outputs (`git checkout`, `dvc checkout`), also when the tool
is stopped (Ctrl-C, SIGTERM). So a sitting that stops mid-setting loses only the replicate it was on; the next call
starts at the first one missing. The setting's own folder merges its replicates. A replicate's minutes are those of
every sitting that worked on it (comparison/sittings.py: a stopped sitting's minutes are kept as it runs and added by
the one that keeps it). A replicate whose stages DVC restores from its run cache, with no earlier sitting on record,
is kept untimed.

A setting is kept for the default pipeline it ran beside: a hash of the commit's dvc.lock and params.yaml as far as
the shapes study goes (its stages' entries; params less the other studies' sections). While they stay the same
(commits of docs, tools, results/ or another study) a kept setting is not run again; `--force` runs it anyway. The
workspace must be clean and the default run up to date with the code (`dvc status`): the experiment rewrites
params.yaml, dvc.lock, metrics/ and plots/ while it runs. Outputs merely missing (a fresh clone with no DVC cache) are
no change: the experiment makes what it needs. An experiment whose pictures or features are not the default run's
bytes (dvc.lock) is not kept.

Pairing. In the own-best and equal-steps views the view's MLP is a setting like the others, and every design is
paired with it replicate by replicate on one kind of machine: the machine that makes a replicate's MLP holds that replicate, and
its designs run there only (sittings on an AMD and an Intel machine finish different replicates; --list says which
machine holds which). In the equal-settings view each design is paired with the default run's MLP (its committed
metrics/shapes/) where this machine trains as that run did (bench/repro.json), else with an MLP this tool trains here
first (mlp@<device>-<precision>), so no machine is refused for want of bf16. Each design.json names its partner
(`paired_with`). `python -m frozenbridge.tools.report` then renders both views.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.comparison.replicates import (RECIPES, design_facts, holder, keep_examples, keep_mlp, kept,
                                                kept_replicate, lowest, made_on, merge_setting, replicate_folder,
                                                stage1_loss, where)
from frozenbridge.comparison.pipeline import pipeline, replicates_of, same_inputs
from frozenbridge.comparison.settings import EQUAL_SETTINGS, VIEW_NAMES, view_settings
from frozenbridge.comparison.sittings import Sittings, sittings_file
from frozenbridge.comparison.sweep.plan import spell
from frozenbridge.tools.where_it_runs import stage_replicate
from frozenbridge.comparison.workspace import (Terminated, changed_stages, git, local_mlp_name, precision_mismatch,
                                               restored, run_experiment)

TARGETS = ("shapes_summarize", "shapes_probe", "shapes_text")  # the stages that write KEPT, with what they need
KEPT = ("shapes/scores.json", "shapes/controls.json", "shapes/replicates.json", "shapes/stage1.json",
        "shapes/probes.json", "shapes/text.json")  # the metrics an experiment's shapes stages write; the rest is the checkout's own
RESULTS = Path("results/connectors")
VIEWS = {"own-best": RESULTS, "equal-settings": RESULTS / "equal-settings",
         "equal-steps": RESULTS / "equal-steps"}  # --view: where each is kept
assert tuple(VIEWS) == VIEW_NAMES


def command(values: dict[str, object], extra: tuple[str, ...] = ()) -> list[str]:
    """The setting's `dvc exp run` (its values spelled as YAML reads them: null, true); `extra`: more `-S`
    assignments (the tests run one replicate)."""
    sets = [*(f"shapes.{key}={spell(value)}" for key, value in values.items()),
            f"shapes.recipes=[{','.join(RECIPES)}]", *extra]
    return ["dvc", "exp", "run", *(arg for s in sets for arg in ("-S", s)), *TARGETS]


def run_setting(name: str, values: dict[str, object], root: Path, results: Path, extra: tuple[str, ...] = (),
                step: bool = True, paired_with: str | None = "mlp", replicates: list[int] | None = None) -> Path:
    """The setting's replicates not yet kept, one experiment each (`-S replicates=[r]`), each kept under
    results/name/replicates/r/ the moment it ends and the workspace restored; then the setting's view over every
    replicate kept so far (merge_setting). Returns the setting's folder. A sitting that ends mid-setting keeps the
    replicates it finished, and the next call starts at the first one missing. `paired_with`: the MLP setting the
    design is compared with (the default run's, "mlp", or one this tool trained on this machine; None for an MLP).
    `replicates`: these only (default: params.yaml's)."""
    key, folder = pipeline(root), results / name
    replicates = replicates or replicates_of(root)
    for r in replicates:
        if not kept_replicate(folder, key, values, r):
            run_replicate(name, values, r, lowest(folder, key, values, r), root, results, extra, step)
    return merge_setting(folder, key, values, paired_with)


def run_replicate(name: str, values: dict[str, object], replicate: int, galleries: bool, root: Path, results: Path,
                  extra: tuple[str, ...] = (), step: bool = True) -> Path:
    """One replicate of a setting: its experiment, its metrics kept under results/name/replicates/<r>/ with
    design.json (minutes, machine, precision), and the setting's galleries where `galleries` (the lowest replicate
    kept). With `step`, the machine's benchmark step (tools.repro_timing) is measured before and after, since its
    minutes mean something only beside the machine's speed at the time."""
    import torch

    from frozenbridge.core.measure import machine
    from frozenbridge.tools.repro_timing import benchmark_step, bf16_path, cpu_model
    from frozenbridge.tools.snapshot import save

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "params.yaml"
        base.write_text(git(root, "show", "HEAD:params.yaml"))
        steps = [benchmark_step()] if step else []
        cached = (root / "data/shapes/features").exists()  # else the experiment makes them, inside its minutes
        with restored(root), Sittings(sittings_file(root, results, name, replicate)) as sittings:
            cached_runs = [s for s in run_experiment(command(values, (*extra, f"replicates=[{replicate}]")), root)
                           if stage_replicate(s) == replicate]  # restored, not run: the minutes are not its own
            same_inputs(root)
            # restored from the run cache with no earlier sitting on record: whoever ran those stages, not us
            minutes, count = sittings.total()
            minutes = None if cached_runs and count == 1 else minutes
            took = "untimed (restored from the run cache)" if minutes is None else \
                f"{minutes:.1f} min" + (f" over {count} sittings" if count > 1 else "")
            steps += [benchmark_step()] if step else []
            where = {**machine(torch.device("cpu"), quick=False), "cpu_model": cpu_model(), "bf16_path": bf16_path()}
            steps = [] if minutes is None else [round(s, 3) for s in steps]  # the machine's speed around timed minutes
            design = {**design_facts(root), "replicate": replicate, "minutes": minutes,
                      **({"sittings": count} if count > 1 and minutes is not None else {}),
                      **({"restored_from_run_cache": cached_runs} if cached_runs else {}),
                      "setting": values, "pipeline": pipeline(root), "machine": where,
                      "benchmark_step_seconds": steps or None}
            replicate_folder(results / name, replicate).parent.mkdir(parents=True, exist_ok=True)
            # design.json goes in with the metrics: a sitting stopped here leaves no folder without it
            folder = save(f"{name}/replicates/{replicate}", root, base, results, only=list(KEPT),
                          note=f"{took} for "
                               f"replicate {replicate} of this design's dvc exp run (stage 1, caption_qa, their "
                               f"evaluations and the analyses kept; the data and features "
                               f"{'from the cache' if cached else 'made first, as the workspace had none'})",
                          files={"design.json": design,
                                 "metrics/shapes/stage1_loss.json": stage1_loss(root, replicate)})
            sittings.done()
            if galleries:
                keep_examples(root, results / name, name)
    return folder


def compare(settings: dict[str, dict[str, object]], root: Path, results: Path, force: bool = False,
            extra: tuple[str, ...] = (), step: bool = True, replicates: list[int] | None = None,
            own_mlp: dict[str, object] | None = None) -> list[Path]:
    """Every setting not kept for HEAD's pipeline (all with `force`), one after the other (`extra`: see command;
    `step`: see run_setting; `replicates`: these only, default params.yaml's). `own_mlp`: the values of the view's
    own MLP (the own-best and equal-steps views' "mlp", run like any setting), with which every design is paired
    replicate by replicate on one machine (compare_here); None: each design is paired with the default run's MLP,
    or with one this tool trains first where this machine trains unlike the default run."""
    if git(root, "status", "--porcelain", "--untracked-files=no").strip():
        raise FrozenbridgeError(f"{root}: uncommitted changes; the comparison's experiments rewrite params.yaml, "
                                "dvc.lock, metrics/ and plots/ and restore them from the commit: commit or stash first")
    key, replicates = pipeline(root), replicates or replicates_of(root)
    if force:  # run every replicate again: forget the kept ones
        for name in settings:
            for r in replicates:
                (replicate_folder(results / name, r) / "design.json").unlink(missing_ok=True)
    todo = {name: values for name, values in settings.items() if not kept(results / name, key, values, replicates)}
    for name in settings.keys() - todo.keys():
        print(f"{name}: kept for this pipeline ({key}), not run again (--force runs it)")
    if not todo:
        return []
    stale = changed_stages(root)
    if stale:
        raise FrozenbridgeError(f"{root}: the default run is not up to date with the code (`dvc status`: "
                                f"{', '.join(stale)} changed); the MLP's numbers are its metrics: run `dvc repro` and "
                                "commit first")
    partner = "mlp"
    if own_mlp is not None:
        return compare_here(todo, settings.get(partner, own_mlp), root, results, key, replicates, extra, step)
    if (mismatch := precision_mismatch(root)) is not None:  # an MLP of this machine's own, made beside the designs
        partner = local_mlp_name()
        print(f"{mismatch.split(';')[0]}: each design is paired with {partner}, an MLP trained here by this tool")
        todo = {partner: {"connector.design": "mlp"}, **todo} if force or not kept(
            results / partner, key, {"connector.design": "mlp"}, replicates) else todo
    if not (results / "mlp" / "design.json").is_file() or force:
        keep_mlp(root, results)
    done = []
    for name, values in todo.items():
        done.append(run_setting(name, values, root, results, extra, step, None if name == partner else partner,
                                replicates))
    return done


def this_machine() -> str:
    """This machine as a kept replicate names its own (replicates.where)."""
    from frozenbridge.tools.repro_timing import bf16_path, cpu_model

    return where({"machine": {"cpu_model": cpu_model(), "bf16_path": bf16_path()}})


def owners(results: Path, key: str, mlp: dict[str, object], replicates: list[int]) -> dict[int, str | None]:
    """{replicate: the machine its own-best MLP replicate was made on, None while it has none}."""
    return {r: made_on(results / "mlp", key, mlp, r) for r in replicates}


def compare_here(todo: dict[str, dict[str, object]], mlp: dict[str, object], root: Path, results: Path, key: str,
                 replicates: list[int], extra: tuple[str, ...] = (), step: bool = True) -> list[Path]:
    """The own-best view, replicate by replicate, so that every design's replicate shares a machine with the MLP
    replicate it is paired with: a replicate whose MLP was made on this machine gets its missing settings here; one
    with no MLP yet gets its MLP here first, then its settings; one whose MLP was made elsewhere is left to that
    machine (said, and --list shows which machine holds which replicate). Sittings on two kinds of machine thus
    finish different replicates and never pair a design with an MLP of the other CPU's arithmetic. Each setting's
    folder is merged after each of its replicates, so a stopped sitting leaves a page that is up to date."""
    here, done = this_machine(), {}
    for r, owner in owners(results, key, mlp, replicates).items():
        if owner is not None and owner != here:
            print(f"replicate {r}: its MLP was made on {owner}, so its designs run there (this is {here})")
            continue
        for name, values in {"mlp": mlp, **todo}.items():
            if not kept_replicate(results / name, key, values, r):
                run_replicate(name, values, r, lowest(results / name, key, values, r), root, results, extra, step)
                done[name] = merge_setting(results / name, key, values, None if name == "mlp" else "mlp")
    return list(done.values())


def print_list(settings: dict[str, dict[str, object]], waiting: dict[str, str], mlp: dict[str, object] | None,
               view: str, root: Path, results: Path, replicates: list[int] | None) -> None:
    """--list: each setting, how many of its replicates are kept and its command; the settings that wait and why;
    in the own-best and equal-steps views which machine holds each replicate (`mlp`: the view's MLP setting, also when --only leaves
    it out); in the equal-settings view the MLP a machine unlike the default run's pairs its designs with."""
    key, replicates = pipeline(root), replicates or replicates_of(root)
    states = {name: "kept" if kept(results / name, key, values, replicates) else
              f"{sum(kept_replicate(results / name, key, values, r) for r in replicates)}/{len(replicates)} kept"
              for name, values in settings.items()}
    for name, values in settings.items():
        print(f"{name:<20} {states[name]:<9} {' '.join(command(values)[3:])}")
    for name, why in waiting.items():
        print(f"{name:<20} {why}")
    if view != "equal-settings" and mlp is not None:
        here = this_machine()
        for r, owner in owners(results, key, mlp, replicates).items():
            print(f"replicate {r}: {holder(owner, here)}")
    if view == "equal-settings" and any(state != "kept" for state in states.values()) and \
            (mismatch := precision_mismatch(root)):
        print(f"{mismatch.split(';')[0]}: the designs trained here are paired with {local_mlp_name()}, an MLP this "
              "tool trains here first")


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m frozenbridge.comparison", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--view", choices=list(VIEWS), default="own-best",
                    help="own-best (default): each design at the sweep's pick, the MLP at its own among them, kept in "
                         f"{VIEWS['own-best']}/; equal-settings: each design at the MLP's settings, kept in "
                         f"{VIEWS['equal-settings']}/; equal-steps: each design and the MLP at the setting whose sweep "
                         "curve reached the highest share within the cap, every stage 1 trained the cap's steps "
                         f"exactly, kept in {VIEWS['equal-steps']}/")
    ap.add_argument("--only", nargs="+", metavar="SETTING",
                    help=f"run these settings only (of {', '.join(['mlp', *EQUAL_SETTINGS])}; mlp in the own-best and "
                         "equal-steps views)")
    ap.add_argument("--force", action="store_true", help="run a setting even when kept for this pipeline")
    ap.add_argument("--list", action="store_true",
                    help="print the settings, which are kept and whether this machine may run the rest; run nothing")
    ap.add_argument("--results", type=Path, help="where each setting is kept (default: the view's folder)")
    ap.add_argument("--replicates", type=int, nargs="+", metavar="R",
                    help="run these replicates only (default: params.yaml's replicates)")
    args = ap.parse_args()
    root, results = Path(".").resolve(), args.results or VIEWS[args.view]
    try:
        ready, waiting = view_settings(args.view)
        known = [*ready, *waiting]
        if bad := [name for name in args.only or () if name not in known]:
            raise FrozenbridgeError(f"--only {bad[0]}: not a setting of the {args.view} view; choose from "
                                    f"{', '.join(known)}")
        if blocked := [name for name in args.only or () if name in waiting]:
            raise FrozenbridgeError(f"--only {blocked[0]}: {waiting[blocked[0]]}")
        settings = {name: ready[name] for name in (args.only or ready)}
        if args.list:
            print_list(settings, waiting, ready.get("mlp"), args.view, root, results, args.replicates)
            return
        for name, why in waiting.items():
            print(f"{name}: {why}")
        own = None if args.view == "equal-settings" else ready.get("mlp")
        if own is None and args.view != "equal-settings":
            raise FrozenbridgeError(f"the {args.view} view's MLP {waiting.get('mlp', 'has no setting')}")
        for folder in compare(settings, root, results, args.force, replicates=args.replicates, own_mlp=own):
            print(f"kept {folder}")
    except (FrozenbridgeError, subprocess.CalledProcessError) as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    except (Terminated, KeyboardInterrupt):
        print("stopped; the workspace is back at HEAD, the settings kept so far stay kept", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
