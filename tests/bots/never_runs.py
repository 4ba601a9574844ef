"""A bot that forgets to call run(): it defines its class and ends, with exit code 0."""

from pyramid_sdk import Bot, Card, Declare, Observation, Play


class Forgetful(Bot):
    def declare(self, obs: Observation) -> Declare:
        return obs.legal_declarations[0]

    def play(self, obs: Observation) -> Card | Play:
        return obs.legal_cards[0]


print("defined the bot")
