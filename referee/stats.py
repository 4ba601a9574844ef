"""The referee's statistics, in one place: means of groups, intervals, the likelihood of superiority and
the sequential probability ratio test.

Three readers share them: the leaderboard's points per match (:mod:`referee.league.ratings`), the
crosstable's paired differences (:mod:`referee.report.crosstable`) and ``referee compare``
(:mod:`referee.compare`). Two families of estimate, chosen by how many observations a reader has:

- **Few observations** (a league's tables, often 3 to 20): Student's t, from the quantile table
  :data:`T_975` and the exact finite series of its distribution, :func:`t_cdf`. Both switch to the
  normal law beyond 20 degrees of freedom, so that a likelihood of at least 97.5% is exactly an
  interval that excludes 0.
- **Many observations** (``compare``'s pairs, 16 and more before a test may stop): the normal
  approximation, :class:`Estimate`, and the GSPRT on top of it, :class:`Sprt`.

Standard library only (``statistics``, ``math``): reading a league's results imports no scientific stack.
tests/test_stats.py checks every formula against scipy.stats.
"""

from __future__ import annotations

import enum
import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

Z95: Final = statistics.NormalDist().inv_cdf(0.975)
"""The two-sided 95% quantile of the normal distribution, 1.96."""

# fmt: off
T_975: Final = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086)
# fmt: on
"""Student's t, 97.5% quantile, for 1-20 degrees of freedom (1.96 beyond): few tables need wide intervals.
Rounded to three decimals, as printed tables give it: the published intervals were computed with these."""


class Verdict(enum.IntEnum):
    """What a paired test concludes about A against B; its value is ``referee compare``'s exit code, so CI
    can gate on it."""

    BETTER = 0
    """A is better: the 95% interval lies above 0, or the sequential test accepted H1."""
    NOT_BETTER = 1
    """A is not better: the 95% interval reaches no higher than 0, or the sequential test accepted H0."""
    UNDECIDED = 2
    """Neither, within the matches allowed."""

    @property
    def words(self) -> str:
        return {
            Verdict.BETTER: "A is better",
            Verdict.NOT_BETTER: "A is not better",
            Verdict.UNDECIDED: "undecided",
        }[self]


class HypothesisError(ValueError):
    """A sequential test asked with hypotheses or error rates it cannot have. The message names the
    option (``--h1``, ``--alpha``, ``--beta``) as ``referee compare`` spells it."""


def mean(values: Iterable[float]) -> float:
    """The mean, 0.0 for no values (an entrant with no counted table has no points yet).

    >>> mean([1, 2, 6]), mean([])
    (3.0, 0.0)
    """
    values = list(values)
    return statistics.fmean(values) if values else 0.0


def group_means(groups: Iterable[Sequence[float]]) -> tuple[float, ...]:
    """The mean of each group: the independent observations when the members of a group are not (the
    seatings of one table replay the same deals).

    >>> group_means([[10, 20], [5]])
    (15.0, 5.0)
    """
    return tuple(statistics.fmean(group) for group in groups)


def t_quantile(df: int) -> float:
    """Student's t 97.5% quantile for ``df`` degrees of freedom, from :data:`T_975` (1.96 beyond 20)."""
    return T_975[df - 1] if df <= len(T_975) else 1.96


def ci95(values: Sequence[float]) -> float:
    """Half-width of the 95% interval of the mean of ``values`` (Student's t); ∞ for one value.

    >>> round(ci95([100.0, 110.0, 105.0]), 2), ci95([7.0]), ci95([])
    (12.42, inf, 0.0)
    """
    if len(values) < 2:
        return math.inf if values else 0.0
    return t_quantile(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))


def t_cdf(t: float, df: int) -> float:
    """P(T ≤ t) for Student's t with ``df`` degrees of freedom: exact for 1–20 (the finite series for
    whole degrees, Abramowitz & Stegun 26.7.3–4), the normal law beyond, as :func:`ci95` switches to
    1.96 there, so that a likelihood of at least 97.5% means a 95% interval that excludes 0.

    >>> round(t_cdf(4.303, 2), 4), round(t_cdf(2.086, 20), 4), t_cdf(0.0, 5), round(t_cdf(-1.96, 40), 3)
    (0.975, 0.975, 0.5, 0.025)
    """
    if df > len(T_975):
        return statistics.NormalDist().cdf(t)
    theta = math.atan(t / math.sqrt(df))
    cos2 = math.cos(theta) ** 2
    if df % 2:
        term = series = math.cos(theta)
        for power in range(3, df - 1, 2):
            term *= (power - 1) / power * cos2
            series += term
        inside = 2 / math.pi * (theta + (math.sin(theta) * series if df > 1 else 0.0))
    else:
        term = series = 1.0
        for power in range(2, df - 1, 2):
            term *= (power - 1) / power * cos2
            series += term
        inside = math.sin(theta) * series
    return 0.5 + inside / 2


def t_los(values: Sequence[float]) -> float | None:
    """Likelihood of superiority from few observations: P(true mean > 0) under Student's t from their
    spread; ``None`` for fewer than two. With no spread at all the sign decides.

    >>> t_los((10.0, 14.0, 12.0)) > 0.975, t_los((1.0, -1.0)), t_los((3.0, 3.0)), t_los((3.0,))
    (True, 0.5, 1.0, None)
    """
    if len(values) < 2:
        return None
    middle, spread = statistics.fmean(values), statistics.stdev(values)
    if spread == 0:
        return 1.0 if middle > 0 else 0.0 if middle < 0 else 0.5
    return t_cdf(middle / (spread / math.sqrt(len(values))), len(values) - 1)


@dataclass(frozen=True, slots=True)
class Estimate:
    """The mean of ``pairs`` paired differences (A minus B) and its spread, under the normal law.

    >>> estimate = Estimate.of([4, 6, 2, 8])
    >>> estimate.mean, round(estimate.se, 3), [round(bound, 2) for bound in estimate.ci95]
    (5.0, 1.291, [2.47, 7.53])
    >>> round(estimate.los, 4)
    0.9999
    >>> Estimate.of([0, 0, 0]).ci95, Estimate.of([0, 0, 0]).los
    ((0.0, 0.0), 0.5)
    """

    pairs: int
    mean: float
    stdev: float
    """The sample standard deviation of one pair's difference (0 with fewer than 2 pairs)."""

    @classmethod
    def of(cls, differences: Sequence[float]) -> Estimate:
        if not differences:
            return cls(0, 0.0, 0.0)
        spread = statistics.stdev(differences) if len(differences) > 1 else 0.0
        return cls(len(differences), statistics.fmean(differences), spread)

    @property
    def known(self) -> bool:
        """Whether there is a spread to speak of: two pairs at least."""
        return self.pairs >= 2

    @property
    def se(self) -> float:
        """The standard error of the mean."""
        return self.stdev / math.sqrt(self.pairs) if self.pairs else math.inf

    @property
    def ci95(self) -> tuple[float, float]:
        """The 95% confidence interval of the mean (normal approximation)."""
        if not self.known:
            return (-math.inf, math.inf)
        return (self.mean - Z95 * self.se, self.mean + Z95 * self.se)

    @property
    def los(self) -> float:
        """The likelihood of superiority, Φ(mean / se): how likely A is the better of the two."""
        if not self.known:
            return 0.5
        if self.se == 0:
            return 0.5 if self.mean == 0 else float(self.mean > 0)
        return statistics.NormalDist().cdf(self.mean / self.se)


@dataclass(frozen=True, slots=True)
class Sprt:
    """A sequential probability ratio test of H0: the mean difference is ``h0`` against H1: it is ``h1``
    (points per match), with error rates ``alpha`` (H1 accepted when H0 holds) and ``beta``.

    The pair differences are about normal with a variance nobody knows: a GSPRT replaces the variance by
    its estimate from the data, which gives the log-likelihood ratio
    ``(h1 - h0) · (2·mean - h0 - h1) / (2·se²)``, as Fishtest's normalized tests do for game pairs.
    Wald's bounds: stop with H0 below ``log(beta / (1 - alpha))``, with H1 above ``log((1 - beta) / alpha)``.

    >>> test = Sprt(h0=0.0, h1=2.0)
    >>> round(test.lower, 3), round(test.upper, 3)
    (-2.944, 2.944)
    >>> round(test.llr(Estimate(pairs=100, mean=1.5, stdev=10.0)), 3)
    1.0
    >>> test.decide(Estimate(pairs=100, mean=4.0, stdev=10.0)), test.decide(Estimate(100, -1.0, 10.0))
    (<Verdict.BETTER: 0>, <Verdict.NOT_BETTER: 1>)
    """

    h0: float = 0.0
    h1: float = 2.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not self.h1 > self.h0:
            raise HypothesisError(f"--h1 must be more than --h0: got H0 {self.h0:g}, H1 {self.h1:g}")
        for name, value in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0 < value < 0.5:
                raise HypothesisError(f"--{name} must lie between 0 and 0.5, got {value:g}")

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / self.alpha)

    def llr(self, estimate: Estimate) -> float:
        """The log-likelihood ratio of H1 against H0 after ``estimate``'s pairs. With no spread at all
        (every pair the same difference) the data are as certain as data get: ±∞, or 0 at the midpoint."""
        if not estimate.known:
            return 0.0
        drift = (self.h1 - self.h0) * (2 * estimate.mean - self.h0 - self.h1)
        if estimate.se == 0:
            return 0.0 if drift == 0 else math.copysign(math.inf, drift)
        return drift / (2 * estimate.se**2)

    def decide(self, estimate: Estimate) -> Verdict | None:
        """The verdict once the ratio crosses a bound; ``None`` while it lies between them."""
        ratio = self.llr(estimate)
        if ratio >= self.upper:
            return Verdict.BETTER
        if ratio <= self.lower:
            return Verdict.NOT_BETTER
        return None


def fixed_verdict(estimate: Estimate) -> Verdict:
    """The verdict without a sequential test, from the 95% interval: better if it lies above 0, not
    better if it reaches no higher than 0 (which includes two bots that never differ), else undecided.

    >>> fixed_verdict(Estimate(50, 3.0, 5.0)), fixed_verdict(Estimate(50, 0.0, 0.0))
    (<Verdict.BETTER: 0>, <Verdict.NOT_BETTER: 1>)
    >>> fixed_verdict(Estimate(50, 1.0, 5.0)), fixed_verdict(Estimate(1, 9.0, 0.0))
    (<Verdict.UNDECIDED: 2>, <Verdict.UNDECIDED: 2>)
    """
    if not estimate.known:
        return Verdict.UNDECIDED
    low, high = estimate.ci95
    if low > 0:
        return Verdict.BETTER
    if high <= 0:
        return Verdict.NOT_BETTER
    return Verdict.UNDECIDED
