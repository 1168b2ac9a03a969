"""The retrieval study's parts: the contrastive loss and recall@K."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from frozenbridge.retrieval.contrastive import MAX_SCALE, Temperature, info_nce, similarity
from frozenbridge.retrieval.recall import match_ranks, recall_at


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
    assert float(t()) == pytest.approx(1 / 0.07, rel=1e-5)
    with torch.no_grad():
        t.log_scale.fill_(10.0)
    assert float(t()) == pytest.approx(MAX_SCALE)
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
