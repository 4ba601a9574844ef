"use strict";
// The Node.js twin of remote_lanes.py: a remote bot that plays several matches at once and writes down
// when each starts and ends: `node remote_lanes.js EVENTS SECONDS`. Each decision awaits SECONDS (so the
// event loop serves the other streams meanwhile); each line of EVENTS is `start|end MATCH_ID MS STREAM
// COPY`, COPY the number of the bot object that played it. A match whose end reaches another match's copy
// writes `mixed`. How many matches it asks for comes from PYRAMID_MAX_MATCHES.
const fs = require("node:fs");
const { Bot, main } = require("../../sdk/node");

let copies = 0;

class LaneBot extends Bot {
  constructor(events, seconds) {
    super();
    this.name = "lanes-js";
    this.events = events;
    this.seconds = seconds;
    this.matchId = null;
    this.copy = ++copies;
  }

  clone() {
    return new LaneBot(this.events, this.seconds);
  }

  write(what, matchId) {
    fs.appendFileSync(this.events, `${what} ${matchId} ${(performance.now() / 1000).toFixed(6)} s${this.copy} ${this.copy}\n`);
  }

  matchStart(info) {
    this.matchId = info.matchId;
    this.write("start", info.matchId);
  }

  async declare(obs) {
    await new Promise((resolve) => setTimeout(resolve, this.seconds * 1000));
    return obs.legalDeclarations[0];
  }

  async play(obs) {
    await new Promise((resolve) => setTimeout(resolve, this.seconds * 1000));
    return obs.legalCards[0];
  }

  matchEnd(result) {
    this.write(result.matchId === this.matchId ? "end" : "mixed", result.matchId);
  }
}

main(new LaneBot(process.argv[2], Number(process.argv[3])));
