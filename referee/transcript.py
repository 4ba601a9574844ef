"""Match records as text for people: one line per deal, every pyramid as drawn on paper, the totals."""

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


def ending(record: MatchRecord) -> list[str]:
    """Every pyramid, then the seats by rank with their totals."""
    lines = []
    for seat, pyramid in enumerate(pyramids_of(record)):
        lines += ["", render_pyramid(pyramid, f"seat {seat}: {record.seats[seat]}")]
    return lines + standings(record)


def standings(record: MatchRecord) -> list[str]:
    """The seats by rank with their totals (the result alone: no deal, no pyramid)."""
    lines = [""]
    width = max(16, *map(len, record.seats))  # long names keep the totals aligned
    for seat in sorted(range(len(record.seats)), key=lambda seat: (record.ranks[seat], seat)):
        forfeit = "  (forfeited)" if seat in record.forfeits else ""
        lines.append(f"{record.ranks[seat]}. {record.seats[seat]:<{width}} {record.totals[seat]:>4}{forfeit}")
    return lines


def brief(record: MatchRecord) -> str:
    """Every deal's declaration and result, then :func:`ending`."""
    return "\n".join([deal_line(deal, record.seats) for deal in record.deals] + ending(record))
