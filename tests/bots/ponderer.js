"use strict";
// A Node bot that thinks for SECONDS on the first decision of every match, blocking its event loop (as a
// synchronous search does): `node ponderer.js SECONDS`.
const { Bot, main } = require("../../sdk/node");

class Ponderer extends Bot {
  constructor(seconds) {
    super();
    this.name = "ponderer-js";
    this.seconds = seconds;
    this.first = true;
  }

  matchStart() {
    this.first = true;
  }

  think(obs) {
    if (this.first) {
      this.first = false;
      console.log(`thinking for ${this.seconds}s`);
      const end = performance.now() + this.seconds * 1000;
      while (performance.now() < end); // eslint-disable-line no-empty
    }
    return obs;
  }

  declare(obs) {
    return this.think(obs).legalDeclarations[0];
  }

  play(obs) {
    return this.think(obs).legalCards[0];
  }
}

main(new Ponderer(Number(process.argv[2])));
