"use strict";
// Node bots that break the rules on purpose, one behaviour per name: `node misbehaving.js BEHAVIOUR`.
// Each plays the first legal action until its misbehaviour is due.
const { Bot, main, run } = require("../../sdk/node");

const behaviour = process.argv[2];

class Misbehaving extends Bot {
  constructor() {
    super();
    this.name = `node-${behaviour}`;
    this.cards = 0;
  }

  declare(obs) {
    return obs.legalDeclarations[0];
  }

  play(obs) {
    this.cards += 1;
    switch (behaviour) {
      case "throw":
        throw new Error("this bot has a bug");
      case "sleep": // a Promise that resolves far too late, three times
        return this.cards <= 3 ? new Promise((resolve) => setTimeout(() => resolve(obs.legalCards[0]), 2000)) : obs.legalCards[0];
      case "crash":
        if (obs.dealNumber >= 3) process.exit(3);
        return obs.legalCards[0];
      case "illegal":
        return ["9S", "TS", "JS", "QS", "KS", "AS", "9H"].find((card) => !obs.hand.includes(card));
      default:
        return obs.legalCards[0];
    }
  }
}

if (behaviour === "wrong-token") {
  run(new Misbehaving(), { token: "not-the-token" }).catch((error) => {
    console.error(error.message);
    process.exit(1);
  });
} else {
  main(new Misbehaving());
}
