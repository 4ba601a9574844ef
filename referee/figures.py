"""Figures as people read them: one rounding per kind of figure, used by the terminal leaderboard and
every page of the HTML report (as Jinja filters of the same names), so that no two places print the same
number two ways.

>>> rating(25.0), points(112.345), difference(-3.25), interval(math.inf), percent(0.4567), likelihood(0.99951)
('25.00', '112.3', '−3.2', '—', '46%', '99.95%')
"""

from __future__ import annotations

import math

from referee.league.ratings import Standing


def rating(value: float) -> str:
    """μ, σ, μ − 3σ: two decimals."""
    return f"{value:.2f}"


def points(value: float) -> str:
    """Points per match (a mean), and the half-width of its interval: one decimal."""
    return f"{value:.1f}"


def difference(value: float) -> str:
    """A points difference, signed (with a true minus sign): one decimal, as :func:`points`."""
    text = f"{value:+.1f}"
    return "±0.0" if text in ("+0.0", "-0.0") else text.replace("-", "−")


def interval(half_width: float) -> str:
    """The half-width of a 95% interval as :func:`points`; ``—`` where there is none (one table)."""
    return points(half_width) if math.isfinite(half_width) else "—"


def percent(rate: float) -> str:
    """A share, such as the exact declarations: whole percents."""
    return f"{100 * rate:.0f}%"


def likelihood(value: float | None) -> str:
    """A likelihood of superiority: two decimals of a percent, since what matters is near 0 or 100%;
    ``—`` where there is none."""
    return "—" if value is None else f"{100 * value:.2f}%"


def probability(value: float) -> str:
    """A rank probability: whole percents, ``<1%`` and ``>99%`` at the ends (2,000 draws cannot tell
    0.3% from 0%, and a shown 0% or 100% would claim what the draws cannot).

    >>> probability(0.4567), probability(0.001), probability(0.0), probability(0.9996), probability(1.0)
    ('46%', '<1%', '0%', '>99%', '100%')
    """
    if 0 < value < 0.005:
        return "<1%"
    if 0.995 < value < 1:
        return ">99%"
    return f"{100 * value:.0f}%"


def mean_off(value: float) -> str:
    """Mean |taken − declared|: two decimals."""
    return f"{value:.2f}"


def loss(value: float | None) -> str:
    """Points an analysed decision gave up (or a mean of them), and its standard error: two decimals;
    ``—`` where nothing was decided."""
    return "—" if value is None else f"{value:.2f}"


def luck(value: float | None) -> str:
    """A seat's luck in points, signed as :func:`difference`; ``—`` where no deal was analysed."""
    return "—" if value is None else difference(value)


def leaderboard_cell(key: str, standing: Standing) -> str:
    """A leaderboard figure (``key`` of :meth:`Standing.to_dict`) as the terminal table and the HTML
    leaderboard both show it: the interval only from two tables on."""
    if key in ("mu", "sigma", "conservative"):
        return rating(getattr(standing, key))
    if key == "mean_points":
        return points(standing.mean_points)
    if key == "points_ci95":
        return interval(standing.points_ci95) if standing.tables > 1 else "—"
    if key == "exact_rate":
        return percent(standing.exact_rate)
    return str(standing.to_dict()[key])


FILTERS = {
    f.__name__: f
    for f in (rating, points, difference, interval, percent, likelihood, probability, mean_off, loss, luck)
}
"""The helpers by name, for the report's templates."""
