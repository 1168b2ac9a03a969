"""`frozenbridge audit`, `audit-example` and `audit-export`: your own pictures and questions audited, a small folder
in the audit's format to copy from, and the shapes study's pictures as such a folder."""

from __future__ import annotations

from pathlib import Path

from frozenbridge.core.errors import FrozenbridgeError


def audit(args) -> list[dict]:
    import dataclasses
    import logging

    from frozenbridge.audit.chain import run_audit
    from frozenbridge.audit.params import Params
    from frozenbridge.audit.report.before import learning_sentences, repeat_sentences

    params = Params.load(args.params) if Path(args.params).is_file() else Params.parse({})
    train = dataclasses.replace(params.audit.train, **{k: v for k, v in (("stage1_steps", args.stage1_steps),
                                                                         ("stage2_steps", args.stage2_steps))
                                                       if v is not None})
    if args.replicates < 1:
        raise FrozenbridgeError(f"--replicates {args.replicates}: expected 1 or more")
    params = dataclasses.replace(
        params, audit=dataclasses.replace(params.audit, train=train, replicates=tuple(range(args.replicates))),
        **({"language": dataclasses.replace(params.language, name=args.language)} if args.language else {}),
        **({"vision": dataclasses.replace(params.vision, name=args.vision)} if args.vision else {}))
    logging.getLogger("frozenbridge").setLevel(logging.INFO)
    numbers = run_audit(params, args.folder, Path(args.out))
    overall = numbers["checks"]["overall"]
    return [{"audit": str(Path(args.out) / "audit.md"),
             "read_first": learning_sentences(numbers) + repeat_sentences(numbers),  # the page's first section
             "questions": overall["questions"],
             "right": overall["score"]["right"], "best_control": overall["best_control"],
             "control": overall["score"][overall["best_control"]], "gap": overall["gap"],
             "gap_interval": overall["gap_interval"]}]


def audit_example(args) -> list[dict]:
    from frozenbridge.audit.data.example import write_example_folder
    from frozenbridge.audit.data.folder import read_audit_folder

    write_example_folder(Path(args.out))
    f = read_audit_folder(args.out)
    return [{"audit_folder": args.out, "train": f.train.n_pictures, "test": f.test.n_pictures,
             "questions": f.train.n_questions + f.test.n_questions}]


def audit_export(args) -> list[dict]:
    from frozenbridge.audit.data.export import export_shapes

    out = Path(args.out)
    if out.exists():
        raise FrozenbridgeError(f"{out}: already exists; name a new folder")
    counts = export_shapes(Path(args.pictures), out)
    return [{"audit_folder": args.out, "train": counts["train"]["pictures"], "test": counts["test"]["pictures"],
             "questions": counts["train"]["questions"] + counts["test"]["questions"]}]


def show_audit(row: dict) -> str:
    """The page's "read this first" (a run still learning, test pictures that repeat training ones) before the gap,
    as the page puts it, so a terminal reader meets it before the number."""
    lo, hi = row["gap_interval"]
    first = "".join(f"read this first: {sentence}\n" for sentence in row.get("read_first", []))
    return first + (f"{row['questions']} test questions: {row['right']:g}% right with the picture, {row['control']:g}% "
                    f"with the best control ({row['best_control']}): the picture adds {row['gap']:g} points (95% "
                    f"interval {lo:g} to {hi:g})\nthe audit: {row['audit']}")


def show_folder(row: dict) -> str:
    return (f"{row['audit_folder']}: {row['train']} training and {row['test']} test pictures, {row['questions']} "
            f"questions; audit it with: frozenbridge audit {row['audit_folder']}")


def add_commands(sub, common) -> None:
    u = sub.add_parser("audit", parents=[common], help="audit your own pictures and questions: is the score real?",
                       description="Train the connector on FOLDER's training pictures (stage 1 on their captions "
                                   "when they have any, then their questions) and score its test questions with "
                                   "the right picture, a blank one, another test picture and none; per kind, on "
                                   "held-out combinations, with the failures read and a linear probe of the "
                                   "frozen encoder. FOLDER holds train/ and test/, each with pictures and a "
                                   "metadata.jsonl (README: Your own pictures and questions). Writes --out: "
                                   "audit.md (the page), audit.png, audit.json (every number), answers.jsonl, "
                                   "the features and the runs. Backbones and settings: params.yaml's (vision, "
                                   "language, audit:) when there is one here, else the embedded defaults.")
    u.add_argument("folder", help="the folder to audit")
    u.add_argument("--out", default="audit", help="the folder it writes (default audit)")
    u.add_argument("--params", default="params.yaml", help="whose backbones and audit settings (default "
                                                           "params.yaml; the defaults where there is none)")
    u.add_argument("--replicates", type=int, default=1,
                   help="runs to train and check, replicates 0..N-1 (default 1; params.yaml's audit.replicates are "
                        "for the pipeline's folder, the shapes study's own pictures, audited at five)")
    u.add_argument("--stage1-steps", type=int, default=None, help="caption steps (default audit.train.stage1_steps)")
    u.add_argument("--stage2-steps", type=int, default=None, help="question steps (default audit.train.stage2_steps)")
    u.add_argument("--language", default=None, help="the language model (default language.name)")
    u.add_argument("--vision", default=None, help="the vision encoder (default vision.name)")
    u.set_defaults(func=audit, show=show_audit)
    e = sub.add_parser("audit-example", parents=[common], help="write a small example folder in the audit's format",
                       description="Write 12 training and 6 test pictures of coloured shapes with captions and "
                                   "questions, two test pictures marked held out: a folder to copy the format from.")
    e.add_argument("out", help="the folder to write (must not exist)")
    e.set_defaults(func=audit_example, show=show_folder)
    x = sub.add_parser("audit-export", parents=[common], help="the shapes study's pictures as an audit folder",
                       description="Write the shapes study's pictures and questions (data/shapes/pictures, from "
                                   "`dvc repro shapes_data`) as an audit folder: its audit should agree with the "
                                   "study's own table.")
    x.add_argument("out", help="the folder to write (must not exist)")
    x.add_argument("--pictures", default="data/shapes/pictures", help="the shapes pictures (default "
                                                                      "data/shapes/pictures)")
    x.set_defaults(func=audit_export, show=show_folder)
