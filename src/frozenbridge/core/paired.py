"""Two instruments or recipes compared replicate by replicate, with how sure the comparison is: the paired rule the
verdict table, the shapes study's recipe pairs and the audit against the study all use.

Two distribution-free statistics over the replicates, both exact (no bootstrap, no scipy):

- `sign_test_p`: the exact two-sided sign test, ties dropped: p = min(1, 2 P(X <= min(ahead, behind))) with
  X ~ Binomial(ahead + behind, 1/2); 1 when every replicate ties.
- `interval`: an exact order-statistic interval (binomial) for the median paired difference, distribution-free:
  [d_(k), d_(n+1-k)] of the n sorted differences for the largest k whose coverage 1 - 2 P(Binomial(n, 1/2) <= k-1)
  is at least 95%. Five replicates or fewer cannot reach 95% (with five, [min, max] covers 1 - 2/32 = 93.75%): the
  interval is then [min, max] and `coverage` says what it really covers.
- `supported`: "first" when the interval lies above zero, "second" when below, null otherwise, and null whenever
  the interval covers less than 90% (CLAIM): the only basis on which a report may call one side ahead. Five
  replicates reach 93.75% at best, so five of five ahead is a claim at that coverage, quoted with it; two
  replicates (50%) never support one.
"""

from __future__ import annotations

import math
import statistics
from fractions import Fraction

LEVEL = Fraction(95, 100)  # the coverage the interval is chosen for (the widest one when n cannot reach it)
CLAIM = Fraction(90, 100)  # the least coverage of an interval that may back a difference
METHOD = "exact order-statistic interval (binomial), distribution-free"


def _binomial_cdf(k: int, n: int) -> Fraction:
    """P(X <= k) for X ~ Binomial(n, 1/2), exactly."""
    return Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2**n)


def sign_test_p(ahead: int, behind: int) -> float:
    """Exact two-sided sign test over replicates, ties already dropped; 1.0 when nothing is left."""
    n = ahead + behind
    if n == 0:
        return 1.0
    return round(float(min(Fraction(1), 2 * _binomial_cdf(min(ahead, behind), n))), 4)


def median_interval(diffs: list[float]) -> dict:
    """The exact order-statistic (binomial) interval for the median of `diffs`: [d_(k), d_(n+1-k)] for the largest k
    covering at least 95%, or [min, max] with its real coverage when no k does."""
    d, n = sorted(diffs), len(diffs)
    if n == 0:
        raise ValueError("no differences: an interval needs at least one replicate")
    k = 1
    while k + 1 <= (n + 1) // 2 and 1 - 2 * _binomial_cdf(k, n) >= LEVEL:
        k += 1
    coverage = 1 - 2 * _binomial_cdf(k - 1, n)
    return {"low": d[k - 1], "high": d[n - k], "coverage": round(float(coverage), 4), "method": METHOD}


def supported(interval: dict) -> str | None:
    """Which side of the pair the interval backs: "first" (above zero), "second" (below), or None (it includes
    zero, or covers less than CLAIM, 90%)."""
    if interval["coverage"] < CLAIM:
        return None
    return "first" if interval["low"] > 0 else "second" if interval["high"] < 0 else None


def statistics_of(diffs: list[int]) -> dict:
    """The paired statistics of one pair, test set and task, from its per-replicate differences (first - second)."""
    ahead, behind = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    interval = median_interval(diffs)
    return {"ahead": ahead, "tied": len(diffs) - ahead - behind, "behind": behind,
            "median_difference": statistics.median(diffs), "sign_test_p": sign_test_p(ahead, behind),
            "interval": interval, "supported": supported(interval), "differences": diffs, "replicates": len(diffs)}
