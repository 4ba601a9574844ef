"use strict";
// A Node bot that says TEXT repeated COUNT times with its first card of every deal, as a defender (or
// only as the declarer, with as-declarer): `node long_talk.js TEXT COUNT [as-declarer]`. It sends the
// text as it is; the referee counts its length in code points, not in JavaScript's UTF-16 units.
const { Bot, main } = require("../../sdk/node");

const [text, count, role] = process.argv.slice(2);

class LongTalk extends Bot {
  constructor() {
    super();
    this.name = "node-long-talk";
  }

  declare(obs) {
    return obs.legalDeclarations[0];
  }

  play(obs) {
    const card = obs.legalCards[0];
    const speaks = obs.isDeclarer === (role === "as-declarer");
    return speaks && obs.tricks.length === 0 ? { card, talk: text.repeat(Number(count)) } : card;
  }
}

main(new LongTalk());
