"""``referee analyze`` for people: the settings that reproduce it, a line per deal, the costliest
decisions, and a line per seat (or per entrant) of where the points went."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pyramid_sdk.actions import Declare, parse_action
from referee.analysis.estimate import Analysis, Decision, Kind
from referee.analysis.summary import Summary
from referee.figures import loss, luck

WORST: int = 10
"""Costliest decisions listed."""


def action_text(action: str) -> str:
    """``3H`` as ``3 ♥``, ``QS`` as ``Q♠``: as the replay prints them."""
    parsed = parse_action(action)
    if isinstance(parsed, Declare):
        return f"{parsed.tricks} {parsed.trump.symbol}"
    return parsed.card.human


def header(analysis: Analysis, what: str) -> list[str]:
    return [
        f"analysis of {what}: {analysis.samples} sampled worlds a decision, played out by the "
        f"{analysis.policy} policy, seed {analysis.seed} (--samples, --seed)",
        "loss: points the chosen action gave up against the best one, ± its standard error; luck: points "
        "the seat's cards were worth before play against the average for that seat (docs/ANALYSIS.md)",
        "seats: " + ", ".join(f"{seat}={name}" for seat, name in enumerate(analysis.seats)),
    ]


def deal_lines(analysis: Analysis) -> list[str]:
    """A line per deal: each seat's luck, and each seat's loss over its decisions in it."""
    players = len(analysis.seats)
    seats = "".join(f"{seat:>7}" for seat in range(players))
    lines = [
        "",
        f"deal  declarer  declared  luck by seat{' ' * (7 * players - 12)}  loss by seat",
        f"{'':26}{seats}  {seats}",
    ]
    losses: dict[int, list[float]] = {}
    declared: dict[int, tuple[int, str]] = {}
    for decision in analysis.decisions:
        losses.setdefault(decision.deal, [0.0] * players)[decision.seat] += decision.loss
        if decision.kind is Kind.DECLARE:
            declared[decision.deal] = (decision.seat, decision.chosen)
    for deal in analysis.luck:
        seat, action = declared[deal.deal]
        lucks = "".join(f"{luck(x):>7}" for x in deal.luck)
        lost = "".join(f"{loss(x):>7}" for x in losses[deal.deal])
        lines.append(f"{deal.deal:>4}  {seat:>8}  {action_text(action):>8}  {lucks}  {lost}")
    return lines


def worst_lines(decisions: Sequence[Decision], seats: Sequence[str], count: int = WORST) -> list[str]:
    """The ``count`` costliest decisions a bot made itself (not the referee's autopilot)."""
    worst = sorted((d for d in decisions if not d.autopilot and d.loss > 0), key=lambda d: -d.loss)[:count]
    lines = ["", f"costliest decisions ({len(worst)}):"]
    for d in worst:
        where = "declaration" if d.kind is Kind.DECLARE else f"trick {d.trick}"
        verb = "declared" if d.kind is Kind.DECLARE else "played"
        lines.append(
            f"  deal {d.deal:>2} {where:<11} {seats[d.seat]} {verb} {action_text(d.chosen)}, "
            f"best {action_text(d.best)}: loss {loss(d.loss)} ± {loss(d.loss_se)}"
        )
    return lines


def summary_lines(summaries: Sequence[Summary], title: str = "entrant") -> list[str]:
    """A line per entrant (or seat): average loss per decision and per deal (± standard error),
    declarations against play, average luck per deal (±)."""
    width = max(len(title), *(len(s.name) for s in summaries))
    lines = [
        "",
        f"{title:<{width}}  deals  decisions  loss/decision  {'loss/deal':>12}  loss/declaration  loss/play"
        f"  {'luck/deal':>12}",
    ]

    def with_error(mean: float | None, error: float | None, show: Callable[[float | None], str]) -> str:
        return show(mean) if error is None else f"{show(mean)} ± {loss(error)}"

    for s in summaries:
        per_decision = with_error(s.per(s.loss, s.decisions), s.error(s.loss_variance, s.decisions), loss)
        per_deal = with_error(s.per(s.loss, s.deals), s.error(s.loss_variance, s.deals), loss)
        luck_per_deal = with_error(s.per(s.luck, s.deals), s.error(s.luck_variance, s.deals), luck)
        lines.append(
            f"{s.name:<{width}}  {s.deals:>5}  {s.decisions:>9}  {per_decision:>13}  {per_deal:>12}  "
            f"{loss(s.per(s.declaration_loss, s.declarations)):>16}  {loss(s.per(s.play_loss, s.plays)):>9}"
            f"  {luck_per_deal:>12}"
        )
    return lines
