"""referee.stats against an independent computation: scipy.stats, which shares no code with it.

The referee's formulas use the standard library only (a Student's t table rounded to three decimals, the
finite series of the t distribution, the normal law); scipy computes the same quantities from its own
special functions. Each check is at the precision the referee promises: the table's rounding for the
quantiles, close to machine precision for the distributions.
"""

from __future__ import annotations

import math
import random
import statistics

import pytest
from scipy import stats as scipy_stats

from referee import stats
from referee.stats import Estimate, Sprt, Verdict


def samples(seed: int, count: int) -> list[list[float]]:
    """``count`` samples of 2 to 40 normal values, of varied mean and spread."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        size, middle, spread = rng.randint(2, 40), rng.uniform(-20, 20), rng.uniform(0.5, 40)
        out.append([rng.gauss(middle, spread) for _ in range(size)])
    return out


@pytest.mark.parametrize("df", range(1, 41))
def test_the_t_quantiles_are_scipys_to_the_tables_rounding(df):
    expected = scipy_stats.t.ppf(0.975, df) if df <= 20 else scipy_stats.norm.ppf(0.975)
    assert stats.t_quantile(df) == pytest.approx(expected, abs=5e-4 if df <= 20 else 1e-4)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 7, 10, 15, 19, 20])
@pytest.mark.parametrize("t", [-30.0, -4.3, -2.0, -0.7, 0.0, 0.3, 1.0, 2.086, 4.303, 12.0])
def test_the_t_distribution_is_scipys(t, df):
    assert stats.t_cdf(t, df) == pytest.approx(scipy_stats.t.cdf(t, df), abs=1e-12)


@pytest.mark.parametrize("t", [-3.0, -1.96, 0.0, 0.5, 2.5])
def test_beyond_20_degrees_the_t_distribution_is_the_normal_law(t):
    assert stats.t_cdf(t, 21) == pytest.approx(scipy_stats.norm.cdf(t), abs=1e-12)
    assert stats.t_cdf(t, 400) == pytest.approx(scipy_stats.norm.cdf(t), abs=1e-12)


def test_the_t_interval_is_scipys():
    """ci95 is the half-width of scipy's t interval of the mean (with the table's quantile)."""
    for values in samples(1, 200):
        df = len(values) - 1
        low, high = scipy_stats.t.interval(
            0.95, df, loc=statistics.fmean(values), scale=scipy_stats.sem(values)
        )
        # the same interval, rescaled from scipy's exact quantile to the table's (rounded, 1.96 beyond 20)
        expected = (high - low) / 2 * stats.t_quantile(df) / scipy_stats.t.ppf(0.975, df)
        assert stats.ci95(values) == pytest.approx(expected, rel=1e-9)
    assert stats.ci95([]) == 0.0
    assert math.isinf(stats.ci95([3.0]))


def test_the_t_likelihood_of_superiority_is_one_minus_scipys_one_sided_p_value():
    """P(true mean > 0) under Student's t is 1 − p of the one-sided test of mean ≤ 0: the same t."""
    for values in samples(2, 200):
        if len(values) - 1 > 20:
            continue  # beyond the table, the normal law (checked above)
        result = scipy_stats.ttest_1samp(values, 0.0, alternative="greater")
        assert stats.t_los(values) == pytest.approx(1 - result.pvalue, abs=1e-9)


def test_group_means_and_paired_differences():
    groups = [[1.0, 2.0, 6.0], [4.0], [-2.0, 2.0]]
    assert stats.group_means(groups) == pytest.approx([scipy_stats.tmean(g) for g in groups])
    assert stats.mean([]) == 0.0
    a, b = [110.0, 95.0, 120.0, 101.0], [100.0, 99.0, 111.0, 90.0]
    estimate = Estimate.of([x - y for x, y in zip(a, b, strict=True)])
    paired = scipy_stats.ttest_rel(a, b)  # the paired t statistic is mean / se of the differences
    assert estimate.mean / estimate.se == pytest.approx(paired.statistic, rel=1e-12)


def test_the_normal_interval_and_los_are_scipys():
    """Estimate: mean ± z·se and LOS = Φ(mean / se), as scipy's normal law gives them."""
    for values in samples(3, 200):
        estimate = Estimate.of(values)
        se = scipy_stats.sem(values)
        low, high = scipy_stats.norm.interval(0.95, loc=statistics.fmean(values), scale=se)
        assert estimate.se == pytest.approx(se, rel=1e-12)
        assert estimate.ci95 == pytest.approx((low, high), rel=1e-12, abs=1e-12)
        assert estimate.los == pytest.approx(scipy_stats.norm.cdf(statistics.fmean(values) / se), abs=1e-12)
    z95 = stats.Z95
    assert z95 == pytest.approx(scipy_stats.norm.ppf(0.975), rel=1e-15)


def test_the_sprt_ratio_is_the_normal_log_likelihood_ratio_at_the_estimated_variance():
    """The GSPRT's LLR is the log of the ratio of the normal likelihoods of the sample mean under H1 and
    H0, its variance se²: scipy's log densities give it term by term; Wald's bounds are his formulas."""
    test = Sprt(h0=-1.0, h1=3.0, alpha=0.05, beta=0.1)
    for values in samples(4, 100):
        estimate = Estimate.of(values)
        expected = scipy_stats.norm.logpdf(estimate.mean, test.h1, estimate.se) - scipy_stats.norm.logpdf(
            estimate.mean, test.h0, estimate.se
        )
        assert test.llr(estimate) == pytest.approx(expected, rel=1e-9, abs=1e-9)
    assert test.lower == pytest.approx(math.log(0.1 / 0.95))
    assert test.upper == pytest.approx(math.log(0.9 / 0.05))
    assert test.decide(Estimate(100, 4.0, 10.0)) is Verdict.BETTER
    assert test.decide(Estimate(100, -2.0, 10.0)) is Verdict.NOT_BETTER
    assert test.decide(Estimate(100, 1.0, 10.0)) is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"h0": 2.0, "h1": 2.0}, "--h1 must be more than --h0"),
        ({"alpha": 0.5}, "--alpha must lie between 0 and 0.5"),
        ({"beta": 0.0}, "--beta must lie between 0 and 0.5"),
    ],
)
def test_an_impossible_test_is_refused_naming_the_option(kwargs, message):
    with pytest.raises(stats.HypothesisError, match=message):
        Sprt(**kwargs)
