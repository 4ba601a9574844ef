"""Match records as text for people: one line per deal, then every pyramid as drawn on paper."""

from __future__ import annotations

from pyramid_sdk import DealRecord, MatchRecord, Pyramid, render_pyramid


def deal_line(deal: DealRecord, seats: tuple[str, ...]) -> str:
    """``deal  7  dealer ann  declarer bob  3 ♥  took 2  8 points``."""
    declaration = deal.declaration
    return (
        f"deal {deal.number:>2}  dealer {seats[deal.dealer]}  declarer {seats[deal.declarer]}  "
        f"{declaration.tricks} {declaration.trump.symbol}  took {deal.taken}  {deal.points:>2} points"
    )


def pyramids_of(record: MatchRecord) -> list[Pyramid]:
    pyramids = [Pyramid() for _ in record.seats]
    for deal in record.deals:
        pyramids[deal.declarer] = pyramids[deal.declarer].add(deal.declaration.tricks, deal.taken)
    return pyramids


def brief(record: MatchRecord) -> str:
    """Every deal's declaration and result, every pyramid, then totals and ranks."""
    lines = [deal_line(deal, record.seats) for deal in record.deals]
    for seat, pyramid in enumerate(pyramids_of(record)):
        lines += ["", render_pyramid(pyramid, f"seat {seat}: {record.seats[seat]}")]
    lines.append("")
    order = sorted(range(len(record.seats)), key=lambda seat: (record.ranks[seat], seat))
    for seat in order:
        forfeit = "  (forfeited)" if seat in record.forfeits else ""
        lines.append(f"{record.ranks[seat]}. {record.seats[seat]:<16} {record.totals[seat]:>4}{forfeit}")
    return "\n".join(lines)
