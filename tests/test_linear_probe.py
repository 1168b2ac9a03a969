"""The one linear probe both the shapes study and the audit fit (core/linear_probe.py)."""

import numpy as np

from frozenbridge.core.linear_probe import fit_linear_probe


def test_it_separates_classes():
    x = np.array([[0.0, 1.0], [0.1, 0.9], [1.0, 0.0], [0.9, 0.1], [-1.0, -1.0], [-0.9, -1.1]])
    y = np.array([0, 0, 1, 1, 2, 2])
    predict = fit_linear_probe(x, y, 3, l2=1e-3, iterations=100)
    assert predict(x).tolist() == y.tolist()


def test_standardized_it_reads_a_feature_whatever_its_scale():
    """The label sits in a feature a thousand times smaller than a noise feature: under the same l2, the raw fit
    cannot afford the weight that feature needs and misses most labels; standardized, it reads them all, and
    rescaling or shifting the features changes none of its answers."""
    rng = np.random.default_rng(0)
    y = np.arange(60) % 2
    x = np.stack([(y * 2.0 - 1.0) * 1e-3 + rng.normal(0, 1e-4, 60), rng.normal(0, 1.0, 60)], 1)
    raw = fit_linear_probe(x, y, 2, l2=1.0, iterations=100)
    scaled = fit_linear_probe(x, y, 2, l2=1.0, iterations=100, standardize=True)
    assert (raw(x) == y).mean() < 0.8
    assert (scaled(x) == y).mean() == 1.0
    moved = x * np.array([50.0, 0.2]) + np.array([3.0, -7.0])
    refit = fit_linear_probe(moved, y, 2, l2=1.0, iterations=100, standardize=True)
    assert refit(moved).tolist() == scaled(x).tolist()
