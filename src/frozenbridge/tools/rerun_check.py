"""Does a rerun repeat? Rerun stages in a scratch copy of the committed HEAD; compare every output's hash with dvc.lock.

    python -m frozenbridge.tools.rerun_check onetoken_train@3                # once, against HEAD's dvc.lock
    python -m frozenbridge.tools.rerun_check onetoken_train@3 --times 2      # twice: against the lock, and each other
    python -m frozenbridge.tools.rerun_check onetoken_train@3 --compile-cache cold --threads 1 --allocator glibc
    python -m frozenbridge.tools.rerun_check onetoken_train@3 --after shapes_encode --env ONEDNN_MAX_CPU_ISA=AVX512_CORE

It clones HEAD into a temporary folder (uncommitted changes are not in it), copies there from this checkout's DVC
cache the outputs of other stages the named stages read (one line naming any the cache lacks and what to run first,
exit 2), and runs `dvc repro --force --single-item` of the stages (--after's first, in the same dvc process) with this
checkout's python and PYTHONPATH at the copy's src/, so the committed code runs; the copy writes to its own DVC cache
and run cache. Then one line for every output the copy's dvc.lock records: same as HEAD's dvc.lock, or differs (for a
JSON or text file, how many lines, and for JSON which fields: `captions[].floor 34 of 240`). dvc's output goes to
stderr, the report to stdout (and --out's JSON).

bf16 training gives other bits on another CPU (its kernels differ); data and features come out alike. The lock's
machine is the one bench/repro.json records (the last full timed run); where this machine is another, a difference
from the lock is expected and the reruns are judged against each other (--times 2).

Exit status: 0 when every rerun matched (the lock on the lock's machine, else each other), 1 when bits differ,
2 on bad input (an unknown stage, a dependency missing from the cache, a failed dvc repro).
"""

from __future__ import annotations

import argparse
import difflib
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from itertools import combinations
from pathlib import Path

import yaml

from frozenbridge.core.errors import FrozenbridgeError
from frozenbridge.core.stage import run_cli
from frozenbridge.comparison.workspace import git

TEXT = {".json", ".jsonl", ".txt", ".csv", ".tsv", ".md", ".yaml", ".yml", ".log"}


def lock_stages(root: Path) -> dict[str, dict]:
    return (yaml.safe_load((root / "dvc.lock").read_text()) or {}).get("stages", {})


def outputs(stages: dict[str, dict], names: list[str] | None = None) -> dict[str, dict]:
    """{output path: its dvc.lock entry, with "stage"} for the named stages (every stage when None)."""
    return {o["path"]: {**o, "stage": name} for name, s in stages.items() if names is None or name in names
            for o in s.get("outs", [])}


def from_cache(cache: Path, entry: dict) -> dict[str, Path] | None:
    """{path inside the output ("" for a file): its file in the DVC cache} for one dvc.lock entry; None where the
    cache lacks any of it."""
    base = cache / "files" / "md5" if entry.get("hash") == "md5" else cache  # DVC 3, else DVC 2's layout
    top = base / entry["md5"][:2] / entry["md5"][2:]
    if not top.is_file() or not entry["md5"].endswith(".dir"):
        return {"": top} if top.is_file() else None
    files = {e["relpath"]: base / e["md5"][:2] / e["md5"][2:] for e in json.loads(top.read_text())}
    return files if all(p.is_file() for p in files.values()) else None


def bring_dependencies(scratch: Path, cache: Path, stages: list[str]) -> None:
    """Copy into the scratch copy, from `cache`, every output of another stage the named stages read and the commit
    lacks (the dependency, inside it, or holding it); one line naming what is missing and what to run first, else. A
    dependency that is neither committed nor an output is left to dvc repro to name."""
    locked, needed = lock_stages(scratch), {}
    for dep in (d["path"] for name in stages for d in locked[name].get("deps", [])):
        needed.update({p: e for p, e in outputs(locked).items() if not (scratch / p).exists() and (
            f"{p}/".startswith(f"{dep}/") or f"{dep}/".startswith(f"{p}/"))})
    if missing := {p: e["stage"] for p, e in needed.items() if from_cache(cache, e) is None}:
        raise FrozenbridgeError(f"{', '.join(stages)} read {', '.join(missing)}, not in this checkout's DVC cache "
                                f"({cache}): run `dvc repro {' '.join(dict.fromkeys(missing.values()))}` (or "
                                "`dvc pull`) here first")
    for path, entry in needed.items():
        for rel, file in from_cache(cache, entry).items():
            (scratch / path / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(file, scratch / path / rel)


def environment(args, scratch: Path, run: int) -> dict[str, str]:
    """The environment dvc and its stages run in: this checkout's python first on PATH, the copy's sources, and the
    conditions asked for."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(scratch / "src"), os.environ.get("PYTHONPATH")]))}
    if args.threads:
        env.update(OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads))
    preload = [p for p in env.get("LD_PRELOAD", "").split(":") if p and "tcmalloc" not in p]
    if args.allocator == "glibc":
        env["LD_PRELOAD"] = ":".join(preload)
    elif args.allocator == "tcmalloc":
        from frozenbridge.bench.allocator import allocators

        if not (library := allocators().get("tcmalloc")):
            raise FrozenbridgeError("--allocator tcmalloc: libtcmalloc_minimal.so.4 is not installed here")
        env["LD_PRELOAD"] = ":".join([library, *preload])
    if args.compile_cache == "cold":
        env["TORCHINDUCTOR_CACHE_DIR"] = str(scratch.parent / f"inductor-cache-{run}")  # fresh and empty each rerun
    return {**env, **args.env}


def conditions(args, env: dict[str, str]) -> dict:
    from frozenbridge.core.precision import compile_cache

    preload, cache = env.get("LD_PRELOAD", ""), env.get("TORCHINDUCTOR_CACHE_DIR") or str(compile_cache())
    return {"threads": env.get("OMP_NUM_THREADS", f"default ({os.cpu_count()} cores)"),
            "allocator": next((n for n in ("tcmalloc", "jemalloc") if n in preload), "glibc malloc"),
            "compile_cache": f"{args.compile_cache} ({cache})", "after": args.after, "env": args.env}


def machines(scratch: Path) -> dict:
    """The machine bench/repro.json says made the lock, this one, and whether they are the same CPU (model and bf16
    path, as tools.run_floor compares them); a lock with no recorded machine is taken as this machine's."""
    from frozenbridge.comparison.replicates import where
    from frozenbridge.tools.repro_timing import bf16_path, cpu_model
    from frozenbridge.tools.run_floor import same_machine

    here = {"cpu_model": cpu_model(), "bf16_path": bf16_path()}
    timed = scratch / "bench" / "repro.json"
    lock = json.loads(timed.read_text())["machine"] if timed.is_file() else None
    return {"lock": where({"machine": lock}) if lock else "not recorded (no bench/repro.json): taken as this one",
            "here": where({"machine": here}), "same": lock is None or same_machine({"machine": lock},
                                                                                   {"machine": here})}


def leaves(x, path: str = "", pattern: str = ""):
    """(path, its pattern with list items as [], value) of every leaf of a JSON value."""
    if isinstance(x, (dict, list)):
        for k, v in (x.items() if isinstance(x, dict) else enumerate(x)):
            yield from leaves(v, *((f"{path}.{k}", f"{pattern}.{k}") if isinstance(x, dict) else
                                   (f"{path}[{k}]", f"{pattern}[]")))
    else:
        yield path, pattern, x


def json_fields(a, b) -> dict[str, str]:
    """Per field (list items as []), how many of its values differ: {"captions[].floor": "34 of 240"}."""
    la, lb = ({p: (pat, v) for p, pat, v in leaves(x)} for x in (a, b))
    counts: dict[str, list[int]] = {}
    for p in la.keys() | lb.keys():
        (pattern, va), vb = la.get(p) or (lb[p][0], KeyError), lb.get(p, (None, KeyError))[1]
        count = counts.setdefault(pattern.lstrip("."), [0, 0])
        count[0] += 1
        count[1] += not (va == vb or (va != va and vb != vb))  # a NaN in both is no difference
    return {k: f"{d} of {n}" for k, (n, d) in sorted(counts.items()) if d}


def file_difference(a: Path, b: Path) -> dict:
    """How two versions of a file differ: lines (and JSON fields) for text, else only that they do."""
    if b.suffix not in TEXT:
        return {"differs": True}
    la, lb = a.read_text(errors="replace").splitlines(), b.read_text(errors="replace").splitlines()
    if max(len(la), len(lb)) > 50_000:  # too long to align: line by line
        changed = sum(x != y for x, y in zip(la, lb)) + abs(len(la) - len(lb))
    else:
        ops = difflib.SequenceMatcher(None, la, lb, autojunk=False).get_opcodes()
        changed = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in ops if tag != "equal")
    out = {"differs": True, "lines": f"{changed} of {max(len(la), len(lb))}"}
    try:
        out.update({"fields": json_fields(json.loads(a.read_text()), json.loads(b.read_text()))} if b.suffix ==
                   ".json" else {})
    except ValueError:
        pass
    return out


def difference(a: dict[str, Path] | None, b: dict[str, Path]) -> dict[str, dict]:
    """{file inside the output: how it differs} between two versions of one output (a None: not at hand)."""
    if a is None:
        return {"": {"differs": "the lock's version is not in this checkout's DVC cache to compare files"}}
    return {rel: file_difference(a[rel], b[rel]) if rel in a and rel in b else {"differs": "in one version only"}
            for rel in sorted(a.keys() | b.keys())
            if rel not in a or rel not in b or not filecmp.cmp(a[rel], b[rel], shallow=False)}


def said(files: dict[str, dict]) -> str:
    """The files of an output that differ, in words: " (result.json: 34 of 1900 lines differ; captions[].floor ...)"."""
    parts = []
    for rel, d in files.items():
        if isinstance(d["differs"], str):  # a note: the lock's version not at hand, or a file in one version only
            parts.append(f"{rel}: {d['differs']}" if rel else d["differs"])
            continue
        fields = ", ".join(f"{k} {v}" for k, v in d.get("fields", {}).items())
        what = f"{d['lines']} lines differ" if "lines" in d else "differs"
        parts.append(f"{rel or 'the file'}: " + "; ".join(filter(None, [what, fields])))
    return f" ({' | '.join(parts)})" if parts else ""


def rerun(args, scratch: Path, targets: list[str], run: int) -> tuple[dict[str, dict], float]:
    """One `dvc repro --force --single-item` of the targets: {output: its lock entry} after it, and its seconds. The
    outputs are kept aside (runs/<run>/ beside the copy) for comparing with later reruns."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "dvc", "repro", "--force", "--single-item", *targets], cwd=scratch,
                          env=environment(args, scratch, run), stdout=sys.stderr, stderr=sys.stderr)
    if proc.returncode:
        raise FrozenbridgeError(f"dvc repro {' '.join(targets)} failed in {scratch} (exit {proc.returncode}); "
                                "its output is above")
    seconds, made = time.perf_counter() - start, outputs(lock_stages(scratch), targets)
    for path in made:
        kept = scratch.parent / "runs" / str(run) / path
        kept.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if (scratch / path).is_dir() else shutil.copyfile)(scratch / path, kept)
    return made, seconds


def check(args, root: Path, work: Path) -> dict:
    scratch, targets = work / "copy", [*([args.after] if args.after else []), *args.stages]
    commit = git(root, "rev-parse", "HEAD").strip()
    git(root, "clone", "-q", "--shared", "--no-checkout", str(root), str(scratch))
    git(scratch, "checkout", "-q", "--detach", commit)
    lock = outputs(lock_stages(scratch))
    if unknown := [s for s in targets if s not in lock_stages(scratch)]:
        raise FrozenbridgeError(f"{', '.join(unknown)}: not a stage in dvc.lock at HEAD ({commit[:7]}); "
                                "`dvc stage list` names the stages")
    cache = Path(subprocess.run([sys.executable, "-m", "dvc", "cache", "dir"], cwd=root, check=True,
                                capture_output=True, text=True).stdout.strip())
    bring_dependencies(scratch, cache, targets)
    where = machines(scratch)
    report = {"stages": args.stages, "commit": commit, "machines": where,
              "conditions": conditions(args, environment(args, scratch, 1)), "reruns": [], "between": []}
    print(f"lock's machine: {where['lock']}; this machine: {where['here']}")
    if not where["same"]:
        print("  another CPU: training outputs are not expected to match dvc.lock across CPUs (bf16 kernels "
              "differ); the reruns are judged against each other")
    print("conditions: " + ", ".join(f"{k} {v}" for k, v in report["conditions"].items() if v))

    def compared(path: str, stage: str, md5s: tuple, versions: tuple) -> dict:
        same = md5s[0] == md5s[1]
        found = {} if same else difference(*(v() for v in versions))
        print(f"  {path} ({stage}): {'same' if same else 'differs'}{said(found)}")
        return {"stage": stage, "same": same, "files": found}

    def kept(run: int, path: str):
        top = work / "runs" / str(run) / path
        return lambda: {"": top} if top.is_file() else {
            str(p.relative_to(top)): p for p in sorted(top.rglob("*")) if p.is_file()}

    for run in range(1, args.times + 1):
        made, seconds = rerun(args, scratch, targets, run)
        print(f"rerun {run} of {args.times} ({seconds:.0f} s), against HEAD's dvc.lock:")
        outs = {}
        for p, e in made.items():
            locked = lock.get(p, {}).get("md5")
            outs[p] = {"md5": e["md5"], "lock_md5": locked, **compared(p, e["stage"], (locked, e["md5"]), (
                lambda p=p: from_cache(cache, lock[p]) if p in lock else None, kept(run, p)))}
        report["reruns"].append({"seconds": round(seconds, 1), "outputs": outs})
    for i, j in combinations(range(1, args.times + 1), 2):
        print(f"rerun {j} against rerun {i}:")
        a, b = (report["reruns"][k - 1]["outputs"] for k in (i, j))
        report["between"].append({"reruns": [i, j], "outputs": {
            p: compared(p, o["stage"], (a[p]["md5"], o["md5"]), (kept(i, p), kept(j, p))) for p, o in b.items()}})
    with_lock = all(o["same"] for r in report["reruns"] for o in r["outputs"].values())
    with_each = all(o["same"] for p in report["between"] for o in p["outputs"].values())
    report["repeats"] = with_lock if where["same"] else with_each
    report["verdict"] = ("every rerun matched dvc.lock" if with_lock else "bits differ from dvc.lock on its own "
                         "machine" + ("" if with_each else ", and between reruns")) if where["same"] else (
        "bits differ between reruns on this machine" if not with_each else "the reruns matched each other"
        if args.times > 1 else "one rerun: nothing of this machine's to compare it with (--times 2)")
    print(f"{'repeats' if report['repeats'] else 'DOES NOT REPEAT'}: {report['verdict']}")
    return report


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m frozenbridge.tools.rerun_check", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stages", nargs="+", metavar="STAGE", help="the stages to rerun (dvc stage list names them)")
    ap.add_argument("--times", type=int, default=1, help="reruns, each compared with the lock and the others")
    ap.add_argument("--threads", type=int, help="OMP_NUM_THREADS and MKL_NUM_THREADS (torch's threads) for the stages")
    ap.add_argument("--allocator", choices=["glibc", "tcmalloc"],
                    help="glibc: drop tcmalloc from LD_PRELOAD; tcmalloc: preload it (default: as this shell has it)")
    ap.add_argument("--compile-cache", choices=["cold", "warm"], default="warm",
                    help="cold: TORCHINDUCTOR_CACHE_DIR a fresh empty folder each rerun; warm: the usual (default)")
    ap.add_argument("--after", metavar="STAGE", help="rerun this stage first, in the same dvc process and copy")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                    help="more environment for the stages, e.g. ONEDNN_MAX_CPU_ISA=AVX512_CORE (repeatable)")
    ap.add_argument("--out", type=Path, help="write the report as JSON here")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder (its path is printed)")
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # each line as it comes, between dvc's on stderr
    if bad := [e for e in args.env if not e.partition("=")[0] or "=" not in e]:
        raise FrozenbridgeError(f"--env {bad[0]!r}: expected NAME=VALUE")
    if args.times < 1 or (args.threads is not None and args.threads < 1):
        raise FrozenbridgeError("--times and --threads take a whole number of at least 1")
    args.env = dict(e.split("=", 1) for e in args.env)
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    if top.returncode:
        raise FrozenbridgeError(f"{Path.cwd()}: not inside a git checkout of the project")
    root = Path(top.stdout.strip())
    work = Path(tempfile.mkdtemp(prefix="rerun-check-"))
    try:
        report = check(args, root, work)
    finally:
        if args.keep:
            print(f"scratch folder kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
    sys.exit(0 if report["repeats"] else 1)


if __name__ == "__main__":
    run_cli(main)
