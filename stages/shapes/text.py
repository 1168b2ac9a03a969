"""Stage shapes_text: text, a picture, or both, asked of every trained run rebuilt from its saved directory.

Whether each run's language model was left as it was: the digest of its weights and its perplexity on a fixed passage
of ordinary prose (no picture, so the connector never runs), recorded by the training run before and after it
trained, against the base model's digest (text_check); the rebuilt run's perplexity beside them. The replies to the
no-picture prompts. Positions taken by text only, one picture and two pictures. A two-picture question no run trained on
("Which picture has a triangle, the first or the second?", exactly one has) on pairs of seen-pair test pictures, in
both orders. What a picture costs in KV cache, merged and unmerged, at the picture's side and twice it. For
cross-attention, how far its logits move from the text model's with every gate at 0 (as a fresh model starts). Writes
metrics/shapes/text.json.
"""

from frozenbridge.bridge.sequence import Item
from frozenbridge.bridge.token_cost import picture_cost
from frozenbridge.core.atomic import write_json
from frozenbridge.core.device import pick_device
from frozenbridge.core.precision import use_bf16
from frozenbridge.core.stage import require, run_cli, stage_parser
from frozenbridge.shapes.data.vocab import caption_prompt
from frozenbridge.shapes.evaluation.text_check import no_picture_replies, text_check
from frozenbridge.shapes.evaluation.two_pictures import ask, positions
from frozenbridge.shapes.evaluation.zero_gate import zero_gate_gap
from frozenbridge.shapes.params import load_params
from frozenbridge.shapes.paths import METRICS, add_dirs, model_dir, run_dir
from frozenbridge.shapes.training.split_data import load_split


def main() -> None:
    ap = add_dirs(stage_parser(__doc__))
    args = ap.parse_args()
    params = load_params(args.params)
    for recipe in params.shapes.recipes:
        for rep in params.replicates:
            require(model_dir(args.runs, recipe, rep) / "config.json",
                    run_dir(args.runs, recipe, rep) / "predictions.json", stage=f"shapes_evaluate@{recipe}-{rep}")
    test = load_split("test_seen", f"{args.data}/pictures", f"{args.data}/features", params.vision)
    device = pick_device(params.device)
    bf16 = use_bf16(params.shapes.train.precision, device)
    cfg = params.shapes.evaluate
    layout: dict = {}

    def also(model) -> dict:
        layout.setdefault("positions", positions(model))
        connector = model.connector
        if connector.grid_tokens and connector.n_out:  # a picture's tokens are its merged blocks (mlp, codebook)
            merge = connector.grid_tokens[0]
            layout.setdefault("image_cost", {
                **picture_cost(model.lm.model.config, connector.grid, merge, test.meta["image_size"]),
                "caption": test.captions[0], "caption_tokens": len(model.tokens.ids(" " + test.captions[0]))})
        if connector.reads_inside:  # cross-attention: with every gate at 0, is it the text model?
            firsts = [Item(i, caption_prompt(), "") for i in range(min(8, len(test.captions)))]
            layout.setdefault("zero_gate", {"max_abs_logit_difference": zero_gate_gap(model, firsts, test.feats),
                                            "pictures": len(firsts), "design": connector.design})
        if not connector.n_out:
            return {"two_pictures_skipped": f"the {connector.design} design reads one picture a row from inside the "
                                            f"language model; two pictures in one question need image tokens"}
        return {"two_pictures": ask(model, test.feats, test.shapes, cfg.items, cfg.batch_size, cfg.answer_tokens)}
    result = text_check(params.language.name, params.shapes.recipes, params.replicates, args.runs, device, bf16, also)
    result.update(layout)
    result["no_picture"] = no_picture_replies(params.shapes.recipes, params.replicates[0], args.runs)
    write_json(METRICS / "text.json", result)


if __name__ == "__main__":
    run_cli(main)
