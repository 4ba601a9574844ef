"""Per-bot figures from analysed matches: where an entrant's points go, per decision and per deal, in its
declarations and in its play, and how lucky its cards were. Decisions the referee made for a forfeited
seat are left out: they are no measure of the bot."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from referee.analysis.estimate import Analysis, Kind


@dataclass(slots=True)
class Summary:
    """One entrant's totals over the analysed matches; the averages are properties."""

    name: str
    matches: int = 0
    deals: int = 0
    """Deals it sat in (whatever seat), over which its luck and its per-deal loss are averaged."""
    declarations: int = 0
    declaration_loss: float = 0.0
    plays: int = 0
    """Card decisions with more than one legal card (a last card is no decision and costs nothing)."""
    play_loss: float = 0.0
    luck: float = 0.0
    loss_variance: float = 0.0
    """Sum of the squared standard errors of its losses: the worlds of two decisions are drawn apart, so
    the error of a sum of losses is the root of this."""
    luck_variance: float = 0.0

    @property
    def decisions(self) -> int:
        return self.declarations + self.plays

    @property
    def loss(self) -> float:
        return self.declaration_loss + self.play_loss

    def per(self, total: float, count: int) -> float | None:
        return total / count if count else None

    def error(self, variance: float, count: int) -> float | None:
        """The standard error of a mean over ``count`` of the figures whose variances add to ``variance``."""
        return math.sqrt(variance) / count if count else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "matches": self.matches,
            "deals": self.deals,
            "decisions": self.decisions,
            "loss_per_decision": self.per(self.loss, self.decisions),
            "loss_per_decision_se": self.error(self.loss_variance, self.decisions),
            "loss_per_deal": self.per(self.loss, self.deals),
            "loss_per_deal_se": self.error(self.loss_variance, self.deals),
            "declarations": self.declarations,
            "loss_per_declaration": self.per(self.declaration_loss, self.declarations),
            "plays": self.plays,
            "loss_per_play": self.per(self.play_loss, self.plays),
            "luck_per_deal": self.per(self.luck, self.deals),
            "luck_per_deal_se": self.error(self.luck_variance, self.deals),
        }


def summarise(analyses: Iterable[tuple[Analysis, tuple[str, ...]]]) -> list[Summary]:
    """Per entrant (``names`` gives each analysis's seats' entrants), in order of first appearance.

    >>> from referee.analysis.estimate import ActionValue, Decision, DealLuck
    >>> two = (ActionValue("a", 0.0, 0.0), ActionValue("b", 1.0, 0.0))  # the values summaries skip
    >>> a = Analysis("f", ("x", "y"), 2, 0, "heuristic",
    ...     (Decision(1, 0, Kind.DECLARE, 0, "3H", "2H", 1.5, 0.5, two, False),
    ...      Decision(1, 1, Kind.PLAY, 1, "9S", "AS", 2.0, 1.0, two, False),
    ...      Decision(1, 1, Kind.PLAY, 2, "9H", "AH", 9.0, 1.0, two, True)),
    ...     (DealLuck(1, (2.0, -2.0), (1.0, 1.0)),))
    >>> [(s.name, s.loss, s.deals, s.luck) for s in summarise([(a, ("ann", "bob"))])]
    [('ann', 1.5, 1, 2.0), ('bob', 2.0, 1, -2.0)]
    """
    by_name: dict[str, Summary] = {}
    for analysis, names in analyses:
        for name in names:
            by_name.setdefault(name, Summary(name)).matches += 1
        for deal in analysis.luck:
            for seat, figure in enumerate(deal.luck):
                summary = by_name[names[seat]]
                summary.deals += 1
                summary.luck += figure
                summary.luck_variance += deal.se[seat] ** 2
        for decision in analysis.decisions:
            if decision.autopilot or len(decision.actions) < 2:
                continue
            summary = by_name[names[decision.seat]]
            summary.loss_variance += decision.loss_se**2
            if decision.kind is Kind.DECLARE:
                summary.declarations += 1
                summary.declaration_loss += decision.loss
            else:
                summary.plays += 1
                summary.play_loss += decision.loss
    return list(by_name.values())
