"use strict";
// A Node bot that prints the clock of every decision, one JSON line each marked CLOCK, for its log.
// Its first two cards take longer than a 250 ms per-action limit, so the referee draws on its bank.
const { Bot, main } = require("../../sdk/node");

class ClockRecorder extends Bot {
  constructor() {
    super();
    this.name = "clock-js";
    this.plays = 0;
  }

  write(obs) {
    const c = obs.clock;
    const entry = { per_action_ms: c.perActionMs, bank_ms: c.bankMs, time_left_ms: c.timeLeftMs, left_ms: c.deadline - performance.now() };
    process.stdout.write(`CLOCK ${JSON.stringify(entry)}\n`);
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

main(new ClockRecorder());
