"""A random bot that talks: as a defender, once in the first trick of every odd-numbered deal, a message
made to break a page that shows it unescaped. The report's tests read it back, in the viewer and the
static deal list, as the text it is."""

from __future__ import annotations

from pyramid_sdk.actions import Play
from pyramid_sdk.observation import Observation
from sample_bots.random_bot import RandomBot

MESSAGE = '</script><!-- <b>x</b> & "trump low"'


class Talker(RandomBot):
    name = "talker"

    def play(self, obs: Observation) -> Play:
        card = self.rng.choice(obs.legal_cards)
        if not obs.is_declarer and obs.deal_number % 2 == 1 and not obs.tricks:
            return Play(card, talk=MESSAGE)
        return Play(card)
