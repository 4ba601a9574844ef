"use strict";
// A Node bot that writes down the clock of every decision, one JSON line each, to the file argv[2].
// Its first two cards take longer than a 250 ms per-action limit, so the referee draws on its bank.
const fs = require("node:fs");
const { Bot, main } = require("../../sdk/node");

class ClockRecorder extends Bot {
  constructor(path) {
    super();
    this.name = "clock-js";
    this.path = path;
    this.plays = 0;
  }

  write(obs) {
    const c = obs.clock;
    const entry = { per_action_ms: c.perActionMs, bank_ms: c.bankMs, time_left_ms: c.timeLeftMs, left_ms: c.deadline - performance.now() };
    fs.appendFileSync(this.path, JSON.stringify(entry) + "\n");
  }

  declare(obs) {
    this.write(obs);
    return obs.legalDeclarations[0];
  }

  async play(obs) {
    this.write(obs);
    this.plays += 1;
    if (this.plays <= 2) await new Promise((resolve) => setTimeout(resolve, 350));
    return obs.legalCards[0];
  }
}

main(new ClockRecorder(process.argv[2]));
