"""The README's first lines: what the default run found, on what machine, in how long, in one paragraph generated
from the files that hold it (metrics/headline.json, the verdict table, bench/repro.json, params.yaml), so the first
screen never states a number the results do not hold."""

from __future__ import annotations

from pathlib import Path

from frozenbridge.core.config import read_yaml
from frozenbridge.core.summary import read_json_if_present
from frozenbridge.tools.machines import machine_name
from frozenbridge.tools.repro_report import untimed_sentence
from frozenbridge.tools.where_it_runs import timed_replicates

PICTURE = "plots/shapes/gallery_caption_qa.png"  # what a trained run says on test pictures (shapes_gallery draws it)


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} minutes" if seconds < 5400 else f"{seconds / 3600:.1f} hours"


def finding(root: Path, claims: tuple[int, int, int] | None) -> list[str]:
    """The paragraph: the frozen language model's exact captions on seen and held-out pairs (medians over the
    replicates, through the connector alone), how many reference claims hold (`claims`: hold, do not, inconclusive;
    None leaves them out), and the timed run's machine and minutes; [] before the default run has metrics."""
    headline = ((read_json_if_present(root / "metrics" / "headline.json") or {}).get("headline") or {})
    shapes = headline.get("shapes") or {}
    if "caption_exact_seen" not in shapes or "caption_exact_heldout" not in shapes:
        return []
    params = read_yaml((root / "params.yaml").read_text()) if (root / "params.yaml").is_file() else {}
    language = (params.get("language") or {}).get("name", "the language model")
    text = (f"Trained through a connector alone, the frozen `{language}` writes the exact caption of a median "
            f"{shapes['caption_exact_seen']:g}% of test pictures whose color–shape pairs it saw in training and "
            f"{shapes['caption_exact_heldout']:g}% of pictures of pairs it never saw.")
    if claims is not None:
        hold, fail, open_ = claims
        text += (f" Of the {hold + fail + open_} claims of the four reference studies, {hold} hold here, {fail} do "
                 f"not and {open_} are not yet settled.")
    repro = read_json_if_present(root / "bench" / "repro.json")
    if repro and repro.get("machine"):
        reps = len(timed_replicates(repro))
        on = "a CPU with no GPU, the " if repro["machine"].get("device") == "cpu" else "the "
        text += (f" One `dvc repro` of every study at {reps} paired replicates took {minutes(repro['total_seconds'])} "
                 f"on {on}{machine_name(repro['machine'])}.{untimed_sentence(repro, root)}")
    return [text]
