"""Stage retrieval_embed: every caption the retrieval study reads, through the frozen language model once.

Reads the shapes pictures' scenes (data/shapes/pictures) and writes data/retrieval/texts/lm.parquet: one row a
distinct text (the
training captions, every short phrase, the test captions left to right and right to left), its vector (the mean of
the LM's last hidden states over its tokens, or the last token's: retrieval.text.pool) and its token ids, with the
feature cache's metadata. When vision.name is an image-text model (CLIP, SigLIP) it also writes
vision_text.parquet from that model's own text tower (seconds), so adding the vision_text tower never re-embeds.
Training a tower only reads these files, so no training change re-embeds a caption.
metrics/retrieval/embed.json records what was embedded and how (deterministic; timings go to the log).
"""

import logging
import time

from frozenbridge.core.atomic import atomic_path, write_json
from frozenbridge.core.backbones import load_language
from frozenbridge.core.device import pick_device
from frozenbridge.core.precision import describe, use_bf16
from frozenbridge.core.stage import run_cli, stage_parser
from frozenbridge.retrieval.data.text_cache import VisionTextTower, has_text_tower, lm_batches, write_text_features
from frozenbridge.retrieval.data.texts import scene_texts, texts_to_embed
from frozenbridge.retrieval.params import load_params
from frozenbridge.retrieval.paths import METRICS, TEXT_FEATURES
from frozenbridge.shapes import interface as shapes

log = logging.getLogger("frozenbridge.retrieval")


def main() -> None:
    args = stage_parser(__doc__).parse_args()
    params = load_params(args.params)
    d = params.shapes.data
    scenes = {s: scene_texts(shapes.scenes(s), s, d.seed, d.held_out) for s in shapes.SPLITS}  # before any model
    wanted = "vision_text" in params.retrieval.towers or has_text_tower(params.vision.name)
    vision_text = VisionTextTower(params.vision.name) if wanted else None
    lm = load_language(params.language.name)
    texts = texts_to_embed(scenes["train"], {name: scenes[s] for name, s in shapes.TEST_SPLITS.items()})
    device, cfg = pick_device(params.device), params.retrieval.text
    bf16 = use_bf16(cfg.precision, device)
    start = time.perf_counter()
    stats = {"texts": len(texts), "language": {"name": lm.name, "pool": cfg.pool, "width": lm.width}}
    with atomic_path(TEXT_FEATURES) as tmp:
        tmp.mkdir()
        meta = {"encoder": lm.name, "revision": lm.revision, "features": f"text-{cfg.pool}", "layer": None,
                "width": lm.width}
        write_text_features(tmp / "lm.parquet", lm_batches(lm, texts, cfg.pool, cfg.batch_size, device, bf16),
                            len(texts), meta, "embed captions (LM)")
        if vision_text is not None:
            width = vision_text.model.config.projection_dim if hasattr(vision_text.model.config, "projection_dim") \
                else vision_text.model.config.text_config.hidden_size
            meta = {"encoder": vision_text.name, "revision": vision_text.revision, "features": "text-tower",
                    "layer": None, "width": width}
            write_text_features(tmp / "vision_text.parquet", vision_text.batches(texts, cfg.batch_size, device),
                                len(texts), meta, "embed captions (vision text tower)")
            stats["vision_text"] = {"name": vision_text.name, "width": width}
    log.info("embedded %d texts in %.1f s (%s)", len(texts), time.perf_counter() - start, describe(bf16))
    write_json(METRICS / "embed.json", stats)


if __name__ == "__main__":
    run_cli(main)
