"""Stage onetoken_score: agreement of every replicate's captions with their pictures, and the alignment check.

Scores in the encoder's own image-text space when it has a text tower (CLIP, SigLIP), else with the retrieval
study's trained tower and picture projection (onetoken.agreement.tower, first replicate; shapes pictures only),
else records why agreement is not available. Reads runs/onetoken/*/result.json and data/onetoken/features/test.parquet;
writes metrics/onetoken/scores.json (floor, trained and ceiling agreement, share of the gap closed, exact matches,
distinct captions, the alignment check), plots/onetoken/agreement.csv and plots/onetoken/alignment.png.
"""

import logging

from frozenbridge.core.atomic import write_csv, write_json
from frozenbridge.core.device import pick_device
from frozenbridge.core.stage import require, run_cli, stage_parser
from frozenbridge.onetoken.data.features import load_pictures
from frozenbridge.onetoken.evaluation.scorers import NotAvailable, alignment
from frozenbridge.onetoken.evaluation.scoring import AGREEMENT_HEADER, agreement_rows, load_results, pick_scorer, score
from frozenbridge.onetoken.params import load_params
from frozenbridge.onetoken.paths import FEATURES, METRICS, PLOTS
from frozenbridge.onetoken.summary.figures import alignment_heatmap, unavailable

log = logging.getLogger("frozenbridge.onetoken")


def main() -> None:
    args = stage_parser(__doc__).parse_args()
    params = load_params(args.params)
    results = load_results(params.replicates)
    require(FEATURES / "test.parquet", stage="onetoken_encode")
    test = load_pictures(FEATURES / "test.parquet", params.onetoken.encoder.name)
    n = len(next(iter(results.values()))["captions"])
    try:
        scorer, why = pick_scorer(params, args.params, test, n, pick_device(params.device)), None
    except NotAvailable as err:
        scorer, why = None, str(err)
        log.warning("%s", why)
    summary = score(results, test, scorer, why)
    if scorer is not None:
        check = alignment(scorer, test.captions[:n])
        alignment_heatmap(check.pop("matrix"), [c[0] for c in test.captions[:n]], test.files, check, scorer.name,
                          PLOTS / "alignment.png", params.onetoken.agreement.shown)
        summary["alignment"] = check
    else:
        unavailable(why, PLOTS / "alignment.png")
    write_json(METRICS / "scores.json", summary)
    write_csv(PLOTS / "agreement.csv", AGREEMENT_HEADER, agreement_rows(summary))
    if scorer is not None:
        log.info("agreement: untrained %s, trained %s, the folder's captions %.4f; share of the gap %s",
                 summary["median"]["floor"]["agreement"]["median"], summary["median"]["trained"]["agreement"]["median"],
                 summary["ceiling"], summary["median"]["share_of_gap"])


if __name__ == "__main__":
    run_cli(main)
