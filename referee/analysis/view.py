"""What the HTML report shows of an analysis: on a match page, a table per seat and per deal, the
costliest decisions, and compact data for the replay viewer; on an entrant's page, its summary. The report
only reads kept analyses (:mod:`referee.analysis.storage`), so it is as fast with them as without."""

from __future__ import annotations

from typing import Any

from referee.analysis.estimate import Analysis, Kind
from referee.analysis.summary import summarise
from referee.analysis.text import WORST, action_text


def page_view(analysis: Analysis) -> dict[str, Any]:
    """The match page's section: settings, per-seat summary, per-deal luck and loss, costliest decisions."""
    players = len(analysis.seats)
    names = tuple(f"{seat} {name}" for seat, name in enumerate(analysis.seats))
    losses: dict[int, list[float]] = {deal.deal: [0.0] * players for deal in analysis.luck}
    for decision in analysis.decisions:
        losses[decision.deal][decision.seat] += decision.loss
    worst = sorted((d for d in analysis.decisions if not d.autopilot and d.loss > 0), key=lambda d: -d.loss)
    return {
        "samples": analysis.samples,
        "seed": analysis.seed,
        "policy": analysis.policy,
        "summaries": summarise([(analysis, names)]),
        "deals": [(deal.deal, deal.luck, losses[deal.deal]) for deal in analysis.luck],
        "worst": [
            {
                "deal": d.deal,
                "where": "declaration" if d.kind is Kind.DECLARE else f"trick {d.trick}",
                "seat": analysis.seats[d.seat],
                "chosen": action_text(d.chosen),
                "best": action_text(d.best),
                "loss": d.loss,
                "se": d.loss_se,
            }
            for d in worst[:WORST]
        ],
    }


def viewer_view(analysis: Analysis) -> dict[str, Any]:
    """The viewer's data: per deal ``[luck per seat, decisions]``, a decision as ``[seat, chosen, best,
    loss, its error, number of legal actions]`` in the viewer's step order (the declaration, then each
    card as played), so that step ``k`` of a deal shows decision ``k``."""
    deals: dict[int, list[Any]] = {
        deal.deal: [[round(x, 2) for x in deal.luck], []] for deal in analysis.luck
    }
    for d in analysis.decisions:
        deals[d.deal][1].append(
            [
                d.seat,
                action_text(d.chosen),
                action_text(d.best),
                round(d.loss, 2),
                round(d.loss_se, 2),
                len(d.actions),
            ]
        )
    return {
        "samples": analysis.samples,
        "seed": analysis.seed,
        "policy": analysis.policy,
        "deals": [deals[deal.deal] for deal in analysis.luck],
    }
