"""Match records as text for people: one line per deal, every pyramid as drawn on paper, the totals."""

from __future__ import annotations

from pyramid_sdk import DealRecord, MatchRecord, Pyramid, format_cards, render_pyramid, trick_winner_index


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
    """The seats by rank with their credited totals (the result alone: no deal, no pyramid); a
    forfeited seat's line says from which deal the referee played for it, and what the table made of
    its pyramid with that play (the pyramids above show the table's play).

    >>> from pyramid_sdk import Match, Phase, Rules
    >>> match = Match(Rules(players=2), seed=5, seats=["ann", "bob"])
    >>> while match.deal_number < 20:
    ...     match.play_out(until=Phase.DECLARE)
    >>> match.forfeit(1)
    >>> match.play_out()
    >>> print("\\n".join(standings(match.record())))
    <BLANKLINE>
    1. ann               108
    2. bob                66  (forfeited in deal 20; 102 with the referee's autopilot)
    """
    lines = [""]
    width = max(16, *map(len, record.seats))  # long names keep the totals aligned
    credited = record.credited_totals
    forfeited = dict(zip(record.forfeits, record.forfeit_deals, strict=True))
    for seat in sorted(range(len(record.seats)), key=lambda seat: (record.ranks[seat], seat)):
        forfeit = ""
        if seat in forfeited:
            forfeit = (
                f"  (forfeited in deal {forfeited[seat]}; {record.totals[seat]} with the referee's autopilot)"
            )
        lines.append(f"{record.ranks[seat]}. {record.seats[seat]:<{width}} {credited[seat]:>4}{forfeit}")
    return lines


def brief(record: MatchRecord) -> str:
    """Every deal's declaration and result, then :func:`ending`."""
    return "\n".join([deal_line(deal, record.seats) for deal in record.deals] + ending(record))


def deal_text(record: MatchRecord, number: int) -> str:
    """Deal ``number`` (from 1) in full, for people: the hands as dealt, the declaration, each trick in
    play order with its winner, the talk, and the declarer's score.

    >>> from pyramid_sdk import Match, Phase, Rules
    >>> match = Match(Rules(players=2), seed=3, seats=["ann", "bob"])
    >>> match.play_out(until=Phase.DEAL_OVER)
    >>> print(deal_text(match.record(), 1))
    deal 1 of 32  dealer bob  declarer ann: 3 ♠
    ann  9♠ 10♠ Q♠ 10♥ J♥ 10♦
    bob  J♠ J♦ K♦ 10♣ Q♣ K♣
    trick 1  ann 9♠  bob 10♣  -> ann
    trick 2  ann 10♠  bob J♠  -> bob
    trick 3  bob J♦  ann 10♥  -> bob
    trick 4  bob Q♣  ann 10♦  -> bob
    trick 5  bob K♦  ann J♥  -> bob
    trick 6  bob K♣  ann Q♠  -> ann
    ann declared 3, took 2: 8 points
    """
    lines = _deal_head(record, number)
    deal = record.deals[number - 1]
    seats = record.seats
    for position, trick in enumerate(deal.tricks, start=1):
        plays = "  ".join(f"{seats[seat]} {card.human}" for seat, card in trick.plays(len(seats)))
        winner = seats[trick.winner] if trick.winner is not None else "?"
        lines.append(f"trick {position}  {plays}  -> {winner}")
        lines += [f"  {seats[m.seat]} said: {m.text}" for m in deal.talk if m.trick == position]
    return "\n".join([*lines, _deal_score(record, deal)])


def deal_by_card(record: MatchRecord, number: int) -> str:
    """Deal ``number`` (from 1) one card a line, as it was played: the hands as dealt, then each trick
    card by card, marking the card that leads and each one that takes the trick over from the cards
    before it (under the match's trick-winner rule), then who took the trick and the declarer's count.

    >>> from pyramid_sdk import Match, Phase, Rules
    >>> match = Match(Rules(players=2), seed=3, seats=["ann", "bob"])
    >>> match.play_out(until=Phase.DEAL_OVER)
    >>> print("\\n".join(deal_by_card(match.record(), 1).splitlines()[:9]))
    deal 1 of 32  dealer bob  declarer ann: 3 ♠
    ann  9♠ 10♠ Q♠ 10♥ J♥ 10♦
    bob  J♠ J♦ K♦ 10♣ Q♣ K♣
    trick 1
      ann  9♠   leads
      bob  10♣
      ann takes it: ann has 1 of 3
    trick 2
      ann  10♠  leads
    """
    lines = _deal_head(record, number)
    deal = record.deals[number - 1]
    seats = record.seats
    width = max(len(name) for name in seats)
    declarer = seats[deal.declarer]
    taken = 0
    for position, trick in enumerate(deal.tricks, start=1):
        lines.append(f"trick {position}")
        for index, (seat, card) in enumerate(trick.plays(len(seats))):
            ahead = trick_winner_index(
                trick.cards[: index + 1], deal.declaration.trump, record.rules.trick_winner
            )
            mark = "leads" if index == 0 else "takes the lead" if ahead == index else ""
            lines.append(f"  {seats[seat]:<{width}}  {card.human:<3}  {mark}".rstrip())
        taken += trick.winner == deal.declarer
        winner = seats[trick.winner] if trick.winner is not None else "?"
        lines.append(f"  {winner} takes it: {declarer} has {taken} of {deal.declaration.tricks}")
        lines += [f"  {seats[m.seat]} said: {m.text}" for m in deal.talk if m.trick == position]
    return "\n".join([*lines, _deal_score(record, deal)])


def _deal_head(record: MatchRecord, number: int) -> list[str]:
    """The first lines of a deal for people: its number, dealer, declarer and declaration, the hands."""
    deals = record.deals
    if not 1 <= number <= len(deals):
        raise ValueError(f"deal {number}: this record has deals 1 to {len(deals)}")
    deal = deals[number - 1]
    seats = record.seats
    width = max(len(name) for name in seats)
    lines = [
        f"deal {deal.number} of {record.rules.deals}  dealer {seats[deal.dealer]}  "
        f"declarer {seats[deal.declarer]}: {deal.declaration.human}"
    ]
    return lines + [
        f"{seats[seat]:<{width}}  {format_cards(hand, human=True)}" for seat, hand in enumerate(deal.hands)
    ]


def _deal_score(record: MatchRecord, deal: DealRecord) -> str:
    return (
        f"{record.seats[deal.declarer]} declared {deal.declaration.tricks}, took {deal.taken}: "
        f"{deal.points} points"
    )
