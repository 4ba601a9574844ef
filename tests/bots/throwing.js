"use strict";
// A Node bot whose play() throws on every card: each decision must be a fault at once, never a hang.
const { Bot, main } = require("../../sdk/node");

class Thrower extends Bot {
  declare(obs) {
    return obs.legalDeclarations[0];
  }

  play() {
    throw new Error("this bot has a bug");
  }
}

main(new Thrower());
