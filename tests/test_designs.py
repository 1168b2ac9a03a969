"""The four ways to connect a picture, on tensors: their trainable parameters beside the MLP connector's at the
embedded backbones' sizes, their outputs' shapes, the codebook's k-means, and a zero-gated cross-attention block
that leaves the hidden state exactly as it was."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from torch import nn

from frozenbridge.bridge.design import design_class, rebuild
from frozenbridge.designs import design_names
from frozenbridge.designs.codebook import Codebook
from frozenbridge.designs.cross_attention import CrossAttention, GatedBlock
from frozenbridge.shapes.training.codebook import fit_codebook

EMBEDDED = [14, 14, 112]  # EfficientNet-Lite0's block-10 grid
WIDTH, LAYERS = 576, 30  # SmolLM2-135M


def _mlp_params() -> int:
    return design_class("mlp")(EMBEDDED, WIDTH, merge=2, order="columns", positions=True).n_params


def test_every_design_params_allow_is_a_class_that_says_its_name_and_no_other_is():
    from frozenbridge.core.errors import FrozenbridgeError

    assert design_names() == ("codebook", "cross_attention", "mlp", "resampler")
    assert all(design_class(name).design == name for name in design_names())
    with pytest.raises(FrozenbridgeError, match=r"shapes.connector.design = 'perceiver' is not allowed; expected one of "
                                                r"\['codebook', 'cross_attention', 'mlp', 'resampler'\]"):
        design_class("perceiver")


@pytest.mark.parametrize("design, settings", [("resampler", {"latents": 49}), ("resampler", {"latents": 16}),
                                              ("cross_attention", {"layers": LAYERS, "every": 4}),
                                              ("codebook", {"codes": 1024})])
def test_every_design_trains_within_15_percent_of_the_mlp_connector(design, settings):
    mlp = _mlp_params()
    assert mlp == 619_200
    n = design_class(design)(EMBEDDED, WIDTH, **settings).n_params
    assert abs(n - mlp) <= 0.15 * mlp, (design, settings, n, mlp)


def test_cross_attention_every_6th_layer_is_the_smaller_size():
    every4 = CrossAttention(EMBEDDED, WIDTH, LAYERS, every=4)
    every6 = CrossAttention(EMBEDDED, WIDTH, LAYERS, every=6)
    assert every4.places() == [0, 4, 8, 12, 16, 20, 24, 28] and every6.places() == [0, 6, 12, 18, 24]
    assert every6.n_params < 0.85 * _mlp_params() < every4.n_params


@pytest.mark.parametrize("design, settings, tokens", [("mlp", {"merge": 2}, 49), ("resampler", {"latents": 16}, 16),
                                                      ("codebook", {"codes": 8}, 49)])
def test_sequence_designs_make_image_tokens_of_the_model_width(design, settings, tokens):
    module = design_class(design)(EMBEDDED, WIDTH, **settings)
    out = module(torch.randn(3, 196, 112))
    assert out.shape == (3, tokens, WIDTH) and module.n_out == tokens
    again = rebuild(design, module.config())
    again.load_state_dict(module.state_dict())
    x = torch.randn(2, 196, 112)
    assert torch.equal(again(x), module(x))


def test_kmeans_finds_separated_clusters_and_is_the_same_for_the_same_seed():
    gen = torch.Generator().manual_seed(0)
    centres = torch.tensor([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    points = torch.cat([c + 0.1 * torch.randn(50, 2, generator=gen) for c in centres])
    fitted = fit_codebook(points, 3, seed=1)
    assert torch.equal(fitted, fit_codebook(points, 3, seed=1))
    assert torch.cdist(centres, fitted).min(1).values.max() < 0.1  # every true centre has a fitted one beside it


def test_codebook_tokens_are_the_embeddings_of_the_nearest_codes():
    feats = torch.randn(2, 4, 3)  # a 2x2 grid of width 3; merge 1: each patch its own token
    centroids = torch.cat([feats[0], feats[1]])  # eight codes: each patch is exactly one of them
    book = Codebook([2, 2, 3], 5, merge=1, codes=8, order="rows", positions=False, centroids=centroids)
    assert book.code_ids(feats).tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert torch.equal(book(feats), book.embedding.weight[torch.arange(8)].reshape(2, 4, 5))
    assert book.n_params == 8 * 5  # the centroids are not trained


def test_a_zero_gate_leaves_the_hidden_state_exactly_as_it_was_in_fp32_and_bf16():
    block = GatedBlock(16, 8, heads=2, head_dim=4)
    for dtype in (torch.float32, torch.bfloat16):
        hidden = torch.randn(2, 5, 16).to(dtype)
        out = block(hidden, torch.randn(2, 7, 8), torch.tensor([True, True]))
        assert out.dtype == dtype and torch.equal(out, hidden)
    with torch.no_grad():
        block.gate.fill_(1.0)
    hidden = torch.randn(2, 5, 16)
    out = block(hidden, torch.randn(2, 7, 8), torch.tensor([True, False]))
    assert not torch.equal(out[0], hidden[0]) and torch.equal(out[1], hidden[1])  # the row with no picture skips


def test_attached_blocks_run_before_their_layers_only_while_reading():
    layers = nn.ModuleList(nn.Identity() for _ in range(6))
    cross = CrossAttention([2, 2, 3], 16, layers=6, every=3, heads=2, head_dim=4)
    with torch.no_grad():
        for block in cross.blocks:
            block.gate.fill_(1.0)
    cross.attach(layers)
    hidden = torch.randn(1, 5, 16)
    assert torch.equal(layers[0](hidden), hidden)  # not reading: no picture, no change
    with cross.reading(torch.randn(1, 4, 3), torch.tensor([True])):
        assert not torch.equal(layers[0](hidden), hidden) and torch.equal(layers[1](hidden), hidden)
        assert not torch.equal(layers[3](hidden), hidden)
    cross.detach()
    with cross.reading(torch.randn(1, 4, 3), torch.tensor([True])):
        assert torch.equal(layers[0](hidden), hidden)


@pytest.mark.parametrize("family", ["qwen2", "gemma2", "gpt2", "opt"])
def test_a_fresh_cross_attention_model_gives_the_text_models_logits(family, family_lms, tiny_models):
    """Zero gates: the language model with its blocks attached and reading a picture gives exactly its own logits
    on the same inputs, in every family's layout (layers or h); with the gates open the picture changes them."""
    from frozenbridge.bridge.model import VLM, decoder_layers
    from frozenbridge.bridge.sequence import Item
    from frozenbridge.core.backbones.language import load_language

    lm = load_language(str(tiny_models["qwen2"] if family == "qwen2" else family_lms / family))
    plain = {}
    items = [Item(0, "Caption:", "a red circle"), Item(None, "Caption:", "a blue square")]
    feats = torch.randn(1, 4, 8)
    cross = CrossAttention([2, 2, 8], lm.width, layers=len(decoder_layers(lm.model)), every=2)
    vlm = VLM(lm, cross, torch.device("cpu"), False)
    batch, embeds, mask = vlm.inputs(items, feats, with_target=True, left_pad=False)
    assert cross.n_out == 0 and not batch.image_mask.any()  # no image tokens in the sequence
    with torch.no_grad():
        plain = lm.model(inputs_embeds=embeds, attention_mask=mask).logits
        with vlm.reading(batch, feats):
            assert torch.equal(lm.model(inputs_embeds=embeds, attention_mask=mask).logits, plain)
        for block in cross.blocks:
            block.gate.fill_(1.0)
        with vlm.reading(batch, feats):
            opened = lm.model(inputs_embeds=embeds, attention_mask=mask).logits
    assert not torch.equal(opened[0], plain[0]) and torch.equal(opened[1], plain[1])  # the row with no picture


def _codebook_params(design: str = "mlp", **codebook):
    from frozenbridge.shapes.params import CodebookKnobs, ConnectorParams, Params, ShapesParams

    return Params(shapes=ShapesParams(connector=ConnectorParams(design=design, codebook=CodebookKnobs(**codebook))))


def test_the_codebook_stage_fits_once_and_other_designs_get_the_same_note(tmp_path):
    """shapes_codebook: k-means centroids of the training features' merged patches where the design is codebook,
    read back by the runs; for every other design one note whose bytes no other connector setting changes (so no
    training reruns for it); centroids fitted under other params are refused in one line."""
    from test_train import tiny_split

    from frozenbridge.core.errors import FrozenbridgeError
    from frozenbridge.shapes.training.codebook import INFO, read_centroids, write_codebook

    data = tiny_split()  # 12 pictures of 4 x 4 patches, 32 wide: 2 x 2 merged, 48 vectors of 128
    params = _codebook_params(design="codebook", codes=8)
    write_codebook(params, data, tmp_path / "cb")
    centroids = read_centroids(params, tmp_path / "cb")
    assert centroids.shape == (8, 128)
    write_codebook(params, data, tmp_path / "again")
    assert torch.equal(read_centroids(params, tmp_path / "again"), centroids)  # seeded: the same codebook
    with pytest.raises(FrozenbridgeError, match="no codebook fitted under these params"):
        read_centroids(_codebook_params(design="codebook", codes=6), tmp_path / "cb")
    notes = []
    for i, connector in enumerate(({"design": "mlp"}, {"design": "mlp", "codes": 64}, {"design": "resampler"})):
        write_codebook(_codebook_params(**connector), None, tmp_path / str(i))
        assert [p.name for p in (tmp_path / str(i)).iterdir()] == [INFO]
        notes.append((tmp_path / str(i) / INFO).read_bytes())
        assert read_centroids(_codebook_params(**connector), tmp_path / str(i)) is None
    assert len(set(notes)) == 1
    with pytest.raises(FrozenbridgeError, match="shapes.connector.codebook.codes = 64: the training features hold only 48"):
        write_codebook(_codebook_params(design="codebook", codes=64), data, tmp_path / "too-many")
    assert not (tmp_path / "too-many").exists()  # nothing half-written


def test_probes_read_the_tokens_under_a_shape_for_designs_with_places_and_no_design_without():
    """grid_tokens says where each of a design's tokens lies: the MLP's and the codebook's merged blocks,
    cross-attention's per-patch vectors; a resampler's learned queries lie nowhere (the probe stage skips them)."""
    from frozenbridge.designs.resampler import Resampler
    from frozenbridge.shapes.evaluation.probes import place_vectors

    torch.manual_seed(0)
    feats, grid = torch.randn(2, 16, 8), (4, 4)
    scenes = [[{"cx": 4.0, "cy": 4.0, "size": 6.0}], [{"cx": 28.0, "cy": 4.0, "size": 6.0}]]  # cells 0 and 3
    designs = {"mlp": design_class("mlp")([4, 4, 8], 16, merge=2, order="columns", positions=True),
               "codebook": Codebook([4, 4, 8], 16, merge=2, codes=4, order="columns", positions=True,
                                    centroids=torch.randn(4, 32)),
               "cross_attention": CrossAttention([4, 4, 8], 16, layers=2, every=1)}
    under = {"mlp": [0, 2], "codebook": [0, 2], "cross_attention": [0, 3]}  # columns of 2x2 blocks; patches by row
    for name, design in designs.items():
        with torch.no_grad():
            tokens = design(feats)
        expected = torch.stack([tokens[0, under[name][0]], tokens[1, under[name][1]]]).numpy()
        assert torch.allclose(torch.from_numpy(place_vectors(feats, scenes, grid, 32, design)),
                              torch.from_numpy(expected)), name
    assert Resampler([4, 4, 8], 16, latents=4).grid_tokens is None


def test_the_zero_gate_gap_is_zero_and_the_trained_gates_come_back(tiny_models):
    """What the text stage records for the section-9 claim: a cross-attention run's blocks with their gates at 0
    move no logit (in fp32 and bf16), and the trained gates are restored afterwards."""
    from frozenbridge.shapes.evaluation.zero_gate import zero_gate_gap
    from frozenbridge.bridge.model import VLM, decoder_layers
    from frozenbridge.bridge.sequence import Item
    from frozenbridge.core.backbones.language import load_language

    lm = load_language(str(tiny_models["qwen2"]))
    torch.manual_seed(0)
    cross = CrossAttention([2, 2, 8], lm.width, layers=len(decoder_layers(lm.model)), every=1)
    with torch.no_grad():
        for block in cross.blocks:
            block.gate.fill_(0.5)  # as training leaves them: open
    items, feats = [Item(0, "Caption:", ""), Item(1, "Caption:", "")], torch.randn(2, 4, 8)
    for bf16 in (False, True):
        vlm = VLM(lm, cross, torch.device("cpu"), bf16)
        assert zero_gate_gap(vlm, items, feats) == 0.0
        assert all(float(block.gate) == 0.5 for block in cross.blocks)
    vlm = VLM(lm, cross, torch.device("cpu"), False)
    with torch.no_grad():  # and what it measures can move: with the trained (open) gates the logits differ
        batch, embeds, mask = vlm.inputs(items, feats, with_target=False, left_pad=False)
        alone = lm.model(inputs_embeds=embeds, attention_mask=mask).logits
        with vlm.reading(batch, feats):
            assert not torch.equal(lm.model(inputs_embeds=embeds, attention_mask=mask).logits, alone)


def test_cross_attention_knobs_gates_start_their_own_rate_and_a_gated_feed_forward():
    """gate_init sets every gate's start (inside logs its tanh), gate_lr puts the gates in an optimizer group of their
    own, and feed_forward adds a gated feed-forward per block; the defaults keep one group and no feed-forward."""
    plain = CrossAttention([2, 2, 8], 16, layers=4, every=2)
    assert len(plain.param_groups(1e-3)) == 1 and plain.inside(torch.ones(1, 4, 8)) == {"gates": [0.0, 0.0]}
    tuned = CrossAttention([2, 2, 8], 16, layers=4, every=2, gate_init=0.5, gate_lr=0.01, feed_forward=True)
    assert tuned.inside(torch.ones(1, 4, 8)) == {"gates": [0.4621, 0.4621], "ff_gates": [0.4621, 0.4621]}
    rest, gates = tuned.param_groups(1e-3)
    assert (rest["lr"], gates["lr"]) == (1e-3, 0.01) and len(gates["params"]) == 4
    assert len(rest["params"]) + 4 == len(list(tuned.parameters()))
    assert tuned.n_params > plain.n_params and rebuild("cross_attention", tuned.config()).config() == tuned.config()


def test_a_gated_feed_forward_at_zero_gates_is_still_the_text_model(tiny_models):
    from test_train import tiny_split

    from frozenbridge.bridge.model import VLM, decoder_layers
    from frozenbridge.core.backbones.language import load_language
    from frozenbridge.shapes.evaluation.zero_gate import zero_gate_gap

    lm = load_language(str(tiny_models["qwen2"]))
    data = tiny_split()
    cross = CrossAttention(data.meta["output_shape"], lm.width, layers=len(decoder_layers(lm.model)), every=1,
                           gate_init=0.7, feed_forward=True)
    vlm = VLM(lm, cross, torch.device("cpu"), bf16=False)
    items = [data.caption_item(i) for i in range(2)]
    assert zero_gate_gap(vlm, items, data.feats) == 0.0
    assert cross.inside(data.feats[:2])["gates"][0] == round(float(torch.tanh(torch.tensor(0.7))), 4)


def test_resampler_knobs_depth_and_query_scale_and_its_attention_spread():
    """depth stacks blocks; query_scale scales the queries' start; inside gives each query's attention entropy over
    the patches as a share of its most: 1 exactly where every patch looks alike (identical features, no positions
    learned yet), so attention cannot prefer one."""
    from frozenbridge.designs.resampler import Resampler

    torch.manual_seed(0)
    one = Resampler([2, 2, 8], 16, latents=3, heads=2, head_dim=4)
    torch.manual_seed(0)
    scaled = Resampler([2, 2, 8], 16, latents=3, heads=2, head_dim=4, depth=2, query_scale=0.1)
    assert len(one.blocks) == 1 and len(scaled.blocks) == 2
    assert torch.allclose(scaled.latents, one.latents * 0.1)
    alike = scaled.inside(torch.ones(5, 4, 8))
    assert alike["query_entropy"] == [1.0, 1.0, 1.0] and 0 < alike["on_patches"] < 1
    with torch.no_grad():
        scaled.media_positions.copy_(torch.eye(4, 8) * 50)  # patches now differ a lot
    apart = scaled.inside(torch.ones(5, 4, 8))
    assert all(e < 1.0 for e in apart["query_entropy"])
    assert scaled(torch.ones(5, 4, 8)).shape == (5, 3, 16)


def test_codebook_knobs_its_own_embedding_rate_and_the_codes_the_pictures_use():
    feats = torch.tensor([[[0.0], [1.0], [0.0], [1.0]], [[2.0], [2.0], [2.0], [2.0]]])  # 2 pictures, 2 x 2, 1 wide
    book = Codebook([2, 2, 1], 4, merge=1, codes=5, order="rows", positions=True,
                    centroids=torch.tensor([[0.0], [1.0], [2.0], [3.0], [4.0]]), embedding_lr=0.05)
    assert book.inside(feats) == {"codes_used": 3, "codes_share": 0.6}
    assert book.inside(feats[1:]) == {"codes_used": 1, "codes_share": 0.2}
    rest, embeddings = book.param_groups(1e-3)
    assert embeddings["lr"] == 0.05 and embeddings["params"] == [book.embedding.weight]
    assert rest["params"] == [book.positions]


def test_a_run_keeps_what_its_design_does_inside_and_its_precision(tiny_models, tmp_path):
    """run.json: the gates' tanh before training (step 0; then every 50 steps) for cross-attention, nothing for the
    MLP, which has nothing inside to show; every run says its device and precision."""
    import json

    from test_train import params, tiny_split

    from frozenbridge.core.backbones.language import load_language
    from frozenbridge.shapes.params import ConnectorParams, CrossAttentionKnobs
    from frozenbridge.shapes.training.run import train

    data, runs = tiny_split(), {}
    for design in ("mlp", "cross_attention"):
        p = params()
        connector = ConnectorParams(design=design, cross_attention=CrossAttentionKnobs(every=1, gate_init=0.25))
        p = dataclasses.replace(p, shapes=dataclasses.replace(p.shapes, connector=connector))
        train(p, None, 0, data, load_language(str(tiny_models["qwen2"])), torch.device("cpu"), False,
              tmp_path / design)
        runs[design] = json.loads((tmp_path / design / "run.json").read_text())
    assert "inside" not in runs["mlp"]
    first = runs["cross_attention"]["inside"][0]
    assert first["step"] == 0 and set(first["gates"]) == {round(float(torch.tanh(torch.tensor(0.25))), 4)}
    assert runs["mlp"]["precision"] == runs["cross_attention"]["precision"] == "fp32"
