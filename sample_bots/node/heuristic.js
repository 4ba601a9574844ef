"use strict";
/**
 * A rule-of-thumb Pyramid bot in JavaScript: counts its likely tricks to declare, then plays to hit
 * (as declarer) or to break (as defender) the number. The same ideas as sample_bots/heuristic.py, kept
 * short. Run it with `node sample_bots/node/heuristic.js` (the referee sets the address and token).
 */
const { Bot, main, rank, suit } = require("../../sdk/node");

/** Chance that a card takes a trick, by rank (9 to A): trumps, and high cards of other suits. */
const TRUMP_VALUE = [0.25, 0.3, 0.4, 0.55, 0.75, 0.95];
const SIDE_VALUE = [0, 0, 0, 0, 0.1, 0.35];

/** How strongly `card` plays in a trick: -1 cannot win, otherwise higher beats lower. */
function power(card, led, trump, rule) {
  if (suit(card) === trump) return 20 + rank(card);
  if (rule === "highest-rank" || suit(card) === led) return 10 + rank(card);
  return -1;
}

function estimate(hand, trump) {
  return hand.reduce((sum, card) => sum + (suit(card) === trump ? TRUMP_VALUE : SIDE_VALUE)[rank(card)], 0);
}

class HeuristicBot extends Bot {
  constructor() {
    super();
    this.name = "node-heuristic";
    this.version = "1";
  }

  declare(obs) {
    let best = null;
    for (const option of obs.legalDeclarations) {
      const miss = Math.abs(option.tricks - estimate(obs.hand, option.trump));
      if (best === null || miss < best.miss) best = { miss, option };
    }
    return best.option;
  }

  play(obs) {
    const trick = obs.currentTrick.cards;
    const led = trick.length ? suit(trick[0]) : null;
    const rule = obs.rules.trickWinner;
    const byStrength = [...obs.legalCards].sort((a, b) => rank(a) - rank(b) || (suit(a) === obs.trump) - (suit(b) === obs.trump));
    if (!trick.length) {
      // Leading: the declarer leads high while he needs tricks; everyone else leads low.
      const needs = obs.isDeclarer && obs.taken[obs.seat] < obs.declared;
      return needs ? byStrength[byStrength.length - 1] : byStrength[0];
    }
    const top = Math.max(...trick.map((card) => power(card, led, obs.trump, rule)));
    const winners = byStrength.filter((card) => power(card, led, obs.trump, rule) > top);
    const losers = byStrength.filter((card) => power(card, led, obs.trump, rule) <= top);
    // Everything turns on whether the declarer still needs tricks. If he does, he tries to win and the
    // defenders try to beat him (cheaply); if not, he ducks and they feed him, shedding high cards.
    const declarerNeeds = obs.taken[obs.declarer] < obs.declared;
    if (declarerNeeds && winners.length) return winners[0];
    if (!declarerNeeds && losers.length) return losers[losers.length - 1];
    return byStrength[0];
  }
}

if (require.main === module) {
  main(new HeuristicBot());
}

module.exports = { HeuristicBot, power, estimate };
