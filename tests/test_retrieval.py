"""The retrieval study's parts: the contrastive loss and recall@K."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from frozenbridge.retrieval.contrastive import MAX_SCALE, Temperature, info_nce, similarity
from frozenbridge.retrieval.recall import chance_recall, match_ranks, recall_at, recall_relevant, relevant_ranks


def test_a_perfect_pairing_scores_lower_loss_than_a_shuffled_one():
    torch.manual_seed(0)
    images = torch.randn(16, 8)
    texts = images + 0.05 * torch.randn(16, 8)  # each text near its own image
    shuffled = texts[torch.randperm(16)]
    scale = Temperature()()
    assert info_nce(images, texts, scale) < info_nce(images, shuffled, scale) - 1.0
    assert info_nce(images, texts, scale) < np.log(16)  # better than chance (uniform logits give log n)


def test_the_loss_is_symmetric_and_the_temperature_learns_within_its_cap():
    torch.manual_seed(1)
    a, b = torch.randn(8, 4), torch.randn(8, 4)
    assert torch.allclose(info_nce(a, b, 10.0), info_nce(b, a, 10.0))
    t = Temperature(0.07)
    assert float(t().detach()) == pytest.approx(1 / 0.07, rel=1e-5)
    with torch.no_grad():
        t.log_scale.fill_(10.0)
    assert float(t().detach()) == pytest.approx(MAX_SCALE)
    loss = info_nce(a, b, t())
    loss.backward()
    assert t.log_scale.grad is not None


def test_recall_on_a_hand_made_similarity_matrix():
    s = np.array([[0.9, 0.1, 0.0, 0.2],   # image 0: its text first
                  [0.8, 0.5, 0.1, 0.0],   # image 1: text 0 beats its own -> second
                  [0.1, 0.2, 0.3, 0.4],   # image 2: text 3 beats it -> second
                  [0.7, 0.6, 0.5, 0.1]])  # image 3: its text last -> fourth
    assert match_ranks(s).tolist() == [0, 1, 1, 3]
    r = recall_at(s, ks=(1, 2))
    assert r["image_to_text"] == {"R@1": 0.25, "R@2": 0.75}
    # texts as queries: text 1 and text 2 are beaten by image 3; text 3 by images 0 and 2
    assert match_ranks(s.T).tolist() == [0, 1, 1, 2]
    assert r["text_to_image"] == {"R@1": 0.25, "R@2": 0.75}


def test_ties_never_help_a_collapsed_model():
    assert recall_at(np.ones((5, 5)), ks=(1, 5)) == {"image_to_text": {"R@1": 0.0, "R@5": 1.0},
                                                     "text_to_image": {"R@1": 0.0, "R@5": 1.0}}
    with pytest.raises(ValueError, match="square"):
        recall_at(np.ones((2, 3)))


def test_similarity_is_cosine():
    a = torch.tensor([[3.0, 0.0], [0.0, 2.0]])
    assert torch.allclose(similarity(a, a), torch.eye(2))


def test_with_several_right_texts_the_loss_counts_them_all_and_square_masks_agree():
    torch.manual_seed(2)
    images, texts = torch.randn(4, 6), torch.randn(4, 6)
    eye = torch.eye(4, dtype=torch.bool)
    assert torch.allclose(info_nce(images, texts, 5.0, eye), info_nce(images, texts, 5.0))
    # a text that is right for two pictures: pulling it toward both is not punished as a negative
    texts2 = torch.cat([texts, images[:1] + images[1:2]])
    pos = torch.zeros(4, 5, dtype=torch.bool)
    pos[torch.arange(4), torch.arange(4)] = True
    pos[0, 4] = pos[1, 4] = True
    wrong = pos.clone()
    wrong[0, 4] = wrong[1, 4] = False
    wrong[2, 4] = True
    assert info_nce(images, texts2, 10.0, pos) < info_nce(images, texts2, 10.0, wrong)
    with pytest.raises(ValueError, match="positive"):
        info_nce(images, texts, 5.0, torch.zeros(4, 4, dtype=torch.bool))


def test_recall_with_several_right_candidates_and_its_chance_level():
    s = np.array([[0.9, 0.8, 0.1],    # right: 1 -> text 0 (wrong) beats it: rank 1
                  [0.2, 0.3, 0.4],    # right: 0 and 2 -> text 2 is first: rank 0
                  [0.5, 0.5, 0.1]])   # right: 1 -> tie with wrong text 0 counts against: rank 1
    rel = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=bool)
    assert relevant_ranks(s, rel).tolist() == [1, 0, 1]
    assert recall_relevant(s, rel, ks=(1, 2)) == {"R@1": pytest.approx(1 / 3, abs=1e-6), "R@2": 1.0}
    # a square identity relevance is the matched-pair case
    m = np.random.default_rng(0).random((6, 6))
    assert recall_relevant(m, np.eye(6, dtype=bool)) == recall_at(m)["image_to_text"]
    # chance: one right of 3 -> 1/3 at K=1; two right of 3 -> 2/3; K = 3 always hits
    assert chance_recall(rel, ks=(1, 3)) == {"R@1": pytest.approx((1 / 3 + 2 / 3 + 1 / 3) / 3, abs=1e-6), "R@3": 1.0}
    with pytest.raises(ValueError, match="right candidate"):
        recall_relevant(s, np.zeros((3, 3), dtype=bool))
