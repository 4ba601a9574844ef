"use strict";
// A Node bot that writes a debug line with every answer (`node debugger.js`), or plays the same without
// one (`node debugger.js quiet`): its first legal action, always.
const { Bot, main } = require("../../sdk/node");

const MARKER = "dbg-7f3a9c-only-for-the-author";
const quiet = process.argv[2] === "quiet";

class Debugger extends Bot {
  constructor() {
    super();
    this.name = "node-debugger";
  }

  declare(obs) {
    if (!quiet) this.debug(`${MARKER} node deal ${obs.dealNumber} declares`);
    return obs.legalDeclarations[0];
  }

  play(obs) {
    if (!quiet) this.debug(`${MARKER} node deal ${obs.dealNumber} plays ${obs.legalCards[0]}`);
    return obs.legalCards[0];
  }
}

main(new Debugger());
