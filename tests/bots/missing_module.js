"use strict";
// A Node bot whose dependency is not installed: Node prints the error, its stack and properties, and
// then its own version line; the referee must quote the missing module's name.
const leftPad = require("left-pad-is-not-installed");
const { Bot, main } = require("../../sdk/node");

class Padded extends Bot {
  play(obs) {
    return leftPad(obs.legalCards[0]);
  }
}

main(new Padded());
